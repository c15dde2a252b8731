/**
 * Group contrasts of effective accuracy with cluster-robust standard errors (docs/scoring.md §8;
 * RADS paper, Statistical analysis: linear probability models with cluster-robust SEs by case,
 * Benjamini–Hochberg across strata).
 */
import { normalQuantile, studentTQuantile, twoSidedPValue } from './contrasts-distributions';
import { AnalyticsError } from './errors';
import { symmetricInverse } from './linear-algebra';
import { benjaminiHochberg } from './multiple-testing';

export interface ClusterRobustOptions {
  /**
   * Student t with G−1 degrees of freedom for p-values and intervals (true) or the normal
   * distribution (false, default). statsmodels `OLS.fit(cov_type="cluster")` uses the normal
   * unless `use_t=True` is passed; with `use_t=True` it uses G−1 degrees of freedom.
   */
  useT?: boolean;
  /** Coverage of the Wald intervals (default 0.95). */
  level?: number;
}

export interface ClusterRobustFit {
  n: number;
  k: number;
  /** Number of clusters G. */
  clusters: number;
  coefficients: Float64Array;
  standardErrors: Float64Array;
  /** Wald statistics coefficient / SE (z or t). */
  statistics: Float64Array;
  pValues: Float64Array;
  ciLower: Float64Array;
  ciUpper: Float64Array;
  /** Cluster-robust covariance (k×k, row-major). */
  covariance: Float64Array;
  /** Degrees of freedom of the t reference (G − 1), Infinity when normal. */
  df: number;
}

/**
 * Ordinary least squares with cluster-robust (CR1) covariance.
 *
 * Definition: β̂ = (XᵀX)⁻¹Xᵀy, û = y − Xβ̂,
 * V = G/(G−1) · (N−1)/(N−K) · (XᵀX)⁻¹ [Σ_g (X_gᵀû_g)(X_gᵀû_g)ᵀ] (XᵀX)⁻¹,
 * the Stata small-sample correction, equal to statsmodels `OLS(y, X).fit(cov_type="cluster",
 * cov_kwds={"groups": g})` with its defaults (use_correction = True, df_correction = True).
 * Wald statistics β̂/SE with two-sided p-values from N(0,1) or t(G−1) (see
 * {@link ClusterRobustOptions.useT}).
 * Source: Cameron & Miller, J. Human Resources 50 (2015) §II.C; statsmodels
 * `sandwich_covariance.cov_cluster`.
 * Complexity: O(N·K² + K³) time, O(G·K + K²) memory.
 * @param X design, row-major N×K.
 * @throws AnalyticsError LENGTH_MISMATCH for inconsistent lengths; EMPTY_INPUT when N ≤ K or
 *   there are fewer than 2 clusters; BAD_INPUT for non-finite data or a rank-deficient design;
 *   OUT_OF_RANGE for a level outside (0, 1).
 */
