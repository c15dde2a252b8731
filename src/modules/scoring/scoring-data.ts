import type { DataSource, EntityManager, QueryRunner } from 'typeorm';
import { In } from 'typeorm';
import type { CodedCells } from '../../analytics/grid-input';
import { decodeRunCells, encodeRunCells, ordinalAt, type CellGroup, type EncodedRunCells } from './cell-codes';
import type { RecordCell } from '../../analytics/normalise';
import type { NormalisedCell, VariableSpec } from '../../analytics/types';
import { Annotator } from '../annotation/annotator.entity';
import { Dataset } from '../dataset/dataset.entity';
import { Model } from '../endpoint/model.entity';
import { Run } from '../run/run.entity';
import { badInput, notFound } from '../../domain/errors';
import { UseCase } from '../use-case/use-case.entity';
import { toSpec } from '../use-case/variable-spec';
import { Variable } from '../use-case/variable.entity';
import type { StoredCell } from '../run/prediction.entity';

export type RecordRow = Readonly<Record<string, RecordCell>> | undefined;

/**
 * A run's cells of each variable in report order: undefined where the run has no succeeded
 * prediction for the report or it has no cell for the variable, null where the prediction stored
 * a JSON null as the cell. Equal cells of a run are one object (read as stored columns).
 */
export type RunCells = Map<string, readonly (RecordCell | null | undefined)[]>;

/** A dataset as the statistics see it: reports in import order and the use case's variables. */
export interface DatasetFrame {
  dataset: Dataset;
  useCase: UseCase;
  variables: Variable[];
  specs: VariableSpec[];
  reportIds: string[];
  index: Map<string, number>;
  /** Report ordinal → position in `reportIds` (-1: no report of this dataset has that ordinal). */
  positionOfOrdinal: Int32Array;
  annotators: Annotator[];
}

export async function loadFrame(dataSource: DataSource, datasetId: string): Promise<DatasetFrame> {
  const dataset = await dataSource.getRepository(Dataset).findOneByOrFail({ id: datasetId });
  // The rest at once, each on its own pooled connection.
  const [useCase, variables, reports, annotators] = await Promise.all([
    dataSource.getRepository(UseCase).findOneByOrFail({ id: dataset.useCaseId }),
    dataSource.getRepository(Variable).find({ where: { useCaseId: dataset.useCaseId }, order: { order: 'ASC' } }),
    dataSource.query('SELECT id, ordinal FROM reports WHERE dataset_id = $1 ORDER BY ordinal', [datasetId]) as Promise<{ id: string; ordinal: number }[]>,
    dataSource.getRepository(Annotator).find({ where: { datasetId }, order: { createdAt: 'ASC', id: 'ASC' } }),
  ]);
  // Imports give each new report the next ordinal under the dataset's lock; cells are placed by it.
  if (reports.length > 0 && reports[0]!.ordinal < 0) throw new Error(`dataset ${datasetId} has a report with a negative ordinal`);
  const positionOfOrdinal = new Int32Array(reports.length === 0 ? 0 : reports[reports.length - 1]!.ordinal + 1).fill(-1);
  reports.forEach((r, i) => {
    if (positionOfOrdinal[r.ordinal] !== -1) throw new Error(`reports of dataset ${datasetId} share an ordinal`);
    positionOfOrdinal[r.ordinal] = i;
  });
  return {
    dataset,
    useCase,
    variables,
    specs: variables.map((v) => toSpec(v, useCase)),
    reportIds: reports.map((r) => r.id),
    index: new Map(reports.map((r, i) => [r.id, i])),
    positionOfOrdinal,
    annotators,
  };
}

/** Annotation rows read per statement (as RECORD_PAGE_ROWS for predictions: one page is one turn of the loop). */
const ANNOTATION_PAGE_ROWS = 5000;

/**
 * One annotator's values as reference records in report order (undefined: not annotated), read
 * in pages (by report and variable) of one snapshot: 20,000 reports × 16 variables are 320,000
 * rows, which parsed at once kept every other request waiting.
 */
