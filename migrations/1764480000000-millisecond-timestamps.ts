import type { MigrationInterface, QueryRunner } from 'typeorm';

const TABLES = ['projects', 'api_keys', 'use_cases', 'datasets', 'reports', 'annotators', 'endpoints', 'models', 'prompts', 'experiments', 'runs', 'predictions'];

/**
 * Creation times at millisecond precision: what a JavaScript Date (and so a page cursor) holds,
 * so keyset pagination on (created_at, id) compares exactly.
 */
export class MillisecondTimestamps1764480000000 implements MigrationInterface {
  name = 'MillisecondTimestamps1764480000000';

  async up(q: QueryRunner): Promise<void> {
    for (const table of TABLES) {
      await q.query(`ALTER TABLE ${table} ALTER COLUMN created_at TYPE timestamptz(3)`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of TABLES) {
      await q.query(`ALTER TABLE ${table} ALTER COLUMN created_at TYPE timestamptz`);
    }
  }
}
