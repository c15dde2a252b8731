import fc from 'fast-check';
import { bootstrapGrid } from '../../../src/analytics/bootstrap';
import { AnalyticsError } from '../../../src/analytics/errors';
import { kemeny } from '../../../src/analytics/kemeny';
import {
  rankCeil,
  rankFloor,
  bestRunPerModel,
  kemenyRankIntervals,
  quantileType7Sorted,
  selectCandidates,
} from '../../../src/analytics/rank-intervals';

/** candidate × voter × replicate array from a generator function. */
function cube(n: number, V: number, B: number, f: (c: number, v: number, b: number) => number): Float64Array {
  const data = new Float64Array(n * V * B);
  for (let c = 0; c < n; c++) for (let v = 0; v < V; v++) for (let b = 0; b < B; b++) data[(c * V + v) * B + b] = f(c, v, b);
  return data;
}

function lcg(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 48271) % 2147483647) / 2147483647;
}

describe('quantileType7Sorted', () => {
  // Values from numpy.quantile(x, p, method="linear") (numpy 1.24).
  it.each([
    [[1, 1, 2, 3, 5], [1.0, 1.0, 2.0, 4.8, 5.0, 1.2]],
    [[3], [3, 3, 3, 3, 3, 3]],
    [[2, 7], [2.0, 2.125, 4.5, 6.875, 7.0, 3.5]],
    [[1, 1, 2, 3, 3, 4, 5, 6, 8, 8, 9], [1.0, 1.0, 4.0, 8.75, 9.0, 3.0]],
  ])('matches numpy on %j', (x, expected) => {
    const ps = [0, 0.025, 0.5, 0.975, 1, 0.3];
    ps.forEach((p, i) => expect(quantileType7Sorted(x, p)).toBeCloseTo(expected[i]!, 12));
  });

  it('rejects empty input and bad probabilities', () => {
    expect(() => quantileType7Sorted([], 0.5)).toThrow(AnalyticsError);
    expect(() => quantileType7Sorted([1], 1.5)).toThrow(AnalyticsError);
  });
});

