/**
 * Vectorised, paired, seeded bootstrap of grouped-mean metrics (docs/scoring.md §5).
 *
 * A resample is a vector of multiplicities w (length N, sum N). Every per-variable metric is a
 * grouped mean (metrics.ts): mean over groups g with D_g(w) > 0 of N_g(w) / D_g(w), where
 * N_g(w) = Σ_{i∈g} w_i x_i and D_g(w) = Σ_{i∈g} w_i. One multiplicity matrix, derived only from
 * (N, B, seed), is shared by every run of a dataset, so runs are paired. A grid of runs ×
 * variables × replicates is computed over typed arrays in a WebAssembly SIMD kernel
 * (bootstrap-kernel.ts, its module assembled from wasm/bootstrap-kernel.wat): integer sums for
 * 0/1 item scores, f64 sums in the scalar definition's order for real-valued ones; no metric
 * function is called per replicate.
 */
import { unsafeUniformIntDistribution, xoroshiro128plus } from 'pure-rand';
import { drawMultiplicityRows, ReplicateKernel } from './bootstrap-kernel';
import { AnalyticsError } from './errors';
import { groupedMean } from './metrics';

/** Default seed of docs/scoring.md §5. */
export const DEFAULT_BOOTSTRAP_SEED = 42;
/** Default number of resamples B of docs/scoring.md §5. */
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
/**
 * A B × n multiplicity matrix (row b = resample b). Int32 as {@link bootstrapMultiplicities}
 * draws it; u8 where every entry is at most 255 (a quarter of the memory, the same numbers).
 */
export type MultiplicityMatrix = Int32Array | Uint8Array;

export function bootstrapMultiplicities(n: number, B: number, seed: number = DEFAULT_BOOTSTRAP_SEED): Int32Array {
  checkCounts(n, B);
  if (!Number.isSafeInteger(seed)) throw new AnalyticsError('BAD_INPUT', `seed must be an integer, got ${seed}`);
  const w = new Int32Array(B * n);
  if (n - 1 > 0xffffffff) {
    const rng = xoroshiro128plus(seed);
    for (let b = 0; b < B; b++) {
      const off = b * n;
      for (let k = 0; k < n; k++) w[off + unsafeUniformIntDistribution(0, n - 1, rng)]!++;
    }
    return w;
  }
  multiplicityRows(n, seed).fill(w, 0, B);
  return w;
}

/**
 * The rows of bootstrapMultiplicities(n, ·, seed) in order, drawn on demand: `fill(w, from, to)`
 * writes rows from..to − 1 of the matrix into `w` (B × n, zero where written), continuing the
 * generator where the previous call stopped, so rows drawn in several calls (`from` = the
 * previous `to`) are the matrix drawn at once, bit for bit. For n − 1 ≤ 2^32 − 1. The rows are
 * drawn by the WebAssembly module where it runs (`kernel` false: in JavaScript), the same numbers.
 */
