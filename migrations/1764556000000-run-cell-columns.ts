import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A run's succeeded predictions' cells as columns, stored once (run_cell_columns): for each key
 * and distinct cell, the ordinals of the reports whose prediction holds it (4-byte big-endian
 * integers), in three parallel arrays.
 *
 * Every statement that inserts, updates or deletes predictions gives each run it touched a new
 * version (run_cell_versions, drawn from one sequence while the run's version row is locked, so
 * no two states of a run share one). Stored columns carry the version they were grouped at, read
 * by the same statement; a reader uses them only while the run's version is still that one.
 * A run never written since this migration has version 0.
 */
export class RunCellColumns1764556000000 implements MigrationInterface {
  name = 'RunCellColumns1764556000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('CREATE SEQUENCE run_cell_version_seq');
    await q.query(`CREATE TABLE run_cell_versions (
      run_id uuid PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
      version bigint NOT NULL)`);
    // In run order, as writers lock runs (the prediction writer, a renormalisation). The runs of
    // the rows a statement deleted that are gone themselves (a cascade) get no version.
    await q.query(`CREATE FUNCTION bump_run_cell_version() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          INSERT INTO run_cell_versions (run_id, version)
            SELECT n.run_id, nextval('run_cell_version_seq') FROM (SELECT DISTINCT run_id FROM new_rows) n ORDER BY 1
            ON CONFLICT (run_id) DO UPDATE SET version = nextval('run_cell_version_seq');
        ELSIF TG_OP = 'UPDATE' THEN
          INSERT INTO run_cell_versions (run_id, version)
            SELECT t.run_id, nextval('run_cell_version_seq') FROM (SELECT run_id FROM new_rows UNION SELECT run_id FROM old_rows) t ORDER BY 1
            ON CONFLICT (run_id) DO UPDATE SET version = nextval('run_cell_version_seq');
        ELSE
          INSERT INTO run_cell_versions (run_id, version)
            SELECT o.run_id, nextval('run_cell_version_seq') FROM (SELECT DISTINCT run_id FROM old_rows) o
            JOIN runs r ON r.id = o.run_id ORDER BY 1
            ON CONFLICT (run_id) DO UPDATE SET version = nextval('run_cell_version_seq');
        END IF;
        RETURN NULL;
      END $$`);
    await q.query(`CREATE TRIGGER predictions_cell_version_insert AFTER INSERT ON predictions
      REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bump_run_cell_version()`);
    await q.query(`CREATE TRIGGER predictions_cell_version_update AFTER UPDATE ON predictions
      REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bump_run_cell_version()`);
    await q.query(`CREATE TRIGGER predictions_cell_version_delete AFTER DELETE ON predictions
      REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION bump_run_cell_version()`);
    await q.query(`CREATE TABLE run_cell_columns (
      run_id uuid PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
      version bigint NOT NULL,
      rows integer NOT NULL,
      keys text[] NOT NULL,
      cells jsonb[] NOT NULL,
      ordinals bytea[] NOT NULL,
      stored_at timestamptz NOT NULL DEFAULT now(),
      CHECK (cardinality(keys) = cardinality(cells) AND cardinality(keys) = cardinality(ordinals)))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE run_cell_columns');
    await q.query('DROP TRIGGER predictions_cell_version_insert ON predictions');
    await q.query('DROP TRIGGER predictions_cell_version_update ON predictions');
    await q.query('DROP TRIGGER predictions_cell_version_delete ON predictions');
    await q.query('DROP FUNCTION bump_run_cell_version()');
    await q.query('DROP TABLE run_cell_versions');
    await q.query('DROP SEQUENCE run_cell_version_seq');
  }
}
