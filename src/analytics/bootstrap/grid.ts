/** The paired bootstrap over a grid of runs × variables, with macro averages. */
import { AnalyticsError } from '../errors';
import { groupedMean } from '../metrics';
import { groupedMeanReplicatesWith } from './grouped-mean';
import type { PointTarget } from './grouped-mean';
import { KernelSource } from './kernel-source';
import { bootstrapMultiplicities } from './multiplicities';
import type { MultiplicityMatrix } from './multiplicities';
import { checkConfidence, checkCounts, DEFAULT_BOOTSTRAP_RESAMPLES, DEFAULT_BOOTSTRAP_SEED, DEFAULT_CONFIDENCE } from './options';
import type { Estimate } from './options';
import { estimateFrom } from './percentile';

/** One variable of a bootstrap grid. */
export interface GridVariable {
  key: string;
  /** Group per report (reference class for balanced accuracy, 0 for means, −1 = no reference). */
  groups: ArrayLike<number>;
  /** Weight in the macro average (default 1). */
  weight?: number | null;
}

/** One run of a bootstrap grid: per variable (in grid order), the item score of each report. */
export interface GridRun {
  id: string;
  items: readonly ArrayLike<number>[];
}

export interface BootstrapGridInput {
  variables: readonly GridVariable[];
  runs: readonly GridRun[];
  /** B (default 1000). */
  resamples?: number;
  /** Seed of the multiplicity matrix (default 42); ignored when `multiplicities` is given. */
  seed?: number;
  confidence?: number;
  /** A precomputed B × n matrix from {@link bootstrapMultiplicities}, to share across calls. */
  multiplicities?: MultiplicityMatrix | null;
  /**
   * Identifies the contents of `multiplicities` across calls (equal ids: equal matrices, never
   * written meanwhile), so that the kernel keeps the matrix it transposed for the previous call
   * with the same id instead of transposing it again. Null or absent: transposed every call.
   */
  multiplicitiesId?: number | null;
  /**
   * SIMD kernel (default true): WebAssembly SIMD for 0/1 and for real-valued item scores, or
   * several 0/1 runs packed in float64 lanes where that is unavailable. Bit-identical to the
   * scalar kernel either way; false = scalar kernel only.
   */
  packBinary?: boolean;
}

export interface BootstrapGridResult {
  /** Reports N. */
  n: number;
  resamples: number;
  seed: number | null;
  confidence: number;
  runIds: string[];
  variableKeys: string[];
  /** perVariable[run][variable]. */
  perVariable: Estimate[][];
  /** Macro average per run, CI from recomputing every variable in each replicate. */
  macro: Estimate[];
  /** Full-sample scores, run × variable row-major. */
  points: Float64Array;
  macroPoints: Float64Array;
  /** Replicate scores, entry (run r, variable v, replicate b) at (r·V + v)·B + b. */
  replicates: Float64Array;
  /** Replicate macro averages, entry (r, b) at r·B + b. */
  macroReplicates: Float64Array;
  /** The B × n multiplicity matrix used (row b = resample b). */
  multiplicities: MultiplicityMatrix;
}

function variableWeights(variables: readonly GridVariable[]): Float64Array {
  return Float64Array.from(variables, (v) => {
    const w = v.weight ?? 1;
    if (!(w >= 0) || !Number.isFinite(w)) throw new AnalyticsError('BAD_INPUT', `variable "${v.key}": weight ${w}`);
    return w;
  });
}

/**
 * Paired bootstrap over a grid of runs × variables (docs/scoring.md §5). Point estimates are the
 * full-sample grouped means; each replicate recomputes every variable's score from the shared
 * multiplicities, and the macro average of a replicate is Σ_v u_v s_rvb / Σ_v u_v over the
 * variables defined in that replicate (u = weights). Intervals: percentileInterval
 * (percentile.ts). The multiplicity matrix is loaded into the 0/1 kernel once for all variables.
 * Time: O(B · n) for the matrix, groupedMeanReplicates (grouped-mean.ts) per variable,
 * O(runs · V · B) for the macro replicates and intervals; memory O(runs · V · B + B · n).
 *
 * @throws AnalyticsError BAD_INPUT / LENGTH_MISMATCH on inconsistent shapes; OUT_OF_RANGE for
 *   confidence outside (0, 1).
 */
