/**
 * Variance partitioning by a linear mixed model with crossed random intercepts, fitted by REML
 * (docs/scoring.md §8; extraction paper Table C2).
 */
import { AnalyticsError } from './errors';
import { cholesky, choleskySolve, logDetFromCholesky } from './linear-algebra';
import { nelderMead } from './mixed-model-optimiser';

/** One grouping factor with a random intercept: a level label per observation. */
export interface RandomFactor {
  name: string;
  /** Level of each observation (any labels; compared with ===). */
  levels: ArrayLike<string | number>;
}

export interface VarianceComponent {
  name: string;
  /** Number of distinct levels observed. */
  levelCount: number;
  variance: number;
  /** variance / (Σ components + residual). */
  share: number;
}

export interface VariancePartition {
  n: number;
  /** REML estimate of the fixed intercept μ (GLS mean). */
  intercept: number;
  components: VarianceComponent[];
  residualVariance: number;
  residualShare: number;
  totalVariance: number;
  /** Maximised REML log-likelihood (same constants as statsmodels MixedLM). */
  logLikelihood: number;
  /** Estimated σ_k/σ_ε per factor. */
  relativeSd: number[];
  converged: boolean;
  evaluations: number;
}

export interface VariancePartitionOptions {
  /** Nelder–Mead tolerance on the relative standard deviations (default 1e-9). */
  xtol?: number;
  /** Cap on Nelder–Mead iterations per restart (default 2000·factors). */
  maxIterations?: number;
}

/** Largest total number of random-effect levels accepted (each evaluation is O((q+1)³)). */
export const MIXED_MODEL_MAX_LEVELS = 2000;

interface Sufficient {
  n: number;
  q: number;
  /** (1+q)×(1+q) cross-product [1 Z]ᵀ[1 Z] (counts). */
  A: Float64Array;
  /** [1 Z]ᵀ yc. */
  rhs: Float64Array;
  /** Σ yc². */
  yy: number;
  mean: number;
  /** Offsets of each factor's levels in the random-effect vector. */
  offsets: number[];
  levelCounts: number[];
}

/**
 * REML variance partitioning for y = μ + Σ_k a_k[level_k(i)] + ε_i, with independent random
 * intercepts a_k ~ N(0, σ_k²) for crossed factors (e.g. model and prompting strategy) and
 * ε ~ N(0, σ²).
 *
 * Definition. With Λ = diag(1, t_1·I, …, t_K·I) (t_k = σ_k/σ), X = 1 and Z the level
 * indicators, let C(t) = Λ[X Z]ᵀ[X Z]Λ + diag(0, I_q) and r(t) = Λ[X Z]ᵀy. The profiled REML
 * criterion is −2ℓ_R(t) = (n−1)(1 + log(2π·Q/(n−1))) + log det C(t), with
 * Q = yᵀy − r(t)ᵀC(t)⁻¹r(t) the generalised residual sum of squares; σ̂² = Q/(n−1),
 * σ̂_k² = t_k²σ̂². This is Henderson's mixed-model equations in the relative-covariance form of
 * Bates et al. (lme4, J. Stat. Softw. 67, 2015, §3.4): it is smooth through t_k = 0, so
 * components on the boundary (zero variance) are estimated without reparametrisation tricks.
 * Only sufficient statistics enter (counts and sums per level and per pair of levels), never
 * an n×n matrix. The criterion is minimised over t by Nelder–Mead (restarted at the optimum
 * until it stops improving); it is even in every t_k, so |t_k| is reported. Shares are each
 * variance over the total Σσ_k² + σ².
 *
 * Source: docs/scoring.md §8; paper Table C2; Patterson & Thompson (1971) REML; matches statsmodels
 * MixedLM(groups = one group, vc_formula = one variance component per factor, reml = True).
 * Complexity: O(n·K²) for the sufficient statistics, then O((1+q)³) per criterion evaluation
 * (q = total number of levels), typically a few hundred evaluations.
 * @throws AnalyticsError EMPTY_INPUT without factors or with fewer than 3 observations;
 *   LENGTH_MISMATCH when a factor's length differs from y; BAD_INPUT for a non-finite y, a
 *   factor with fewer than 2 levels, or y without residual variation; OUT_OF_RANGE beyond
 *   {@link MIXED_MODEL_MAX_LEVELS} levels.
 */
