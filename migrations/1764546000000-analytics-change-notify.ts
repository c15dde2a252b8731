import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every statement that appends analytics changes also sends, on commit, one NOTIFY per project
 * on the channel `reportql_analytics` with the payload `<project id>:<newest change id>`, so
 * that processes learn of a project's new revision without a query per request.
 */
export class AnalyticsChangeNotify1764546000000 implements MigrationInterface {
  name = 'AnalyticsChangeNotify1764546000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE OR REPLACE FUNCTION notify_analytics_change() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('reportql_analytics', n.project_id::text || ':' || max(n.id)::text) FROM new_rows n GROUP BY n.project_id;
        RETURN NULL;
      END $$`);
    await q.query(`CREATE TRIGGER analytics_changes_notify AFTER INSERT ON analytics_changes
      REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION notify_analytics_change()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TRIGGER IF EXISTS analytics_changes_notify ON analytics_changes');
    await q.query('DROP FUNCTION IF EXISTS notify_analytics_change()');
  }
}
