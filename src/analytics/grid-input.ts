/**
 * From normalised records to the inputs of the bootstrap grid: one group vector per variable
 * (from the reference standard) and one item-score vector per run and variable.
 */
import type { GridRun, GridVariable } from './bootstrap';
import type { SimilarityLookup } from './embedding/embedder';
import { AnalyticsError } from './errors';
import { encodeReferences, itemScores, primaryMetric } from './metrics';
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

function asExactCell(cell: NormalisedCell | undefined): NormalisedCell | undefined {
  if (cell?.status !== 'VALUE' || !Array.isArray(cell.value)) return cell;
  return { status: 'VALUE', value: JSON.stringify([...cell.value].sort()) };
}