export function partitionVariance(
  y: ArrayLike<number>,
  factors: readonly RandomFactor[],
  options: VariancePartitionOptions = {},
): VariancePartition {
  const stats = sufficientStatistics(y, factors);
  const K = factors.length;
  const deviance = (t: Float64Array): number => remlDeviance(stats, t);

  // The criterion is smooth and even in each t_k; a start at σ_k = σ/2 lies between the
  // boundary and the large-variance plateau, and the restarts below polish whatever it finds.
  const x0 = new Float64Array(K);
  for (let k = 0; k < K; k++) x0[k] = 0.5;
  // Stopping on the deviance is relative to its size: it is a sum of n log terms and
  // cannot be resolved below ~1e-13 of its magnitude.
  const ftol = 1e-12 * (1 + Math.abs(deviance(x0)));
  const xtol = options.xtol ?? 1e-9;
  const maxIterations = options.maxIterations ?? 2000 * K;
  let best = nelderMead(deviance, x0, { xtol, ftol, maxIterations });
  let evaluations = best.evaluations;
  for (let restart = 0; restart < 10; restart++) {
    const next = nelderMead(deviance, best.x, {
      xtol,
      ftol,
      maxIterations,
      step: Array.from(best.x, (v) => 0.05 * Math.abs(v) + 1e-3),
    });
    evaluations += next.evaluations;
    const improved = next.value < best.value - ftol;
    if (next.value <= best.value) best = next;
    if (!improved) break;
  }
  const t = Array.from(best.x, Math.abs);
  const fit = remlSolution(stats, Float64Array.from(t));
  const sigma2 = fit.q / (stats.n - 1);
  const variances = t.map((tk) => tk * tk * sigma2);
  const total = variances.reduce((a, b) => a + b, 0) + sigma2;
  return {
    n: stats.n,
    intercept: fit.beta + stats.mean,
    components: factors.map((f, k) => ({
      name: f.name,
      levelCount: stats.levelCounts[k]!,
      variance: variances[k]!,
      share: variances[k]! / total,
    })),
    residualVariance: sigma2,
    residualShare: sigma2 / total,
    totalVariance: total,
    logLikelihood: -0.5 * best.value,
    relativeSd: t,
    converged: best.converged,
    evaluations,
  };
}

/**
 * −2 × REML log-likelihood at relative standard deviations t (see {@link partitionVariance}),
 * for given data; exposed for testing and profiling. Complexity: as one criterion evaluation
 * plus the sufficient statistics.
 * @throws AnalyticsError as {@link partitionVariance}; LENGTH_MISMATCH when t has the wrong length.
 */
export function remlCriterion(y: ArrayLike<number>, factors: readonly RandomFactor[], t: ArrayLike<number>): number {
  if (t.length !== factors.length) throw new AnalyticsError('LENGTH_MISMATCH', 'remlCriterion: one t per factor');
  return remlDeviance(sufficientStatistics(y, factors), Float64Array.from(t));
}

