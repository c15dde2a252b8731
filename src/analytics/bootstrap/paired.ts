/** Paired differences of two statistics on the same resamples, and their bootstrap p-values. */
import { AnalyticsError } from '../errors';
import type { BootstrapGridResult } from './grid';
import { DEFAULT_CONFIDENCE } from './options';
import type { Estimate } from './options';
import { estimateFrom } from './percentile';

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
