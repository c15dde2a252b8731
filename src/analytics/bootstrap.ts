/**
 * Vectorised, paired, seeded bootstrap of grouped-mean metrics (METRICS.md §5).
 *
 * A resample is a vector of multiplicities w (length N, sum N). Every per-variable metric is a
 * grouped mean (metrics.ts): mean over groups g with D_g(w) > 0 of N_g(w) / D_g(w), where
 * N_g(w) = Σ_{i∈g} w_i x_i and D_g(w) = Σ_{i∈g} w_i. One multiplicity matrix, derived only from
 * (N, B, seed), is shared by every run of a dataset, so runs are paired. A grid of runs ×
 * variables × replicates is computed as dense dot products over typed arrays; no metric
 * function is called per replicate.
 */
import { unsafeUniformIntDistribution, xoroshiro128plus } from 'pure-rand';
import { AnalyticsError } from './errors';
import { groupedMean } from './metrics';

/** Default seed of METRICS.md §5. */
export const DEFAULT_BOOTSTRAP_SEED = 42;
/** Default number of resamples B of METRICS.md §5. */
export const DEFAULT_BOOTSTRAP_RESAMPLES = 1000;
/** Default coverage of percentile intervals. */
export const DEFAULT_CONFIDENCE = 0.95;

/** A point estimate with its bootstrap percentile interval. */
export interface Estimate {
  /** Full-sample estimate (never the replicate mean). */
  value: number;
  ciLow: number;
  ciHigh: number;
  confidence: number;
  /** Replicates that entered the interval (replicates where the statistic is undefined are dropped). */
  resamples: number;
}

function checkConfidence(confidence: number): void {
  if (!(confidence > 0 && confidence < 1)) {
    throw new AnalyticsError('OUT_OF_RANGE', `confidence must be in (0, 1), got ${confidence}`);
  }
}

function checkCounts(n: number, B: number): void {
  if (!Number.isInteger(n) || n < 1) throw new AnalyticsError('BAD_INPUT', `bootstrap needs n >= 1 reports, got ${n}`);
  if (!Number.isInteger(B) || B < 1) throw new AnalyticsError('BAD_INPUT', `bootstrap needs B >= 1 resamples, got ${B}`);
}

/**
 * Bootstrap multiplicity matrix, row-major B × n: row b holds how often each report was drawn
 * in resample b. Generator: pure-rand `xoroshiro128plus(seed)`; each resample draws n indices
 * uniformly from 0..n−1 with `unsafeUniformIntDistribution` (rejection sampling, unbiased),
 * rows in order. The matrix depends only on (n, B, seed): every run of a dataset gets the same
 * resamples (paired) and the same seed gives bit-identical intervals. O(B·n) time and memory.
 *
 * @throws AnalyticsError BAD_INPUT for n < 1, B < 1 or a non-integer seed.
 */
export function bootstrapMultiplicities(n: number, B: number, seed: number = DEFAULT_BOOTSTRAP_SEED): Int32Array {
  checkCounts(n, B);
  if (!Number.isSafeInteger(seed)) throw new AnalyticsError('BAD_INPUT', `seed must be an integer, got ${seed}`);
  const rng = xoroshiro128plus(seed);
  const w = new Int32Array(B * n);
  for (let b = 0; b < B; b++) {
    const off = b * n;
    for (let k = 0; k < n; k++) w[off + unsafeUniformIntDistribution(0, n - 1, rng)]!++;
  }
  return w;
}

/**
 * Type-7 quantile (Hyndman & Fan 1996; R's default; NumPy `quantile(method="linear")`) of an
 * ascending array: h = (m − 1)p, Q = x⌊h⌋ + (h − ⌊h⌋)(x⌊h⌋+1 − x⌊h⌋), computed in NumPy's
 * order of operations (b − (b − a)(1 − t) when t ≥ ½) so results agree bit for bit. O(1).
 *
 * @throws AnalyticsError EMPTY_INPUT for an empty array; OUT_OF_RANGE for p outside [0, 1].
 */
export function quantileType7(sorted: ArrayLike<number>, p: number): number {
  const m = sorted.length;
  if (m === 0) throw new AnalyticsError('EMPTY_INPUT', 'quantile of an empty sample');
  if (!(p >= 0 && p <= 1)) throw new AnalyticsError('OUT_OF_RANGE', `quantile level must be in [0, 1], got ${p}`);
  const h = (m - 1) * p;
  if (h >= m - 1) return sorted[m - 1]!;
  const lo = Math.floor(h);
  const t = h - lo;
  const a = sorted[lo]!;
  const b = sorted[lo + 1]!;
  const d = b - a;
  return t >= 0.5 ? b - d * (1 - t) : a + d * t;
}

