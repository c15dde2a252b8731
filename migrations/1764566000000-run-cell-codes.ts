import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Stored cell columns (run_cell_columns) as codes: per run, its keys, the distinct cells of each
 * key (one JSON array per key; a cell's code is its index) and one `codes` value holding, key
 * after key, the code of every report ordinal below `span`, `width` bytes each (big-endian; 1
 * while the key has at most 255 distinct cells, 2 up to 65,535, else 4), the largest value of
 * the width meaning "no cell". A run of 1,252 reports and 16 variables is 20 kB instead of
 * 80 kB of ordinal lists, read as one row instead of one per distinct cell.
 *
 * The stored columns are a cache of the predictions: the rows of the previous layout are dropped
 * and each run is stored again the next time it is read or written.
 */
export class RunCellCodes1764566000000 implements MigrationInterface {
  name = 'RunCellCodes1764566000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('DELETE FROM run_cell_columns');
    await q.query(`ALTER TABLE run_cell_columns
      DROP COLUMN cells,
      DROP COLUMN ordinals,
      ADD COLUMN cells jsonb NOT NULL,
      ADD COLUMN span integer NOT NULL,
      ADD COLUMN codes bytea NOT NULL,
      ADD CONSTRAINT run_cell_columns_layout CHECK (
        jsonb_typeof(cells) = 'array' AND jsonb_array_length(cells) = cardinality(keys) AND span >= 0)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DELETE FROM run_cell_columns');
    await q.query(`ALTER TABLE run_cell_columns
      DROP CONSTRAINT run_cell_columns_layout,
      DROP COLUMN cells,
      DROP COLUMN span,
      DROP COLUMN codes,
      ADD COLUMN cells jsonb[] NOT NULL,
      ADD COLUMN ordinals bytea[] NOT NULL,
      ADD CHECK (cardinality(keys) = cardinality(cells) AND cardinality(keys) = cardinality(ordinals))`);
  }
}
