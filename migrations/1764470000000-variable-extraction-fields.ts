import type { MigrationInterface, QueryRunner } from 'typeorm';

/** What a variable needs for prompting beyond scoring: instructions and framework round-trip data. */
export class VariableExtractionFields1764470000000 implements MigrationInterface {
  name = 'VariableExtractionFields1764470000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE variables ADD COLUMN instructions text');
    await q.query("ALTER TABLE variables ADD COLUMN extraction jsonb NOT NULL DEFAULT '{}'");
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE variables DROP COLUMN extraction');
    await q.query('ALTER TABLE variables DROP COLUMN instructions');
  }
}
