import fc from 'fast-check';
import { kemeny, tieBreakPriority } from '../../../src/analytics/kemeny';
import { balancedAccuracy, scoreVariable } from '../../../src/analytics/metrics';
import { cellsEqual, normaliseValue } from '../../../src/analytics/normalise';
import { kemenyRankIntervals } from '../../../src/analytics/rank-intervals';
import {
  compareScoresDescending,
  numbersEqualWithin,
  scoreGreater,
  scoresEqual,
  scoreTieClasses,
} from '../../../src/analytics/tolerance';
import type { VariableSpec } from '../../../src/analytics/types';

/** Labels of the worked case: 16 reports, reference 3×c1, 6×c2, 7×c3 (docs/scoring.md §6). */
const REFERENCE = [...Array(3).fill('c1'), ...Array(6).fill('c2'), ...Array(7).fill('c3')] as string[];
/** Run A: recalls 0 (c1), 1/6 (c2), 1 (c3). */
const RUN_A = [...Array(3).fill('c2'), 'c2', ...Array(5).fill('c1'), ...Array(7).fill('c3')] as string[];
/** Run B: recalls 2/3, 1/2, 0. */
const RUN_B = ['c1', 'c1', 'c2', 'c2', 'c2', 'c2', 'c1', 'c1', 'c1', ...Array(7).fill('c1')] as string[];

describe('numeric tolerance is inclusive in spite of binary rounding (docs/scoring.md §1 Numbers)', () => {
  it('1.1 against 1.0 with tolerance 0.1 is equal although 1.1 − 1.0 > 0.1 in floating point', () => {
    expect(1.1 - 1.0).toBeGreaterThan(0.1);
    expect(numbersEqualWithin(1.0, 1.1, 0.1)).toBe(true);
    expect(numbersEqualWithin(2.0, 2.1, 0.1)).toBe(true);
    expect(numbersEqualWithin(1e6, 1e6 + 0.1, 0.1)).toBe(true);
  });

  it('beyond the boundary is not equal, and tolerance 0 demands equality', () => {
    expect(numbersEqualWithin(1.0, 1.1000001, 0.1)).toBe(false);
    expect(numbersEqualWithin(5.0, 5.2, 0.1)).toBe(false);
    expect(numbersEqualWithin(0.3, 0.1 + 0.2, 0)).toBe(false);
    expect(numbersEqualWithin(10, 10, 0)).toBe(true);
    expect(numbersEqualWithin(1, Number.NaN, 1)).toBe(false);
  });

  it('the slack is relative to the magnitudes: 1e-12 · max(1, |a|, |b|)', () => {
    // At 1e9 the slack is 1e-3; at 1 it is 1e-12.
    expect(numbersEqualWithin(1e9, 1e9 + 0.1 + 5e-4, 0.1)).toBe(true);
    expect(numbersEqualWithin(1, 1.1 + 1e-9, 0.1)).toBe(false);
  });

  it('accuracy with tolerance 0.1 is 0.75 on references 1.0, 0.0, 2.0, 5.0 and predictions 1.1, 0.1, 2.1, 5.2', () => {
    const spec: VariableSpec = { key: 'size', type: 'NUMERIC', tolerance: 0.1 };
    const refs = [1.0, 0.0, 2.0, 5.0].map((x) => normaliseValue(spec, x));
    const preds = ['1.1', '0,1', 2.1, 5.2].map((x) => normaliseValue(spec, x));
    expect(cellsEqual(refs[0]!, preds[0]!, 0.1)).toBe(true);
    const score = scoreVariable(spec, refs, preds);
    expect(score.metric).toBe('ACCURACY');
    expect(score.value).toBe(0.75);
  });
});

