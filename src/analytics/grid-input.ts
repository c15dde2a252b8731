/**
 * From normalised records to the inputs of the bootstrap grid: one group vector per variable
 * (from the reference standard) and one item-score vector per run and variable.
 */
import type { GridRun, GridVariable } from './bootstrap';
import type { SimilarityLookup } from './embedding/embedder';
import { AnalyticsError } from './errors';
import { encodeReferences, itemScore, itemScores, NO_ANSWER, primaryMetric } from './metrics';
import { cellOf, type RecordCell } from './normalise';
import type { NormalisedCell, VariableSpec } from './types';

/** One run's normalised prediction records in the dataset's report order; `undefined` = no prediction. */
export interface RunRecords {
  id: string;
  records: readonly (Readonly<Record<string, RecordCell>> | undefined)[];
}

export interface GridInputOptions {
  similarity?: SimilarityLookup | null;
  /** Score categorical variables with their collapse maps (collapsed scoring). */
  collapsed?: boolean;
  /** `'ACCURACY'` scores every variable by plain accuracy instead of its primary metric. */
  metric?: 'PRIMARY' | 'ACCURACY';
}

/**
 * Build `{ variables, runs }` for `bootstrapGrid` (docs/scoring.md §5): groups from the reference
 * records (reports whose reference lacks the key are left out of that variable), item scores
 * per run with a missing prediction record or key scored as INVALID/MISSING. Variable weights
 * come from the specs. O(runs · V · n) plus similarity look-ups.
 *
 * @throws AnalyticsError LENGTH_MISMATCH when a run's record count differs from the references';
 *   BAD_INPUT when a similarity is needed and missing.
 */
export function buildGridInput(
  specs: readonly VariableSpec[],
  references: readonly (Readonly<Record<string, RecordCell>> | undefined)[],
  runs: readonly RunRecords[],
  opts?: GridInputOptions,
): { variables: GridVariable[]; runs: GridRun[] } {
  const n = references.length;
  const refsByVariable = specs.map((spec) => references.map((rec) => cellOf(rec, spec.key)));
  const variables = specs.map((spec, v) => gridVariable(spec, refsByVariable[v]!, opts));
  const gridRuns = runs.map((run) => {
    if (run.records.length !== n) {
      throw new AnalyticsError('LENGTH_MISMATCH', `run "${run.id}": ${run.records.length} records for ${n} reports`);
    }
    return { id: run.id, items: specs.map((spec, v) => gridItemColumn(spec, refsByVariable[v]!, run.records, opts)) };
  });
  return { variables, runs: gridRuns };
}

/**
 * One variable of {@link buildGridInput}: its groups from `references`, the reference cells of
 * `spec` in report order. O(n).
 */
export function gridVariable(spec: VariableSpec, references: readonly (RecordCell | undefined)[], opts?: GridInputOptions): GridVariable {
  const metric = opts?.metric === 'ACCURACY' ? 'ACCURACY' : primaryMetric(spec.type);
  return { key: spec.key, groups: encodeReferences(spec, references, metric, opts?.collapsed ?? false).groups, weight: spec.weight ?? 1 };
}

/**
 * One run's item scores for one variable, as in {@link buildGridInput}: `references` are the
 * reference cells of `spec` in report order, `records` the run's records. O(n) plus similarity
 * look-ups; the unit of work for callers that build a grid's inputs a piece at a time.
 *
 * @throws AnalyticsError BAD_INPUT when a similarity is needed and missing.
 */
export function gridItemColumn(
  spec: VariableSpec,
  references: readonly (RecordCell | undefined)[],
  records: RunRecords['records'],
  opts?: GridInputOptions,
): Float64Array {
  return gridItemScores(spec, references, records.map((rec) => cellOf(rec, spec.key)), opts);
}

/**
 * {@link gridItemColumn} from the run's cells of `spec` in report order (`predictions[i]`: the
 * cell of report i, undefined when its prediction or the key is absent).
 */
export function gridItemScores(
  spec: VariableSpec,
  references: readonly (RecordCell | undefined)[],
  predictions: readonly (RecordCell | null | undefined)[],
  opts?: GridInputOptions,
): Float64Array {
  const preds = predictions as readonly (NormalisedCell | undefined)[];
  if (opts?.metric === 'ACCURACY' && (spec.type === 'FREE_TEXT' || spec.type === 'LIST')) {
    // Plain accuracy of text and lists is exact equality, whatever the similarity.
    return itemScores({ ...spec, type: 'EXACT_STRING' }, references.map(asExactCell), preds.map(asExactCell));
  }
  return itemScores(spec, references, preds, { similarity: opts?.similarity ?? null, collapsed: opts?.collapsed ?? false });
}

