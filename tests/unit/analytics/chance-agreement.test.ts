import fc from 'fast-check';
import { bootstrapMultiplicities } from '../../../src/analytics/bootstrap';
import { bootstrapStatistic, cohenKappa, fleissKappa, krippendorffAlpha, type Rating } from '../../../src/analytics/chance-agreement';
import { AnalyticsError } from '../../../src/analytics/errors';
import oracle from '../../fixtures/analytics/agreement-oracle.json';

/**
 * Krippendorff's α by brute force: every pairable value listed (units repeated by weight), every
 * ordered pair of values within a unit for D_o, every ordered pair of distinct pooled values for
 * D_e, as Krippendorff (2011) defines them. A different code path from the closed forms in src.
 */
function alphaBruteForce(units: Rating[][], level: 'NOMINAL' | 'INTERVAL', weights?: number[]): number {
  const delta = (a: Rating, b: Rating) => (level === 'NOMINAL' ? (a === b ? 0 : 1) : ((a as number) - (b as number)) ** 2);
  const expanded: Rating[][] = [];
  units.forEach((u, i) => {
    const values = u.filter((x) => x !== null);
    if (values.length < 2) return;
    for (let k = 0; k < (weights?.[i] ?? 1); k++) expanded.push(values);
  });
  const pooled = expanded.flat();
  const n = pooled.length;
  if (n < 2) return NaN;
  let Do = 0;
  for (const u of expanded) {
    let s = 0;
    for (let i = 0; i < u.length; i++) for (let j = 0; j < u.length; j++) if (i !== j) s += delta(u[i]!, u[j]!);
    Do += s / (u.length - 1);
  }
  Do /= n;
  let De = 0;
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) if (i !== j) De += delta(pooled[i]!, pooled[j]!);
  De /= n * (n - 1);
  return De === 0 ? NaN : 1 - Do / De;
}

describe("Cohen's κ against statsmodels cohens_kappa / scikit-learn cohen_kappa_score", () => {
  it.each(oracle.cohen.map((c, i) => [i, c] as const))('case %d', (_i, c) => {
    expect(cohenKappa(c.a, c.b, c.weights)).toBeCloseTo(c.kappa, 12);
  });

  it('hand-worked 2×2: p_o = 0.7, p_e = 0.5, κ = 0.4', () => {
    // 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no (Wikipedia "Cohen's kappa" example).
    const a = [...Array(25).fill('yes'), ...Array(25).fill('no')];
    const b = [...Array(20).fill('yes'), ...Array(5).fill('no'), ...Array(10).fill('yes'), ...Array(15).fill('no')];
    expect(cohenKappa(a, b)).toBeCloseTo(0.4, 15);
  });

  it('skips reports one rater did not rate; NaN when nothing is shared or chance agreement is 1', () => {
    expect(cohenKappa(['a', 'b', null, 'a'], ['a', 'b', 'a', null])).toBe(1);
    expect(cohenKappa([null], ['a'])).toBeNaN();
    expect(cohenKappa(['a', 'a'], ['a', 'a'])).toBeNaN();
    expect(() => cohenKappa(['a'], ['a', 'b'])).toThrow(AnalyticsError);
  });
});

describe("Fleiss' κ against statsmodels fleiss_kappa", () => {
  it.each(oracle.fleiss.map((c, i) => [i, c] as const))('case %d', (_i, c) => {
    expect(fleissKappa(c.ratings)).toBeCloseTo(c.kappa, 12);
  });

  it('Fleiss (1971) example of Wikipedia: κ = 0.210', () => {
    const ratings = oracle.fleissWikipedia.counts.map((row) => row.flatMap((count, k) => Array<string>(count).fill(`c${k + 1}`)));
    expect(fleissKappa(ratings)).toBeCloseTo(oracle.fleissWikipedia.kappa, 12);
    expect(fleissKappa(ratings)).toBeCloseTo(0.21, 3);
  });

  it('weights act as repeated reports', () => {
    const ratings = [['a', 'a', 'b'], ['b', 'b', 'b'], ['a', 'b', 'c']];
    expect(fleissKappa(ratings, [2, 0, 1])).toBeCloseTo(fleissKappa([ratings[0]!, ratings[0]!, ratings[2]!]), 14);
    expect(() => fleissKappa([['a', 'b'], ['a']])).toThrow(AnalyticsError);
    expect(() => fleissKappa([['a', null]])).toThrow(AnalyticsError);
  });
});

