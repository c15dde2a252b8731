/** Defaults of the bootstrap (docs/scoring.md §5), the estimate it reports, and its input checks. */
import { AnalyticsError } from '../errors';

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

export function checkConfidence(confidence: number): void {
  if (!(confidence > 0 && confidence < 1)) {
    throw new AnalyticsError('OUT_OF_RANGE', `confidence must be in (0, 1), got ${confidence}`);
  }
}

export function checkCounts(n: number, B: number): void {
  if (!Number.isInteger(n) || n < 1) throw new AnalyticsError('BAD_INPUT', `bootstrap needs n >= 1 reports, got ${n}`);
  if (!Number.isInteger(B) || B < 1) throw new AnalyticsError('BAD_INPUT', `bootstrap needs B >= 1 resamples, got ${B}`);
}
