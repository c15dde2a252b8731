import fc from 'fast-check';
import { AnalyticsError } from '../../../src/analytics/errors';
import {
  kemeny,
  kemenyFromMatrix,
  kemenyLowerBound,
  kemenyScore,
  pairwiseFromMatrix,
  pairwiseMatrix,
  tieBreakPriority,
} from '../../../src/analytics/kemeny';

/** Disagreement of an order computed straight from the voters (independent of the matrix). */
function voterDisagreement(scores: number[][], weights: number[] | null, order: number[]): number {
  let total = 0;
  scores.forEach((s, v) => {
    const weight = weights === null ? 1 : weights[v]!;
    for (let p = 0; p < order.length; p++) {
      for (let q = p + 1; q < order.length; q++) {
        if (s[order[q]!]! > s[order[p]!]!) total += weight;
      }
    }
  });
  return total;
}

function permutations(n: number): number[][] {
  const out: number[][] = [];
  const current: number[] = [];
  const used = new Array<boolean>(n).fill(false);
  const rec = (): void => {
    if (current.length === n) {
      out.push(current.slice());
      return;
    }
    for (let c = 0; c < n; c++) {
      if (used[c]) continue;
      used[c] = true;
      current.push(c);
      rec();
      current.pop();
      used[c] = false;
    }
  };
  rec();
  return out;
}

/** Tie-break written independently: macro desc (NaN last), then name, then index. */
function preferFirst(macro: number[] | null, names: string[] | null): (a: number, b: number) => number {
  return (a, b) => {
    if (macro !== null) {
      const ma = macro[a]!;
      const mb = macro[b]!;
      if (Number.isNaN(ma) && !Number.isNaN(mb)) return 1;
      if (!Number.isNaN(ma) && Number.isNaN(mb)) return -1;
      if (ma > mb) return -1;
      if (ma < mb) return 1;
    }
    if (names !== null && names[a] !== names[b]) return names[a]! < names[b]! ? -1 : 1;
    return a - b;
  };
}

function bruteForce(
  scores: number[][],
  weights: number[] | null,
  macro: number[] | null,
  names: string[] | null,
): { order: number[]; score: number } {
  const n = scores[0]!.length;
  const cmp = preferFirst(macro, names);
  let best: number[] | null = null;
  let bestScore = Infinity;
  for (const perm of permutations(n)) {
    const s = voterDisagreement(scores, weights, perm);
    if (s < bestScore) {
      best = perm;
      bestScore = s;
    } else if (s === bestScore) {
      const firstDiff = perm.findIndex((c, p) => c !== best![p]);
      if (firstDiff >= 0 && cmp(perm[firstDiff]!, best![firstDiff]!) < 0) best = perm;
    }
  }
  return { order: best!, score: bestScore };
}

const scoreValue = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 0, max: 3 }) },
  { weight: 1, arbitrary: fc.constant(Number.NaN) },
);

const instance = (maxN: number) =>
  fc.integer({ min: 1, max: maxN }).chain((n) =>
    fc.record({
      scores: fc.array(fc.array(scoreValue, { minLength: n, maxLength: n }), { minLength: 1, maxLength: 6 }),
      macro: fc.option(fc.array(fc.constantFrom(0.5, 0.7, 0.9, Number.NaN), { minLength: n, maxLength: n }), {
        nil: null,
      }),
      names: fc.option(fc.array(fc.constantFrom('a', 'b', 'c'), { minLength: n, maxLength: n }), { nil: null }),
      weightSeed: fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 6, maxLength: 6 }),
      weighted: fc.boolean(),
    }),
  );

