/** The Kemeny–Young consensus of voters or of a pairwise matrix, exact or heuristic. */
import { AnalyticsError } from '../errors';
import { solveByComponents } from './components';
import { heuristicOrder, subMatrix } from './heuristic';
import type { KemenyOptions, KemenyResult } from './options';
import { pairwiseMatrix } from './pairwise';
import type { PairwiseMatrix, PairwiseOptions } from './pairwise';
import { assertPermutation, kemenyLowerBound, kemenyScore } from './score';

/**
 * Kemeny–Young consensus order of a pairwise matrix.
 *
 * Definition: π* = argmin_π Σ_{a before b in π} w[b][a] (docs/scoring.md §6; paper Supplementary B
 * eqs. (8)–(9)), ties between optimal orders broken by tieBreakPriority (tie-break.ts).
 *
 * Method. (1) Condorcet decomposition: the strongly connected components of the graph with an
 * edge i→j whenever j does not strictly beat i (w_ji ≤ w_ij) are totally ordered, every member
 * of an earlier component strictly beating every member of a later one; moving all of an earlier
 * component ahead of a later one strictly lowers the score, so every optimal order is a
 * concatenation of optimal orders of the components (extended Condorcet criterion, Truchon 1998).
 * (2) A component of k ≤ exactLimit candidates is solved exactly by the subset DP
 * h(T) = min_{c∈T} [Σ_{j∈T} w[j][c] + h(T∖{c})] (cost of ordering T with c first), with column
 * sums over T read from two half-width tables; the lexicographically preferred optimum is then
 * rebuilt front to back by taking, at each step, the highest-priority c that attains h(T).
 * (3) Larger components use a deterministic heuristic: Copeland, Borda, tie-break and warm
 * starts, each improved by insertion local search, then seeded iterated local search with
 * segment-reversal perturbations, and a final pass of zero-cost adjacent swaps toward the
 * tie-break order. The result then reports exact = false and the gap to the lower bound.
 *
 * With integer weights totals are compared exactly. With fractional weights, totals within
 * 1e-9·(total weight) are treated as equal, so the returned order is optimal up to that amount.
 *
 * Complexity: O(n²) decomposition; O(2^k·k) time and 8·2^k bytes per exact component of size k;
 * O(sweeps·k²) per local search for heuristic components.
 * @throws AnalyticsError OUT_OF_RANGE when exactLimit exceeds KEMENY_MAX_EXACT (options.ts);
 *   LENGTH_MISMATCH for tie-break keys or warm starts of the wrong length; BAD_INPUT when a
 *   warm start is not a permutation.
 */
export function kemenyFromMatrix(matrix: PairwiseMatrix, options: KemenyOptions = {}): KemenyResult {
  const { n } = matrix;
  const { order, exact, componentSizes } = kemenyOrder(matrix, options);
  const score = kemenyScore(matrix, order);
  const lowerBound = kemenyLowerBound(matrix);
  const rank = new Array<number>(n);
  order.forEach((c, p) => {
    rank[c] = p + 1;
  });
  return {
    order,
    rank,
    score,
    lowerBound,
    gap: score - lowerBound,
    exact,
    voterCount: matrix.voterCount,
    componentSizes,
  };
}

/**
 * The consensus order of {@link kemenyFromMatrix} without its score and lower bound (two O(n²)
 * passes): for callers that need only the order, such as each bootstrap replicate.
 */
export function kemenyOrder(
  matrix: PairwiseMatrix,
  options: KemenyOptions = {},
): { order: number[]; exact: boolean; componentSizes: number[] } {
  const { n, w } = matrix;
  const warmStarts = options.warmStarts ?? [];
  for (const start of warmStarts) {
    if (start.length !== n) throw new AnalyticsError('LENGTH_MISMATCH', `kemeny: warm start of length ${start.length}`);
    assertPermutation(start, n);
  }
  return solveByComponents(matrix, options, options.decompose !== false, (members, localPriority, eps) => {
    const position = new Int32Array(n).fill(-1);
    members.forEach((c, i) => {
      position[c] = i;
    });
    const starts = warmStarts.map((s) => s.filter((c) => position[c]! >= 0).map((c) => position[c]!));
    return heuristicOrder(subMatrix(w, n, members), members.length, localPriority, eps, {
      restarts: options.restarts ?? 200,
      seed: options.seed ?? 42,
      maxSweeps: options.maxSweeps ?? 1000,
      starts,
    });
  });
}

/**
 * Kemeny–Young consensus of voters' score vectors: {@link pairwiseMatrix} then
 * {@link kemenyFromMatrix}. See those for definition, source, complexity and errors.
 */
export function kemeny(
  scores: readonly ArrayLike<number>[],
  options: KemenyOptions & PairwiseOptions = {},
): KemenyResult {
  return kemenyFromMatrix(pairwiseMatrix(scores, options), options);
}
