import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { accuracyContrast, olsClusterRobust } from '../../../src/analytics/contrasts';
import { AnalyticsError } from '../../../src/analytics/errors';

interface OracleFit {
  useT: boolean;
  params: number[];
  bse: number[];
  tvalues: number[];
  pvalues: number[];
  ciLower: number[];
  ciUpper: number[];
  cov: number[];
}
/** A stratum's own model: statsmodels' observations and clusters (its reports). */
interface OracleStratumFit extends OracleFit {
  nobs: number;
  groups: number;
}
interface OracleModels {
  unadjusted: OracleFit;
  adjusted: OracleFit;
  interaction: OracleFit;
  separate: OracleStratumFit[];
  interactionBH: number[];
  separateBH: number[];
}
const oracle = JSON.parse(readFileSync(join(__dirname, '../../fixtures/analytics/contrasts-oracle.json'), 'utf8')) as {
  data: { report: string[]; stratum: string[]; run: number[]; group: number[]; y: number[] };
  strata: string[];
  models: { z: OracleModels; t: OracleModels };
};
const { data, strata } = oracle;
const n = data.y.length;

/** Relative agreement, with an absolute floor for values near zero (p-values of 1e-269). */
const near = (got: number, want: number, rel = 1e-9): boolean =>
  Math.abs(got - want) <= rel * Math.abs(want) + 1e-300;

function expectFit(got: ReturnType<typeof olsClusterRobust>, want: OracleFit): void {
  want.params.forEach((_, j) => {
    expect({ j, ok: near(got.coefficients[j]!, want.params[j]!, 1e-10) }).toEqual({ j, ok: true });
    expect({ j, ok: near(got.standardErrors[j]!, want.bse[j]!) }).toEqual({ j, ok: true });
    expect({ j, ok: near(got.statistics[j]!, want.tvalues[j]!) }).toEqual({ j, ok: true });
    // p-values: relative 1e-7 covers the propagation of 1e-9 in the statistic into the tail.
    expect({ j, ok: near(got.pValues[j]!, want.pvalues[j]!, 1e-7) }).toEqual({ j, ok: true });
    expect({ j, ok: near(got.ciLower[j]!, want.ciLower[j]!) }).toEqual({ j, ok: true });
    expect({ j, ok: near(got.ciUpper[j]!, want.ciUpper[j]!) }).toEqual({ j, ok: true });
  });
  want.cov.forEach((v, i) => expect({ i, ok: Math.abs(got.covariance[i]! - v) <= 1e-9 * Math.abs(want.cov[0]!) }).toEqual({ i, ok: true }));
}

describe.each([
  ['normal reference (statsmodels default)', false, oracle.models.z],
  ['t reference with G−1 df (use_t=True)', true, oracle.models.t],
] as const)('contrasts against statsmodels OLS cov_type="cluster": %s', (_label, useT, models) => {
  const code = data.stratum.map((s) => strata.indexOf(s));
  const S = strata.length;

  it('records which reference distribution statsmodels used', () => {
    expect(models.unadjusted.useT).toBe(useT);
  });

  it('olsClusterRobust reproduces the unadjusted, adjusted and interaction models', () => {
    const Xu = data.y.flatMap((_, i) => [1, data.group[i]!]);
    expectFit(olsClusterRobust(Xu, 2, data.y, data.report, { useT }), models.unadjusted);
    const Xa = data.y.flatMap((_, i) => [1, data.group[i]!, ...Array.from({ length: S - 1 }, (_, s) => (code[i] === s + 1 ? 1 : 0))]);
    expectFit(olsClusterRobust(Xa, S + 1, data.y, data.report, { useT }), models.adjusted);
    const Xi = data.y.flatMap((_, i) => [
      ...Array.from({ length: S }, (_, s) => (code[i] === s ? 1 : 0)),
      ...Array.from({ length: S }, (_, s) => (code[i] === s ? data.group[i]! : 0)),
    ]);
    expectFit(olsClusterRobust(Xi, 2 * S, data.y, data.report, { useT }), models.interaction);
  });

  const input = { group: data.group, outcome: data.y, cluster: data.report, stratum: data.stratum };

  it('accuracyContrast: overall adjusted and per-stratum interaction estimates with BH q-values', () => {
    const result = accuracyContrast(input, { useT });
    expect(near(result.overall.difference, models.adjusted.params[1]!, 1e-10)).toBe(true);
    expect(near(result.overall.standardError, models.adjusted.bse[1]!)).toBe(true);
    expect(near(result.overall.pValue, models.adjusted.pvalues[1]!, 1e-7)).toBe(true);
    expect(result.strata.map((s) => s.stratum)).toEqual(strata);
    result.strata.forEach((s, k) => {
      expect(s.estimable).toBe(true);
      expect(near(s.difference, models.interaction.params[S + k]!, 1e-10)).toBe(true);
      expect(near(s.standardError, models.interaction.bse[S + k]!)).toBe(true);
      expect(near(s.pValue, models.interaction.pvalues[S + k]!, 1e-7)).toBe(true);
      expect(near(s.qValue, models.interactionBH[k]!, 1e-7)).toBe(true);
      expect(near(s.ciLower, models.interaction.ciLower[S + k]!)).toBe(true);
      // In a saturated model the stratum coefficient is the raw difference in means.
      expect(s.difference).toBeCloseTo(s.meanA - s.meanB, 12);
    });
  });

  it('accuracyContrast: unadjusted overall and separate per-stratum regressions', () => {
    const result = accuracyContrast(input, { useT, adjustOverallForStrata: false, perStratum: 'separate' });
    expect(near(result.overall.difference, models.unadjusted.params[1]!, 1e-10)).toBe(true);
    expect(near(result.overall.standardError, models.unadjusted.bse[1]!)).toBe(true);
    expect(result.overall.difference).toBeCloseTo(result.overall.meanA - result.overall.meanB, 12);
    expect(result.overall.nA + result.overall.nB).toBe(n);
    result.strata.forEach((s, k) => {
      const want = models.separate[k]!;
      expect(near(s.difference, want.params[1]!, 1e-10)).toBe(true);
      expect(near(s.standardError, want.bse[1]!)).toBe(true);
      expect(near(s.pValue, want.pvalues[1]!, 1e-7)).toBe(true);
      expect(near(s.qValue, models.separateBH[k]!, 1e-7)).toBe(true);
      expect(s.clusters).toBe(30);
      expect(s.df).toBe(useT ? 29 : Infinity);
    });
  });

  it('accuracyContrast: overall adjusted for strata, each stratum its own model on its own reports', () => {
    const result = accuracyContrast(input, { useT, perStratum: 'separate' });
    expect(near(result.overall.difference, models.adjusted.params[1]!, 1e-10)).toBe(true);
    expect(near(result.overall.standardError, models.adjusted.bse[1]!)).toBe(true);
    expect(result.overall.clusters).toBe(new Set(data.report).size);
    result.strata.forEach((s, k) => {
      const want = models.separate[k]!;
      expect(s.clusters).toBe(want.groups);
      expect(s.nA + s.nB).toBe(want.nobs);
      expect(near(s.difference, want.params[1]!, 1e-10)).toBe(true);
      expect(near(s.standardError, want.bse[1]!)).toBe(true);
      expect(near(s.pValue, want.pvalues[1]!, 1e-7)).toBe(true);
      expect(near(s.ciLower, want.ciLower[1]!)).toBe(true);
      expect(near(s.ciUpper, want.ciUpper[1]!)).toBe(true);
      expect(near(s.qValue, models.separateBH[k]!, 1e-7)).toBe(true);
    });
  });
});

