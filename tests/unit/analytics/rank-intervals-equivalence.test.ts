/**
 * The optimised Kemeny–Young solver and rank intervals against the plain dense definition
 * (tests/unit/analytics/oracles): the same orders, ranks, exactness and intervals, bit for bit,
 * on random profiles with ties, near-ties within the score tolerance, missing scores, Condorcet
 * cycles, zero and fractional voter weights, infinite scores, 2..40 candidates, and heuristic
 * components that exhaust their sweep budget.
 */
import fc from 'fast-check';
import { kemeny, kemenyFromMatrix, pairwiseMatrix } from '../../../src/analytics/kemeny';
import { kemenyRankIntervals } from '../../../src/analytics/rank-intervals';
import type { RankIntervalOptions } from '../../../src/analytics/rank-intervals';
import * as dense from '../../../bench/support/oracles/kemeny-dense';
import { kemenyRankIntervals as denseRankIntervals } from '../../../bench/support/oracles/rank-intervals-dense';

function lcg(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 48271) % 2147483647) / 2147483647;
}

type Kind = 'coarse' | 'near-ties' | 'cycles' | 'leaderboard' | 'mixed';

/**
 * candidate × voter × replicate scores (replicate fastest). Kinds: coarse = few distinct values
 * (many exact ties); near-ties = values that differ below the relative tolerance; cycles =
 * voters ranking by rotations of one order (Condorcet cycles) plus noise; leaderboard = latent
 * quality + per-voter noise + per-replicate noise (long chains of small components); mixed =
 * everything, with missing scores.
 */
function profile(kind: Kind, n: number, V: number, B: number, seed: number): Float64Array {
  const rnd = lcg(seed);
  const data = new Float64Array(n * V * B);
  const quality = Array.from({ length: n }, () => rnd());
  const shift = Array.from({ length: V }, () => Math.floor(rnd() * n));
  const bias = Array.from({ length: n * V }, () => rnd() - 0.5);
  for (let c = 0; c < n; c++) {
    for (let v = 0; v < V; v++) {
      for (let b = 0; b < B; b++) {
        let x: number;
        switch (kind) {
          case 'coarse':
            x = Math.floor(rnd() * 4) / 4;
            break;
          case 'near-ties':
            x = 0.5 + Math.floor(rnd() * 3) * 1e-13 + (rnd() < 0.3 ? Math.floor(rnd() * 3) * 0.1 : 0);
            break;
          case 'cycles':
            x = ((c + shift[v]!) % n) / n + (rnd() < 0.2 ? 0.3 * (rnd() - 0.5) : 0);
            break;
          case 'leaderboard':
            x = Math.round(1000 * (quality[c]! + 0.2 * bias[c * V + v]! + 0.05 * (rnd() - 0.5))) / 1000;
            break;
          default: {
            const u = rnd();
            x = u < 0.08 ? Number.NaN : u < 0.3 ? Math.floor(rnd() * 3) : u < 0.4 ? 7 / 18 + (rnd() < 0.5 ? 1e-16 : 0) : quality[c]! * 3 + rnd();
          }
        }
        data[(c * V + v) * B + b] = x;
      }
    }
  }
  return data;
}

const kinds: Kind[] = ['coarse', 'near-ties', 'cycles', 'leaderboard', 'mixed'];

