import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Analytics inputs that change append a row to analytics_changes instead of updating one
 * revision row per project: writes of a project no longer wait for each other on that row.
 * A project's revision is its newest change id.
 */
export class AppendOnlyAnalyticsChanges1764490000000 implements MigrationInterface {
  name = 'AppendOnlyAnalyticsChanges1764490000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE analytics_changes (
      id bigserial PRIMARY KEY,
      project_id uuid NOT NULL,
      changed_at timestamptz NOT NULL DEFAULT now())`);
    await q.query('CREATE INDEX analytics_changes_project ON analytics_changes (project_id, id DESC)');
    await q.query(`INSERT INTO analytics_changes (project_id) SELECT project_id FROM project_revisions`);
    await q.query(`CREATE OR REPLACE FUNCTION bump_project_revision() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'DELETE' THEN
          INSERT INTO analytics_changes (project_id) SELECT DISTINCT project_id FROM old_rows;
        ELSE
          INSERT INTO analytics_changes (project_id) SELECT DISTINCT project_id FROM new_rows;
        END IF;
        RETURN NULL;
      END $$`);
    await q.query('DROP TABLE project_revisions');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE project_revisions (
      project_id uuid PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
      revision bigint NOT NULL DEFAULT 0)`);
    await q.query(`INSERT INTO project_revisions (project_id, revision)
      SELECT c.project_id, max(c.id) FROM analytics_changes c JOIN projects p ON p.id = c.project_id GROUP BY c.project_id`);
    await q.query(`CREATE OR REPLACE FUNCTION bump_project_revision() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'DELETE' THEN
          INSERT INTO project_revisions AS r (project_id, revision)
            SELECT DISTINCT o.project_id, 1 FROM old_rows o JOIN projects p ON p.id = o.project_id
            ON CONFLICT (project_id) DO UPDATE SET revision = r.revision + 1;
        ELSE
          INSERT INTO project_revisions AS r (project_id, revision)
            SELECT DISTINCT n.project_id, 1 FROM new_rows n
            ON CONFLICT (project_id) DO UPDATE SET revision = r.revision + 1;
        END IF;
        RETURN NULL;
      END $$`);
    await q.query('DROP TABLE analytics_changes');
  }
}