export async function loadAnnotatorRecords(dataSource: DataSource, frame: DatasetFrame, annotatorId: string): Promise<RecordRow[]> {
  const keyOf = new Map(frame.variables.map((v) => [v.id, v.key]));
  const records: (Record<string, RecordCell> | undefined)[] = new Array(frame.reportIds.length).fill(undefined);
  await inSnapshot(dataSource, async (runner) => {
    let after: [string, string] = ['00000000-0000-0000-0000-000000000000', '00000000-0000-0000-0000-000000000000'];
    for (;;) {
      const rows = (await runner.query(
        `SELECT report_id, variable_id, value, status FROM annotations
         WHERE annotator_id = $1 AND (report_id, variable_id) > ($2::uuid, $3::uuid)
         ORDER BY report_id, variable_id LIMIT ${ANNOTATION_PAGE_ROWS}`,
        [annotatorId, ...after],
      )) as { report_id: string; variable_id: string; value: unknown; status: 'VALUE' | 'MISSING' | 'INVALID' }[];
      for (const row of rows) {
        const i = frame.index.get(row.report_id);
        const key = keyOf.get(row.variable_id);
        if (i === undefined || key === undefined || row.status === 'INVALID') continue;
        // Without a prototype, a variable named __proto__ is a key like any other.
        const record = (records[i] ??= Object.create(null) as Record<string, RecordCell>);
        record[key] = row.status === 'VALUE' ? ({ status: 'VALUE', value: row.value } as NormalisedCell) : { status: 'MISSING' };
      }
      if (rows.length < ANNOTATION_PAGE_ROWS) break;
      const last = rows[rows.length - 1]!;
      after = [last.report_id, last.variable_id];
    }
  });
  return records;
}

/** One annotator's cells of each of the frame's variables (by key), in report order; undefined: not annotated. */
export type ReferenceColumns = Map<string, (RecordCell | undefined)[]>;

/**
 * {@link loadAnnotatorRecords} as columns, in one statement: PostgreSQL groups each variable's
 * equal values and sends each distinct one once with the ordinals of the reports that have it
 * (4-byte big-endian integers), as readRunColumns does for predictions. Equal cells of a column
 * are one object.
 */
export async function loadAnnotatorColumns(dataSource: DataSource, frame: DatasetFrame, annotatorId: string): Promise<ReferenceColumns> {
  const n = frame.reportIds.length;
  const byVariable = new Map(frame.variables.map((v) => [v.id, new Array<RecordCell | undefined>(n).fill(undefined)]));
  const rows = await inSnapshot(dataSource, async (runner) => {
    await groupByHashing(runner);
    // One hash of the dataset's reports rather than an index probe per report: 14 instead of
    // 18 ms at 1,252 reports × 16 variables, where the planner (estimating a few reports per
    // dataset) picks the probes.
    await runner.query('SET LOCAL enable_nestloop = off');
    return (await runner.query(
      `SELECT a.variable_id, a.status, a.value, string_agg(int4send(r.ordinal), ''::bytea) AS ordinals
       FROM annotations a JOIN reports r ON r.id = a.report_id
       WHERE a.annotator_id = $1 AND a.status <> 'INVALID' AND r.dataset_id = $2
       GROUP BY a.variable_id, a.status, a.value`,
      [annotatorId, frame.dataset.id],
    )) as { variable_id: string; status: 'VALUE' | 'MISSING'; value: unknown; ordinals: Buffer }[];
  });
  for (const row of rows) {
    const column = byVariable.get(row.variable_id);
    if (!column) continue;
    placeCell(frame, column, row.status === 'VALUE' ? ({ status: 'VALUE', value: row.value } as NormalisedCell) : { status: 'MISSING' }, row.ordinals);
  }
  return new Map(frame.variables.map((v) => [v.key, byVariable.get(v.id)!]));
}

/**
 * Predictions read per statement. The driver parses in one turn of the event loop whatever the
 * socket has delivered, so one statement for every prediction of 90 runs (112,680 rows) kept
 * every other request waiting while it was parsed; pages of this many rows bound that turn.
 */
const RECORD_PAGE_ROWS = 2000;

/**
 * The succeeded predictions' cells of each run in report order, read in pages (by run and
 * report id) of one snapshot: a run still executing is seen as it was when the read began.
 */
