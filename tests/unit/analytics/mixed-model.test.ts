import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AnalyticsError } from '../../../src/analytics/errors';
import { partitionVariance, remlCriterion } from '../../../src/analytics/mixed-model';
import { nelderMead } from '../../../src/analytics/mixed-model-optimiser';

interface OracleCase {
  name: string;
  factors: string[];
  n: number;
  y: number[];
  codes: Record<string, number[]>;
  expected: OracleFit;
  refined: OracleFit;
}

interface OracleFit {
  variances: number[];
  residualVariance: number;
  intercept: number;
  logLikelihood: number;
}

const oracle = JSON.parse(
  readFileSync(join(__dirname, '../../fixtures/analytics/variance-oracle.json'), 'utf8'),
) as { cases: OracleCase[] };

describe('partitionVariance against statsmodels MixedLM (REML)', () => {
  /**
   * Tolerances. "refined" is statsmodels' REML likelihood maximised with tight gradient
   * tolerances: variance components agree to 1e-5 relative. "expected" is statsmodels' default
   * fit, which stops on a flat likelihood (5–6 strategy levels) with up to ~1e-3 relative error
   * in a component (its log-likelihood is below ours by up to 1e-6): 2e-3 relative. Components
   * near zero are compared on the scale of the total variance (1e-6 of it).
   */
  const close = (got: number, want: number, rel: number, total: number): boolean =>
    Math.abs(got - want) <= Math.max(rel * Math.abs(want), 1e-6 * total);

  it.each(oracle.cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const fit = partitionVariance(
      c.y,
      c.factors.map((f) => ({ name: f, levels: c.codes[f]! })),
    );
    for (const [oracleFit, rel] of [
      [c.refined, 1e-5],
      [c.expected, 2e-3],
    ] as const) {
      const total = oracleFit.variances.reduce((a, b) => a + b, 0) + oracleFit.residualVariance;
      oracleFit.variances.forEach((v, k) => {
        expect({ k, ok: close(fit.components[k]!.variance, v, rel, total) }).toEqual({ k, ok: true });
      });
      expect(close(fit.residualVariance, oracleFit.residualVariance, rel, total)).toBe(true);
      expect(fit.intercept).toBeCloseTo(oracleFit.intercept, 6);
      // Same likelihood constants as statsmodels; our optimum is at least as high.
      expect(fit.logLikelihood).toBeGreaterThanOrEqual(oracleFit.logLikelihood - 1e-8);
    }
    expect(fit.logLikelihood - c.refined.logLikelihood).toBeLessThan(1e-6);
    const shares = fit.components.reduce((a, x) => a + x.share, 0) + fit.residualShare;
    expect(shares).toBeCloseTo(1, 12);
    expect(fit.converged).toBe(true);
    expect(fit.components.map((x) => x.name)).toEqual(c.factors);
  });

  it('reports a zero component for a factor without effect', () => {
    // Strategy labels are assigned so every model sees the same strategy means exactly.
    const y: number[] = [];
    const model: string[] = [];
    const strategy: string[] = [];
    const modelEffect = [0.3, -0.1, 0.2, -0.4];
    const noise = [0.05, -0.05, 0.02, -0.02, 0.07, -0.07];
    modelEffect.forEach((a, m) => {
      for (let s = 0; s < 3; s++) {
        for (let r = 0; r < 6; r++) {
          y.push(a + noise[(r + s) % 6]!);
          model.push(`m${m}`);
          strategy.push(`s${s}`);
        }
      }
    });
    const fit = partitionVariance(y, [
      { name: 'model', levels: model },
      { name: 'strategy', levels: strategy },
    ]);
    expect(fit.components[1]!.variance).toBeLessThan(1e-10);
    expect(fit.components[0]!.share).toBeGreaterThan(0.9);
  });
});

describe('remlCriterion', () => {
  it('is even in each relative standard deviation and finite on the boundary', () => {
    const c = oracle.cases[0]!;
    const factors = c.factors.map((f) => ({ name: f, levels: c.codes[f]! }));
    const a = remlCriterion(c.y, factors, [0.3, 0.2]);
    expect(remlCriterion(c.y, factors, [-0.3, 0.2])).toBeCloseTo(a, 10);
    expect(Number.isFinite(remlCriterion(c.y, factors, [0, 0]))).toBe(true);
  });

  it('equals −2 × the statsmodels REML log-likelihood at the statsmodels estimates', () => {
    for (const c of oracle.cases) {
      const factors = c.factors.map((f) => ({ name: f, levels: c.codes[f]! }));
      const t = c.expected.variances.map((v) => Math.sqrt(v / c.expected.residualVariance));
      expect(-0.5 * remlCriterion(c.y, factors, t)).toBeCloseTo(c.expected.logLikelihood, 6);
    }
  });
});

describe('partitionVariance validation', () => {
  const code = (f: () => unknown): string | undefined => {
    try {
      f();
    } catch (e) {
      return e instanceof AnalyticsError ? e.code : 'untyped';
    }
    return undefined;
  };
  it('throws typed errors', () => {
    expect(code(() => partitionVariance([1, 2, 3], []))).toBe('EMPTY_INPUT');
    expect(code(() => partitionVariance([1, 2], [{ name: 'm', levels: ['a', 'b'] }]))).toBe('EMPTY_INPUT');
    expect(code(() => partitionVariance([1, 2, 3], [{ name: 'm', levels: ['a', 'b'] }]))).toBe('LENGTH_MISMATCH');
    expect(code(() => partitionVariance([1, 2, 3], [{ name: 'm', levels: ['a', 'a', 'a'] }]))).toBe('BAD_INPUT');
    expect(code(() => partitionVariance([1, Number.NaN, 3], [{ name: 'm', levels: ['a', 'b', 'a'] }]))).toBe('BAD_INPUT');
    expect(code(() => partitionVariance([2, 2, 2], [{ name: 'm', levels: ['a', 'b', 'a'] }]))).toBe('BAD_INPUT');
  });
});

describe('nelderMead', () => {
  it('minimises the Rosenbrock function', () => {
    const r = nelderMead((x) => 100 * (x[1]! - x[0]! ** 2) ** 2 + (1 - x[0]!) ** 2, [-1.2, 1], { xtol: 1e-10, ftol: 1e-14 });
    expect(r.converged).toBe(true);
    expect(r.x[0]).toBeCloseTo(1, 6);
    expect(r.x[1]).toBeCloseTo(1, 6);
  });

  it('rejects an empty start and a non-finite start value', () => {
    expect(() => nelderMead(() => 0, [])).toThrow(AnalyticsError);
    expect(() => nelderMead(() => Number.NaN, [1])).toThrow(AnalyticsError);
  });
});