describe('scores compared with relative tolerance 1e-12 (docs/scoring.md §6 Ties)', () => {
  it('the two balanced accuracies of the worked case are 7/18 and differ only in the last bit', () => {
    const a = balancedAccuracy(REFERENCE, RUN_A);
    const b = balancedAccuracy(REFERENCE, RUN_B);
    expect(a).toBe(0.3888888888888889);
    expect(b).toBe(0.38888888888888884);
    expect(scoresEqual(a, b)).toBe(true);
    expect(scoreGreater(a, b)).toBe(false);
    expect(scoreGreater(b, a)).toBe(false);
    expect(compareScoresDescending(a, b)).toBe(0);
  });

  it('distinct scores stay distinct, NaN equals nothing', () => {
    expect(scoresEqual(0.5, 0.5 + 1e-9)).toBe(false);
    expect(scoreGreater(0.5 + 1e-9, 0.5)).toBe(true);
    expect(scoresEqual(1e15, 1e15 + 0.5)).toBe(true);
    expect(scoresEqual(Number.NaN, Number.NaN)).toBe(false);
    expect(scoreGreater(Number.NaN, 0)).toBe(false);
    expect(compareScoresDescending(Number.NaN, 0)).toBe(1);
    expect(compareScoresDescending(0, Number.NaN)).toBe(-1);
  });

  it('tie classes are anchored at their highest member, so they partition whatever the input order', () => {
    const x = [1 - 1.5e-12, 1, 1 - 0.7e-12, 0.5, Number.NaN, 0.5 + 1e-13];
    const classes = Array.from(scoreTieClasses(x));
    // 1 leads; 1 − 0.7e-12 is within tolerance of it; 1 − 1.5e-12 is not (though it is of 1 − 0.7e-12).
    expect(classes).toEqual([1, 0, 0, 2, 3, 2]);
    const reversed = Array.from(scoreTieClasses([...x].reverse())).reverse();
    expect(reversed).toEqual(classes);
  });

  it('worked case: the optimum is [B, A] with score 1, exact', () => {
    const a = balancedAccuracy(REFERENCE, RUN_A);
    const b = balancedAccuracy(REFERENCE, RUN_B);
    // Voters: v1 (balanced accuracy), v2 and v4 (A 8/16, B 9/16), v3 (A 16/16, B 0/16).
    const voters = [
      [a, b],
      [8 / 16, 9 / 16],
      [16 / 16, 0 / 16],
      [8 / 16, 9 / 16],
    ];
    const macro = [0, 1].map((c) => voters.reduce((s, v) => s + v[c]!, 0) / voters.length);
    expect(macro[0]).toBeGreaterThan(macro[1]!); // the tie-break alone would put A first
    const result = kemeny(voters, { macro, names: ['A', 'B'] });
    expect(result.order).toEqual([1, 0]);
    expect(result.score).toBe(1);
    expect(result.lowerBound).toBe(1);
    expect(result.exact).toBe(true);
  });

  it('tie-break by macro average treats rounding-level differences as a tie and falls back to the name', () => {
    const priority = tieBreakPriority(2, { macro: [0.3888888888888889, 0.38888888888888884], names: ['B', 'A'] });
    expect(Array.from(priority)).toEqual([1, 0]);
    const strict = tieBreakPriority(2, { macro: [0.39, 0.38], names: ['B', 'A'] });
    expect(Array.from(strict)).toEqual([0, 1]);
  });

  it('rank intervals: replicates whose scores differ only by rounding rank as the exact scores do', () => {
    const a = balancedAccuracy(REFERENCE, RUN_A);
    const b = balancedAccuracy(REFERENCE, RUN_B);
    // candidate × voter × replicate (replicate fastest), two identical replicates.
    const perCandidate = [
      [a, 8 / 16, 1, 8 / 16],
      [b, 9 / 16, 0, 9 / 16],
    ];
    const data = perCandidate.flatMap((voters) => voters.flatMap((x) => [x, x]));
    const result = kemenyRankIntervals({ data, candidates: 2, voters: 4, replicates: 2 }, { names: ['A', 'B'] });
    expect(Array.from(result.ranks)).toEqual([2, 2, 1, 1]);
  });
});

// ------------------------------------------------------------------------------------------------
// Oracle: brute-force Kemeny over exact rationals against kemeny() over floating-point scores
// that reach the same rationals along different summation orders.
// ------------------------------------------------------------------------------------------------

interface Rational {
  num: bigint;
  den: bigint;
}

/** Mean of fractions k_c / n_c, exactly. */
function exactMean(parts: readonly [number, number][]): Rational {
  let num = 0n;
  let den = 1n;
  for (const [k, n] of parts) {
    num = num * BigInt(n) + BigInt(k) * den;
    den *= BigInt(n);
  }
  return { num, den: den * BigInt(parts.length) };
}

function exactCompare(x: Rational, y: Rational): number {
  const l = x.num * y.den;
  const r = y.num * x.den;
  return l > r ? 1 : l < r ? -1 : 0;
}

function permutations(n: number): number[][] {
  if (n === 0) return [[]];
  return permutations(n - 1).flatMap((p) => Array.from({ length: n }, (_, i) => [...p.slice(0, i), n - 1, ...p.slice(i)]));
}

describe('Kemeny on rounded scores equals brute force on exact rationals (property)', () => {
  it('optimal score agrees for up to 6 candidates and 5 voters', () => {
    const recall = fc.integer({ min: 1, max: 6 }).chain((n) => fc.tuple(fc.integer({ min: 0, max: n }), fc.constant(n)));
    const voterScore = fc.array(recall, { minLength: 2, maxLength: 4 });
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 6 }).chain((n) =>
          fc.tuple(fc.constant(n), fc.array(fc.array(voterScore, { minLength: n, maxLength: n }), { minLength: 1, maxLength: 5 })),
        ),
        fc.integer({ min: 0, max: 1000 }),
        ([n, voters], salt) => {
          const exact = voters.map((cands) => cands.map((parts) => exactMean(parts as [number, number][])));
          // Floating point: the class recalls summed in an order that depends on the candidate.
          const floats = voters.map((cands) =>
            cands.map((parts, c) => {
              const order = [...parts].sort((p, q) => ((p[0] * 7 + p[1] * 13 + c + salt) % 5) - ((q[0] * 7 + q[1] * 13 + c + salt) % 5));
              let s = 0;
              for (const [k, m] of order) s += k / m;
              return s / parts.length;
            }),
          );
          let best = Infinity;
          for (const order of permutations(n)) {
            let score = 0;
            for (const v of exact) {
              for (let p = 0; p < n; p++) for (let q = p + 1; q < n; q++) if (exactCompare(v[order[q]!]!, v[order[p]!]!) > 0) score++;
            }
            best = Math.min(best, score);
          }
          const result = kemeny(floats);
          expect(result.exact).toBe(true);
          expect(result.score).toBe(best);
        },
      ),
      { numRuns: 300, seed: 20240607 },
    );
  });
});
