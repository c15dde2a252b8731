/**
 * The exact DP's shortcuts for subsets with a strict Condorcet winner or loser (integer weights)
 * against the oracles written from the definition (bench/support/oracles: the textbook subset DP
 * and a brute force over all orders): the same order, with its tie-break, on integer matrices
 * with many winners, ties and cycles.
 */
import { kemenyFromMatrix, pairwiseFromMatrix } from '../../../src/analytics/kemeny';
import { bruteForceKemeny } from '../../../bench/support/oracles/kemeny-brute-force';
import { rows } from '../../../bench/support/oracles/kemeny-definition';
import { subsetDpKemeny } from '../../../bench/support/oracles/kemeny-subset-dp';

/** Without macro averages or names the tie-break is the candidates' index. */
const byIndex = (n: number): number[] => Array.from({ length: n }, (_, c) => c);

function lcg(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 48271) % 2147483647) / 2147483647;
}

describe('exact Kemeny DP with Condorcet winners and losers of subsets', () => {
  it('matches the subset DP and a brute force on integer matrices', () => {
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
      const oracle = subsetDpKemeny(rows(n, w), byIndex(n));
      expect(result.order).toEqual(oracle.order);
      expect(result.exact).toBe(true);
      expect(result.order).toEqual(bruteForceKemeny(rows(n, w), byIndex(n)).order);
    }
  });

  it('matches the subset DP on larger integer matrices, cycles among the best and among the worst', () => {
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
      const oracle = subsetDpKemeny(rows(n, w), byIndex(n));
      expect(result.order).toEqual(oracle.order);
      expect(result.score).toBe(oracle.score);
      expect(result.exact).toBe(true);
    }
  });
});