/**
 * Percentile interval of bootstrap replicates: type-7 quantiles at α/2 and 1 − α/2 with
 * α = 1 − confidence (levels computed as (1 − confidence)/2 and 1 − that). Non-finite
 * replicates (statistic undefined in that resample) are dropped; `resamples` counts the rest.
 * O(B log B).
 *
 * @throws AnalyticsError OUT_OF_RANGE for confidence outside (0, 1).
 */
export function percentileInterval(
  replicates: ArrayLike<number>,
  confidence: number = DEFAULT_CONFIDENCE,
): { low: number; high: number; resamples: number } {
  checkConfidence(confidence);
  const finite: number[] = [];
  for (let b = 0; b < replicates.length; b++) {
    const x = replicates[b]!;
    if (Number.isFinite(x)) finite.push(x);
  }
  if (finite.length === 0) return { low: NaN, high: NaN, resamples: 0 };
  const sorted = Float64Array.from(finite).sort();
  const lowLevel = (1 - confidence) / 2;
  return {
    low: quantileType7(sorted, lowLevel),
    high: quantileType7(sorted, 1 - lowLevel),
    resamples: sorted.length,
  };
}

/** Build an {@link Estimate} from a full-sample value and its replicates. O(B log B). */
export function estimateFrom(value: number, replicates: ArrayLike<number>, confidence: number = DEFAULT_CONFIDENCE): Estimate {
  const { low, high, resamples } = percentileInterval(replicates, confidence);
  return { value, ciLow: low, ciHigh: high, confidence, resamples };
}

/** Where {@link groupedMeanReplicates} writes: `out[offset + r·runStride + b]`. */
export interface ReplicateTarget {
  out: Float64Array;
  offset: number;
  runStride: number;
}

/** Largest integer (exclusive) a float64 represents exactly: 2^53. */
const MANTISSA_BITS = 53;

/**
 * Bootstrap replicates of a grouped mean for several runs sharing one set of groups
 * (one variable: groups = reference classes for balanced accuracy, a single group for means;
 * −1 = report without reference, which keeps its multiplicity but adds nothing).
 *
 * Replicate (r, b) = mean over groups g with D_g(w_b) > 0 of N_gr(w_b) / D_g(w_b). Reports are
 * reordered so each group is a contiguous segment; for each replicate the multiplicities are
 * gathered once and each (run, group) numerator is one dot product. Runs whose item scores
 * are all 0/1 are packed several to a float64 (lanes of ⌈log2(n+1)⌉ bits, since no lane sum
 * exceeds Σw = n), which keeps every sum an exact integer and divides the work by the lane
 * count (`packBinary = false` turns this off, for verification and benchmarks). Result layout:
 * run-major, replicate fastest, unless a target is given.
 * O(B · n_annotated · (1 + runs / lanes)).
 *
 * @throws AnalyticsError LENGTH_MISMATCH for inconsistent lengths; BAD_INPUT for a non-finite
 *   item score of an annotated report.
 */