describe('kemeny: Wikipedia "Tennessee capital" example', () => {
  // Memphis, Nashville, Chattanooga, Knoxville; a voter's score is minus its rank.
  const names = ['Memphis', 'Nashville', 'Chattanooga', 'Knoxville'];
  const scores = [
    [4, 3, 2, 1], // 42%: Memphis > Nashville > Chattanooga > Knoxville
    [1, 4, 3, 2], // 26%: Nashville > Chattanooga > Knoxville > Memphis
    [1, 2, 4, 3], // 15%: Chattanooga > Knoxville > Nashville > Memphis
    [1, 2, 3, 4], // 17%: Knoxville > Chattanooga > Nashville > Memphis
  ];
  const voterWeights = [42, 26, 15, 17];

  it('gives Nashville > Chattanooga > Knoxville > Memphis', () => {
    const result = kemeny(scores, { voterWeights, names });
    expect(result.order.map((c) => names[c])).toEqual(['Nashville', 'Chattanooga', 'Knoxville', 'Memphis']);
    // Wikipedia lists 393 agreeing pairs for this ranking out of 6 pairs × 100 voters.
    expect(result.score).toBe(600 - 393);
    expect(result.lowerBound).toBe(207);
    expect(result.gap).toBe(0);
    expect(result.exact).toBe(true);
    expect(result.voterCount).toBe(4);
    expect(result.rank).toEqual([4, 1, 2, 3]);
  });

  it('builds the pairwise matrix of the example', () => {
    const m = pairwiseMatrix(scores, { voterWeights });
    // Nashville over Memphis: 26 + 15 + 17 = 58; Memphis over Nashville: 42.
    expect(m.w[1 * 4 + 0]).toBe(58);
    expect(m.w[0 * 4 + 1]).toBe(42);
    expect(m.w[2 * 4 + 3]).toBe(83);
    expect(m.totalWeight).toBe(100);
  });

  it('reaches the same order with 100 unit-weight voters', () => {
    const expanded = scores.flatMap((s, v) => Array.from({ length: voterWeights[v]! }, () => s));
    const result = kemeny(expanded);
    expect(result.order).toEqual([1, 2, 3, 0]);
    expect(result.voterCount).toBe(100);
  });
});

describe('kemeny: exact DP against brute force over all permutations', () => {
  it('matches the optimum score and the tie-broken optimal order (n ≤ 7)', () => {
    fc.assert(
      fc.property(instance(7), ({ scores, macro, names, weightSeed, weighted }) => {
        const weights = weighted ? weightSeed.slice(0, scores.length) : null;
        const expected = bruteForce(scores, weights, macro, names);
        for (const decompose of [true, false]) {
          const got = kemeny(scores, { voterWeights: weights, macro, names, decompose });
          expect(got.score).toBe(expected.score);
          expect(got.order).toEqual(expected.order);
          expect(got.exact).toBe(true);
          expect(got.score).toBeGreaterThanOrEqual(got.lowerBound);
        }
      }),
      { numRuns: 300, seed: 20240601 },
    );
  });

  it('matches brute force at n = 8', () => {
    fc.assert(
      fc.property(instance(8).filter((x) => x.scores[0]!.length === 8), ({ scores, macro, names }) => {
        const expected = bruteForce(scores, null, macro, names);
        const got = kemeny(scores, { macro, names });
        expect(got.score).toBe(expected.score);
        expect(got.order).toEqual(expected.order);
      }),
      { numRuns: 8, seed: 7 },
    );
  });

  it('is optimal up to the stated tolerance with fractional weights', () => {
    fc.assert(
      fc.property(
        instance(6),
        fc.array(fc.double({ min: 0, max: 2, noNaN: true }), { minLength: 6, maxLength: 6 }),
        ({ scores }, w) => {
          const weights = w.slice(0, scores.length);
          const expected = bruteForce(scores, weights, null, null);
          const got = kemeny(scores, { voterWeights: weights });
          expect(Math.abs(got.score - expected.score)).toBeLessThanOrEqual(1e-8);
          expect(voterDisagreement(scores, weights, got.order)).toBeCloseTo(got.score, 9);
        },
      ),
      { numRuns: 100, seed: 3 },
    );
  });

  it('is deterministic and independent of the candidate labelling when there are no ties', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 12 }).chain((n) =>
          fc.tuple(
            fc.array(fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: n, maxLength: n }), {
              minLength: 1,
              maxLength: 7,
            }),
            fc.shuffledSubarray(
              Array.from({ length: n }, (_, i) => i),
              { minLength: n, maxLength: n },
            ),
          ),
        ),
        ([scores, perm]) => {
          const n = perm.length;
          const macro = Array.from({ length: n }, (_, i) => i / n);
          const a = kemeny(scores, { macro });
          // Relabel candidate perm[i] as i.
          const relabelled = scores.map((s) => perm.map((c) => s[c]!));
          const b = kemeny(relabelled, { macro: perm.map((c) => macro[c]!) });
          expect(b.order.map((i) => perm[i])).toEqual(a.order);
          expect(b.score).toBe(a.score);
        },
      ),
      { numRuns: 60, seed: 11 },
    );
  });

  it('agrees with and without Condorcet decomposition at n = 14', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 14, maxLength: 14 }), {
          minLength: 3,
          maxLength: 9,
        }),
        (scores) => {
          const a = kemeny(scores);
          const b = kemeny(scores, { decompose: false });
          expect(a.order).toEqual(b.order);
          expect(a.score).toBe(b.score);
        },
      ),
      { numRuns: 10, seed: 5 },
    );
  });
});

