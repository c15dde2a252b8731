/** Type-7 quantiles and bootstrap percentile intervals. */
import { AnalyticsError } from '../errors';
import { checkConfidence, DEFAULT_CONFIDENCE } from './options';
import type { Estimate } from './options';
import { placeOrderStatistics } from './order-statistics';

/**
 * The finite replicates of the interval being computed, reused across calls and kept only up to
 * SCRATCH_MAX values. Shared by every call in this thread and not reentrant: valid only during
 * one synchronous percentileInterval call, which returns plain numbers and keeps no view of it.
 */
let intervalScratch = new Float64Array(0);
const SCRATCH_MAX = 1 << 16;

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
  placeOrderStatistics(values, need, negativeZero);
  return {
    low: quantileType7(values, lowLevel),
    high: quantileType7(values, highLevel),
    resamples: m,
  };
}

/** Sorted positions {@link quantileType7} reads for level p of m values. */
function type7Positions(m: number, p: number): number[] {
  const h = (m - 1) * p;
  if (h >= m - 1) return [m - 1];
  const lo = Math.floor(h);
  return [lo, lo + 1];
}

/** Build an {@link Estimate} from a full-sample value and its replicates. O(B log B). */
export function estimateFrom(value: number, replicates: ArrayLike<number>, confidence: number = DEFAULT_CONFIDENCE): Estimate {
  const { low, high, resamples } = percentileInterval(replicates, confidence);
  return { value, ciLow: low, ciHigh: high, confidence, resamples };
}
