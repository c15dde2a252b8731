/**
 * Kemeny–Young and its rank intervals against oracles written from the definition
 * (bench/support/oracles: a brute force over every order, a textbook subset DP, rank intervals
 * from one exact consensus per replicate), on random small profiles with ties, near-ties within
 * the score tolerance, missing and infinite scores, Condorcet cycles, zero, integer and
 * fractional voter weights, and tie-breaks by macro average, name and given priority.
 */
import fc from 'fast-check';
import { kemeny, kemenyFromMatrix, kemenyScore, pairwiseFromMatrix, pairwiseMatrix } from '../../../src/analytics/kemeny';
import { kemenyRankIntervals } from '../../../src/analytics/rank-intervals';
import { bruteForceKemeny } from '../../../bench/support/oracles/kemeny-brute-force';
import { disagreement, preferenceCounts, rows, tieBreakOrder } from '../../../bench/support/oracles/kemeny-definition';
import { subsetDpKemeny } from '../../../bench/support/oracles/kemeny-subset-dp';
import { exactRankIntervals } from '../../../bench/support/oracles/rank-intervals-exact';

/** Scores a voter may give: repeated values (ties), a near-tie pair, NaN and ±Infinity now and then. */
const score = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(0, 0.25, 0.5, 0.75, 1) },
  { weight: 2, arbitrary: fc.constantFrom(7 / 18, 7 / 18 + 1e-16, 0.3 + 1e-13) },
  { weight: 1, arbitrary: fc.constantFrom(Number.NaN, Infinity, -Infinity) },
);

/** n candidates, V voters; weights none, integer (zero included) or quarters (exact sums). */
const profile = (minN: number, maxN: number) =>
  fc
    .record({ n: fc.integer({ min: minN, max: maxN }), V: fc.integer({ min: 1, max: 7 }), weights: fc.constantFrom('none', 'integer', 'quarters') })
    .chain(({ n, V, weights }) =>
      fc.record({
        scores: fc.array(fc.array(score, { minLength: n, maxLength: n }), { minLength: V, maxLength: V }),
        weights:
          weights === 'none'
            ? fc.constant(null)
            : fc.array(weights === 'integer' ? fc.integer({ min: 0, max: 3 }) : fc.constantFrom(0.25, 0.5, 1.75), { minLength: V, maxLength: V }),
        macro: fc.option(fc.array(fc.constantFrom(0, 0.5, 0.5, 1, Number.NaN, 7 / 18, 7 / 18 + 1e-16), { minLength: n, maxLength: n })),
        names: fc.option(fc.array(fc.constantFrom('a', 'b', 'c', 'é', 'B'), { minLength: n, maxLength: n })),
        decompose: fc.boolean(),
      }),
    );

describe('oracles agree with each other', () => {
  it('the subset DP finds the brute force order and score', () => {
    fc.assert(
      fc.property(profile(1, 7), ({ scores, weights, macro, names }) => {
        const prefer = preferenceCounts(scores, weights);
        const priority = tieBreakOrder(prefer.length, macro, names);
        expect(subsetDpKemeny(prefer, priority)).toEqual(bruteForceKemeny(prefer, priority));
      }),
      { numRuns: 300, seed: 5 },
    );
  });
});

