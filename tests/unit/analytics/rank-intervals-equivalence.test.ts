/**
 * The optimised Kemeny–Young solver against the previous plain dense solver
 * (bench/support/baselines): the same orders, scores and exactness, bit for bit. Rank intervals against what their
 * definition (docs/scoring.md §6) guarantees, on random profiles with ties, near-ties within the
 * score tolerance, missing scores, Condorcet cycles, zero and fractional voter weights, infinite
 * scores and 2..40 candidates: replicates whose Condorcet components are all within the exact
 * limit get the optimum with its tie-break (the dense solver's order, and a brute force over all
 * orders up to 8 candidates); the others a local optimum under single insertions, checked move
 * by move, that scores no worse than the point order; each replicate's ranks depend on that
 * replicate alone; and the same input gives the same ranks.
 */
import fc from 'fast-check';
import { kemeny, kemenyFromMatrix, kemenyScore, pairwiseMatrix, tieBreakPriority } from '../../../src/analytics/kemeny';
import type { PairwiseMatrix } from '../../../src/analytics/kemeny';
import { kemenyRankIntervals, rankIntervalSteps } from '../../../src/analytics/rank-intervals';
import type { RankIntervalOptions } from '../../../src/analytics/rank-intervals';
import * as dense from '../../../bench/support/baselines/kemeny-dense';

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

/** Replicate b's voter scores, weights and tie-break as the definition reads them. */
function replicate(data: Float64Array, n: number, V: number, B: number, b: number, options: RankIntervalOptions) {
  const scores = Array.from({ length: V }, (_, v) => Float64Array.from({ length: n }, (_, c) => data[(c * V + v) * B + b]!));
  const weights = options.voterWeights ?? null;
  const matrix = pairwiseMatrix(scores, { voterWeights: weights });
  const macro = Float64Array.from({ length: n }, (_, c) => {
    if (options.macro) return options.macro.data[c * B + b]!;
    let sum = 0;
    let weight = 0;
    scores.forEach((s, v) => {
      const wv = weights === null ? 1 : weights[v]!;
      if (!Number.isNaN(s[c]!)) {
        sum += wv * s[c]!;
        weight += wv;
      }
    });
    return weight > 0 ? sum / weight : Number.NaN;
  });
  const priority = tieBreakPriority(n, { macro, names: options.names ?? null });
  const eps = matrix.integral ? 0 : 1e-9 * Math.max(1, matrix.totalWeight);
  return { matrix, priority, eps };
}

function orderOf(ranks: Int32Array, n: number, B: number, b: number): number[] {
  const order = new Array<number>(n).fill(-1);
  for (let c = 0; c < n; c++) order[ranks[c * B + b]! - 1] = c;
  return order;
}

/**
 * Every single insertion, scored from scratch: the largest score decrease any move attains
 * (≤ 0 at a local optimum), and whether an adjacent pair of equal weights stands against the
 * tie-break.
 */
function bestInsertion(matrix: PairwiseMatrix, order: number[], priority: Int32Array, eps: number) {
  const n = order.length;
  const base = kemenyScore(matrix, order);
  let gain = -Infinity;
  for (let p = 0; p < n; p++) {
    for (let q = 0; q < n; q++) {
      if (q === p) continue;
      const moved = order.slice();
      const [x] = moved.splice(p, 1);
      moved.splice(q, 0, x!);
      gain = Math.max(gain, base - kemenyScore(matrix, moved));
    }
  }
  let tieAgainst = false;
  for (let p = 0; p + 1 < n; p++) {
    const x = order[p]!;
    const y = order[p + 1]!;
    if (Math.abs(matrix.w[x * n + y]! - matrix.w[y * n + x]!) <= eps && priority[y]! < priority[x]!) tieAgainst = true;
  }
  return { gain, tieAgainst };
}

/** Insertion-move gains in O(n²) from running sums of the crossed pairs (for larger fields). */
function bestInsertionFast(matrix: PairwiseMatrix, order: number[]): number {
  const { n, w } = matrix;
  let gain = -Infinity;
  for (let p = 0; p < n; p++) {
    const x = order[p]!;
    let d = 0;
    for (let q = p - 1; q >= 0; q--) {
      const y = order[q]!;
      d += w[y * n + x]! - w[x * n + y]!;
      gain = Math.max(gain, -d);
    }
    d = 0;
    for (let q = p + 1; q < n; q++) {
      const y = order[q]!;
      d += w[x * n + y]! - w[y * n + x]!;
      gain = Math.max(gain, -d);
    }
  }
  return gain;
}

