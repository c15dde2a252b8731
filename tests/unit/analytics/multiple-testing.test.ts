import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { AnalyticsError } from '../../../src/analytics/errors';
import { benjaminiHochberg, holm } from '../../../src/analytics/multiple-testing';

const oracle = JSON.parse(readFileSync(join(__dirname, '../../fixtures/analytics/contrasts-oracle.json'), 'utf8')) as {
  multitest: Array<{ p: number[]; fdr_bh: number[]; holm: number[] }>;
};

describe('multiple-testing adjustments against statsmodels multipletests', () => {
  it.each(oracle.multitest.map((c, i) => [i, c] as const))('case %i', (_i, c) => {
    Array.from(benjaminiHochberg(c.p)).forEach((q, i) => expect(q).toBeCloseTo(c.fdr_bh[i]!, 14));
    Array.from(holm(c.p)).forEach((q, i) => expect(q).toBeCloseTo(c.holm[i]!, 14));
  });

  it('leaves NaN p-values out of m', () => {
    const q = benjaminiHochberg([0.01, Number.NaN, 0.04]);
    expect(q[1]).toBeNaN();
    expect(q[0]).toBeCloseTo(0.02, 15);
    expect(q[2]).toBeCloseTo(0.04, 15);
  });

  it('is monotone in p and never below p (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 30 }), (p) => {
        const q = benjaminiHochberg(p);
        const h = holm(p);
        for (let i = 0; i < p.length; i++) {
          expect(q[i]).toBeGreaterThanOrEqual(p[i]! - 1e-15);
          expect(q[i]).toBeLessThanOrEqual(1);
          expect(h[i]).toBeGreaterThanOrEqual(q[i]! - 1e-15);
          for (let j = 0; j < p.length; j++) if (p[i]! <= p[j]!) expect(q[i]).toBeLessThanOrEqual(q[j]!);
        }
      }),
      { numRuns: 100, seed: 1 },
    );
  });

  it('rejects p-values outside [0, 1]', () => {
    expect(() => benjaminiHochberg([0.5, 1.2])).toThrow(AnalyticsError);
    expect(() => holm([-0.1])).toThrow(AnalyticsError);
  });
});