/**
 * A column of cells in report order as codes into its distinct cells: report i's cell is
 * `cells[codes[i]]`, and absent (no prediction, or no such key) where `codes[i]` is −1. Columns
 * read grouped from PostgreSQL come this way: each distinct cell is one object, however many
 * reports have it.
 */
export interface CodedCells {
  cells: readonly (RecordCell | null)[];
  codes: Int32Array;
}

/** `column` coded by its cells' identity: the same object, the same code; undefined is −1. O(n). */
export function codeCells(column: readonly (RecordCell | null)[]): CodedCells {
  const cells: (RecordCell | null)[] = [];
  const codeOf = new Map<RecordCell | null, number>();
  const codes = new Int32Array(column.length);
  column.forEach((cell, i) => {
    if (cell === undefined) {
      codes[i] = -1;
      return;
    }
    let code = codeOf.get(cell);
    if (code === undefined) {
      code = cells.length;
      codeOf.set(cell, code);
      cells.push(cell);
    }
    codes[i] = code;
  });
  return { cells, codes };
}

/** The cells of a coded column in report order, undefined where absent. O(n). */
export function decodeCells(column: CodedCells): (RecordCell | null | undefined)[] {
  return Array.from(column.codes, (code) => (code < 0 ? undefined : column.cells[code]!));
}

/**
 * Distinct (reference, prediction) pairs a column may have for {@link codedItemScores} to score
 * each once through a table; beyond this (free text, where nearly every cell is distinct) each
 * report is scored directly.
 */
const PAIR_TABLE_LIMIT = 1 << 16;

/**
 * {@link gridItemScores} of coded columns, equal to it bit for bit: a report's item score is a
 * function of its reference cell and its prediction cell alone, so each distinct pair of codes
 * is scored once, where the pairs are few enough for a table (categorical, numeric and other
 * short-valued variables: a few dozen pairs for a whole run), and the reports then read it.
 * O(n + distinct pairs scored) instead of O(n) scorings.
 *
 * @throws AnalyticsError LENGTH_MISMATCH when the columns differ in length; BAD_INPUT as
 *   gridItemScores.
 */
export function codedItemScores(spec: VariableSpec, references: CodedCells, predictions: CodedCells, opts?: GridInputOptions): Float64Array {
  const n = references.codes.length;
  if (predictions.codes.length !== n) {
    throw new AnalyticsError('LENGTH_MISMATCH', `variable "${spec.key}": ${n} references, ${predictions.codes.length} predictions`);
  }
  const score = pairScore(spec, opts);
  const refCodes = references.codes;
  const predCodes = predictions.codes;
  const refCells = references.cells;
  const predCells = predictions.cells;
  const out = new Float64Array(n);
  const R = refCells.length;
  // Prediction code + 1: slot 0 is "no prediction".
  const width = predCells.length + 1;
  if (R * width > PAIR_TABLE_LIMIT) {
    for (let i = 0; i < n; i++) {
      const r = refCodes[i]!;
      const p = predCodes[i]!;
      out[i] = score(r < 0 ? undefined : refCells[r]!, p < 0 ? undefined : predCells[p]!);
    }
    return out;
  }
  const tableCode = Int32Array.from({ length: predCells.length }, (_, p) => p + 1);
  const table = new Float64Array(R * width);
  const scored = new Uint8Array(R * width);
  scoreThroughTable(refCodes, predCodes, tableCode, R, table, scored, (r, code) => score(refCells[r]!, code === 0 ? undefined : predCells[code - 1]!), out);
  return out;
}

/**
 * out[i]: the score of report i's pair (reference code r, table code c = 0 without a
 * prediction, else `tableCode[prediction code]`), kept at table[c · R + r] and scored by
 * `scoreAt` the first time a pair is met; NaN where the report has no reference cell. O(n).
 */
function scoreThroughTable(
  refCodes: Int32Array,
  predCodes: Int32Array,
  tableCode: Int32Array,
  R: number,
  table: Float64Array,
  scored: Uint8Array,
  scoreAt: (r: number, code: number) => number,
  out: Float64Array,
): void {
  for (let i = 0; i < refCodes.length; i++) {
    const r = refCodes[i]!;
    if (r < 0) {
      out[i] = Number.NaN;
      continue;
    }
    const p = predCodes[i]!;
    const code = p < 0 ? 0 : tableCode[p]!;
    const at = code * R + r;
    if (scored[at] === 0) {
      table[at] = scoreAt(r, code);
      scored[at] = 1;
    }
    out[i] = table[at]!;
  }
}

/**
 * Entries (reference cells × prediction cells) and prediction cells a {@link RunItemScorer}
 * keeps for one variable (9 bytes an entry: at most 2.4 MB, 38 MB for 16 variables of free
 * text; the cells with their JSON text beside it); past either, a run's column is scored on its
 * own ({@link codedItemScores}).
 */
