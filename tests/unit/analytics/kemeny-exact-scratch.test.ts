/**
 * The exact DP's tables are shared by every solve of a thread: a solve after a larger or
 * smaller one, on tables holding another matrix's numbers, returns what a solve from fresh
 * tables returns (the subset DP oracle's order), the tables are not reallocated from one solve
 * to the next, and tables beyond the kept size are handed back. Integer matrices whose total
 * exceeds 2^31 take the float tables and get the same optimum.
 */
import { kemenyFromMatrix, pairwiseFromMatrix } from '../../../src/analytics/kemeny';
import { KEEP_EXACT_SUBSETS, sharedExactScratch } from '../../../src/analytics/kemeny/exact';
import { rows } from '../../../bench/support/oracles/kemeny-definition';
import { subsetDpKemeny } from '../../../bench/support/oracles/kemeny-subset-dp';

function randomMatrix(n: number, seed: number, scale = 1): number[] {
  let s = seed;
  const rnd = (): number => (s = (s * 48271) % 2147483647) / 2147483647;
  return Array.from({ length: n * n }, (_, k) => (k % (n + 1) === 0 ? 0 : Math.floor(rnd() * 5) * scale));
}

const byIndex = (n: number): number[] => Array.from({ length: n }, (_, c) => c);
const solve = (n: number, w: number[]) => kemenyFromMatrix(pairwiseFromMatrix(n, w), { decompose: false, exactLimit: n });

describe('the exact DP on shared tables', () => {
  it('solves after larger and smaller solves as from fresh tables, without reallocating them', () => {
    const a = randomMatrix(13, 1);
    const b = randomMatrix(9, 2);
    const c = randomMatrix(15, 3);
    const first = solve(13, a);
    expect(first.order).toEqual(subsetDpKemeny(rows(13, a), byIndex(13)).order);
    solve(15, c);
    const tables = sharedExactScratch.hInt;
    expect(tables.length).toBeGreaterThanOrEqual(1 << 15);
    expect(solve(9, b).order).toEqual(subsetDpKemeny(rows(9, b), byIndex(9)).order);
    expect(solve(13, a)).toEqual(first);
    expect(sharedExactScratch.hInt).toBe(tables);
  });

  it('hands back tables beyond the kept size', () => {
    const n = 21;
    expect(1 << n).toBeGreaterThan(KEEP_EXACT_SUBSETS);
    // Voters that agree on one order except for a 3-cycle at the top: quick, but a DP over all 2^21 sets.
    const w = new Array<number>(n * n).fill(0);
    for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) w[i * n + j] = 2;
    w[0 * n + 2] = 0;
    w[2 * n + 0] = 2;
    const result = solve(n, w);
    expect(result.exact).toBe(true);
    expect(result.order.slice(3)).toEqual(Array.from({ length: n - 3 }, (_, c) => c + 3));
    expect(sharedExactScratch.hInt.length).toBeLessThanOrEqual(KEEP_EXACT_SUBSETS);
    expect(sharedExactScratch.winner.length).toBeLessThanOrEqual(KEEP_EXACT_SUBSETS);
  });

  it('integer matrices beyond 2^31 in total get the same optimum from the float tables', () => {
    for (const seed of [4, 5, 6]) {
      const n = 10;
      const w = randomMatrix(n, seed, 2 ** 28);
      const result = solve(n, w);
      const oracle = subsetDpKemeny(rows(n, w), byIndex(n));
      expect(result.order).toEqual(oracle.order);
      expect(result.score).toBe(oracle.score);
    }
  });
});
