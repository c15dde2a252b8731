/** Bootstrap replicates of one variable's grouped mean for several runs, paired across runs. */
import { AnalyticsError } from '../errors';
import { KernelSource } from './kernel-source';
import type { MultiplicityMatrix } from './multiplicities';
import { checkCounts } from './options';
import { scalarReplicates } from './scalar-kernel';

/** Where {@link groupedMeanReplicates} writes: `out[offset + r·runStride + b]`. */
export interface ReplicateTarget {
  out: Float64Array;
  offset: number;
  runStride: number;
}

/** Where the full-sample grouped means go (`out[offset + r·runStride]`); `done` once written. */
export interface PointTarget {
  out: Float64Array;
  offset: number;
  runStride: number;
  done: boolean;
}

/** Largest integer (exclusive) a float64 represents exactly: 2^53. */
const MANTISSA_BITS = 53;

/**
 * Bootstrap replicates of a grouped mean for several runs sharing one set of groups
 * (one variable: groups = reference classes for balanced accuracy, a single group for means;
 * −1 = report without reference, which keeps its multiplicity but adds nothing).
 *
 * Replicate (r, b) = mean over groups g with D_g(w_b) > 0 of N_gr(w_b) / D_g(w_b). Reports are
 * reordered so each group is a contiguous segment. Runs whose item scores are all 0/1 go to
 * the integer kernel of ../bootstrap-kernel.ts (WebAssembly SIMD: per (run, group) only the
 * minority value's reports are summed, 128 replicates at a time); the numerators are exact
 * integers, so the replicates are bit-identical to the scalar kernel's. Runs with other item
 * scores go to the same kernel's real-valued path (runs in f64 lanes, per replicate only the
 * reports drawn at least once, each numerator summed left to right in segment order as the
 * scalar kernel does: bit-identical too). When that kernel is unavailable or declines the
 * matrix (an entry outside 0…255 or a row sum above 65535), runs use the scalar kernel: per
 * replicate the multiplicities are gathered once
 * and each (run, group) numerator is one dot product in segment order, with 0/1 runs packed
 * several to a float64 (lanes wide enough for the largest row sum, so sums stay exact).
 * `packBinary = false` sends every run to the unpacked scalar kernel (verification,
 * benchmarks). Result layout: run-major, replicate fastest, unless a target is given.
 * O(B · Σ_{r,g} min(#ones, #zeros) / 16) vector operations for 0/1 runs, O(B · #{w > 0} / 2)
 * per other run, plus O(B · n) to load the matrix.
 *
 * @throws AnalyticsError LENGTH_MISMATCH for inconsistent lengths; BAD_INPUT for a non-finite
 *   item score of an annotated report.
 */
export function groupedMeanReplicates(
  groups: ArrayLike<number>,
  runItems: readonly ArrayLike<number>[],
  multiplicities: MultiplicityMatrix,
  B: number,
  target?: ReplicateTarget | null,
  packBinary = true,
): Float64Array {
  const kernelSource = new KernelSource(multiplicities);
  try {
    return groupedMeanReplicatesWith(groups, runItems, multiplicities, B, target, packBinary, kernelSource);
  } finally {
    kernelSource.release();
  }
}


/**
 * Checks one run's item scores and copies them, as u8, into bits[row + k] in segment order
 * (meaningful when they are 0/1), with each group's left-to-right sum at sums[sumAt + g];
 * returns whether every score is 0 or 1.
 * @throws AnalyticsError BAD_INPUT for a non-finite score of an annotated report.
 */
function gatherRun(
  items: ArrayLike<number>,
  r: number,
  idx: Int32Array,
  segStart: Int32Array,
  bits: Uint8Array,
  row: number,
  sums: Float64Array,
  sumAt: number,
): boolean {
  let binary = true;
  const G = segStart.length - 1;
  for (let g = 0; g < G; g++) {
    let sum = 0;
    for (let k = segStart[g]!, e = segStart[g + 1]!; k < e; k++) {
      const v = items[idx[k]!]!;
      // v − v is NaN exactly for NaN and ±Infinity.
      if (v - v !== 0) throw new AnalyticsError('BAD_INPUT', `run ${r}: item score ${v} for annotated report ${idx[k]}`);
      bits[row + k] = v;
      sum += v;
      // For finite v, fl(v·v) = v exactly when v is 0 or 1 (|v² − v| exceeds half an ulp of
      // v² otherwise); one multiply instead of two compares.
      if (v * v !== v) binary = false;
    }
    sums[sumAt + g] = sum;
  }
  return binary;
}

