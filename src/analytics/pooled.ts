/**
 * Pooled rates over predictions of several runs (RADS paper Tables 3.1–3.3, Supplementary
 * Table 7): validity, effective and conditional accuracy of a group of runs, overall or in a
 * stratum, with a bootstrap interval from resampling reports (docs/scoring.md §5).
 */
import { DEFAULT_CONFIDENCE, estimateFrom } from './bootstrap';
import type { Estimate, MultiplicityMatrix } from './bootstrap';
import { AnalyticsError } from './errors';

/**
 * Per-report sums of one dataset: numerator[i] and denominator[i] add up the observations (run ×
 * variable) of report i, and `multiplicities` is that dataset's B × n resample matrix (shared with
 * every other statistic of the dataset, so pooled rates are paired with run scores).
 */
export interface PooledPart {
  numerator: ArrayLike<number>;
  denominator: ArrayLike<number>;
  multiplicities: MultiplicityMatrix;
}

export interface PooledRatio {
  /** Σ numerator / Σ denominator on the full sample; NaN when the denominator is 0. */
  estimate: Estimate;
  /** Replicate b: Σ_parts Σ_i W_b,i num_i / Σ_parts Σ_i W_b,i den_i (NaN when 0/0). */
  replicates: Float64Array;
}

/**
 * Pooled ratio of sums with a report-level (cluster) bootstrap.
 *
 * Definition: R = Σ_i num_i / Σ_i den_i over the reports of every part; replicate b of part p
 * weights report i by its multiplicity W^p_{b,i}, and the parts (independent datasets) are
 * resampled independently, i.e. a bootstrap stratified by dataset. With num = correct
 * observations and den = scored observations R is the pooled effective accuracy; with num =
 * valid and den = scored, validity; with num = correct and den = valid, conditional accuracy.
 * Observations of one report stay together in every resample, so the interval accounts for the
 * clustering of many runs' predictions on the same report. Point estimate: the full sample;
 * interval: percentile (type 7) as {@link estimateFrom}.
 * Complexity: O(B · Σ_p n_p) time, O(B) memory.
 *
 * @throws AnalyticsError EMPTY_INPUT without parts; LENGTH_MISMATCH when a part's arrays do not
 *   match its matrix, or parts have different B; BAD_INPUT for a negative or non-finite sum.
 */
export function pooledRatio(parts: readonly PooledPart[], confidence: number = DEFAULT_CONFIDENCE): PooledRatio {
  if (parts.length === 0) throw new AnalyticsError('EMPTY_INPUT', 'pooledRatio: no parts');
  let B = -1;
  let num = 0;
  let den = 0;
  for (const p of parts) {
    const n = p.numerator.length;
    if (p.denominator.length !== n || n === 0 || p.multiplicities.length % n !== 0) {
      throw new AnalyticsError('LENGTH_MISMATCH', `pooledRatio: ${n} numerators, ${p.denominator.length} denominators, ${p.multiplicities.length} multiplicities`);
    }
    const b = p.multiplicities.length / n;
    if (B >= 0 && b !== B) throw new AnalyticsError('LENGTH_MISMATCH', `pooledRatio: parts with ${B} and ${b} resamples`);
    B = b;
    for (let i = 0; i < n; i++) {
      const x = p.numerator[i]!;
      const d = p.denominator[i]!;
      if (!(x >= 0 && d >= 0 && Number.isFinite(x) && Number.isFinite(d))) {
        throw new AnalyticsError('BAD_INPUT', `pooledRatio: report ${i} has sums ${x} / ${d}`);
      }
      num += x;
      den += d;
    }
  }
  const rNum = new Float64Array(B);
  const rDen = new Float64Array(B);
  for (const p of parts) {
    const n = p.numerator.length;
    const W = p.multiplicities;
    for (let b = 0; b < B; b++) {
      const row = b * n;
      let sn = 0;
      let sd = 0;
      for (let i = 0; i < n; i++) {
        const w = W[row + i]!;
        if (w === 0) continue;
        sn += w * p.numerator[i]!;
        sd += w * p.denominator[i]!;
      }
      rNum[b] += sn;
      rDen[b] += sd;
    }
  }
  const replicates = Float64Array.from(rNum, (x, b) => (rDen[b] === 0 ? Number.NaN : x / rDen[b]!));
  return { estimate: estimateFrom(den === 0 ? Number.NaN : num / den, replicates, confidence), replicates };
}