export async function loadRunRecords(dataSource: DataSource, frame: DatasetFrame, runIds: string[]): Promise<Map<string, RecordRow[]>> {
  if (runIds.length === 0) return new Map();
  return inSnapshot(dataSource, (runner) => readRunRecords(runner, frame, runIds));
}

/** A run's succeeded predictions as one snapshot saw them. */
export interface RunFingerprint {
  /** Succeeded predictions. */
  rows: number;
  /**
   * The run's cell version: every statement that inserts, updates or deletes any of its
   * predictions gives it a new one, never given before (a trigger, see the RunCellColumns migration).
   */
  version: string;
}

export interface RunSnapshot {
  fingerprints: Map<string, RunFingerprint>;
  /** Succeeded predictions whose cells were read. */
  rowsRead: number;
  /** Runs whose columns are not stored at their version (those read were grouped from their predictions). */
  unstored: string[];
}

/**
 * One run's prediction cells by variable key, each a column in report order coded into its
 * distinct cells (code −1: no succeeded prediction, or one without that key; a null cell: a JSON
 * null stored as the cell).
 */
export type RunColumns = Map<string, CodedCells>;

/**
 * Each run's fingerprint, and then the cells (of the variables `keys`) of only the runs `load`
 * asks for given their fingerprint (those not cached under it), both in one REPEATABLE READ
 * snapshot: the cells read are exactly the ones the fingerprint describes, whatever commits
 * meanwhile. A run whose columns are stored at its version (storeRunColumns) has its
 * fingerprint without reading any prediction; for the others the succeeded predictions are
 * counted.
 *
 * The wanted runs' cells are handed to `consume` in groups of `runsPerGroup` runs (in the order
 * of `runIds`), each group read after the previous one was consumed: only one group's cells are
 * held at a time, whatever the number of runs and reports. They are read as columns (see
 * readRunColumns), not as one object per prediction: stored ones as stored, the others grouped
 * from the predictions, which costs PostgreSQL about 15 µs a prediction (`unstored` lists the
 * runs not stored at their version, read or not, for the caller to store).
 */
export async function loadRunSnapshot(
  dataSource: DataSource,
  frame: DatasetFrame,
  runIds: string[],
  keys: readonly string[],
  load: (runId: string, fingerprint: RunFingerprint) => boolean,
  consume: (columns: Map<string, RunColumns>) => Promise<void>,
  runsPerGroup: number,
): Promise<RunSnapshot> {
  if (runIds.length === 0) return { fingerprints: new Map(), rowsRead: 0, unstored: [] };
  return inSnapshot(dataSource, async (runner) => {
    const versions = (await runner.query(
      `SELECT r.id AS run_id, coalesce(v.version, 0)::text AS version, s.rows AS stored_rows, coalesce(s.version = coalesce(v.version, 0), false) AS stored
       FROM unnest($1::uuid[]) AS r(id)
       LEFT JOIN run_cell_versions v ON v.run_id = r.id
       LEFT JOIN run_cell_columns s ON s.run_id = r.id`,
      [runIds],
    )) as { run_id: string; version: string; stored_rows: number | null; stored: boolean }[];
    const stored = new Set(versions.filter((r) => r.stored).map((r) => r.run_id));
    const unstored = runIds.filter((id) => !stored.has(id));
    const counted = new Map<string, number>();
    if (unstored.length > 0) {
      const counts = (await runner.query(`SELECT run_id, count(*)::int AS n FROM predictions WHERE run_id = ANY($1::uuid[]) AND status = 'SUCCEEDED' GROUP BY run_id`, [
        unstored,
      ])) as { run_id: string; n: number }[];
      for (const { run_id, n } of counts) counted.set(run_id, n);
    }
    const fingerprints = new Map<string, RunFingerprint>(
      versions.map((r) => [r.run_id, { rows: r.stored ? r.stored_rows! : (counted.get(r.run_id) ?? 0), version: r.version }]),
    );
    const wanted = runIds.filter((id) => load(id, fingerprints.get(id)!));
    if (wanted.some((id) => !stored.has(id))) await groupByHashing(runner);
    const step = Math.max(1, Math.floor(runsPerGroup));
    let rowsRead = 0;
    for (let start = 0; start < wanted.length; start += step) {
      const group = wanted.slice(start, start + step);
      await consume(await readRunColumns(runner, frame, group, keys, stored));
      for (const id of group) rowsRead += fingerprints.get(id)!.rows;
    }
    return { fingerprints, rowsRead, unstored };
  });
}