export function multiplicityRows(n: number, seed: number, kernel = true): { fill(w: Int32Array, from: number, to: number): void } {
  // pure-rand 7's xoroshiro128plus(seed).unsafeNext() and unsafeUniformIntDistribution(0, n − 1)
  // inlined (same state words, same rejection threshold), which draws the same matrix without a
  // call and an object per draw; a unit test compares the two bit for bit.
  const state = [-1, ~seed, seed | 0, 0];
  const maxAllowed = n > 2 ? ~~(0x100000000 / n) * n : 0x100000000;
  return {
    fill(w, from, to) {
      // The same generator in the WebAssembly module, 1.7 times as fast at 1,252 reports and
      // 2.3–2.9 times at 20,000; below, where it is missing.
      if (kernel && drawMultiplicityRows(n, state, w, from, to)) return;
      let s01 = state[0]!;
      let s00 = state[1]!;
      let s11 = state[2]!;
      let s10 = state[3]!;
      for (let b = from; b < to; b++) {
        const off = b * n;
        for (let k = 0; k < n; k++) {
          let v: number;
          do {
            const out = (s00 + s10) | 0;
            const a0 = s10 ^ s00;
            const a1 = s11 ^ s01;
            const t00 = s00;
            const t01 = s01;
            s00 = (t00 << 24) ^ (t01 >>> 8) ^ a0 ^ (a0 << 16);
            s01 = (t01 << 24) ^ (t00 >>> 8) ^ a1 ^ ((a1 << 16) | (a0 >>> 16));
            s10 = (a1 << 5) ^ (a0 >>> 27);
            s11 = (a0 << 5) ^ (a1 >>> 27);
            v = out + 0x80000000;
          } while (v >= maxAllowed);
          // v < 2^32, so the float quotient is within 2^-21 / n of v / n and its floor is exact:
          // this is v % n without the slow float remainder.
          w[off + v - Math.floor(v / n) * n]!++;
        }
      }
      state[0] = s01;
      state[1] = s00;
      state[2] = s11;
      state[3] = s10;
    },
  };
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
 * Only the order statistics the two quantiles read are found — by a histogram of the values
 * (O(B)), or, when a needed bucket is crowded, tail buffers for tail levels or selection (O(B)
 * expected); a sort when −0 is present or B < 64 — so the result is the sorted-array
 * definition's bit for bit.
 *
 * @throws AnalyticsError OUT_OF_RANGE for confidence outside (0, 1).
 */
export function percentileInterval(
  replicates: ArrayLike<number>,
  confidence: number = DEFAULT_CONFIDENCE,
): { low: number; high: number; resamples: number } {
  checkConfidence(confidence);
  // Scratch reused across calls (the function is synchronous and returns plain numbers); kept
  // only up to SCRATCH_MAX values.
  let finite = intervalScratch;
  if (finite.length < replicates.length) {
    finite = new Float64Array(replicates.length);
    if (replicates.length <= SCRATCH_MAX) intervalScratch = finite;
  }
  let m = 0;
  let negativeZero = false;
  for (let b = 0; b < replicates.length; b++) {
    const x = replicates[b]!;
    // x − x is 0 exactly for finite x.
    if (x - x === 0) {
      finite[m++] = x;
      if (x === 0 && 1 / x < 0) negativeZero = true;
    }
  }
  if (m === 0) return { low: NaN, high: NaN, resamples: 0 };
  const lowLevel = (1 - confidence) / 2;
  const highLevel = 1 - lowLevel;
  const values = finite.subarray(0, m);
  const need = [...type7Positions(m, lowLevel), ...type7Positions(m, highLevel)];
  // Sizes of the bottom and top sets that hold every needed order statistic.
  let kLow = 0;
  let kHigh = 0;
  for (const k of need) {
    if (2 * k < m) kLow = Math.max(kLow, k + 1);
    else kHigh = Math.max(kHigh, m - k);
  }
  if (negativeZero || m < SELECT_MIN) {
    // A sort orders −0 before +0, which selection by `<` cannot see; keep the sort there.
    values.sort();
  } else if (histogramOrderStatistics(values, need)) {
    // Done in place: the usual case.
  } else if (kLow + kHigh <= Math.min(m / 8, TAIL_MAX) && tailOrderStatistics(values, need, kLow, kHigh)) {
    // Tail quantiles over skewed values: done in place by tailOrderStatistics.
  } else {
    // Other levels: place each needed order statistic by selection (O(m) each).
    need.sort((a, b) => a - b);
    let left = 0;
    for (const k of need) {
      if (k < left) continue;
      if (k === left) {
        // Right after a selected position: the minimum of the rest.
        let at = k;
        for (let i = k + 1; i < m; i++) if (values[i]! < values[at]!) at = i;
        swap(values, k, at);
      } else {
        selectInPlace(values, k, left, m - 1);
      }
      left = k + 1;
    }
  }
  return {
    low: quantileType7(values, lowLevel),
    high: quantileType7(values, highLevel),
    resamples: m,
  };
}

let intervalScratch = new Float64Array(0);
const SCRATCH_MAX = 1 << 16;

/** Below this many values a sort is as fast as selection. */
const SELECT_MIN = 64;
/** Histogram buckets: at most this many, and at most this many values in a needed bucket. */
const HIST_MAX_BUCKETS = 4096;
const HIST_MAX_IN_BUCKET = 64;
const histCounts = new Int32Array(HIST_MAX_BUCKETS);
/** Slot of each needed bucket, −1 elsewhere (reset after each use). */
const histSlots = new Int8Array(HIST_MAX_BUCKETS).fill(-1);
/** Values of the needed buckets: at most 4 positions are needed, so at most 4 slots. */
const histPicked = new Float64Array(4 * HIST_MAX_IN_BUCKET);

/**
 * Order statistics by bucketing: bucket(x) = ⌊(x − min)·NB/(max − min)⌋ is non-decreasing in x
 * (each rounding step is monotone), so the value of sorted position k lies in the bucket where
 * the cumulative count passes k, at rank k − (count before it). Three passes (range, counts,
 * collect the needed buckets' values) and a sort of those few values: O(m + NB). Writes each
 * needed position of `values`; returns false, leaving `values` unchanged, when the range is
 * not representable or a needed bucket holds more than HIST_MAX_IN_BUCKET values (then
 * another method is used).
 */
function histogramOrderStatistics(values: Float64Array, need: readonly number[]): boolean {
  const m = values.length;
  let lo = values[0]!;
  let hi = lo;
  for (let i = 1; i < m; i++) {
    const x = values[i]!;
    if (x < lo) lo = x;
    if (x > hi) hi = x;
  }
  if (lo === hi) {
    for (const k of need) values[k] = lo;
    return true;
  }
  let NB = 256;
  while (NB < HIST_MAX_BUCKETS && NB * 4 < m) NB *= 2;
  const scale = NB / (hi - lo);
  if (!(scale > 0 && scale < Infinity)) return false;
  const last = NB - 1;
  const counts = histCounts;
  counts.fill(0, 0, NB);
  for (let i = 0; i < m; i++) {
    const b = ((values[i]! - lo) * scale) | 0;
    counts[b < last ? b : last]!++;
  }
  // Needed buckets in ascending order (need may be unsorted): slot per bucket, count before it.
  const order = [...need].sort((a, b) => a - b);
  const slotOf = histSlots;
  const bucketOfSlot: number[] = [];
  const before: number[] = [];
  let cum = 0;
  let q = 0;
  for (let b = 0; b < NB && q < order.length; b++) {
    const c = counts[b]!;
    if (order[q]! < cum + c) {
      if (c > HIST_MAX_IN_BUCKET) {
        for (const used of bucketOfSlot) slotOf[used] = -1;
        return false;
      }
      slotOf[b] = bucketOfSlot.length;
      bucketOfSlot.push(b);
      before.push(cum);
      while (q < order.length && order[q]! < cum + c) q++;
    }
    cum += c;
  }
  // Collect the needed buckets' values (slot s at picked[s·MAX …]) and sort each.
  const picked = histPicked;
  const fill = [0, 0, 0, 0, 0, 0, 0, 0].slice(0, bucketOfSlot.length);
  for (let i = 0; i < m; i++) {
    const x = values[i]!;
    const b = ((x - lo) * scale) | 0;
    const s = slotOf[b < last ? b : last]!;
    if (s >= 0) picked[s * HIST_MAX_IN_BUCKET + fill[s]!++] = x;
  }
  for (let s = 0; s < bucketOfSlot.length; s++) {
    insertionSort(picked, s * HIST_MAX_IN_BUCKET, s * HIST_MAX_IN_BUCKET + fill[s]!);
    slotOf[bucketOfSlot[s]!] = -1;
  }
  const out: number[] = [];
  for (const k of need) {
    let s = bucketOfSlot.length - 1;
    while (before[s]! > k) s--;
    out.push(picked[s * HIST_MAX_IN_BUCKET + k - before[s]!]!);
  }
  need.forEach((k, j) => {
    values[k] = out[j]!;
  });
  return true;
}

/** Sorts a[from..to) ascending in place (for a few values). */
function insertionSort(a: Float64Array, from: number, to: number): void {
  for (let i = from + 1; i < to; i++) {
    const x = a[i]!;
    let j = i;
    for (; j > from && a[j - 1]! > x; j--) a[j] = a[j - 1]!;
    a[j] = x;
  }
}

/** Largest total size of the tail buffers (beyond it selection is as fast). */
const TAIL_MAX = 256;

/**
 * Writes the needed order statistics into their sorted positions of `values`, from the kLow
 * smallest and kHigh largest values found by {@link extremes}. Returns false, leaving `values`
 * unchanged, when the input order made the buffers too costly (the caller then selects).
 */
function tailOrderStatistics(values: Float64Array, need: readonly number[], kLow: number, kHigh: number): boolean {
  const m = values.length;
  const low = new Float64Array(Math.max(1, kLow));
  const high = new Float64Array(Math.max(1, kHigh));
  if (!extremes(values, low, kLow, high, kHigh)) return false;
  for (const k of need) values[k] = 2 * k < m ? low[k]! : high[m - 1 - k]!;
  return true;
}

/**
 * In one pass over a (finite values), the kLow smallest values (ascending, into low) and the
 * kHigh largest (descending, into high), by insertion into the sorted buffers; a value is
 * compared with the current buffer ends only. O(m + k · insertions), with k(1 + ln(m / k)) insertions in
 * expectation when a is in random order (as bootstrap replicates are); gives up (returns false)
 * after four times that many plus 64, which bounds the work on adversarial orders.
 * Needs kLow + kHigh ≤ m.
 */
function extremes(a: Float64Array, low: Float64Array, kLow: number, high: Float64Array, kHigh: number): boolean {
  const m = a.length;
  const k = Math.max(kLow, kHigh);
  let budget = 2 * 4 * k * (1 + Math.log(m / k)) + 64;
  // Buffers start full of ±Infinity, so (a being finite) the first values always enter.
  low.fill(Infinity);
  high.fill(-Infinity);
  const lastLow = kLow - 1;
  const lastHigh = kHigh - 1;
  let lowTop = kLow > 0 ? Infinity : -Infinity;
  let highTop = kHigh > 0 ? -Infinity : Infinity;
  for (let i = 0; i < m; i++) {
    const x = a[i]!;
    if (x < lowTop) {
      if (--budget < 0) return false;
      lowTop = insertAscending(low, lastLow, x);
    }
    if (x > highTop) {
      if (--budget < 0) return false;
      highTop = insertDescending(high, lastHigh, x);
    }
  }
  return true;
}

/** Insert x into buf (ascending), dropping buf[last]; returns the new buf[last]. */
function insertAscending(buf: Float64Array, last: number, x: number): number {
  let j = last;
  for (; j > 0 && buf[j - 1]! > x; j--) buf[j] = buf[j - 1]!;
  buf[j] = x;
  return buf[last]!;
}

/** Insert x into buf (descending), dropping buf[last]; returns the new buf[last]. */
function insertDescending(buf: Float64Array, last: number, x: number): number {
  let j = last;
  for (; j > 0 && buf[j - 1]! < x; j--) buf[j] = buf[j - 1]!;
  buf[j] = x;
  return buf[last]!;
}

/** Sorted positions {@link quantileType7} reads for level p of m values. */
function type7Positions(m: number, p: number): number[] {
  const h = (m - 1) * p;
  if (h >= m - 1) return [m - 1];
  const lo = Math.floor(h);
  return [lo, lo + 1];
}

/**
 * Floyd–Rivest selection: reorders a[left..right] so that a[k] is the value a sort would put
 * there, with no larger value before it and no smaller after it. Expected O(right − left).
 */
function selectInPlace(a: Float64Array, k: number, left: number, right: number): void {
  while (right > left) {
    if (right - left > 600) {
      const size = right - left + 1;
      const i = k - left + 1;
      const z = Math.log(size);
      const s = 0.5 * Math.exp((2 * z) / 3);
      const sd = 0.5 * Math.sqrt((z * s * (size - s)) / size) * (i - size / 2 < 0 ? -1 : 1);
      const newLeft = Math.max(left, Math.floor(k - (i * s) / size + sd));
      const newRight = Math.min(right, Math.floor(k + ((size - i) * s) / size + sd));
      selectInPlace(a, k, newLeft, newRight);
    }
    const t = a[k]!;
    let i = left;
    let j = right;
    swap(a, left, k);
    if (a[right]! > t) swap(a, left, right);
    while (i < j) {
      swap(a, i, j);
      i++;
      j--;
      while (a[i]! < t) i++;
      while (a[j]! > t) j--;
    }
    if (a[left] === t) swap(a, left, j);
    else {
      j++;
      swap(a, j, right);
    }
    if (j <= k) left = j + 1;
    if (k <= j) right = j - 1;
  }
}

function swap(a: Float64Array, i: number, j: number): void {
  const t = a[i]!;
  a[i] = a[j]!;
  a[j] = t;
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

/** Where the full-sample grouped means go (`out[offset + r·runStride]`); `done` once written. */
interface PointTarget {
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
 * the integer kernel of bootstrap-kernel.ts (WebAssembly SIMD: per (run, group) only the
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
 * The SIMD kernel with one multiplicity matrix loaded, created on first use and shared by every
 * variable of a grid (so the matrix is transposed once); null when unavailable or declined.
 */
class KernelSource {
  private kernel: ReplicateKernel | null | undefined;
  constructor(
    private readonly W: MultiplicityMatrix,
    private readonly matrixId: number | null = null,
  ) {}
  get(n: number, B: number): ReplicateKernel | null {
    if (this.kernel === undefined) {
      const k = ReplicateKernel.acquire();
      this.kernel = k && k.load(this.W, n, B, this.matrixId) ? k : null;
      if (k && !this.kernel) k.release();
    }
    return this.kernel;
  }
  private rowSumBound: number | undefined;
  /** Largest row sum of the matrix, or −1 when an entry is negative. O(B·n) once. */
  maxRowSum(n: number, B: number): number {
    if (this.rowSumBound === undefined) {
      let max = 0;
      for (let b = 0; b < B && max >= 0; b++) {
        let sum = 0;
        for (let i = b * n, e = i + n; i < e; i++) {
          const w = this.W[i]!;
          if (w < 0) {
            sum = -1;
            break;
          }
          sum += w;
        }
        max = sum < 0 ? -1 : Math.max(max, sum);
      }
      this.rowSumBound = max;
    }
    return this.rowSumBound;
  }
  /** Hand the kernel back; call once the grid is done (also after an error). */
  release(): void {
    this.kernel?.release();
    this.kernel = null;
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

function groupedMeanReplicatesWith(
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

/**
 * The scalar kernel: per replicate, gather the multiplicities in segment order, then one dot
 * product per (chunk, group); a chunk is one run or several 0/1 runs packed in float64 lanes of
 * width `base`. A function of its own so that V8 optimises it independently of the SIMD path.
 */
function scalarReplicates(
  chunks: readonly { runs: number[]; data: Float64Array }[],
  lanes: number,
  base: number,
  multiplicities: MultiplicityMatrix,
  idx: Int32Array,
  segStart: Int32Array,
  n: number,
  B: number,
  R: number,
  out: Float64Array,
  offset: number,
  runStride: number,
): void {
  const nv = idx.length;
  const G = segStart.length - 1;
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
    for (const chunk of chunks) {
      for (const r of chunk.runs) out[offset + r * runStride + b] = present === 0 ? NaN : scoreSum[r]! / present;
    }
  }
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
 * variables defined in that replicate (u = weights). Intervals: {@link percentileInterval}.
 * The multiplicity matrix is loaded into the 0/1 kernel once for all variables.
 * Time: O(B · n) for the matrix, {@link groupedMeanReplicates} per variable, O(runs · V · B)
 * for the macro replicates and intervals; memory O(runs · V · B + B · n).
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
 * Paired difference of two statistics evaluated on the same resamples (docs/scoring.md §5): point
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
  for (let b = 0; b < d.length; b++) d[b] = replicatesA[b]! - replicatesB[b]!;
  return { estimate: estimateFrom(pointA - pointB, d, confidence), pValue: bootstrapPValue(d) };
}

/**
 * Two-sided bootstrap p-value of "the difference is 0" from replicate differences d_b:
 * p = min(1, 2 · (1 + min(#{d_b ≤ 0}, #{d_b ≥ 0})) / (B' + 1)), B' the finite replicates (NaN
 * when there is none). The same definition as {@link PairedDifference.pValue}. O(B).
 */
export function bootstrapPValue(differences: ArrayLike<number>): number {
  let le = 0;
  let ge = 0;
  let finite = 0;
  for (let b = 0; b < differences.length; b++) {
    const x = differences[b]!;
    if (!Number.isFinite(x)) continue;
    finite++;
    if (x <= 0) le++;
    if (x >= 0) ge++;
  }
  return finite === 0 ? NaN : Math.min(1, (2 * (1 + Math.min(le, ge))) / (finite + 1));
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
