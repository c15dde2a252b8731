import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A run's succeeded predictions' cells as columns, stored once: for each key and distinct cell,
 * the ordinals of the reports whose prediction holds it (4-byte big-endian integers), in three
 * parallel arrays. `rows` and `digest` are the fingerprint of the predictions they were grouped
 * from (see scoring-data.ts); a reader uses them only while its own fingerprint of the run is
 * equal, so a stale row is never read, only replaced. Derived data: nothing else refers to it.
 */
export class RunCellColumns1764556000000 implements MigrationInterface {
  name = 'RunCellColumns1764556000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE run_cell_columns (
      run_id uuid PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
      rows integer NOT NULL,
      digest text NOT NULL,
      keys text[] NOT NULL,
      cells jsonb[] NOT NULL,
      ordinals bytea[] NOT NULL,
      stored_at timestamptz NOT NULL DEFAULT now(),
      CHECK (cardinality(keys) = cardinality(cells) AND cardinality(keys) = cardinality(ordinals)))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE run_cell_columns');
  }
}