function sufficientStatistics(y: ArrayLike<number>, factors: readonly RandomFactor[]): Sufficient {
  const n = y.length;
  if (factors.length === 0) throw new AnalyticsError('EMPTY_INPUT', 'partitionVariance: no random factors');
  if (n < 3) throw new AnalyticsError('EMPTY_INPUT', `partitionVariance: ${n} observations`);
  let mean = 0;
  for (let i = 0; i < n; i++) {
    const v = y[i]!;
    if (!Number.isFinite(v)) throw new AnalyticsError('BAD_INPUT', `partitionVariance: y[${i}] = ${v}`);
    mean += v;
  }
  mean /= n;
  const codes: Int32Array[] = [];
  const offsets: number[] = [];
  const levelCounts: number[] = [];
  let q = 0;
  for (const factor of factors) {
    if (factor.levels.length !== n) {
      throw new AnalyticsError('LENGTH_MISMATCH', `partitionVariance: factor ${factor.name} has ${factor.levels.length} labels for ${n} observations`);
    }
    const map = new Map<string | number, number>();
    const code = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      const label = factor.levels[i]!;
      let c = map.get(label);
      if (c === undefined) {
        c = map.size;
        map.set(label, c);
      }
      code[i] = c;
    }
    if (map.size < 2) throw new AnalyticsError('BAD_INPUT', `partitionVariance: factor ${factor.name} has ${map.size} level`);
    codes.push(code);
    offsets.push(q);
    levelCounts.push(map.size);
    q += map.size;
  }
  if (q > MIXED_MODEL_MAX_LEVELS) {
    throw new AnalyticsError('OUT_OF_RANGE', `partitionVariance: ${q} levels exceed ${MIXED_MODEL_MAX_LEVELS}`);
  }
  const m = q + 1;
  const A = new Float64Array(m * m);
  const rhs = new Float64Array(m);
  let yy = 0;
  const K = factors.length;
  const idx = new Int32Array(K + 1);
  for (let i = 0; i < n; i++) {
    const yc = y[i]! - mean;
    yy += yc * yc;
    idx[0] = 0;
    for (let k = 0; k < K; k++) idx[k + 1] = 1 + offsets[k]! + codes[k]![i]!;
    for (let a = 0; a <= K; a++) {
      const ra = idx[a]! * m;
      rhs[idx[a]!] += yc;
      for (let b = 0; b <= K; b++) A[ra + idx[b]!] += 1;
    }
  }
  if (!(yy > 0)) throw new AnalyticsError('BAD_INPUT', 'partitionVariance: y has no variation');
  return { n, q, A, rhs, yy, mean, offsets, levelCounts };
}

function scaledSystem(stats: Sufficient, t: Float64Array): { C: Float64Array; r: Float64Array } {
  const m = stats.q + 1;
  const lambda = new Float64Array(m);
  lambda[0] = 1;
  stats.offsets.forEach((off, k) => {
    for (let l = 0; l < stats.levelCounts[k]!; l++) lambda[1 + off + l] = t[k]!;
  });
  const C = new Float64Array(m * m);
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < m; j++) C[i * m + j] = lambda[i]! * stats.A[i * m + j]! * lambda[j]!;
    if (i > 0) C[i * m + i] += 1;
  }
  const r = new Float64Array(m);
  for (let i = 0; i < m; i++) r[i] = lambda[i]! * stats.rhs[i]!;
  return { C, r };
}

function remlSolution(stats: Sufficient, t: Float64Array): { q: number; logDet: number; beta: number } {
  const m = stats.q + 1;
  const { C, r } = scaledSystem(stats, t);
  const L = cholesky(C, m);
  if (L === null) return { q: Number.NaN, logDet: Number.NaN, beta: Number.NaN };
  const theta = choleskySolve(L, m, r);
  let fitted = 0;
  for (let i = 0; i < m; i++) fitted += theta[i]! * r[i]!;
  return { q: stats.yy - fitted, logDet: logDetFromCholesky(L, m), beta: theta[0]! };
}

function remlDeviance(stats: Sufficient, t: Float64Array): number {
  const { q, logDet } = remlSolution(stats, t);
  if (!(q > 0)) return Number.NaN;
  const dof = stats.n - 1;
  return dof * (1 + Math.log((2 * Math.PI * q) / dof)) + logDet;
}
