/**
 * Oracle: bootstrap rank intervals of the Kemeny–Young consensus (docs/scoring.md §6 "Rank
 * confidence intervals"), written from the definition: in each replicate, the voters' scores of
 * that replicate, their preferences, the tie-break by the replicate's macro average and name, and
 * the exact consensus by the subset DP ({@link subsetDpKemeny}); then per candidate the type-7
 * percentiles (Hyndman & Fan 1996) of its ranks, rounded outward to whole ranks, a percentile
 * within the score tolerance of a whole rank being that rank. For fields the subset DP solves
 * (up to 20 candidates); the implementation agrees with it where every replicate is exact.
 */
import type { CandidateRankInterval } from '../../../src/analytics/rank-intervals';
import { preferenceCounts, sameScore, tieBreakOrder } from './kemeny-definition';
import { subsetDpKemeny } from './kemeny-subset-dp';

/** Type-7 quantile of ascending values: h = (m − 1)p, x[⌊h⌋] + (h − ⌊h⌋)(x[⌊h⌋ + 1] − x[⌊h⌋]). */
export function type7(sorted: readonly number[], p: number): number {
  const h = (sorted.length - 1) * p;
  const lo = Math.floor(h);
  const hi = Math.min(lo + 1, sorted.length - 1);
  return sorted[lo]! + (h - lo) * (sorted[hi]! - sorted[lo]!);
}

/**
 * @param data entry (candidate c, voter v, replicate b) at (c·V + v)·B + b; NaN = no opinion.
 * @param macro tie-break macro average of (c, b) at c·B + b; default the weighted mean of the
 *   candidate's scores in that replicate (NaN without any).
 */
export function exactRankIntervals(
  input: { data: ArrayLike<number>; candidates: number; voters: number; replicates: number },
  options: { level?: number; names?: readonly string[] | null; macro?: { data: ArrayLike<number> } | null; voterWeights?: ArrayLike<number> | null } = {},
): { ranks: Int32Array; intervals: CandidateRankInterval[] } {
  const { data, candidates: n, voters: V, replicates: B } = input;
  const weights = options.voterWeights ?? null;
  const ranks = new Int32Array(n * B);
  for (let b = 0; b < B; b++) {
    const scores = Array.from({ length: V }, (_, v) => Array.from({ length: n }, (_, c) => data[(c * V + v) * B + b]!));
    const macro = Array.from({ length: n }, (_, c) => {
      if (options.macro) return options.macro.data[c * B + b]!;
      let sum = 0;
      let weight = 0;
      scores.forEach((s, v) => {
        const u = weights === null ? 1 : weights[v]!;
        if (!Number.isNaN(s[c]!)) {
          sum += u * s[c]!;
          weight += u;
        }
      });
      return weight > 0 ? sum / weight : Number.NaN;
    });
    const priority = tieBreakOrder(n, macro, options.names ?? null);
    const { order } = subsetDpKemeny(preferenceCounts(scores, weights), priority);
    order.forEach((c, p) => {
      ranks[c * B + b] = p + 1;
    });
  }
  const alpha = 1 - (options.level ?? 0.95);
  const outward = (q: number, round: (x: number) => number): number => (sameScore(q, Math.round(q)) ? Math.round(q) : round(q));
  const intervals = Array.from({ length: n }, (_, c) => {
    const sorted = Array.from(ranks.subarray(c * B, (c + 1) * B)).sort((x, y) => x - y);
    const lowerQuantile = type7(sorted, alpha / 2);
    const upperQuantile = type7(sorted, 1 - alpha / 2);
    return {
      candidate: c,
      lower: outward(lowerQuantile, Math.floor),
      upper: outward(upperQuantile, Math.ceil),
      lowerQuantile,
      upperQuantile,
      median: type7(sorted, 0.5),
    };
  });
  return { ranks, intervals };
}