const SHARED_TABLE_LIMIT = 1 << 18;
const SHARED_CELLS_LIMIT = 4096;

/**
 * {@link codedItemScores} of many runs' columns of one variable against one reference column,
 * equal to it bit for bit, with each distinct (reference cell, prediction cell) pair scored once
 * across all the runs instead of once per run: runs read separately hold equal cells as separate
 * objects, so prediction cells are told apart by their JSON text (equal text, equal cell, equal
 * score). A categorical variable of 90 runs is then a few dozen scorings instead of thousands.
 * Free text, where nearly every cell is distinct, outgrows the table (SHARED_TABLE_LIMIT) and is
 * scored run by run.
 */
export class RunItemScorer {
  private readonly score: (reference: RecordCell | null, prediction: RecordCell | null) => number;
  private readonly codeOfText = new Map<string, number>();
  private readonly predictionCells: (RecordCell | null)[] = [];
  /** table[code · R + r]: the score of prediction cell `code` against reference cell r, once `scored` says so. */
  private table = new Float64Array(0);
  private scored = new Uint8Array(0);

  constructor(
    private readonly spec: VariableSpec,
    private readonly references: CodedCells,
    private readonly opts?: GridInputOptions,
  ) {
    this.score = pairScore(spec, opts);
  }

  /**
   * The item scores of `predictions` (a run's column, report order as the references') into
   * `out`. O(n + distinct cells of the column + pairs not scored before).
   * @throws AnalyticsError LENGTH_MISMATCH when the columns or `out` differ in length; BAD_INPUT as gridItemScores.
   */
  scoresInto(predictions: CodedCells, out: Float64Array): void {
    const refCodes = this.references.codes;
    const n = refCodes.length;
    if (predictions.codes.length !== n || out.length !== n) {
      throw new AnalyticsError('LENGTH_MISMATCH', `variable "${this.spec.key}": ${n} references, ${predictions.codes.length} predictions, ${out.length} scores`);
    }
    const R = this.references.cells.length;
    // Slot 0 of the shared codes is "no prediction".
    const shared = new Int32Array(predictions.cells.length);
    for (let local = 0; local < predictions.cells.length; local++) {
      const cell = predictions.cells[local]!;
      const text = JSON.stringify(cell);
      let code = this.codeOfText.get(text);
      if (code === undefined) {
        if ((this.predictionCells.length + 2) * R > SHARED_TABLE_LIMIT || this.predictionCells.length >= SHARED_CELLS_LIMIT) {
          out.set(codedItemScores(this.spec, this.references, predictions, this.opts));
          return;
        }
        code = this.predictionCells.length + 1;
        this.codeOfText.set(text, code);
        this.predictionCells.push(cell);
      }
      shared[local] = code;
    }
    const rows = this.predictionCells.length + 1;
    if (this.scored.length < rows * R) this.grow(rows * R);
    const refCells = this.references.cells;
    const cells = this.predictionCells;
    scoreThroughTable(refCodes, predictions.codes, shared, R, this.table, this.scored, (r, code) => this.score(refCells[r]!, code === 0 ? undefined : cells[code - 1]!), out);
  }

  private grow(entries: number): void {
    const size = Math.min(Math.max(entries, 2 * this.scored.length), Math.max(entries, SHARED_TABLE_LIMIT));
    const table = new Float64Array(size);
    const scored = new Uint8Array(size);
    table.set(this.table);
    scored.set(this.scored);
    this.table = table;
    this.scored = scored;
  }
}

/** The item score of one report as {@link gridItemScores} gives it, from its two cells. */
function pairScore(spec: VariableSpec, opts?: GridInputOptions): (reference: RecordCell | null, prediction: RecordCell | null) => number {
  const unscored = (reference: RecordCell | null): reference is undefined | null =>
    reference === undefined || reference === null || reference.status === 'INVALID';
  if (opts?.metric === 'ACCURACY' && (spec.type === 'FREE_TEXT' || spec.type === 'LIST')) {
    const exact: VariableSpec = { ...spec, type: 'EXACT_STRING' };
    return (reference, prediction) =>
      unscored(reference) ? Number.NaN : itemScore(exact, asExactCell(reference)!, asExactCell(prediction ?? undefined) ?? NO_ANSWER);
  }
  const scoring = { similarity: opts?.similarity ?? null, collapsed: opts?.collapsed ?? false };
  return (reference, prediction) => (unscored(reference) ? Number.NaN : itemScore(spec, reference, prediction ?? NO_ANSWER, scoring));
}

function asExactCell(cell: NormalisedCell | undefined): NormalisedCell | undefined {
  if (cell?.status !== 'VALUE' || !Array.isArray(cell.value)) return cell;
  return { status: 'VALUE', value: JSON.stringify([...cell.value].sort()) };
}
