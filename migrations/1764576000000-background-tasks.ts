import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Background tasks: long imports and experiment creation run by a worker instead of inside a
 * request. A task is claimed with a lease (`worker`, `lease_until`); a task whose lease ran out
 * is taken up again by another worker, and its work, done in one transaction that also marks
 * the task SUCCEEDED, is all or nothing. The file of an import is kept in parts until the task
 * is over. An idempotency key is unique per project: a retried request finds its task.
 */
export class BackgroundTasks1764576000000 implements MigrationInterface {
  name = 'BackgroundTasks1764576000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE background_tasks (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      kind varchar(32) NOT NULL,
      status varchar(16) NOT NULL DEFAULT 'QUEUED' CHECK (status IN ('QUEUED', 'RUNNING', 'SUCCEEDED', 'FAILED')),
      principal jsonb NOT NULL,
      input jsonb NOT NULL,
      idempotency_key text,
      processed integer NOT NULL DEFAULT 0,
      result jsonb,
      error_code varchar(32),
      error_message text,
      error_details jsonb,
      attempts integer NOT NULL DEFAULT 0,
      worker text,
      lease_until timestamptz(3),
      created_at timestamptz(3) NOT NULL DEFAULT now(),
      started_at timestamptz(3),
      finished_at timestamptz(3),
      UNIQUE (project_id, idempotency_key)
    )`);
    await q.query(`CREATE INDEX background_tasks_open ON background_tasks (created_at) WHERE status IN ('QUEUED', 'RUNNING')`);
    await q.query(`CREATE INDEX background_tasks_project ON background_tasks (project_id, created_at)`);
    await q.query(`CREATE TABLE background_task_files (
      task_id uuid NOT NULL REFERENCES background_tasks(id) ON DELETE CASCADE,
      part integer NOT NULL,
      bytes bytea NOT NULL,
      PRIMARY KEY (task_id, part)
    )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE background_task_files');
    await q.query('DROP TABLE background_tasks');
  }
}