describe('kemenyRankIntervals', () => {
  it('reruns the aggregation on every replicate (oracle: kemeny on each replicate)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 9 }),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 1e6 }),
        (n, V, B, seed) => {
          const rnd = lcg(seed);
          const data = cube(n, V, B, () => (rnd() < 0.1 ? Number.NaN : Math.floor(rnd() * 4)));
          const names = Array.from({ length: n }, (_, c) => `run-${c}`);
          const result = kemenyRankIntervals({ data, candidates: n, voters: V, replicates: B }, { names });
          expect(result.exactReplicates).toBe(B);
          for (let b = 0; b < B; b++) {
            const scores = Array.from({ length: V }, (_, v) => Array.from({ length: n }, (_, c) => data[(c * V + v) * B + b]!));
            const macro = Array.from({ length: n }, (_, c) => {
              const xs = scores.map((s) => s[c]!).filter((x) => !Number.isNaN(x));
              return xs.length === 0 ? Number.NaN : xs.reduce((x, y) => x + y, 0) / xs.length;
            });
            const expected = kemeny(scores, { macro, names });
            for (let c = 0; c < n; c++) expect(result.ranks[c * B + b]).toBe(expected.rank[c]);
          }
          for (const iv of result.intervals) {
            const sorted = Array.from(result.ranks.slice(iv.candidate * B, (iv.candidate + 1) * B)).sort((x, y) => x - y);
            expect(iv.lower).toBe(Math.floor(quantileType7Sorted(sorted, 0.025)));
            expect(iv.upper).toBe(Math.ceil(quantileType7Sorted(sorted, 0.975)));
            expect(iv.lower).toBeGreaterThanOrEqual(1);
            expect(iv.upper).toBeLessThanOrEqual(n);
            expect(iv.lower).toBeLessThanOrEqual(iv.upper);
          }
        },
      ),
      { numRuns: 60, seed: 123 },
    );
  });

  it('gives the worked interval of a five-replicate example', () => {
    // Candidate 0 ranks 1,1,2,3,5 over five replicates: quantiles 1 and 4.8 → interval [1, 5].
    const wanted = [
      [0, 1, 2, 3, 4],
      [0, 1, 2, 3, 4],
      [1, 0, 2, 3, 4],
      [1, 2, 0, 3, 4],
      [1, 2, 3, 4, 0],
    ];
    const n = 5;
    const B = 5;
    // One voter per replicate whose score is minus the wanted position.
    const data = cube(n, 1, B, (c, _v, b) => -wanted[b]!.indexOf(c));
    const result = kemenyRankIntervals({ data, candidates: n, voters: 1, replicates: B });
    expect(result.intervals[0]).toEqual({
      candidate: 0,
      lower: 1,
      upper: 5,
      lowerQuantile: 1,
      upperQuantile: expect.closeTo(4.8, 12) as unknown as number,
      median: 2,
    });
  });

  it('honours custom strides, weights and macro averages', () => {
    const n = 6;
    const V = 3;
    const B = 7;
    const rnd = lcg(9);
    const data = cube(n, V, B, () => Math.floor(rnd() * 3));
    // Same numbers stored replicate-major: index (b * n + c) * V + v.
    const replicateMajor = new Float64Array(n * V * B);
    for (let c = 0; c < n; c++) for (let v = 0; v < V; v++) for (let b = 0; b < B; b++) {
      replicateMajor[(b * n + c) * V + v] = data[(c * V + v) * B + b]!;
    }
    const macroData = cube(n, 1, B, (c) => c);
    const options = { voterWeights: [2, 1, 1], macro: { data: macroData } };
    const a = kemenyRankIntervals({ data, candidates: n, voters: V, replicates: B }, options);
    const b = kemenyRankIntervals(
      { data: replicateMajor, candidates: n, voters: V, replicates: B, strides: { candidate: V, voter: 1, replicate: n * V } },
      options,
    );
    expect(Array.from(b.ranks)).toEqual(Array.from(a.ranks));
    // With the macro tie-break favouring higher indices, an all-tied replicate ranks n-1 first.
    const flat = kemenyRankIntervals({ data: new Float64Array(n * V * B), candidates: n, voters: V, replicates: B }, options);
    expect(flat.intervals.map((i) => i.median)).toEqual([6, 5, 4, 3, 2, 1]);
  });

  it('uses the bounded heuristic for 90 candidates and returns permutations', () => {
    const n = 90;
    const V = 25;
    const B = 8;
    const rnd = lcg(2024);
    const quality = Array.from({ length: n }, () => rnd());
    const data = cube(n, V, B, (c) => quality[c]! + 0.3 * rnd());
    const point = kemeny(
      Array.from({ length: V }, (_, v) => Array.from({ length: n }, (_, c) => data[(c * V + v) * B]!)),
      { exactLimit: 0 },
    );
    const result = kemenyRankIntervals({ data, candidates: n, voters: V, replicates: B }, { pointOrder: point.order });
    for (let b = 0; b < B; b++) {
      const seen = new Set<number>();
      for (let c = 0; c < n; c++) seen.add(result.ranks[c * B + b]!);
      expect(seen.size).toBe(n);
    }
    // The best candidate by construction stays near the top in every replicate.
    const best = quality.indexOf(Math.max(...quality));
    expect(result.intervals[best]!.upper).toBeLessThanOrEqual(10);
  });

  it('reads the bootstrap grid layout directly (replicates and macroReplicates)', () => {
    const n = 15;
    const B = 25;
    const rnd = lcg(31);
    const runs = Array.from({ length: 4 }, (_, r) => ({
      id: `run-${r}`,
      items: Array.from({ length: 3 }, () => Array.from({ length: n }, () => (rnd() < 0.4 + 0.1 * r ? 1 : 0))),
    }));
    const variables = Array.from({ length: 3 }, (_, v) => ({ key: `v${v}`, groups: new Array<number>(n).fill(0) }));
    const grid = bootstrapGrid({ variables, runs, resamples: B, seed: 7 });
    const result = kemenyRankIntervals(
      { data: grid.replicates, candidates: runs.length, voters: variables.length, replicates: B },
      { macro: { data: grid.macroReplicates }, names: runs.map((r) => r.id) },
    );
    // Oracle: recompute each replicate's per-variable accuracy from the multiplicity matrix.
    for (let b = 0; b < B; b++) {
      const w = grid.multiplicities.subarray(b * n, (b + 1) * n);
      const scores = variables.map((_, v) =>
        runs.map((run) => {
          let num = 0;
          for (let i = 0; i < n; i++) num += w[i]! * run.items[v]![i]!;
          return num / n;
        }),
      );
      const macro = runs.map((_, r) => (scores[0]![r]! + scores[1]![r]! + scores[2]![r]!) / 3);
      const expected = kemeny(scores, { macro, names: runs.map((r) => r.id) });
      runs.forEach((_, r) => expect(result.ranks[r * B + b]).toBe(expected.rank[r]));
    }
  });

  it('a quantile within rounding of an integer is that integer: ranks [1,3,3,3,4,4] at level 0.8 give [2, 4]', () => {
    // Type 7 at 0.1 of six ranks is 1 + 0.5·(3 − 1) = 2; with α/2 = (1 − 0.8)/2 = 0.09999999999999998 it is 1.9999999999999998.
    const ranks = [1, 3, 3, 3, 4, 4];
    expect(quantileType7Sorted(ranks, (1 - 0.8) / 2)).toBeLessThan(2);
    expect(rankFloor(quantileType7Sorted(ranks, (1 - 0.8) / 2))).toBe(2);
    expect(rankCeil(3.5)).toBe(4);
    expect(rankFloor(1.5)).toBe(1);
  });

  it('rejects invalid input', () => {
    const data = new Float64Array(8);
    expect(() => kemenyRankIntervals({ data, candidates: 0, voters: 1, replicates: 1 })).toThrow(AnalyticsError);
    expect(() => kemenyRankIntervals({ data, candidates: 3, voters: 3, replicates: 1 })).toThrow(AnalyticsError);
    expect(() => kemenyRankIntervals({ data, candidates: 2, voters: 2, replicates: 2 }, { level: 1 })).toThrow(
      AnalyticsError,
    );
    expect(() =>
      kemenyRankIntervals({ data, candidates: 2, voters: 2, replicates: 2 }, { voterWeights: [1, Number.NaN] }),
    ).toThrow(AnalyticsError);
  });
});

