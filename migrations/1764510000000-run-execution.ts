import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Run execution: a failure's code on the prediction, the index behind "recent throughput",
 * the heartbeat table of the worker processes sharing the database (the per-endpoint
 * concurrency limit is split among the live workers that have work for the endpoint), and the
 * endpoint's Prometheus samples taken while a run executes.
 */
export class RunExecution1764510000000 implements MigrationInterface {
  name = 'RunExecution1764510000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE predictions ADD COLUMN error_code varchar(32)');
    await q.query('ALTER TABLE predictions ADD COLUMN input_truncated boolean NOT NULL DEFAULT false');
    await q.query('CREATE INDEX predictions_run_created ON predictions (run_id, created_at)');
    await q.query(`ALTER TABLE runs ADD COLUMN warnings jsonb NOT NULL DEFAULT '[]'`);
    await q.query('ALTER TABLE runs ADD COLUMN paused_ms bigint NOT NULL DEFAULT 0');
    await q.query(`CREATE TABLE job_workers (
      id uuid PRIMARY KEY,
      host text NOT NULL,
      pid integer NOT NULL,
      started_at timestamptz NOT NULL DEFAULT now(),
      heartbeat_at timestamptz NOT NULL DEFAULT now(),
      demand jsonb NOT NULL DEFAULT '{}')`);
    await q.query(`CREATE TABLE run_endpoint_samples (
      id bigserial PRIMARY KEY,
      run_id uuid NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
      endpoint_id uuid NOT NULL,
      sampled_at timestamptz NOT NULL DEFAULT now(),
      running double precision,
      waiting double precision,
      kv_cache_usage double precision,
      prefix_queries double precision,
      prefix_hits double precision,
      generation_tokens double precision)`);
    await q.query('CREATE INDEX run_endpoint_samples_run ON run_endpoint_samples (run_id, sampled_at)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE run_endpoint_samples');
    await q.query('DROP TABLE job_workers');
    await q.query('ALTER TABLE runs DROP COLUMN paused_ms');
    await q.query('ALTER TABLE runs DROP COLUMN warnings');
    await q.query('DROP INDEX predictions_run_created');
    await q.query('ALTER TABLE predictions DROP COLUMN input_truncated');
    await q.query('ALTER TABLE predictions DROP COLUMN error_code');
  }
}
