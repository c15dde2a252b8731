import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The evidence of a prediction made with evidence QUOTES: per variable key, the model's quotes
 * aligned to spans of the report ({quote, status, start, end, text, occurrences}). Null for
 * predictions made without evidence, so every existing row keeps its meaning.
 */
export class PredictionEvidence1764586000000 implements MigrationInterface {
  name = 'PredictionEvidence1764586000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE predictions ADD COLUMN evidence jsonb');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE predictions DROP COLUMN evidence');
  }
}