export function groupedMeanReplicates(
  groups: ArrayLike<number>,
  runItems: readonly ArrayLike<number>[],
  multiplicities: Int32Array,
  B: number,
  target?: ReplicateTarget | null,
  packBinary = true,
): Float64Array {
  const n = groups.length;
  checkCounts(n, B);
  if (multiplicities.length !== n * B) {
    throw new AnalyticsError('LENGTH_MISMATCH', `multiplicities hold ${multiplicities.length} entries, expected ${B} × ${n}`);
  }
  const R = runItems.length;
  const out = target?.out ?? new Float64Array(R * B);
  const offset = target?.offset ?? 0;
  const runStride = target?.runStride ?? B;

  // Counting sort of annotated reports by dense group code.
  const dense = new Map<number, number>();
  const codes = new Int32Array(n);
  let nv = 0;
  for (let i = 0; i < n; i++) {
    const g = groups[i]!;
    if (!(g >= 0)) {
      codes[i] = -1;
      continue;
    }
    let d = dense.get(g);
    if (d === undefined) {
      d = dense.size;
      dense.set(g, d);
    }
    codes[i] = d;
    nv++;
  }
  const G = dense.size;
  const segStart = new Int32Array(G + 1);
  for (let i = 0; i < n; i++) if (codes[i]! >= 0) segStart[codes[i]! + 1]!++;
  for (let g = 0; g < G; g++) segStart[g + 1]! += segStart[g]!;
  const fill = segStart.slice(0, G);
  const idx = new Int32Array(nv);
  for (let i = 0; i < n; i++) if (codes[i]! >= 0) idx[fill[codes[i]!]!++] = i;

  // Gather items in segment order; split runs into packable (0/1) and general.
  const binaryRuns: number[] = [];
  const generalRuns: number[] = [];
  const gathered: Float64Array[] = runItems.map((items, r) => {
    if (items.length !== n) throw new AnalyticsError('LENGTH_MISMATCH', `run ${r}: ${items.length} item scores for ${n} reports`);
    const x = new Float64Array(nv);
    let binary = true;
    for (let k = 0; k < nv; k++) {
      const v = items[idx[k]!]!;
      if (!Number.isFinite(v)) throw new AnalyticsError('BAD_INPUT', `run ${r}: item score ${v} for annotated report ${idx[k]}`);
      x[k] = v;
      if (v !== 0 && v !== 1) binary = false;
    }
    (binary ? binaryRuns : generalRuns).push(r);
    return x;
  });

  const bits = Math.max(1, Math.ceil(Math.log2(n + 1)));
  const lanes = packBinary ? Math.max(1, Math.floor(MANTISSA_BITS / bits)) : 1;
  const base = 2 ** bits;
  const chunks: { runs: number[]; data: Float64Array }[] = [];
  if (lanes >= 2) {
    for (let c = 0; c < binaryRuns.length; c += lanes) {
      const runs = binaryRuns.slice(c, c + lanes);
      const data = new Float64Array(nv);
      runs.forEach((r, l) => {
        const x = gathered[r]!;
        const scale = base ** l;
        for (let k = 0; k < nv; k++) data[k]! += x[k]! * scale;
      });
      chunks.push({ runs, data });
    }
  } else {
    for (const r of binaryRuns) chunks.push({ runs: [r], data: gathered[r]! });
  }
  for (const r of generalRuns) chunks.push({ runs: [r], data: gathered[r]! });

  const wv = new Float64Array(nv);
  const den = new Float64Array(G);
  const acc = new Float64Array(lanes);
  const scoreSum = new Float64Array(R);
  for (let b = 0; b < B; b++) {
    const row = b * n;
    for (let k = 0; k < nv; k++) wv[k] = multiplicities[row + idx[k]!]!;
    let present = 0;
    for (let g = 0; g < G; g++) {
      let s = 0;
      for (let k = segStart[g]!, e = segStart[g + 1]!; k < e; k++) s += wv[k]!;
      den[g] = s;
      if (s > 0) present++;
    }
    scoreSum.fill(0);
    for (const chunk of chunks) {
      const data = chunk.data;
      const L = chunk.runs.length;
      for (let g = 0; g < G; g++) {
        const d = den[g]!;
        if (d === 0) continue;
        let s = 0;
        for (let k = segStart[g]!, e = segStart[g + 1]!; k < e; k++) s += wv[k]! * data[k]!;
        if (L === 1) {
          scoreSum[chunk.runs[0]!]! += s / d;
        } else {
          for (let l = 0; l < L; l++) {
            const q = Math.floor(s / base);
            acc[l] = s - q * base;
            s = q;
          }
          for (let l = 0; l < L; l++) scoreSum[chunk.runs[l]!]! += acc[l]! / d;
        }
      }
    }
    for (let r = 0; r < R; r++) out[offset + r * runStride + b] = present === 0 ? NaN : scoreSum[r]! / present;
  }
  return out;
}

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
  multiplicities?: Int32Array | null;
  /** Pack 0/1 item scores of several runs into one float64 (default true; exact either way). */
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
  multiplicities: Int32Array;
}

function variableWeights(variables: readonly GridVariable[]): Float64Array {
  return Float64Array.from(variables, (v) => {
    const w = v.weight ?? 1;
    if (!(w >= 0) || !Number.isFinite(w)) throw new AnalyticsError('BAD_INPUT', `variable "${v.key}": weight ${w}`);
    return w;
  });
}