function randomOptions(n: number, V: number, B: number, seed: number, o: { exactLimit: number; maxSweeps: number; withPoint: boolean; withMacro: boolean; withNames: boolean; weights: string }) {
  const rnd = lcg(seed ^ 0x5bd1e995);
  const options: RankIntervalOptions = { exactLimit: o.exactLimit, maxSweeps: o.maxSweeps, level: 0.9 };
  if (o.withNames) options.names = Array.from({ length: n }, (_, c) => `run ${(c * 7) % n}-${c}`);
  if (o.withMacro) options.macro = { data: Float64Array.from({ length: n * B }, () => (rnd() < 0.3 ? 0.5 : Math.floor(rnd() * 5) / 5)) };
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
  return { options, rnd };
}

describe('rank intervals: what the per-replicate definition guarantees', () => {
  it('exact replicates equal the exact solver; the others are local optima no worse than the point order', () => {
    let heuristic = 0;
    let exact = 0;
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 30 }),
        fc.integer({ min: 1, max: 7 }),
        fc.integer({ min: 1, max: 4 }),
        fc.constantFrom(...kinds),
        fc.integer({ min: 1, max: 2 ** 30 }),
        fc.record({
          exactLimit: fc.constantFrom(0, 3, 6, 12),
          maxSweeps: fc.constantFrom(1, 2, 1000),
          withPoint: fc.boolean(),
          withMacro: fc.boolean(),
          withNames: fc.boolean(),
          weights: fc.constantFrom('none', 'integer', 'zero', 'fractional'),
          infinite: fc.boolean(),
        }),
        (n, V, B, kind, seed, o) => {
          const data = profile(kind, n, V, B, seed);
          const { options, rnd } = randomOptions(n, V, B, seed, o);
          if (o.infinite) data[Math.floor(rnd() * data.length)] = rnd() < 0.5 ? Infinity : -Infinity;
          const input = { data, candidates: n, voters: V, replicates: B };
          const result = kemenyRankIntervals(input, options);
          let exactCount = 0;
          for (let b = 0; b < B; b++) {
            const order = orderOf(result.ranks, n, B, b);
            expect(new Set(order).size).toBe(n);
            expect(order).not.toContain(-1);
            const { matrix, priority, eps } = replicate(data, n, V, B, b, options);
            const optimum = kemenyFromMatrix(matrix, { exactLimit: o.exactLimit, priority, restarts: 0 });
            if (optimum.exact) {
              exact++;
              exactCount++;
              expect(order).toEqual(optimum.order);
              continue;
            }
            heuristic++;
            const score = kemenyScore(matrix, order);
            if (options.pointOrder) {
              // Equal pairs swapped toward the tie-break may each cost up to eps.
              expect(score).toBeLessThanOrEqual(kemenyScore(matrix, options.pointOrder) + n * n * eps);
            }
            if (o.maxSweeps === 1000) {
              const { gain, tieAgainst } = bestInsertion(matrix, order, priority, eps);
              expect(gain).toBeLessThanOrEqual(eps);
              expect(tieAgainst).toBe(false);
            }
          }
          expect(result.exactReplicates).toBe(exactCount);
        },
      ),
      { numRuns: 400, seed: 20261203 },
    );
    // Both kinds of replicate were exercised.
    expect(exact).toBeGreaterThan(100);
    expect(heuristic).toBeGreaterThan(100);
  });

  it('exact replicates are the best order over all orders, tie-break included (brute force, up to 8 candidates)', () => {
    const perms = (n: number): number[][] =>
      n === 0 ? [[]] : perms(n - 1).flatMap((p) => Array.from({ length: n }, (_, i) => [...p.slice(0, i), n - 1, ...p.slice(i)]));
    const all = new Map<number, number[][]>();
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 8 }),
        fc.integer({ min: 1, max: 5 }),
        fc.constantFrom(...kinds),
        fc.integer({ min: 1, max: 2 ** 30 }),
        fc.boolean(),
        (n, V, kind, seed, withPoint) => {
          const B = 2;
          const data = profile(kind, n, V, B, seed);
          const { options } = randomOptions(n, V, B, seed, { exactLimit: 12, maxSweeps: 50, withPoint, withMacro: seed % 2 === 0, withNames: true, weights: 'integer' });
          const result = kemenyRankIntervals({ data, candidates: n, voters: V, replicates: B }, options);
          expect(result.exactReplicates).toBe(B);
          if (!all.has(n)) all.set(n, perms(n));
          for (let b = 0; b < B; b++) {
            const { matrix, priority } = replicate(data, n, V, B, b, options);
            let best: number[] | null = null;
            let bestScore = Infinity;
            for (const order of all.get(n)!) {
              const score = kemenyScore(matrix, order);
              const earlier = best !== null && score === bestScore && order.findIndex((c, p) => c !== best![p]) >= 0 &&
                priority[order[order.findIndex((c, p) => c !== best![p])]!]! < priority[best[order.findIndex((c, p) => c !== best![p])]!]!;
              if (score < bestScore || earlier) {
                best = order;
                bestScore = score;
              }
            }
            expect(orderOf(result.ranks, n, B, b)).toEqual(best);
          }
        },
      ),
      { numRuns: 40, seed: 99 },
    );
  });

  it('each replicate depends on its own data only, and the same input gives the same ranks', () => {
    const cases: Array<{ n: number; V: number; B: number; kind: Kind; seed: number }> = [
      { n: 90, V: 16, B: 12, kind: 'leaderboard', seed: 3 },
      { n: 40, V: 5, B: 10, kind: 'mixed', seed: 8 },
      { n: 30, V: 3, B: 10, kind: 'cycles', seed: 21 },
    ];
    for (const { n, V, B, kind, seed } of cases) {
      const data = profile(kind, n, V, B, seed);
      const pointScores = Array.from({ length: V }, (_, v) => Float64Array.from({ length: n }, (_, c) => data[(c * V + v) * B]!));
      const rnd = lcg(seed);
      const macro = Float64Array.from({ length: n * B }, () => Math.floor(rnd() * 4) / 4);
      const options: RankIntervalOptions = { pointOrder: kemeny(pointScores).order, names: Array.from({ length: n }, (_, c) => `r${c % 7}`), macro: { data: macro } };
      const input = { data, candidates: n, voters: V, replicates: B };
      const all = kemenyRankIntervals(input, options);
      expect(all.exactReplicates).toBeLessThan(B);
      expect(Array.from(kemenyRankIntervals(input, options).ranks)).toEqual(Array.from(all.ranks));
      const steps = rankIntervalSteps(input, options);
      let step = steps.next();
      while (!step.done) step = steps.next();
      expect(Array.from(step.value.ranks)).toEqual(Array.from(all.ranks));
      // A subset of the replicates, in another order, computed alone.
      const pick = [B - 1, 2, 5, 0];
      const sub = new Float64Array(n * V * pick.length);
      const subMacro = new Float64Array(n * pick.length);
      for (let c = 0; c < n; c++) {
        pick.forEach((b, k) => {
          subMacro[c * pick.length + k] = macro[c * B + b]!;
          for (let v = 0; v < V; v++) sub[(c * V + v) * pick.length + k] = data[(c * V + v) * B + b]!;
        });
      }
      const alone = kemenyRankIntervals({ data: sub, candidates: n, voters: V, replicates: pick.length }, { ...options, macro: { data: subMacro } });
      pick.forEach((b, k) => {
        for (let c = 0; c < n; c++) expect(alone.ranks[c * pick.length + k]).toBe(all.ranks[c * B + b]);
      });
    }
  });

  it('on leaderboard-like replicates of 90 candidates: local optima, no worse than the point order', () => {
    for (const seed of [3, 17]) {
      const n = 90;
      const V = 16;
      const B = 8;
      const data = profile('leaderboard', n, V, B, seed);
      const pointScores = Array.from({ length: V }, (_, v) => Float64Array.from({ length: n }, (_, c) => data[(c * V + v) * B]!));
      const point = kemeny(pointScores);
      const options: RankIntervalOptions = { pointOrder: point.order, names: Array.from({ length: n }, (_, c) => `r${c}`), maxSweeps: 1000 };
      const result = kemenyRankIntervals({ data, candidates: n, voters: V, replicates: B }, options);
      expect(result.exactReplicates).toBeLessThan(B);
      for (let b = 0; b < B; b++) {
        const order = orderOf(result.ranks, n, B, b);
        const { matrix } = replicate(data, n, V, B, b, options);
        expect(bestInsertionFast(matrix, order)).toBeLessThanOrEqual(0);
        expect(kemenyScore(matrix, order)).toBeLessThanOrEqual(kemenyScore(matrix, point.order));
      }
    }
  });
});

describe('kemenyFromMatrix equals the previous dense solver', () => {
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
          const oracle = dense.kemenyFromMatrix(pairwiseMatrix(scores, { voterWeights }), options);
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