export function bootstrapGrid(input: BootstrapGridInput): BootstrapGridResult {
  const { variables, runs } = input;
  const confidence = input.confidence ?? DEFAULT_CONFIDENCE;
  checkConfidence(confidence);
  const V = variables.length;
  const R = runs.length;
  if (V === 0) throw new AnalyticsError('EMPTY_INPUT', 'bootstrapGrid: no variables');
  const n = variables[0]!.groups.length;
  for (const v of variables) {
    if (v.groups.length !== n) throw new AnalyticsError('LENGTH_MISMATCH', `variable "${v.key}": ${v.groups.length} reports, expected ${n}`);
  }
  for (const r of runs) {
    if (r.items.length !== V) throw new AnalyticsError('LENGTH_MISMATCH', `run "${r.id}": ${r.items.length} variables, expected ${V}`);
  }
  const B = input.resamples ?? (input.multiplicities ? input.multiplicities.length / n : DEFAULT_BOOTSTRAP_RESAMPLES);
  checkCounts(n, B);
  const seed = input.multiplicities ? null : input.seed ?? DEFAULT_BOOTSTRAP_SEED;
  const W = input.multiplicities ?? bootstrapMultiplicities(n, B, seed ?? DEFAULT_BOOTSTRAP_SEED);
  if (W.length !== n * B) throw new AnalyticsError('LENGTH_MISMATCH', `multiplicities hold ${W.length} entries, expected ${B} × ${n}`);
  const weights = variableWeights(variables);

  const replicates = new Float64Array(R * V * B);
  const points = new Float64Array(R * V);
  // One kernel (multiplicities transposed once) for every variable.
  const kernelSource = new KernelSource(W, input.multiplicities ? input.multiplicitiesId ?? null : null);
  try {
    variables.forEach((variable, v) => {
      const items = runs.map((r) => r.items[v]!);
      const pointTarget: PointTarget = { out: points, offset: v, runStride: V, done: false };
      groupedMeanReplicatesWith(
        variable.groups,
        items,
        W,
        B,
        { out: replicates, offset: v * B, runStride: V * B },
        input.packBinary ?? true,
        kernelSource,
        pointTarget,
      );
      if (!pointTarget.done) {
        items.forEach((x, r) => {
          points[r * V + v] = groupedMean(variable.groups, x);
        });
      }
    });
  } finally {
    kernelSource.release();
  }

  const macroReplicates = new Float64Array(R * B);
  const macroPoints = new Float64Array(R);
  // Σ_v u_v s_rvb / Σ_v u_v over finite s, accumulated in variable order for all b at once
  // (the same operations as weightedFiniteMean per replicate, in contiguous memory order).
  const num = new Float64Array(B);
  const den = new Float64Array(B);
  for (let r = 0; r < R; r++) {
    macroPoints[r] = weightedFiniteMean(points, r * V, 1, V, weights);
    macroReplicatesOf(replicates, r * V * B, V, B, weights, num, den, macroReplicates, r * B);
  }

  const perVariable: Estimate[][] = [];
  const macro: Estimate[] = [];
  for (let r = 0; r < R; r++) {
    const row: Estimate[] = [];
    for (let v = 0; v < V; v++) {
      const start = (r * V + v) * B;
      row.push(estimateFrom(points[r * V + v]!, replicates.subarray(start, start + B), confidence));
    }
    perVariable.push(row);
    macro.push(estimateFrom(macroPoints[r]!, macroReplicates.subarray(r * B, (r + 1) * B), confidence));
  }
  return {
    n,
    resamples: B,
    seed,
    confidence,
    runIds: runs.map((r) => r.id),
    variableKeys: variables.map((v) => v.key),
    perVariable,
    macro,
    points,
    macroPoints,
    replicates,
    macroReplicates,
    multiplicities: W,
  };
}

/**
 * One run's macro replicates into out[at …]: Σ_v u_v s_vb / Σ_v u_v over the finite s_vb, with
 * s_vb = replicates[start + v·B + b], accumulated variable after variable in num and den (B
 * each): per replicate, the operations of weightedFiniteMean in its order. A function of its own
 * so that V8 optimises this loop apart from bootstrapGrid's setup.
 */
function macroReplicatesOf(
  replicates: Float64Array,
  start: number,
  V: number,
  B: number,
  weights: Float64Array,
  num: Float64Array,
  den: Float64Array,
  out: Float64Array,
  at: number,
): void {
  num.fill(0);
  den.fill(0);
  for (let v = 0; v < V; v++) {
    const u = weights[v]!;
    if (u === 0) continue;
    const from = start + v * B;
    for (let b = 0; b < B; b++) {
      const x = replicates[from + b]!;
      if (x - x === 0) {
        num[b] += u * x;
        den[b] += u;
      }
    }
  }
  for (let b = 0; b < B; b++) out[at + b] = den[b] === 0 ? NaN : num[b]! / den[b]!;
}

function weightedFiniteMean(data: Float64Array, start: number, stride: number, count: number, weights: Float64Array): number {
  let num = 0;
  let den = 0;
  for (let v = 0; v < count; v++) {
    const x = data[start + v * stride]!;
    const w = weights[v]!;
    if (w === 0 || !Number.isFinite(x)) continue;
    num += w * x;
    den += w;
  }
  return den === 0 ? NaN : num / den;
}