describe('rank intervals equal the dense definition', () => {
  it('on random profiles of 2..40 candidates (ranks, exactness and intervals identical)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 40 }),
        fc.integer({ min: 1, max: 7 }),
        fc.integer({ min: 1, max: 5 }),
        fc.constantFrom(...kinds),
        fc.integer({ min: 1, max: 2 ** 30 }),
        fc.record({
          exactLimit: fc.constantFrom(0, 3, 6, 12),
          maxSweeps: fc.constantFrom(1, 2, 50),
          withPoint: fc.boolean(),
          withMacro: fc.boolean(),
          withNames: fc.boolean(),
          weights: fc.constantFrom('none', 'integer', 'zero', 'fractional'),
          infinite: fc.boolean(),
        }),
        (n, V, B, kind, seed, o) => {
          const data = profile(kind, n, V, B, seed);
          const rnd = lcg(seed ^ 0x5bd1e995);
          if (o.infinite) data[Math.floor(rnd() * data.length)] = rnd() < 0.5 ? Infinity : -Infinity;
          const options: RankIntervalOptions = { exactLimit: o.exactLimit, maxSweeps: o.maxSweeps, level: 0.9 };
          if (o.withNames) options.names = Array.from({ length: n }, (_, c) => `run ${(c * 7) % n}-${c}`);
          if (o.withMacro) {
            options.macro = { data: Float64Array.from({ length: n * B }, () => (rnd() < 0.3 ? 0.5 : Math.floor(rnd() * 5) / 5)) };
          }
          if (o.weights !== 'none') {
            options.voterWeights = Float64Array.from({ length: V }, (_, v) =>
              o.weights === 'integer' ? 1 + (v % 3) : o.weights === 'zero' ? v % 2 : 0.25 + (v % 3) / 3,
            );
          }
          if (o.withPoint) {
            const point = Array.from({ length: n }, (_, c) => c);
            for (let i = n - 1; i > 0; i--) {
              const j = Math.floor(rnd() * (i + 1));
              [point[i], point[j]] = [point[j]!, point[i]!];
            }
            options.pointOrder = point;
          }
          const input = { data, candidates: n, voters: V, replicates: B };
          const fast = kemenyRankIntervals(input, options);
          const oracle = denseRankIntervals(input, options);
          expect(Array.from(fast.ranks)).toEqual(Array.from(oracle.ranks));
          expect(fast.exactReplicates).toBe(oracle.exactReplicates);
          expect(fast.intervals).toEqual(oracle.intervals);
        },
      ),
      { numRuns: 400, seed: 20261203 },
    );
  });

  it('on leaderboard-like replicates of 90 candidates with the point order as warm start', () => {
    for (const seed of [3, 17]) {
      const n = 90;
      const V = 16;
      const B = 8;
      const data = profile('leaderboard', n, V, B, seed);
      const pointScores = Array.from({ length: V }, (_, v) => Float64Array.from({ length: n }, (_, c) => data[(c * V + v) * B]!));
      const point = kemeny(pointScores);
      const options: RankIntervalOptions = { pointOrder: point.order, names: Array.from({ length: n }, (_, c) => `r${c}`) };
      const input = { data, candidates: n, voters: V, replicates: B };
      const fast = kemenyRankIntervals(input, options);
      const oracle = denseRankIntervals(input, options);
      expect(Array.from(fast.ranks)).toEqual(Array.from(oracle.ranks));
      expect(fast.exactReplicates).toBe(oracle.exactReplicates);
      expect(fast.intervals).toEqual(oracle.intervals);
    }
  });
});

describe('kemenyFromMatrix equals the dense definition', () => {
  it('orders, scores, bounds, exactness and components identical (DP, heuristic with restarts and warm starts)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 40 }),
        fc.integer({ min: 1, max: 9 }),
        fc.constantFrom(...kinds),
        fc.integer({ min: 1, max: 2 ** 30 }),
        fc.record({
          exactLimit: fc.constantFrom(0, 5, 12),
          restarts: fc.constantFrom(0, 3, 20),
          maxSweeps: fc.constantFrom(1, 3, 1000),
          fractional: fc.boolean(),
          decompose: fc.boolean(),
          warm: fc.boolean(),
        }),
        (n, V, kind, seed, o) => {
          const data = profile(kind, n, V, 1, seed);
          const scores = Array.from({ length: V }, (_, v) => Float64Array.from({ length: n }, (_, c) => data[c * V + v]!));
          const rnd = lcg(seed + 11);
          const voterWeights = o.fractional ? Float64Array.from({ length: V }, () => 0.1 + rnd()) : null;
          const macro = Float64Array.from({ length: n }, () => Math.floor(rnd() * 4));
          const names = Array.from({ length: n }, (_, c) => `m${c % 5}`);
          const warmStarts = o.warm ? [Array.from({ length: n }, (_, c) => n - 1 - c)] : null;
          const options = {
            exactLimit: o.exactLimit,
            restarts: o.restarts,
            maxSweeps: o.maxSweeps,
            decompose: o.decompose,
            seed: seed % 1000,
            macro,
            names,
            warmStarts,
          };
          const fast = kemenyFromMatrix(pairwiseMatrix(scores, { voterWeights }), options);
          const oracle = dense.kemenyFromMatrix(dense.pairwiseMatrix(scores, { voterWeights }), options);
          expect(fast).toEqual(oracle);
        },
      ),
      { numRuns: 300, seed: 7 },
    );
  });
});

describe('kemenyFromMatrix with a given tie-break priority', () => {
  it('equals the priority computed from macro and names, restricted fields keep the tie-break, bad priorities are rejected', () => {
    // Four candidates all tied: the order is the tie-break order alone.
    const scores = [Float64Array.of(1, 1, 1, 1)];
    const macro = [0.2, 0.9, 0.5, 0.9];
    const names = ['d', 'b', 'c', 'a'];
    const computed = kemeny(scores, { macro, names });
    expect(computed.order).toEqual([3, 1, 2, 0]);
    const m = pairwiseMatrix(scores);
    expect(kemenyFromMatrix(m, { priority: [30, 10, 20, 0] }).order).toEqual(computed.order);
    // Only the relative order counts: a subset of a larger field's priorities.
    expect(kemenyFromMatrix(m, { priority: [107, 12, 55, 3] }).order).toEqual(computed.order);
    expect(() => kemenyFromMatrix(m, { priority: [0, 1, 1, 2] })).toThrow('distinct');
    expect(() => kemenyFromMatrix(m, { priority: [0, 1, 2] })).toThrow('priorities');
    expect(() => kemenyFromMatrix(m, { priority: [0, 1, 2.5, 3] })).toThrow('distinct');
  });
});
