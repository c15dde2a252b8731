/** The Kemeny score of an order and the lower bound on every order's score. */
import { AnalyticsError } from '../errors';
import type { PairwiseMatrix } from './pairwise';

/**
 * Kemeny score (total disagreement) of an order.
 *
 * Definition: Σ over pairs (a placed before b) of w[b][a], the weight of voters that strictly
 * prefer b to a. Source: docs/scoring.md §6 objective; paper Supplementary B eq. (8).
 * Complexity: O(n²).
 * @throws AnalyticsError BAD_INPUT when `order` is not a permutation of 0..n−1.
 */
export function kemenyScore(matrix: PairwiseMatrix, order: readonly number[]): number {
  assertPermutation(order, matrix.n);
  const { n, w } = matrix;
  let score = 0;
  for (let p = 0; p < n; p++) {
    const a = order[p]!;
    for (let q = p + 1; q < n; q++) score += w[order[q]! * n + a]!;
  }
  return score;
}

/**
 * Lower bound Σ_{i<j} min(w_ij, w_ji) of the Kemeny score of any order (each pair costs at
 * least its minority weight). Complexity: O(n²).
 */
export function kemenyLowerBound(matrix: PairwiseMatrix): number {
  const { n, w } = matrix;
  let lb = 0;
  for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) lb += Math.min(w[i * n + j]!, w[j * n + i]!);
  return lb;
}

export function assertPermutation(order: readonly number[], n: number): void {
  if (order.length !== n) throw new AnalyticsError('BAD_INPUT', `order of length ${order.length}, expected ${n}`);
  const seen = new Uint8Array(n);
  for (const c of order) {
    if (!Number.isInteger(c) || c < 0 || c >= n || seen[c] === 1) {
      throw new AnalyticsError('BAD_INPUT', 'order is not a permutation of the candidates');
    }
    seen[c] = 1;
  }
}