describe('kemeny: Condorcet decomposition', () => {
  it('solves 40 candidates exactly when voters agree on blocks', () => {
    // Four blocks of ten; every voter ranks block 0 > 1 > 2 > 3 but disagrees inside blocks.
    const n = 40;
    const scores = Array.from({ length: 5 }, (_, v) =>
      Array.from({ length: n }, (_, c) => 100 * (3 - Math.floor(c / 10)) + ((c * (v + 3)) % 10)),
    );
    const result = kemeny(scores);
    expect(result.exact).toBe(true);
    expect(result.componentSizes.every((s) => s <= 10)).toBe(true);
    expect(result.componentSizes.reduce((x, y) => x + y, 0)).toBe(n);
    expect(result.order.slice(0, 10).every((c) => c < 10)).toBe(true);
    expect(result.order.slice(30).every((c) => c >= 30)).toBe(true);
    expect(result.score).toBe(kemenyScore(pairwiseMatrix(scores), result.order));
  });

  it('returns the unanimous order with zero score', () => {
    const order = [3, 0, 4, 1, 2];
    const s = new Array<number>(5);
    order.forEach((c, p) => (s[c] = 10 - p));
    const result = kemeny([s, s, s]);
    expect(result.order).toEqual(order);
    expect(result.score).toBe(0);
    expect(result.componentSizes).toEqual([1, 1, 1, 1, 1]);
  });
});

describe('kemeny: heuristic beyond the exact limit', () => {
  it('never scores below the optimum or the lower bound, and usually finds the optimum', () => {
    let optimal = 0;
    let runs = 0;
    fc.assert(
      fc.property(instance(7), ({ scores, macro, names }) => {
        const expected = bruteForce(scores, null, macro, names);
        const got = kemeny(scores, { macro, names, exactLimit: 1 });
        expect(got.score).toBeGreaterThanOrEqual(expected.score);
        expect(got.score).toBeGreaterThanOrEqual(got.lowerBound);
        expect(got.gap).toBe(got.score - got.lowerBound);
        expect(got.exact).toBe(got.componentSizes.every((s) => s === 1));
        expect(voterDisagreement(scores, null, got.order)).toBe(got.score);
        runs++;
        if (got.score === expected.score) optimal++;
      }),
      { numRuns: 200, seed: 99 },
    );
    expect(optimal / runs).toBeGreaterThan(0.95);
  });

  it('matches the exact optimum score on random 12-candidate profiles', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 12, maxLength: 12 }), {
          minLength: 3,
          maxLength: 11,
        }),
        (scores) => {
          const exact = kemeny(scores);
          const heuristic = kemeny(scores, { exactLimit: 0 });
          expect(heuristic.score).toBeGreaterThanOrEqual(exact.score);
          expect(heuristic.score - exact.score).toBeLessThanOrEqual(2);
        },
      ),
      { numRuns: 10, seed: 17 },
    );
  });

  it('is deterministic for a given seed and uses warm starts', () => {
    const n = 30;
    const scores = Array.from({ length: 9 }, (_, v) => Array.from({ length: n }, (_, c) => ((c * 7 + v * 13) % 17) + c / 10));
    const a = kemeny(scores, { exactLimit: 0 });
    const b = kemeny(scores, { exactLimit: 0 });
    expect(b.order).toEqual(a.order);
    const warm = kemeny(scores, { exactLimit: 0, restarts: 0, warmStarts: [a.order] });
    expect(warm.score).toBeLessThanOrEqual(a.score);
    expect(a.lowerBound).toBe(kemenyLowerBound(pairwiseMatrix(scores)));
  });
});

