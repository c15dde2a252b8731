import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Which worker holds which claimed work item. pg-boss records that an item is active but not
 * who runs it, so a dead worker's items could only come back when their lease ran out (15
 * minutes by default). With the holder known, the items of a worker that is gone are handed
 * back at once; `token` is new at every claim, so a holder that lost its claim cannot complete
 * or fail the item another worker now runs.
 */
export class JobClaims1764577000000 implements MigrationInterface {
  name = 'JobClaims1764577000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE job_claims (
      job_id uuid PRIMARY KEY,
      worker_id uuid NOT NULL,
      token uuid NOT NULL,
      claimed_at timestamptz NOT NULL DEFAULT now())`);
    await q.query('CREATE INDEX job_claims_worker ON job_claims (worker_id)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE job_claims');
  }
}