/**
 * The runs' (`$1`, uuid[]) succeeded predictions' cells grouped by run, key and equal cell:
 * PostgreSQL takes each prediction's cells apart once and sends each distinct cell of a run and
 * key once, with the ordinals of the reports that have it (packed as 4-byte big-endian
 * integers). A categorical variable of a 20,000-report run is a few rows instead of 20,000
 * parsed objects. Free text, every cell distinct, is the worst case: a row per prediction and
 * variable. A prediction's ordinal is its report's, copied when it was written (no join: with
 * one, the planner probed the reports a prediction at a time); the run's reports are the
 * dataset's, whose ordinals loadFrame checks.
 */
function groupedCells(keys: string): string {
  return `SELECT p.run_id, c.key, c.value AS cell, string_agg(int4send(p.report_ordinal), ''::bytea) AS ordinals
    FROM predictions p CROSS JOIN LATERAL jsonb_each(p.cells) AS c(key, value)
    WHERE p.run_id = ANY($1::uuid[]) AND p.status = 'SUCCEEDED'${keys}
    GROUP BY p.run_id, c.key, c.value`;
}

/**
 * The cells of `keys` of the runs' succeeded predictions as columns: decoded from the codes
 * stored in run_cell_columns for the runs in `stored` (whose stored version the caller found
 * equal to the run's in this snapshot), one row per run; grouped from the predictions for the
 * others.
 */
async function readRunColumns(
  runner: QueryRunner,
  frame: DatasetFrame,
  runIds: string[],
  keys: readonly string[],
  stored: ReadonlySet<string>,
): Promise<Map<string, RunColumns>> {
  const n = frame.reportIds.length;
  const empty = (): RunColumns => new Map(keys.map((key) => [key, { cells: [], codes: new Int32Array(n).fill(-1) }]));
  const columns = new Map<string, RunColumns>();
  const fromStore = runIds.filter((id) => stored.has(id));
  const fromPredictions = runIds.filter((id) => !stored.has(id));
  if (fromStore.length > 0) {
    const rows = (await runner.query('SELECT s.run_id, s.keys, s.cells, s.span, s.codes FROM run_cell_columns s WHERE s.run_id = ANY($1::uuid[])', [
      fromStore,
    ])) as ({ run_id: string } & EncodedRunCells)[];
    for (const row of rows) columns.set(row.run_id, decodeRunCells(row, keys, frame.positionOfOrdinal, n));
  }
  if (fromPredictions.length > 0) {
    for (const id of fromPredictions) columns.set(id, empty());
    const groups = (await runner.query(groupedCells(' AND c.key = ANY($2::text[])'), [fromPredictions, keys])) as ({ run_id: string } & CellGroup)[];
    for (const { run_id, key, cell, ordinals } of groups) {
      const column = columns.get(run_id)?.get(key);
      if (!column) continue;
      placeCell(frame, column.codes, column.cells.length, ordinals);
      (column.cells as (RecordCell | null)[]).push(cell);
    }
  }
  return new Map(runIds.map((id) => [id, columns.get(id) ?? empty()]));
}

/**
 * Groups the runs' cells (every key) and stores them in run_cell_columns (the layout of
 * cell-codes.ts) with the runs' cell versions and their succeeded predictions' count, all read
 * by one statement, so they always agree. Concurrent stores of a run each write a consistent
 * row; the one of the newer version stays (a run's version only grows: it is drawn under the
 * lock of its row). Rows are written in run order, as writers lock runs; a run deleted since the
 * read is skipped. Call inside a transaction (`manager`'s): one that wrote predictions sees its
 * own, and the version its writes gave the run, which is the run's once it commits.
 */
