/**
 * The per-replicate entry points of rank intervals against the one-call functions they stand
 * for: TieBreakPriorities (ordering kept between calls) gives tieBreakPriority's priorities, and
 * one KemenyRepairSolver (scratch kept between calls) gives kemenyRepairOrder's result for every
 * matrix of a sequence, on macro averages with ties, near-ties within the score tolerance,
 * chains of near-ties, NaN and ±∞, duplicate names, and matrices with integer and fractional
 * weights.
 */
import fc from 'fast-check';
import { AnalyticsError } from '../../../src/analytics/errors';
import { KemenyRepairSolver, TieBreakPriorities, kemenyRepairOrder, pairwiseFromMatrix, pairwiseMatrix, tieBreakPriority } from '../../../src/analytics/kemeny';

function lcg(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 48271) % 2147483647) / 2147483647;
}

describe('TieBreakPriorities', () => {
  it('equals tieBreakPriority on every call of a sequence', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 2 ** 30 }),
        fc.constantFrom('distinct', 'duplicate', 'none'),
        (n, seed, nameKind) => {
          const rnd = lcg(seed);
          const names = nameKind === 'none' ? null : Array.from({ length: n }, (_, c) => (nameKind === 'distinct' ? `r${(c * 7) % n}` : `m${c % 3}`));
          const sorter = new TieBreakPriorities(n, names);
          const priority = new Int32Array(n);
          const base = Array.from({ length: n }, () => rnd());
          for (let call = 0; call < 8; call++) {
            const macro = base.map((x) => {
              const u = rnd();
              if (u < 0.05) return Number.NaN;
              if (u < 0.08) return rnd() < 0.5 ? Infinity : -Infinity;
              if (u < 0.2) return 0.5 + Math.floor(rnd() * 3) * 4e-13;
              if (u < 0.3) return 7 / 18 + (rnd() < 0.5 ? 1e-16 : 0);
              if (u < 0.35) return rnd() < 0.5 ? 0 : -0;
              return x + 0.05 * (rnd() - 0.5);
            });
            sorter.into(macro, priority);
            expect(Array.from(priority)).toEqual(Array.from(tieBreakPriority(n, { macro, names })));
          }
        },
      ),
      { numRuns: 300, seed: 5 },
    );
  });

  it('checks lengths as tieBreakPriority does', () => {
    expect(() => new TieBreakPriorities(3, ['a'])).toThrow(new AnalyticsError('LENGTH_MISMATCH', 'tie-break: 1 names for 3 candidates'));
    expect(() => new TieBreakPriorities(3).into([1, 2], new Int32Array(3))).toThrow(AnalyticsError);
  });
});

describe('KemenyRepairSolver', () => {
  it('reused over a sequence of matrices equals kemenyRepairOrder of each', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 36 }),
        fc.integer({ min: 1, max: 7 }),
        fc.integer({ min: 1, max: 2 ** 30 }),
        fc.constantFrom('unit', 'fractional'),
        fc.boolean(),
        fc.integer({ min: 0, max: 10 }),
        (n, V, seed, weightKind, withStart, exactLimit) => {
          const rnd = lcg(seed);
          const quality = Array.from({ length: n }, () => rnd());
          const voterWeights = weightKind === 'unit' ? null : Array.from({ length: V }, () => 0.25 + rnd());
          const start = withStart ? Array.from({ length: n }, (_, i) => i).sort((a, b) => quality[b]! - quality[a]! || a - b) : null;
          const options = { start, exactLimit, maxSweeps: 1 + Math.floor(rnd() * 20) };
          const solver = new KemenyRepairSolver(n, options);
          for (let call = 0; call < 6; call++) {
            const noise = [0.05, 0.5, 0.2][call % 3]!;
            const scores = Array.from({ length: V }, () => quality.map((q) => Math.round(20 * (q + noise * (rnd() - 0.5))) / 20));
            const matrix = pairwiseMatrix(scores, { voterWeights });
            const macro = quality.map((q) => Math.round(10 * (q + 0.1 * rnd())) / 10);
            const priority = tieBreakPriority(n, { macro });
            const expected = kemenyRepairOrder(matrix, { ...options, priority });
            const exact = solver.solve(matrix, priority);
            expect({ order: Array.from(solver.order), exact, componentSizes: solver.componentSizes() }).toEqual(expected);
          }
        },
      ),
      { numRuns: 200, seed: 9 },
    );
  });

  it('repairs a large component alike whether its members are consecutive labels or scattered', () => {
    // A random tournament of 9 voters on 80 candidates: one Condorcet component of all of them.
    // With the start in label order its members are one run of consecutive labels, with the
    // start 40…79, 0…39 two runs (their margins copied in blocks); relabelled by a permutation
    // they are scattered (read one by one). The repair must make the same moves, so the orders
    // correspond.
    const n = 80;
    const V = 9;
    const shuffled = (rnd: () => number) => {
      const a = Array.from({ length: n }, (_, i) => i);
      for (let i = n - 1; i > 0; i--) {
        const j = Math.floor(rnd() * (i + 1));
        [a[i], a[j]] = [a[j]!, a[i]!];
      }
      return a;
    };
    const identity = Array.from({ length: n }, (_, i) => i);
    const rotated = identity.map((i) => (i + 40) % n);
    for (const [seed, scale, start] of [
      [3, 1, identity],
      [4, 1, rotated],
      [5, 0.5, identity],
      [6, 0.5, rotated],
    ] as const) {
      const rnd = lcg(seed);
      const w = new Float64Array(n * n);
      for (let i = 0; i < n; i++) {
        for (let j = i + 1; j < n; j++) {
          const a = Math.floor(rnd() * (V + 1));
          w[i * n + j] = scale * a;
          w[j * n + i] = scale * (V - a);
        }
      }
      const relabel = shuffled(rnd);
      const moved = new Float64Array(n * n);
      for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) moved[relabel[i]! * n + relabel[j]!] = w[i * n + j]!;
      const priority = shuffled(rnd);
      const movedPriority = new Array<number>(n);
      relabel.forEach((to, from) => {
        movedPriority[to] = priority[from]!;
      });
      const inLabels = kemenyRepairOrder(pairwiseFromMatrix(n, w, V), { start, priority, exactLimit: 12 });
      const scattered = kemenyRepairOrder(pairwiseFromMatrix(n, moved, V), { start: start.map((c) => relabel[c]!), priority: movedPriority, exactLimit: 12 });
      expect(inLabels.componentSizes).toEqual([n]);
      expect(scattered.order).toEqual(inLabels.order.map((c) => relabel[c]!));
      expect(scattered.componentSizes).toEqual([n]);
    }
  });

  it('checks the start and the exact limit as kemenyRepairOrder does', () => {
    expect(() => new KemenyRepairSolver(3, { start: [0, 1] })).toThrow(new AnalyticsError('LENGTH_MISMATCH', 'kemeny: start of length 2'));
    expect(() => new KemenyRepairSolver(3, { start: [0, 1, 1] })).toThrow(AnalyticsError);
    expect(() => new KemenyRepairSolver(3, { exactLimit: 26 })).toThrow(new AnalyticsError('OUT_OF_RANGE', 'kemeny: exactLimit 26 outside 0..25'));
  });
});
