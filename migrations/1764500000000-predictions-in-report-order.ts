import type { MigrationInterface, QueryRunner } from 'typeorm';

/** A prediction carries its report's ordinal, so a run's predictions list in report order. */
export class PredictionsInReportOrder1764500000000 implements MigrationInterface {
  name = 'PredictionsInReportOrder1764500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE predictions ADD COLUMN report_ordinal integer');
    await q.query('UPDATE predictions p SET report_ordinal = r.ordinal FROM reports r WHERE r.id = p.report_id');
    await q.query('ALTER TABLE predictions ALTER COLUMN report_ordinal SET NOT NULL');
    await q.query('CREATE INDEX predictions_run_report_ordinal ON predictions (run_id, report_ordinal, id)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX predictions_run_report_ordinal');
    await q.query('ALTER TABLE predictions DROP COLUMN report_ordinal');
  }
}