export async function storeRunColumns(manager: EntityManager, runIds: string[]): Promise<void> {
  if (runIds.length === 0) return;
  await groupByHashing(manager);
  const rows = (await manager.query(
    `SELECT r.id AS run_id, coalesce(v.version, 0)::text AS version, coalesce(c.n, 0) AS n, g.key, g.cell, g.ordinals
     FROM runs r
     LEFT JOIN run_cell_versions v ON v.run_id = r.id
     LEFT JOIN (SELECT run_id, count(*)::int AS n FROM predictions WHERE run_id = ANY($1::uuid[]) AND status = 'SUCCEEDED' GROUP BY run_id) c
       ON c.run_id = r.id
     LEFT JOIN (${groupedCells('')}) g ON g.run_id = r.id
     WHERE r.id = ANY($1::uuid[])`,
    [runIds],
  )) as { run_id: string; version: string; n: number; key: string | null; cell: RecordCell | null; ordinals: Buffer | null }[];
  const runs = new Map<string, { version: string; n: number; groups: CellGroup[] }>();
  for (const row of rows) {
    let run = runs.get(row.run_id);
    if (run === undefined) runs.set(row.run_id, (run = { version: row.version, n: row.n, groups: [] }));
    if (row.key !== null) run.groups.push({ key: row.key, cell: row.cell, ordinals: row.ordinals! });
  }
  if (runs.size === 0) return;
  const values: unknown[] = [];
  const tuples = [...runs.keys()].sort().map((id) => {
    const run = runs.get(id)!;
    const encoded = encodeRunCells(run.groups);
    const at = values.length;
    values.push(id, run.version, run.n, encoded.keys, JSON.stringify(encoded.cells), encoded.span, encoded.codes);
    return `($${at + 1}::uuid, $${at + 2}::bigint, $${at + 3}::int, $${at + 4}::text[], $${at + 5}::jsonb, $${at + 6}::int, $${at + 7}::bytea)`;
  });
  await manager.query(
    `INSERT INTO run_cell_columns AS s (run_id, version, rows, keys, cells, span, codes)
     SELECT v.* FROM (VALUES ${tuples.join(', ')}) AS v(run_id, version, rows, keys, cells, span, codes)
     WHERE EXISTS (SELECT 1 FROM runs r WHERE r.id = v.run_id)
     ORDER BY v.run_id
     ON CONFLICT (run_id) DO UPDATE SET version = EXCLUDED.version, rows = EXCLUDED.rows, keys = EXCLUDED.keys,
       cells = EXCLUDED.cells, span = EXCLUDED.span, codes = EXCLUDED.codes, stored_at = now()
     WHERE s.version < EXCLUDED.version`,
    values,
  );
}

/**
 * Puts `cell` in `column` at each report whose ordinal `ordinals` holds (4-byte big-endian
 * integers): a cell object, or a cell's code in a coded column.
 */
function placeCell<T>(frame: DatasetFrame, column: { [report: number]: T }, cell: T, ordinals: Buffer): void {
  const positions = frame.positionOfOrdinal;
  for (let at = 0; at + 4 <= ordinals.length; at += 4) {
    const ordinal = ordinalAt(ordinals, at);
    const i = ordinal >= 0 && ordinal < positions.length ? positions[ordinal]! : -1;
    if (i >= 0) column[i] = cell;
  }
}

/**
 * For the rest of the transaction, GROUP BY hashes instead of sorting. The planner cannot
 * estimate the rows a jsonb_each or a freshly imported run gives and picks a sort, which
 * spills to disk: grouping 14 runs × 1,252 reports' cells took 495 ms sorted and 264 ms hashed.
 */
async function groupByHashing(runner: Pick<QueryRunner, 'query'>): Promise<void> {
  await runner.query('SET LOCAL enable_sort = off');
  await runner.query("SET LOCAL work_mem = '32MB'");
}

async function inSnapshot<T>(dataSource: DataSource, work: (runner: QueryRunner) => Promise<T>): Promise<T> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.startTransaction('REPEATABLE READ');
    const result = await work(runner);
    await runner.commitTransaction();
    return result;
  } catch (error) {
    if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
    throw error;
  } finally {
    await runner.release();
  }
}