export function olsClusterRobust(
  X: ArrayLike<number>,
  k: number,
  y: ArrayLike<number>,
  clusters: ArrayLike<string | number>,
  options: ClusterRobustOptions = {},
): ClusterRobustFit {
  const n = y.length;
  if (!Number.isInteger(k) || k < 1 || X.length !== n * k) {
    throw new AnalyticsError('LENGTH_MISMATCH', `olsClusterRobust: design of ${X.length} entries for ${n}×${k}`);
  }
  if (clusters.length !== n) throw new AnalyticsError('LENGTH_MISMATCH', `olsClusterRobust: ${clusters.length} cluster labels for ${n} observations`);
  if (n <= k) throw new AnalyticsError('EMPTY_INPUT', `olsClusterRobust: ${n} observations for ${k} coefficients`);
  const level = options.level ?? 0.95;
  if (!(level > 0 && level < 1)) throw new AnalyticsError('OUT_OF_RANGE', `olsClusterRobust: level ${level}`);

  const xtx = new Float64Array(k * k);
  const xty = new Float64Array(k);
  for (let i = 0; i < n; i++) {
    const yi = y[i]!;
    if (!Number.isFinite(yi)) throw new AnalyticsError('BAD_INPUT', `olsClusterRobust: y[${i}] = ${yi}`);
    const row = i * k;
    for (let a = 0; a < k; a++) {
      const xa = X[row + a]!;
      if (!Number.isFinite(xa)) throw new AnalyticsError('BAD_INPUT', `olsClusterRobust: X[${i}, ${a}] = ${xa}`);
      if (xa === 0) continue;
      xty[a] += xa * yi;
      for (let b = 0; b < k; b++) xtx[a * k + b] += xa * X[row + b]!;
    }
  }
  let bread: Float64Array;
  try {
    bread = symmetricInverse(xtx, k);
  } catch {
    throw new AnalyticsError('BAD_INPUT', 'olsClusterRobust: design matrix is rank deficient');
  }
  const beta = new Float64Array(k);
  for (let a = 0; a < k; a++) {
    let s = 0;
    for (let b = 0; b < k; b++) s += bread[a * k + b]! * xty[b]!;
    beta[a] = s;
  }

  const clusterIndex = new Map<string | number, number>();
  const scores: number[] = [];
  for (let i = 0; i < n; i++) {
    const label = clusters[i]!;
    let g = clusterIndex.get(label);
    if (g === undefined) {
      g = clusterIndex.size;
      clusterIndex.set(label, g);
      for (let a = 0; a < k; a++) scores.push(0);
    }
    const row = i * k;
    let fitted = 0;
    for (let a = 0; a < k; a++) fitted += X[row + a]! * beta[a]!;
    const u = y[i]! - fitted;
    for (let a = 0; a < k; a++) scores[g * k + a]! += X[row + a]! * u;
  }
  const G = clusterIndex.size;
  if (G < 2) throw new AnalyticsError('EMPTY_INPUT', 'olsClusterRobust: fewer than 2 clusters');
  const meat = new Float64Array(k * k);
  for (let g = 0; g < G; g++) {
    for (let a = 0; a < k; a++) {
      const sa = scores[g * k + a]!;
      if (sa === 0) continue;
      for (let b = 0; b < k; b++) meat[a * k + b] += sa * scores[g * k + b]!;
    }
  }
  const correction = (G / (G - 1)) * ((n - 1) / (n - k));
  const tmp = new Float64Array(k * k);
  for (let a = 0; a < k; a++) {
    for (let b = 0; b < k; b++) {
      let s = 0;
      for (let c = 0; c < k; c++) s += bread[a * k + c]! * meat[c * k + b]!;
      tmp[a * k + b] = s;
    }
  }
  const covariance = new Float64Array(k * k);
  for (let a = 0; a < k; a++) {
    for (let b = 0; b < k; b++) {
      let s = 0;
      for (let c = 0; c < k; c++) s += tmp[a * k + c]! * bread[c * k + b]!;
      covariance[a * k + b] = correction * s;
    }
  }

  const useT = options.useT ?? false;
  const df = useT ? G - 1 : Infinity;
  const crit = useT ? studentTQuantile(1 - (1 - level) / 2, df) : normalQuantile(1 - (1 - level) / 2);
  const standardErrors = new Float64Array(k);
  const statistics = new Float64Array(k);
  const pValues = new Float64Array(k);
  const ciLower = new Float64Array(k);
  const ciUpper = new Float64Array(k);
  for (let a = 0; a < k; a++) {
    const se = Math.sqrt(Math.max(0, covariance[a * k + a]!));
    standardErrors[a] = se;
    statistics[a] = beta[a]! / se;
    pValues[a] = twoSidedPValue(statistics[a]!, df);
    ciLower[a] = beta[a]! - crit * se;
    ciUpper[a] = beta[a]! + crit * se;
  }
  return { n, k, clusters: G, coefficients: beta, standardErrors, statistics, pValues, ciLower, ciUpper, covariance, df };
}

export interface ContrastInput {
  /** 1 / true for observations (run × report) of group A, 0 / false for group B. */
  group: ArrayLike<number | boolean>;
  /** Effective correctness: 1 correct, 0 wrong or invalid (values in [0, 1] accepted). */
  outcome: ArrayLike<number>;
  /** Cluster of each observation: the report (case) id. */
  cluster: ArrayLike<string | number>;
  /** Optional stratum label (use-case tag, modality, RADS system, …). */
  stratum?: ArrayLike<string | number> | null;
}

export interface ContrastOptions extends ClusterRobustOptions {
  /**
   * Overall model y ~ group + stratum fixed effects (true, the RADS paper's adjusted model;
   * default when strata are given) or y ~ group (false).
   */
  adjustOverallForStrata?: boolean;
  /**
   * Per-stratum estimates from one saturated model y ~ 0 + stratum + stratum:group with
   * clusters over all strata ('interaction', default, as the RADS paper's stratum-specific
   * model), or from a separate y ~ group regression within each stratum, its clusters and
   * small-sample correction those of the stratum ('separate', what docs/scoring.md §8 asks for).
   */
  perStratum?: 'interaction' | 'separate';
}