describe("Krippendorff's α", () => {
  // Krippendorff (2011), "Computing Krippendorff's alpha-reliability", example C: 4 observers × 12 units, missing data.
  const A: Rating[] = [1, 2, 3, 3, 2, 1, 4, 1, 2, null, null, null];
  const B: Rating[] = [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, null, 3];
  const C: Rating[] = [null, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, null];
  const D: Rating[] = [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, null];
  const units = A.map((_, u) => [A[u]!, B[u]!, C[u]!, D[u]!]);

  it('published example: nominal α = 0.743, interval α = 0.849', () => {
    expect(krippendorffAlpha(units, 'NOMINAL')).toBeCloseTo(0.743, 3);
    expect(krippendorffAlpha(units, 'INTERVAL')).toBeCloseTo(0.849, 3);
    expect(krippendorffAlpha(units, 'NOMINAL')).toBeCloseTo(alphaBruteForce(units, 'NOMINAL'), 12);
    expect(krippendorffAlpha(units, 'INTERVAL')).toBeCloseTo(alphaBruteForce(units, 'INTERVAL'), 12);
  });

  it('agrees with brute force on random small reliability data, with weights and missing ratings', () => {
    const rating = fc.option(fc.integer({ min: 0, max: 4 }), { nil: null, freq: 4 });
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 4 }).chain((m) =>
          fc.array(fc.tuple(fc.array(rating, { minLength: m, maxLength: m }), fc.integer({ min: 0, max: 3 })), { minLength: 1, maxLength: 10 }),
        ),
        fc.constantFrom<'NOMINAL' | 'INTERVAL'>('NOMINAL', 'INTERVAL'),
        (rows, level) => {
          const data = rows.map((r) => r[0] as Rating[]);
          const weights = rows.map((r) => r[1]);
          const expected = alphaBruteForce(data, level, weights);
          const actual = krippendorffAlpha(data, level, weights);
          if (Number.isNaN(expected)) expect(actual).toBeNaN();
          else expect(actual).toBeCloseTo(expected, 10);
        },
      ),
      { numRuns: 300, seed: 11 },
    );
  });

  it('nominal α of two raters with no missing data is close to Cohen-style κ; perfect agreement is 1', () => {
    expect(krippendorffAlpha([['a', 'a'], ['b', 'b'], ['a', 'a']], 'NOMINAL')).toBe(1);
    expect(krippendorffAlpha([['a', 'a'], ['a', 'a']], 'NOMINAL')).toBeNaN();
    expect(() => krippendorffAlpha([['a', 1]], 'INTERVAL')).toThrow(AnalyticsError);
  });
});

describe('bootstrapStatistic', () => {
  it('point = statistic on every report once, replicates = statistic with each resample row', () => {
    const x = [0.1, 0.5, 0.9, 0.3];
    const mean = (w: ArrayLike<number> | null) => {
      let s = 0;
      let d = 0;
      x.forEach((v, i) => {
        const k = w ? w[i]! : 1;
        s += k * v;
        d += k;
      });
      return s / d;
    };
    const W = bootstrapMultiplicities(4, 50, 3);
    const e = bootstrapStatistic(mean, W, 4, 0.9);
    expect(e.value).toBeCloseTo(0.45, 15);
    expect(e.resamples).toBe(50);
    const reps = Array.from({ length: 50 }, (_, b) => mean(W.subarray(b * 4, b * 4 + 4))).sort((p, q) => p - q);
    expect(e.ciLow).toBeGreaterThanOrEqual(reps[0]!);
    expect(e.ciHigh).toBeLessThanOrEqual(reps[49]!);
    expect(() => bootstrapStatistic(mean, W, 3)).toThrow(AnalyticsError);
  });
});