describe('bestRunPerModel', () => {
  it('picks each model’s highest-placed run, models in order of their best runs', () => {
    const runModel = ['llama', 'qwen', 'llama', 'gemma', 'qwen'];
    const order = [4, 2, 0, 3, 1];
    expect(bestRunPerModel(order, runModel)).toEqual([
      { model: 'qwen', run: 4, runRank: 1, modelRank: 1 },
      { model: 'llama', run: 2, runRank: 2, modelRank: 2 },
      { model: 'gemma', run: 3, runRank: 4, modelRank: 3 },
    ]);
  });

  it('selects the best runs as candidates', () => {
    const scores = [
      [0.1, 0.2, 0.3],
      [0.4, 0.5, 0.6],
    ];
    expect(selectCandidates(scores, [2, 0]).map((x) => Array.from(x))).toEqual([
      [0.3, 0.1],
      [0.6, 0.4],
    ]);
    expect(() => selectCandidates(scores, [3])).toThrow(AnalyticsError);
  });

  it('rejects an order that is not a permutation', () => {
    expect(() => bestRunPerModel([0, 0], ['a', 'b'])).toThrow(AnalyticsError);
    expect(() => bestRunPerModel([0], ['a', 'b'])).toThrow(AnalyticsError);
  });
});

describe('kemenyRankIntervals against an independent brute force', () => {
  /** All permutations of 0..n−1. */
  const perms = (n: number): number[][] =>
    n === 0 ? [[]] : perms(n - 1).flatMap((p) => Array.from({ length: n }, (_, i) => [...p.slice(0, i), n - 1, ...p.slice(i)]));
  const same = (a: number, b: number) => Math.abs(a - b) <= 1e-12 * Math.max(1, Math.abs(a), Math.abs(b));

  /** Ranks of one replicate: optimal orders by brute force, the tie-break (macro within tolerance, name) picking one. */
  function bruteRanks(scores: number[][], names: string[]): number[] {
    const n = names.length;
    const macro = names.map((_, c) => {
      const xs = scores.map((s) => s[c]!).filter((x) => !Number.isNaN(x));
      return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN;
    });
    // Tie classes anchored at the leader, best first.
    const byMacro = names.map((_, c) => c).sort((a, b) => (Number.isNaN(macro[a]!) ? 1 : Number.isNaN(macro[b]!) ? -1 : macro[b]! - macro[a]!) || a - b);
    const cls = new Array<number>(n);
    let k = -1;
    let leader = NaN;
    for (const c of byMacro) {
      if (Number.isNaN(macro[c]!)) cls[c] = 1e9;
      else {
        if (k < 0 || !same(leader, macro[c]!)) (k++, (leader = macro[c]!));
        cls[c] = k;
      }
    }
    const priority = names.map((_, c) => c).sort((a, b) => cls[a]! - cls[b]! || (names[a]! < names[b]! ? -1 : names[a]! > names[b]! ? 1 : a - b));
    const prio = new Array<number>(n);
    priority.forEach((c, p) => (prio[c] = p));
    const prefers = (s: number[], i: number, j: number) => !Number.isNaN(s[i]!) && !Number.isNaN(s[j]!) && s[i]! > s[j]! && !same(s[i]!, s[j]!);
    let best: number[] | null = null;
    let bestScore = Infinity;
    for (const order of perms(n)) {
      let score = 0;
      for (const s of scores) for (let p = 0; p < n; p++) for (let q = p + 1; q < n; q++) if (prefers(s, order[q]!, order[p]!)) score++;
      const lexLess = best !== null && order.map((c) => prio[c]!).join(',') < best.map((c) => prio[c]!).join(',');
      if (score < bestScore || (score === bestScore && lexLess)) {
        best = order;
        bestScore = score;
      }
    }
    const rank = new Array<number>(n);
    best!.forEach((c, p) => (rank[c] = p + 1));
    return rank;
  }

  function type7(sorted: number[], p: number): number {
    const h = (sorted.length - 1) * p;
    const lo = Math.floor(h);
    return sorted[lo]! + (h - lo) * (sorted[Math.min(lo + 1, sorted.length - 1)]! - sorted[lo]!);
  }

  it('ranks per replicate and percentile intervals agree for up to 5 candidates (ties within rounding included)', () => {
    const score = fc.constantFrom(0, 0.25, 0.5, 1, 0.3888888888888889, 0.38888888888888884, Number.NaN);
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 4 }).chain((n) =>
          fc.tuple(
            fc.constant(n),
            fc.integer({ min: 1, max: 4 }).chain((V) => fc.array(fc.array(fc.array(score, { minLength: n, maxLength: n }), { minLength: V, maxLength: V }), { minLength: 1, maxLength: 6 })),
          ),
        ),
        ([n, replicates]) => {
          const V = replicates[0]!.length;
          const B = replicates.length;
          const names = Array.from({ length: n }, (_, c) => `c${c}`);
          const data = new Float64Array(n * V * B);
          replicates.forEach((voters, b) => voters.forEach((s, v) => s.forEach((x, c) => (data[(c * V + v) * B + b] = x))));
          const result = kemenyRankIntervals({ data, candidates: n, voters: V, replicates: B }, { names, exactLimit: 12, level: 0.8 });
          const expected = replicates.map((voters) => bruteRanks(voters, names));
          for (let c = 0; c < n; c++) {
            const got = Array.from(result.ranks.subarray(c * B, (c + 1) * B));
            expect(got).toEqual(expected.map((r) => r[c]!));
            const sorted = [...got].sort((a, b) => a - b);
            // Levels 0.1 and 0.9 exactly (the server computes them as (1 − 0.8)/2 in floating point).
            expect(result.intervals[c]!.lower).toBe(Math.floor(type7(sorted, 0.1)));
            expect(result.intervals[c]!.upper).toBe(Math.ceil(type7(sorted, 0.9)));
          }
        },
      ),
      { numRuns: 150, seed: 5 },
    );
  });
});