export interface ContrastEstimate {
  /** Difference in mean effective accuracy, group A − group B (the group coefficient). */
  difference: number;
  standardError: number;
  statistic: number;
  pValue: number;
  ciLower: number;
  ciUpper: number;
  meanA: number;
  meanB: number;
  nA: number;
  nB: number;
  /** Clusters in the model that produced the estimate. */
  clusters: number;
  df: number;
}

export interface StratumContrast extends ContrastEstimate {
  stratum: string | number;
  /** False when the stratum lacks one of the groups (or, separately fitted, has < 2 clusters). */
  estimable: boolean;
  /** Benjamini–Hochberg q-value across the estimable strata (NaN otherwise). */
  qValue: number;
}

export interface ContrastResult {
  overall: ContrastEstimate;
  strata: StratumContrast[];
}

/**
 * Difference in effective accuracy between two groups of runs, overall and per stratum.
 *
 * Definition: linear probability models (OLS of the 0/1 outcome on a group indicator) with
 * cluster-robust CR1 standard errors by report ({@link olsClusterRobust}). Overall: coefficient
 * of the group indicator in y ~ 1 + group (+ stratum fixed effects by default when strata are
 * given). Per stratum s: coefficient of group·[stratum = s] in
 * y ~ 0 + Σ_s [stratum = s] + Σ_s group·[stratum = s] (or, with perStratum = 'separate', of
 * group in y ~ 1 + group fitted within s). Strata lacking one group are reported as not
 * estimable and left out of the interaction model. q-values: Benjamini–Hochberg over the
 * estimable strata's p-values ({@link benjaminiHochberg}).
 * Strata are reported in order of first appearance.
 *
 * Source: docs/scoring.md §8; RADS paper §Statistical analysis; statsmodels OLS
 * cov_type = "cluster", multipletests(method = "fdr_bh").
 * Complexity: O(N·S²) for the interaction model with S strata (O(N) for the others) plus O(S³).
 * @throws AnalyticsError LENGTH_MISMATCH for inconsistent lengths; BAD_INPUT for outcomes that
 *   are not finite or a group indicator that is not 0/1; EMPTY_INPUT when either group is
 *   empty overall or there are fewer than 2 clusters.
 */