/**
 * Paired bootstrap over a grid of runs × variables (METRICS.md §5). Point estimates are the
 * full-sample grouped means; each replicate recomputes every variable's score from the shared
 * multiplicities, and the macro average of a replicate is Σ_v u_v s_rvb / Σ_v u_v over the
 * variables defined in that replicate (u = weights). Intervals: {@link percentileInterval}.
 * O(B · V · n · (1 + runs / lanes)) time, O(runs · V · B + B · n) memory.
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
  variables.forEach((variable, v) => {
    const items = runs.map((r) => r.items[v]!);
    groupedMeanReplicates(variable.groups, items, W, B, { out: replicates, offset: v * B, runStride: V * B }, input.packBinary ?? true);
    items.forEach((x, r) => {
      points[r * V + v] = groupedMean(variable.groups, x);
    });
  });

  const macroReplicates = new Float64Array(R * B);
  const macroPoints = new Float64Array(R);
  for (let r = 0; r < R; r++) {
    macroPoints[r] = weightedFiniteMean(points, r * V, 1, V, weights);
    for (let b = 0; b < B; b++) macroReplicates[r * B + b] = weightedFiniteMean(replicates, r * V * B + b, B, V, weights);
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

/** A paired difference A − B with its percentile interval and two-sided bootstrap p-value. */
export interface PairedDifference {
  estimate: Estimate;
  /**
   * Two-sided bootstrap p-value p = min(1, 2 · (1 + min(#{d_b ≤ 0}, #{d_b ≥ 0})) / (B' + 1)),
   * with d_b the replicate differences and B' the finite ones. It is the smallest α at which the
   * percentile interval excludes 0 (up to the +1 correction, which keeps p > 0).
   */
  pValue: number;
}

/**
 * Paired difference of two statistics evaluated on the same resamples (METRICS.md §5): point
 * = pointA − pointB; replicates d_b = a_b − b_b (pairs with a non-finite side dropped);
 * percentile interval of d; p-value as documented on {@link PairedDifference}. O(B log B).
 *
 * @throws AnalyticsError LENGTH_MISMATCH when the replicate arrays differ in length.
 */
export function pairedDifference(
  pointA: number,
  pointB: number,
  replicatesA: ArrayLike<number>,
  replicatesB: ArrayLike<number>,
  confidence: number = DEFAULT_CONFIDENCE,
): PairedDifference {
  if (replicatesA.length !== replicatesB.length) {
    throw new AnalyticsError('LENGTH_MISMATCH', `paired difference of ${replicatesA.length} and ${replicatesB.length} replicates`);
  }
  const d = new Float64Array(replicatesA.length);
  let le = 0;
  let ge = 0;
  let finite = 0;
  for (let b = 0; b < d.length; b++) {
    const x = replicatesA[b]! - replicatesB[b]!;
    d[b] = x;
    if (!Number.isFinite(x)) continue;
    finite++;
    if (x <= 0) le++;
    if (x >= 0) ge++;
  }
  const estimate = estimateFrom(pointA - pointB, d, confidence);
  const pValue = finite === 0 ? NaN : Math.min(1, (2 * (1 + Math.min(le, ge))) / (finite + 1));
  return { estimate, pValue };
}

/**
 * Paired difference of two runs of a grid, on one variable (index) or on the macro average
 * (`variable` omitted). O(B log B).
 *
 * @throws AnalyticsError OUT_OF_RANGE for an index outside the grid.
 */
export function gridPairedDifference(
  grid: BootstrapGridResult,
  runA: number,
  runB: number,
  variable?: number | null,
): PairedDifference {
  const R = grid.runIds.length;
  const V = grid.variableKeys.length;
  const B = grid.resamples;
  for (const r of [runA, runB]) {
    if (!Number.isInteger(r) || r < 0 || r >= R) throw new AnalyticsError('OUT_OF_RANGE', `run index ${r} outside 0..${R - 1}`);
  }
  if (variable === undefined || variable === null) {
    return pairedDifference(
      grid.macroPoints[runA]!,
      grid.macroPoints[runB]!,
      grid.macroReplicates.subarray(runA * B, (runA + 1) * B),
      grid.macroReplicates.subarray(runB * B, (runB + 1) * B),
      grid.confidence,
    );
  }
  if (!Number.isInteger(variable) || variable < 0 || variable >= V) {
    throw new AnalyticsError('OUT_OF_RANGE', `variable index ${variable} outside 0..${V - 1}`);
  }
  const a = (runA * V + variable) * B;
  const b = (runB * V + variable) * B;
  return pairedDifference(
    grid.points[runA * V + variable]!,
    grid.points[runB * V + variable]!,
    grid.replicates.subarray(a, a + B),
    grid.replicates.subarray(b, b + B),
    grid.confidence,
  );
}