async function readRunRecords(runner: QueryRunner, frame: DatasetFrame, runIds: string[], counted?: (rows: number) => void): Promise<Map<string, RecordRow[]>> {
  const out = new Map<string, RecordRow[]>(runIds.map((id) => [id, new Array(frame.reportIds.length).fill(undefined)]));
  let after: [string, string] = ['00000000-0000-0000-0000-000000000000', '00000000-0000-0000-0000-000000000000'];
  for (;;) {
    const rows = (await runner.query(
      `SELECT run_id, report_id, cells FROM predictions
       WHERE run_id = ANY($1) AND status = 'SUCCEEDED' AND (run_id, report_id) > ($2::uuid, $3::uuid)
       ORDER BY run_id, report_id LIMIT ${RECORD_PAGE_ROWS}`,
      [runIds, ...after],
    )) as { run_id: string; report_id: string; cells: Record<string, StoredCell> }[];
    counted?.(rows.length);
    for (const row of rows) {
      const i = frame.index.get(row.report_id);
      const records = out.get(row.run_id);
      if (i !== undefined && records) records[i] = row.cells;
    }
    if (rows.length < RECORD_PAGE_ROWS) break;
    const last = rows[rows.length - 1]!;
    after = [last.run_id, last.report_id];
  }
  return out;
}

/** Each report's metadata in report order (null when the report has none). */
export async function loadReportMetadata(dataSource: DataSource, frame: DatasetFrame): Promise<(Record<string, unknown> | null)[]> {
  const rows = (await dataSource.query('SELECT id, metadata FROM reports WHERE dataset_id = $1', [frame.dataset.id])) as {
    id: string;
    metadata: Record<string, unknown> | null;
  }[];
  const out: (Record<string, unknown> | null)[] = new Array(frame.reportIds.length).fill(null);
  for (const row of rows) {
    const i = frame.index.get(row.id);
    if (i !== undefined) out[i] = row.metadata && typeof row.metadata === 'object' ? row.metadata : null;
  }
  return out;
}

/** Runs of a dataset that have predictions to score, oldest first. */
export async function loadScoredRuns(dataSource: DataSource, datasetId: string): Promise<Run[]> {
  return dataSource
    .getRepository(Run)
    .createQueryBuilder('r')
    .where('r.dataset_id = :datasetId', { datasetId })
    .andWhere('EXISTS (SELECT 1 FROM predictions p WHERE p.run_id = r.id)')
    .orderBy('r.created_at', 'ASC')
    .addOrderBy('r.id', 'ASC')
    .getMany();
}

/** The use cases named, each one of the project's (another project's answers like an unknown id), in the order named. */
export async function loadUseCases(dataSource: DataSource, projectId: string, useCaseIds: string[]): Promise<UseCase[]> {
  if (useCaseIds.length === 0) throw badInput('useCaseIds must name at least one use case', { field: 'useCaseIds' });
  const ids = [...new Set(useCaseIds)];
  const useCases = await dataSource.getRepository(UseCase).findBy({ id: In(ids) });
  const byId = new Map(useCases.filter((u) => u.projectId === projectId).map((u) => [u.id, u]));
  return ids.map((id) => {
    const useCase = byId.get(id);
    if (!useCase) throw notFound('Use case');
    return useCase;
  });
}

/** The models of these runs by id. */
export async function loadModelsOf(dataSource: DataSource, runs: readonly Run[]): Promise<Map<string, Model>> {
  const ids = [...new Set(runs.map((r) => r.modelId).filter((id): id is string => id !== null))];
  if (ids.length === 0) return new Map();
  const models = await dataSource.getRepository(Model).findBy({ id: In(ids) });
  return new Map(models.map((m) => [m.id, m]));
}

/** The reference standard the options name, or else the dataset's own. */
export function referenceOf(frame: DatasetFrame, referenceAnnotatorId: string | null): Annotator {
  if (referenceAnnotatorId) {
    const chosen = frame.annotators.find((a) => a.id === referenceAnnotatorId);
    if (!chosen) throw notFound('Annotator');
    return chosen;
  }
  const reference = frame.annotators.find((a) => a.isReference);
  if (!reference) throw badInput('The dataset has no reference annotator: import annotations with isReference: true, or pass options.referenceAnnotatorId');
  return reference;
}