export function groupedMeanReplicatesWith(
  groups: ArrayLike<number>,
  runItems: readonly ArrayLike<number>[],
  multiplicities: MultiplicityMatrix,
  B: number,
  target: ReplicateTarget | null | undefined,
  packBinary: boolean,
  kernelSource: KernelSource,
  points?: PointTarget | null,
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
  let integerCodes = true;
  for (const code of dense.keys()) if (!Number.isInteger(code)) integerCodes = false;
  const segStart = new Int32Array(G + 1);
  for (let i = 0; i < n; i++) if (codes[i]! >= 0) segStart[codes[i]! + 1]!++;
  for (let g = 0; g < G; g++) segStart[g + 1]! += segStart[g]!;
  const fill = segStart.slice(0, G);
  const idx = new Int32Array(nv);
  for (let i = 0; i < n; i++) if (codes[i]! >= 0) idx[fill[codes[i]!]!++] = i;

  // Check and gather items in segment order (one buffer, row per run) with per-(run, group)
  // sums; split runs into 0/1 and general.
  const binaryRuns: number[] = [];
  const generalRuns: number[] = [];
  const bits = new Uint8Array(R * nv);
  const groupSums = new Float64Array(R * G);
  for (let r = 0; r < R; r++) {
    const items = runItems[r]!;
    if (items.length !== n) throw new AnalyticsError('LENGTH_MISMATCH', `run ${r}: ${items.length} item scores for ${n} reports`);
    const binary = gatherRun(items, r, idx, segStart, bits, r * nv, groupSums, r * G);
    (binary ? binaryRuns : generalRuns).push(r);
  }
  if (points && integerCodes) {
    // metrics.groupedMean per run from the group sums: its num[g] is the same left-to-right sum
    // of the same scores and den[g] the group size; groups are taken in ascending code order.
    const order = [...dense.entries()].sort((a, b) => a[0] - b[0]).map((e) => e[1]);
    for (let r = 0; r < R; r++) {
      let sum = 0;
      for (const d of order) sum += groupSums[r * G + d]! / (segStart[d + 1]! - segStart[d]!);
      points.out[points.offset + r * points.runStride] = G === 0 ? NaN : sum / G;
    }
    points.done = true;
  }
  // Scores as float64 in segment order, for the scalar kernel only.
  const gathered = (r: number): Float64Array => {
    const items = runItems[r]!;
    return Float64Array.from(idx, (i) => items[i]!);
  };

  // 0/1 runs and real-valued runs go to the SIMD kernel when it is available; the scalar loop
  // below takes the rest.
  if (packBinary && G > 0 && binaryRuns.length > 0) {
    const kernel = kernelSource.get(n, B);
    if (kernel && kernel.replicates({ idx, segStart, G }, bits, groupSums, binaryRuns, out, offset, runStride)) {
      binaryRuns.length = 0;
    }
  }
  if (packBinary && G > 0 && generalRuns.length > 0) {
    const kernel = kernelSource.get(n, B);
    if (kernel && kernel.realReplicates({ idx, segStart, G }, runItems, generalRuns, out, offset, runStride)) {
      generalRuns.length = 0;
    }
  }
  if (binaryRuns.length === 0 && generalRuns.length === 0) return out;

  // A lane sum is at most the largest row sum of the matrix (n for a drawn matrix; a supplied
  // one may sum higher); with a negative multiplicity lanes could borrow, so no packing then.
  const laneBound = packBinary && binaryRuns.length > 1 ? kernelSource.maxRowSum(n, B) : -1;
  const laneBits = Math.max(1, Math.ceil(Math.log2(laneBound + 1)));
  const lanes = laneBound >= 0 ? Math.max(1, Math.floor(MANTISSA_BITS / laneBits)) : 1;
  const base = 2 ** laneBits;
  const chunks: { runs: number[]; data: Float64Array }[] = [];
  if (lanes >= 2) {
    for (let c = 0; c < binaryRuns.length; c += lanes) {
      const runs = binaryRuns.slice(c, c + lanes);
      const data = new Float64Array(nv);
      runs.forEach((r, l) => {
        const x = gathered(r);
        const scale = base ** l;
        for (let k = 0; k < nv; k++) data[k]! += x[k]! * scale;
      });
      chunks.push({ runs, data });
    }
  } else {
    for (const r of binaryRuns) chunks.push({ runs: [r], data: gathered(r) });
  }
  for (const r of generalRuns) chunks.push({ runs: [r], data: gathered(r) });

  scalarReplicates(chunks, lanes, base, multiplicities, idx, segStart, n, B, R, out, offset, runStride);
  return out;
}
