/**
 * The exact DP's shortcuts for subsets with a strict Condorcet winner or loser (integer weights) against
 * the plain dense solver (bench/support/oracles/kemeny-dense) and a brute force over all orders:
 * the same order, with its tie-break, on integer matrices with many winners, ties and cycles.
 */
import { kemenyFromMatrix, pairwiseFromMatrix } from '../../../src/analytics/kemeny';
import * as dense from '../../../bench/support/oracles/kemeny-dense';

function lcg(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 48271) % 2147483647) / 2147483647;
}

/** The lexicographically smallest (by priority = index) optimal order, by enumeration. */
function bruteForce(n: number, w: Float64Array): number[] {
  let best: number[] | null = null;
  let bestScore = Infinity;
  const order: number[] = [];
  const used = new Array<boolean>(n).fill(false);
  const visit = (): void => {
    if (order.length === n) {
      let score = 0;
      for (let p = 0; p < n; p++) for (let q = p + 1; q < n; q++) score += w[order[q]! * n + order[p]!]!;
      if (score < bestScore) {
        bestScore = score;
        best = order.slice();
      }
      return;
    }
    for (let c = 0; c < n; c++) {
      if (used[c]) continue;
      used[c] = true;
      order.push(c);
      visit();
      order.pop();
      used[c] = false;
    }
  };
  visit();
  return best!;
}

describe('exact Kemeny DP with Condorcet winners and losers of subsets', () => {
  it('matches the dense solver and a brute force on integer matrices', () => {
    const rnd = lcg(2024);
    for (let trial = 0; trial < 300; trial++) {
      const n = 2 + (trial % 6);
      const V = 1 + Math.floor(rnd() * 9);
      const quality = Array.from({ length: n }, () => rnd() * (trial % 3));
      const w = new Float64Array(n * n);
      for (let v = 0; v < V; v++) {
        const s = quality.map((q) => Math.round(4 * (q + rnd())) / 4);
        const weight = Math.floor(rnd() * 3);
        for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) if (s[i]! > s[j]!) w[i * n + j] += weight;
      }
      // Without decomposition the DP sees the whole matrix, winners and cycles alike.
      const options = { decompose: false, exactLimit: 12 };
      const result = kemenyFromMatrix(pairwiseFromMatrix(n, w, V), options);
      const oracle = dense.kemenyFromMatrix(dense.pairwiseFromMatrix(n, w, V), options);
      expect(result.order).toEqual(oracle.order);
      expect(result.exact).toBe(true);
      expect(result.order).toEqual(bruteForce(n, w));
    }
  });

  it('matches the dense solver on larger integer matrices, cycles among the best and among the worst', () => {
    const rnd = lcg(77);
    for (let trial = 0; trial < 60; trial++) {
      const n = 8 + (trial % 5);
      const V = 3 + Math.floor(rnd() * 12);
      // Near-linear orders with noise: many subsets have a winner, many others only a loser.
      const quality = Array.from({ length: n }, (_, i) => i / n + 0.3 * rnd());
      const w = new Float64Array(n * n);
      for (let v = 0; v < V; v++) {
        const s = quality.map((q) => Math.round(8 * (q + 0.5 * rnd())) / 8);
        for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) if (s[i]! > s[j]!) w[i * n + j] += 1 + (v % 2);
      }
      const options = { decompose: false, exactLimit: 12 };
      const result = kemenyFromMatrix(pairwiseFromMatrix(n, w, V), options);
      const oracle = dense.kemenyFromMatrix(dense.pairwiseFromMatrix(n, w, V), options);
      expect(result.order).toEqual(oracle.order);
      expect(result.score).toBe(oracle.score);
      expect(result.exact).toBe(true);
    }
  });
});