describe('kemeny: tie-break and validation', () => {
  it('orders equally optimal candidates by macro average, then name, then index', () => {
    const p = tieBreakPriority(4, { macro: [0.5, 0.9, Number.NaN, 0.5], names: ['b', 'z', 'a', 'a'] });
    expect(Array.from(p)).toEqual([2, 0, 3, 1]);
    // No voter distinguishes anyone: the consensus is the tie-break order.
    const result = kemeny([[1, 1, 1, 1]], { macro: [0.5, 0.9, Number.NaN, 0.5], names: ['b', 'z', 'a', 'a'] });
    expect(result.order).toEqual([1, 3, 0, 2]);
    expect(result.score).toBe(0);
  });

  it('treats NaN as no opinion', () => {
    const m = pairwiseMatrix([[Number.NaN, 1, 0]]);
    expect(Array.from(m.w)).toEqual([0, 0, 0, 0, 0, 1, 0, 0, 0]);
  });

  it('rejects invalid input with typed errors', () => {
    const code = (f: () => unknown): string | undefined => {
      try {
        f();
      } catch (e) {
        return e instanceof AnalyticsError ? e.code : 'untyped';
      }
      return undefined;
    };
    expect(code(() => pairwiseMatrix([]))).toBe('EMPTY_INPUT');
    expect(code(() => pairwiseMatrix([[]]))).toBe('EMPTY_INPUT');
    expect(code(() => pairwiseMatrix([[1, 2], [1]]))).toBe('LENGTH_MISMATCH');
    expect(code(() => pairwiseMatrix([[1, 2]], { voterWeights: [-1] }))).toBe('BAD_INPUT');
    expect(code(() => pairwiseMatrix([[1, 2]], { voterWeights: [1, 1] }))).toBe('LENGTH_MISMATCH');
    expect(code(() => kemeny([[1, 2]], { exactLimit: 26 }))).toBe('OUT_OF_RANGE');
    expect(code(() => kemeny([[1, 2]], { names: ['a'] }))).toBe('LENGTH_MISMATCH');
    expect(code(() => kemenyScore(pairwiseMatrix([[1, 2]]), [0, 0]))).toBe('BAD_INPUT');
    expect(code(() => pairwiseFromMatrix(2, [0, 1, 1]))).toBe('BAD_INPUT');
    expect(code(() => pairwiseFromMatrix(2, [1, 1, 1, 0]))).toBe('BAD_INPUT');
  });

  it('accepts a prebuilt matrix', () => {
    const m = pairwiseFromMatrix(3, [0, 2, 2, 1, 0, 3, 1, 0, 0], 3);
    const result = kemenyFromMatrix(m);
    expect(result.order).toEqual([0, 1, 2]);
    expect(result.score).toBe(2);
    expect(result.lowerBound).toBe(2);
  });
});