describe('Kemeny–Young against the brute force and the subset DP', () => {
  it('pairwiseMatrix counts the preferences of the definition', () => {
    fc.assert(
      fc.property(profile(1, 8), ({ scores, weights }) => {
        const matrix = pairwiseMatrix(scores, { voterWeights: weights });
        expect(rows(matrix.n, matrix.w)).toEqual(preferenceCounts(scores, weights));
      }),
      { numRuns: 200, seed: 6 },
    );
  });

  it('kemeny returns the first optimal order by the tie-break, up to 7 candidates (brute force)', () => {
    fc.assert(
      fc.property(profile(1, 7), ({ scores, weights, macro, names, decompose }) => {
        const result = kemeny(scores, { voterWeights: weights, macro, names, decompose });
        const prefer = preferenceCounts(scores, weights);
        const oracle = bruteForceKemeny(prefer, tieBreakOrder(prefer.length, macro, names));
        expect(result.order).toEqual(oracle.order);
        expect(result.score).toBe(oracle.score);
        expect(result.exact).toBe(true);
        expect(result.lowerBound).toBeLessThanOrEqual(result.score);
        expect(result.rank.map((r, c) => result.order[r - 1] === c)).not.toContain(false);
      }),
      { numRuns: 400, seed: 7 },
    );
  });

  it('kemenyFromMatrix with a given priority returns the subset DP order, 8 to 13 candidates', () => {
    fc.assert(
      fc.property(profile(8, 13), fc.integer({ min: 1, max: 2 ** 30 }), ({ scores, weights, decompose }, seed) => {
        const n = scores[0]!.length;
        // A priority that is not the index order: a seeded shuffle.
        const priority = Array.from({ length: n }, (_, c) => (c * 7919 + seed) % 104729);
        const matrix = pairwiseMatrix(scores, { voterWeights: weights });
        const result = kemenyFromMatrix(matrix, { priority, decompose, exactLimit: 13 });
        const oracle = subsetDpKemeny(rows(n, matrix.w), priority);
        expect(result.order).toEqual(oracle.order);
        expect(result.score).toBe(oracle.score);
        expect(result.exact).toBe(true);
      }),
      { numRuns: 60, seed: 8 },
    );
  });

  it('beyond the exact limit: an order no better than the optimum, with a lower bound no higher', () => {
    fc.assert(
      fc.property(profile(5, 12), ({ scores, weights, macro, names }) => {
        const result = kemeny(scores, { voterWeights: weights, macro, names, exactLimit: 2, restarts: 5 });
        const prefer = preferenceCounts(scores, weights);
        const oracle = subsetDpKemeny(prefer, tieBreakOrder(prefer.length, macro, names));
        expect(disagreement(prefer, result.order)).toBe(result.score);
        expect(result.score).toBeGreaterThanOrEqual(oracle.score);
        expect(result.lowerBound).toBeLessThanOrEqual(oracle.score);
        expect(result.gap).toBe(result.score - result.lowerBound);
        if (Math.max(...result.componentSizes) > 2) expect(result.exact).toBe(false);
      }),
      { numRuns: 150, seed: 9 },
    );
  });

  it('integer matrices with Condorcet winners and losers of subsets, without decomposition', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 10 }).chain((n) =>
          fc.tuple(fc.constant(n), fc.array(fc.integer({ min: 0, max: 4 }), { minLength: n * n, maxLength: n * n })),
        ),
        ([n, entries]) => {
          const w = entries.map((x, k) => (k % (n + 1) === 0 ? 0 : x));
          const priority = Array.from({ length: n }, (_, c) => n - c);
          const result = kemenyFromMatrix(pairwiseFromMatrix(n, w), { priority, decompose: false, exactLimit: 12 });
          const oracle = subsetDpKemeny(rows(n, w), priority);
          expect(result.order).toEqual(oracle.order);
          expect(kemenyScore(pairwiseFromMatrix(n, w), result.order)).toBe(oracle.score);
        },
      ),
      { numRuns: 200, seed: 10 },
    );
  });
});

describe('rank intervals against one exact consensus per replicate', () => {
  it('the same ranks and intervals where every replicate is solved exactly', () => {
    fc.assert(
      fc.property(
        fc.record({
          n: fc.integer({ min: 1, max: 8 }),
          V: fc.integer({ min: 1, max: 5 }),
          B: fc.integer({ min: 1, max: 12 }),
          level: fc.constantFrom(0.5, 0.8, 0.9, 0.95),
          macro: fc.boolean(),
          names: fc.boolean(),
          weights: fc.boolean(),
          point: fc.boolean(),
        }).chain((shape) =>
          fc.record({
            shape: fc.constant(shape),
            data: fc.array(score, { minLength: shape.n * shape.V * shape.B, maxLength: shape.n * shape.V * shape.B }),
            macro: fc.array(fc.constantFrom(0, 0.5, 1, Number.NaN), { minLength: shape.n * shape.B, maxLength: shape.n * shape.B }),
            weights: fc.array(fc.integer({ min: 0, max: 3 }), { minLength: shape.V, maxLength: shape.V }),
          }),
        ),
        ({ shape, data, macro, weights }) => {
          const { n, V, B, level } = shape;
          const input = { data: Float64Array.from(data), candidates: n, voters: V, replicates: B };
          const options = {
            level,
            exactLimit: 12,
            names: shape.names ? Array.from({ length: n }, (_, c) => `run ${(c * 5) % 3}`) : null,
            macro: shape.macro ? { data: Float64Array.from(macro) } : null,
            voterWeights: shape.weights ? weights : null,
            pointOrder: shape.point ? Array.from({ length: n }, (_, c) => n - 1 - c) : null,
          };
          const result = kemenyRankIntervals(input, options);
          const oracle = exactRankIntervals(input, options);
          expect(result.exactReplicates).toBe(B);
          expect(Array.from(result.ranks)).toEqual(Array.from(oracle.ranks));
          result.intervals.forEach((interval, c) => {
            const expected = oracle.intervals[c]!;
            expect([interval.candidate, interval.lower, interval.upper, interval.median]).toEqual([
              expected.candidate,
              expected.lower,
              expected.upper,
              expected.median,
            ]);
            expect(interval.lowerQuantile).toBeCloseTo(expected.lowerQuantile, 12);
            expect(interval.upperQuantile).toBeCloseTo(expected.upperQuantile, 12);
          });
        },
      ),
      { numRuns: 200, seed: 11 },
    );
  });
});
