import fc from 'fast-check';
import { bootstrapMultiplicities, bootstrapPValue, pairedDifference } from '../../../src/analytics/bootstrap';
import { AnalyticsError } from '../../../src/analytics/errors';
import { pooledRatio } from '../../../src/analytics/pooled';

describe('pooledRatio', () => {
  it('hand-worked: two reports, resamples {0,0} and {0,1}', () => {
    // Report 0: 3 observations, 2 correct; report 1: 1 observation, 0 correct.
    const W = Int32Array.from([2, 0, 1, 1]);
    const r = pooledRatio([{ numerator: [2, 0], denominator: [3, 1], multiplicities: W }], 0.5);
    expect(r.estimate.value).toBe(0.5);
    expect(Array.from(r.replicates)).toEqual([4 / 6, 2 / 4]);
  });

  it('equals the mean of the observations of explicitly resampled reports (brute force), several datasets', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.array(fc.constantFrom<number>(0, 1, 0.5), { maxLength: 4 }), { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 3 }),
        fc.integer({ min: 1, max: 1000 }),
        (datasets, seed) => {
          const B = 7;
          const matrices = datasets.map((reports, d) => bootstrapMultiplicities(reports.length, B, seed + d));
          const parts = datasets.map((reports, d) => ({
            numerator: reports.map((obs) => obs.reduce((s, x) => s + x, 0)),
            denominator: reports.map((obs) => obs.length),
            multiplicities: matrices[d]!,
          }));
          const result = pooledRatio(parts);
          for (let b = 0; b < B; b++) {
            // Draw the reports of resample b as a list and pool their observations.
            const pooled: number[] = [];
            datasets.forEach((reports, d) => {
              reports.forEach((obs, i) => {
                for (let k = 0; k < matrices[d]![b * reports.length + i]!; k++) pooled.push(...obs);
              });
            });
            const expected = pooled.length === 0 ? NaN : pooled.reduce((s, x) => s + x, 0) / pooled.length;
            if (Number.isNaN(expected)) expect(result.replicates[b]).toBeNaN();
            else expect(result.replicates[b]).toBeCloseTo(expected, 12);
          }
          const all = datasets.flat(2);
          if (all.length === 0) expect(result.estimate.value).toBeNaN();
          else expect(result.estimate.value).toBeCloseTo(all.reduce((s, x) => s + x, 0) / all.length, 12);
        },
      ),
      { numRuns: 100, seed: 7 },
    );
  });

  it('rejects inconsistent input', () => {
    expect(() => pooledRatio([])).toThrow(AnalyticsError);
    expect(() => pooledRatio([{ numerator: [1], denominator: [1, 2], multiplicities: Int32Array.from([1]) }])).toThrow(AnalyticsError);
    expect(() => pooledRatio([{ numerator: [-1], denominator: [1], multiplicities: Int32Array.from([1]) }])).toThrow(AnalyticsError);
  });
});

describe('bootstrapPValue', () => {
  it('is pairedDifference’s p-value: min(1, 2(1 + min(#≤0, #≥0)) / (B′ + 1))', () => {
    const d = [0.1, 0.2, -0.05, 0.3, Number.NaN, 0.2];
    expect(bootstrapPValue(d)).toBeCloseTo((2 * (1 + 1)) / 6, 15);
    expect(pairedDifference(1, 0, d.map((x) => x + 1), d.map(() => 1)).pValue).toBeCloseTo(bootstrapPValue(d), 15);
    expect(bootstrapPValue([0, 0, 0])).toBe(1);
    expect(bootstrapPValue([Number.NaN])).toBeNaN();
  });
});
