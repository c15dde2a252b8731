import type { Estimate as AnalyticsEstimate } from '../../analytics/bootstrap';
import { INVALID_CATEGORIES } from '../../analytics/types';
import type { InvalidCategory } from '../annotation/annotation.entity';
import type { Difference } from './comparison.types';
import { RankingMethod, type Estimate, type InvalidCount, type Ranking, type RankingEntry } from './stats.types';

/** An analytics estimate as the API shows it: null when not finite, no interval without resamples. */
export function toEstimate(e: AnalyticsEstimate | null, resamples: number): Estimate | null {
  if (!e || !Number.isFinite(e.value)) return null;
  const hasInterval = resamples > 0 && Number.isFinite(e.ciLow) && Number.isFinite(e.ciHigh);
  return {
    value: e.value,
    ciLow: hasInterval ? e.ciLow : null,
    ciHigh: hasInterval ? e.ciHigh : null,
    confidence: hasInterval ? e.confidence : null,
    resamples: hasInterval ? e.resamples : null,
  };
}

export function pointEstimate(value: number | null): Estimate | null {
  return value === null || !Number.isFinite(value) ? null : { value, ciLow: null, ciHigh: null, confidence: null, resamples: null };
}

export function toDifference(e: AnalyticsEstimate, pValue: number, qValue: number, resamples: number): Difference {
  const interval = resamples > 0 && Number.isFinite(e.ciLow) && Number.isFinite(e.ciHigh);
  return {
    value: e.value,
    ciLow: interval ? e.ciLow : null,
    ciHigh: interval ? e.ciHigh : null,
    confidence: interval ? e.confidence : null,
    resamples: interval ? e.resamples : null,
    pValue: resamples > 0 && Number.isFinite(pValue) ? pValue : null,
    qValue: resamples > 0 && Number.isFinite(qValue) ? qValue : null,
  };
}

export const finiteOrNull = (x: number): number | null => (Number.isFinite(x) ? x : null);

export function invalidCounts(counts: Record<string, number>): InvalidCount[] {
  return INVALID_CATEGORIES.map((category) => ({ category: category as InvalidCategory, count: counts[category] ?? 0 })).filter((c) => c.count > 0);
}

export function rankingOf(result: { exact: boolean; score: number; lowerBound: number; voterCount: number }, entries: RankingEntry[]): Ranking {
  return {
    method: RankingMethod.KEMENY_YOUNG,
    exact: result.exact,
    score: Math.round(result.score),
    lowerBound: Math.round(result.lowerBound),
    voterCount: result.voterCount,
    entries,
  };
}

/** The ranking of no candidates. */
export function emptyRanking(): Ranking {
  return { method: RankingMethod.KEMENY_YOUNG, exact: true, score: 0, lowerBound: 0, voterCount: 0, entries: [] };
}