export function accuracyContrast(input: ContrastInput, options: ContrastOptions = {}): ContrastResult {
  const n = input.outcome.length;
  const { outcome, cluster } = input;
  const stratumIn = input.stratum ?? null;
  if (input.group.length !== n || cluster.length !== n || (stratumIn !== null && stratumIn.length !== n)) {
    throw new AnalyticsError('LENGTH_MISMATCH', 'accuracyContrast: group, outcome, cluster and stratum lengths differ');
  }
  const g = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const v = input.group[i]!;
    const x = v === true ? 1 : v === false ? 0 : v;
    if (x !== 0 && x !== 1) throw new AnalyticsError('BAD_INPUT', `accuracyContrast: group[${i}] = ${String(v)}`);
    g[i] = x;
    if (!Number.isFinite(outcome[i]!)) throw new AnalyticsError('BAD_INPUT', `accuracyContrast: outcome[${i}] = ${outcome[i]}`);
  }
  const all = Array.from({ length: n }, (_, i) => i);
  const overallSummary = summarise(all, g, outcome);
  if (overallSummary.nA === 0 || overallSummary.nB === 0) {
    throw new AnalyticsError('EMPTY_INPUT', 'accuracyContrast: one of the groups has no observations');
  }

  // Strata in order of first appearance.
  const strataLabels: Array<string | number> = [];
  const stratumCode = new Int32Array(n);
  if (stratumIn !== null) {
    const index = new Map<string | number, number>();
    for (let i = 0; i < n; i++) {
      const label = stratumIn[i]!;
      let s = index.get(label);
      if (s === undefined) {
        s = index.size;
        index.set(label, s);
        strataLabels.push(label);
      }
      stratumCode[i] = s;
    }
  }
  const S = strataLabels.length;
  const adjust = (options.adjustOverallForStrata ?? S > 0) && S > 1;

  // Overall model: [1, group, stratum dummies 1..S−1].
  const kOverall = 2 + (adjust ? S - 1 : 0);
  const Xo = new Float64Array(n * kOverall);
  for (let i = 0; i < n; i++) {
    Xo[i * kOverall] = 1;
    Xo[i * kOverall + 1] = g[i]!;
    if (adjust && stratumCode[i]! > 0) Xo[i * kOverall + 1 + stratumCode[i]!] = 1;
  }
  const overallFit = olsClusterRobust(Xo, kOverall, outcome, cluster, options);
  const overall = estimate(overallFit, 1, overallSummary);

  const members: number[][] = Array.from({ length: S }, () => []);
  for (let i = 0; i < n && S > 0; i++) members[stratumCode[i]!]!.push(i);
  const summaries = members.map((idx) => summarise(idx, g, outcome));
  const strata: StratumContrast[] = strataLabels.map((label, s) => ({
    stratum: label,
    estimable: false,
    qValue: Number.NaN,
    ...notEstimable(summaries[s]!),
  }));
  const estimableStrata = strataLabels.map((_, s) => s).filter((s) => summaries[s]!.nA > 0 && summaries[s]!.nB > 0);

  if ((options.perStratum ?? 'interaction') === 'interaction') {
    if (estimableStrata.length > 0) {
      const column = new Int32Array(S).fill(-1);
      estimableStrata.forEach((s, j) => (column[s] = j));
      const rows = all.filter((i) => column[stratumCode[i]!]! >= 0);
      const k = 2 * estimableStrata.length;
      const X = new Float64Array(rows.length * k);
      const yy = new Float64Array(rows.length);
      const cc = new Array<string | number>(rows.length);
      rows.forEach((i, r) => {
        const j = column[stratumCode[i]!]!;
        X[r * k + j] = 1;
        X[r * k + estimableStrata.length + j] = g[i]!;
        yy[r] = outcome[i]!;
        cc[r] = cluster[i]!;
      });
      const fit = olsClusterRobust(X, k, yy, cc, options);
      estimableStrata.forEach((s, j) => {
        strata[s] = { ...strata[s]!, ...estimate(fit, estimableStrata.length + j, summaries[s]!), estimable: true };
      });
    }
  } else {
    for (const s of estimableStrata) {
      const idx = members[s]!;
      const distinct = new Set<string | number>();
      for (const i of idx) distinct.add(cluster[i]!);
      if (distinct.size < 2 || idx.length <= 2) continue;
      const X = new Float64Array(idx.length * 2);
      idx.forEach((i, r) => {
        X[r * 2] = 1;
        X[r * 2 + 1] = g[i]!;
      });
      const fit = olsClusterRobust(
        X,
        2,
        idx.map((i) => outcome[i]!),
        idx.map((i) => cluster[i]!),
        options,
      );
      strata[s] = { ...strata[s]!, ...estimate(fit, 1, summaries[s]!), estimable: true };
    }
  }
  const estimated = strata.map((x, s) => (x.estimable ? s : -1)).filter((s) => s >= 0);
  const q = benjaminiHochberg(estimated.map((s) => strata[s]!.pValue));
  estimated.forEach((s, j) => (strata[s]!.qValue = q[j]!));
  return { overall, strata };
}

interface GroupSummary {
  meanA: number;
  meanB: number;
  nA: number;
  nB: number;
}

function summarise(idx: readonly number[], g: Float64Array, outcome: ArrayLike<number>): GroupSummary {
  let sA = 0;
  let sB = 0;
  let nA = 0;
  let nB = 0;
  for (const i of idx) {
    if (g[i] === 1) {
      sA += outcome[i]!;
      nA++;
    } else {
      sB += outcome[i]!;
      nB++;
    }
  }
  return { meanA: nA > 0 ? sA / nA : Number.NaN, meanB: nB > 0 ? sB / nB : Number.NaN, nA, nB };
}

function estimate(fit: ClusterRobustFit, j: number, summary: GroupSummary): ContrastEstimate {
  return {
    difference: fit.coefficients[j]!,
    standardError: fit.standardErrors[j]!,
    statistic: fit.statistics[j]!,
    pValue: fit.pValues[j]!,
    ciLower: fit.ciLower[j]!,
    ciUpper: fit.ciUpper[j]!,
    ...summary,
    clusters: fit.clusters,
    df: fit.df,
  };
}

function notEstimable(summary: GroupSummary): ContrastEstimate {
  return {
    difference: summary.meanA - summary.meanB,
    standardError: Number.NaN,
    statistic: Number.NaN,
    pValue: Number.NaN,
    ciLower: Number.NaN,
    ciUpper: Number.NaN,
    ...summary,
    clusters: 0,
    df: Number.NaN,
  };
}