describe('accuracyContrast edge cases', () => {
  it('marks a stratum without one of the groups as not estimable and leaves it out of BH', () => {
    const group = [1, 0, 1, 0, 1, 0, 1, 1];
    const outcome = [1, 0, 1, 1, 0, 0, 1, 0];
    const cluster = ['a', 'a', 'b', 'b', 'c', 'c', 'd', 'e'];
    const stratum = ['x', 'x', 'x', 'x', 'x', 'x', 'y', 'y'];
    const result = accuracyContrast({ group, outcome, cluster, stratum });
    expect(result.strata[1]!.estimable).toBe(false);
    expect(result.strata[1]!.qValue).toBeNaN();
    expect(result.strata[0]!.estimable).toBe(true);
    expect(result.strata[0]!.qValue).toBeCloseTo(result.strata[0]!.pValue, 15);
    expect(result.strata[0]!.difference).toBeCloseTo(2 / 3 - 1 / 3, 12);
  });

  it('works without strata', () => {
    const result = accuracyContrast({ group: [true, false, true, false], outcome: [1, 0, 0, 1], cluster: [1, 1, 2, 3] });
    expect(result.strata).toEqual([]);
    expect(result.overall.difference).toBeCloseTo(0, 12);
  });

  it('throws typed errors', () => {
    const code = (f: () => unknown): string | undefined => {
      try {
        f();
      } catch (e) {
        return e instanceof AnalyticsError ? e.code : 'untyped';
      }
      return undefined;
    };
    expect(code(() => accuracyContrast({ group: [1, 0], outcome: [1], cluster: [1, 2] }))).toBe('LENGTH_MISMATCH');
    expect(code(() => accuracyContrast({ group: [1, 2, 0], outcome: [1, 0, 1], cluster: [1, 2, 3] }))).toBe('BAD_INPUT');
    expect(code(() => accuracyContrast({ group: [1, 1, 1], outcome: [1, 0, 1], cluster: [1, 2, 3] }))).toBe('EMPTY_INPUT');
    expect(code(() => accuracyContrast({ group: [1, 0, 1], outcome: [1, Number.NaN, 1], cluster: [1, 2, 3] }))).toBe('BAD_INPUT');
    expect(code(() => olsClusterRobust([1, 1, 1, 1, 1, 1], 2, [1, 2, 3], [1, 2, 3]))).toBe('BAD_INPUT');
    expect(code(() => olsClusterRobust([1, 0, 1, 1, 1, 2], 2, [1, 2, 3], [1, 1, 1]))).toBe('EMPTY_INPUT');
    expect(code(() => olsClusterRobust([1, 0, 1, 1], 2, [1, 2, 3], [1, 2, 3]))).toBe('LENGTH_MISMATCH');
  });
});
