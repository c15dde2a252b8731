import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Analytics inputs change → the project's revision moves on, so every cached score, ranking
 * and agreement of that project is recomputed on next read, whichever process computed it.
 * Embeddings are cached by (provider, model, text).
 */
export class AnalyticsCache1764460000000 implements MigrationInterface {
  name = 'AnalyticsCache1764460000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE project_revisions (
      project_id uuid PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
      revision bigint NOT NULL DEFAULT 0)`);
    await q.query(`CREATE FUNCTION bump_project_revision() RETURNS trigger LANGUAGE plpgsql AS $$
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
    for (const table of ['annotations', 'annotators', 'predictions', 'runs', 'variables', 'use_cases', 'reports', 'models']) {
      await q.query(`CREATE TRIGGER ${table}_revision_insert AFTER INSERT ON ${table}
        REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bump_project_revision()`);
      await q.query(`CREATE TRIGGER ${table}_revision_update AFTER UPDATE ON ${table}
        REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bump_project_revision()`);
      await q.query(`CREATE TRIGGER ${table}_revision_delete AFTER DELETE ON ${table}
        REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION bump_project_revision()`);
    }

    await q.query(`CREATE TABLE embeddings (
      provider text NOT NULL,
      model text NOT NULL,
      text_hash bytea NOT NULL,
      vector bytea NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (provider, model, text_hash))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE embeddings');
    for (const table of ['annotations', 'annotators', 'predictions', 'runs', 'variables', 'use_cases', 'reports', 'models']) {
      for (const op of ['insert', 'update', 'delete']) await q.query(`DROP TRIGGER ${table}_revision_${op} ON ${table}`);
    }
    await q.query('DROP FUNCTION bump_project_revision()');
    await q.query('DROP TABLE project_revisions');
  }
}
