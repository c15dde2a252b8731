import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Who read report texts, annotations, predictions and exports, and who changed what: one row
 * per request and kind of access, append-only (a trigger refuses UPDATE, DELETE and TRUNCATE).
 * No foreign keys: the trail outlives a deleted project or key.
 */
export class AuditLog1764530000000 implements MigrationInterface {
  name = 'AuditLog1764530000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE audit_events (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      at timestamptz(3) NOT NULL DEFAULT clock_timestamp(),
      project_id uuid,
      key_id uuid NOT NULL,
      key_name text NOT NULL,
      server_admin boolean NOT NULL,
      kind varchar(8) NOT NULL CHECK (kind IN ('READ', 'CHANGE')),
      action text NOT NULL,
      outcome varchar(8) NOT NULL CHECK (outcome IN ('OK', 'FAILED')),
      objects integer NOT NULL,
      targets text[] NOT NULL,
      transport varchar(16) NOT NULL
    )`);
    await q.query('CREATE INDEX audit_events_project_at ON audit_events (project_id, at, id)');
    await q.query(`CREATE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'audit_events is append-only'; END $$`);
    await q.query('CREATE TRIGGER audit_events_no_change BEFORE UPDATE OR DELETE ON audit_events FOR EACH ROW EXECUTE FUNCTION audit_events_append_only()');
    await q.query('CREATE TRIGGER audit_events_no_truncate BEFORE TRUNCATE ON audit_events FOR EACH STATEMENT EXECUTE FUNCTION audit_events_append_only()');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE audit_events');
    await q.query('DROP FUNCTION audit_events_append_only');
  }
}
