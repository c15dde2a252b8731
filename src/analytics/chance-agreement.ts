/**
 * Chance-corrected agreement between annotators (docs/scoring.md §7, next to the pairwise agreement):
 * Cohen's κ for a pair, Fleiss' κ for a fixed number of raters per report, Krippendorff's α
 * (nominal or interval) for any number of raters with missing ratings. Every statistic takes
 * optional non-negative report weights, so a bootstrap replicate is the same function with the
 * resample's multiplicities (a report drawn k times counts k times).
 */
import { DEFAULT_CONFIDENCE, estimateFrom, type Estimate } from './bootstrap';
import { AnalyticsError } from './errors';

/** A rating: a category (nominal) or a number (interval); `null` = not rated. */
export type Rating = string | number | null;

function weightOf(weights: ArrayLike<number> | null | undefined, i: number): number {
  if (!weights) return 1;
  const w = weights[i]!;
  if (!(w >= 0) || !Number.isFinite(w)) throw new AnalyticsError('BAD_INPUT', `weight ${w} at report ${i}`);
  return w;
}

/**
 * Cohen's κ of two raters (unweighted).
 *
 * Definition: κ = (p_o − p_e) / (1 − p_e) over the reports both rated, with p_o the (weighted)
 * share of reports where the two ratings are equal and p_e = Σ_k p_A(k) · p_B(k) from each
 * rater's marginal distribution. NaN when no report was rated by both or when p_e = 1 (both
 * raters always gave the same single category: κ is undefined). Equals statsmodels
 * `cohens_kappa(table).kappa` and scikit-learn `cohen_kappa_score` (weights given as repeats).
 * Source: Cohen, Educ. Psychol. Meas. 20 (1960). Complexity: O(n + K).
 *
 * @throws AnalyticsError LENGTH_MISMATCH for unequal lengths; BAD_INPUT for a bad weight.
 */
export function cohenKappa(a: readonly Rating[], b: readonly Rating[], weights?: ArrayLike<number> | null): number {
  if (a.length !== b.length || (weights && weights.length !== a.length)) {
    throw new AnalyticsError('LENGTH_MISMATCH', `cohenKappa: ${a.length} and ${b.length} ratings`);
  }
  const pa = new Map<string, number>();
  const pb = new Map<string, number>();
  let total = 0;
  let agree = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    if (x === null || x === undefined || y === null || y === undefined) continue;
    const w = weightOf(weights, i);
    if (w === 0) continue;
    const kx = key(x);
    const ky = key(y);
    pa.set(kx, (pa.get(kx) ?? 0) + w);
    pb.set(ky, (pb.get(ky) ?? 0) + w);
    total += w;
    if (kx === ky) agree += w;
  }
  if (total === 0) return Number.NaN;
  let pe = 0;
  for (const [k, na] of pa) pe += (na / total) * ((pb.get(k) ?? 0) / total);
  const po = agree / total;
  return pe >= 1 ? Number.NaN : (po - pe) / (1 - pe);
}

/**
 * Fleiss' κ for reports each rated by the same number m ≥ 2 of raters.
 *
 * Definition: with n_ik raters putting report i in category k, P_i = (Σ_k n_ik² − m)/(m(m − 1)),
 * P̄ = weighted mean of P_i, p_k = Σ_i w_i n_ik / (m Σ_i w_i), P̄_e = Σ_k p_k², and
 * κ = (P̄ − P̄_e)/(1 − P̄_e); NaN when P̄_e = 1 or the total weight is 0. Equals statsmodels
 * `fleiss_kappa(table, method="fleiss")`. Source: Fleiss, Psychol. Bull. 76 (1971).
 * Complexity: O(n · m).
 *
 * @param ratings ratings[i] = the m ratings of report i (no nulls).
 * @throws AnalyticsError BAD_INPUT when reports have different numbers of ratings, fewer than 2,
 *   or a null rating; LENGTH_MISMATCH for weights of the wrong length.
 */
export function fleissKappa(ratings: readonly (readonly Rating[])[], weights?: ArrayLike<number> | null): number {
  if (weights && weights.length !== ratings.length) throw new AnalyticsError('LENGTH_MISMATCH', 'fleissKappa: weights');
  const m = ratings[0]?.length ?? 0;
  const marginal = new Map<string, number>();
  let total = 0;
  let pSum = 0;
  ratings.forEach((row, i) => {
    if (row.length !== m || m < 2) throw new AnalyticsError('BAD_INPUT', `fleissKappa: report ${i} has ${row.length} ratings, expected ${m} ≥ 2`);
    const w = weightOf(weights, i);
    const counts = new Map<string, number>();
    for (const r of row) {
      if (r === null || r === undefined) throw new AnalyticsError('BAD_INPUT', `fleissKappa: report ${i} has a missing rating`);
      const k = key(r);
      counts.set(k, (counts.get(k) ?? 0) + 1);
    }
    if (w === 0) return;
    let sq = 0;
    for (const [k, c] of counts) {
      sq += c * c;
      marginal.set(k, (marginal.get(k) ?? 0) + w * c);
    }
    pSum += (w * (sq - m)) / (m * (m - 1));
    total += w;
  });
  if (total === 0) return Number.NaN;
  const pBar = pSum / total;
  let pe = 0;
  for (const c of marginal.values()) pe += (c / (m * total)) ** 2;
  return pe >= 1 ? Number.NaN : (pBar - pe) / (1 - pe);
}

export type AlphaLevel = 'NOMINAL' | 'INTERVAL';

/**
 * Krippendorff's α for any number of raters, missing ratings allowed.
 *
 * Definition (Krippendorff 2011, "Computing Krippendorff's alpha-reliability"): only units with
 * m_u ≥ 2 ratings are pairable; n = Σ_u w_u m_u pairable values. Observed disagreement
 * D_o = (1/n) Σ_u w_u/(m_u − 1) Σ_{i≠j ∈ u} δ(v_i, v_j); expected disagreement
 * D_e = 1/(n(n − 1)) Σ_{c,k} n_c n_k δ(c, k) over the pooled pairable values (n_c = weighted count
 * of value c); α = 1 − D_o / D_e. δ is 0/1 inequality (NOMINAL) or (c − k)² (INTERVAL). NaN when
 * fewer than 2 pairable values or D_e = 0 (no variation at all). A unit of weight w counts as w
 * copies of the unit (bootstrap multiplicities).
 * Closed forms: Σ_{i≠j} [v_i ≠ v_j] = m² − Σ_c m_c², Σ_{i,j} (v_i − v_j)² = 2(mΣv² − (Σv)²).
 * Complexity: O(total ratings).
 *
 * @param units units[u] = the ratings of report u (null = not rated).
 * @throws AnalyticsError BAD_INPUT for a non-numeric rating with INTERVAL, or a bad weight.
 */
export function krippendorffAlpha(units: readonly (readonly Rating[])[], level: AlphaLevel, weights?: ArrayLike<number> | null): number {
  if (weights && weights.length !== units.length) throw new AnalyticsError('LENGTH_MISMATCH', 'krippendorffAlpha: weights');
  let n = 0;
  let observed = 0;
  const pooledCounts = new Map<string, number>();
  let pooledSum = 0;
  let pooledSq = 0;
  units.forEach((unit, u) => {
    const values = unit.filter((r): r is string | number => r !== null && r !== undefined);
    const m = values.length;
    if (m < 2) return;
    const w = weightOf(weights, u);
    if (w === 0) return;
    n += w * m;
    if (level === 'NOMINAL') {
      const counts = new Map<string, number>();
      for (const v of values) counts.set(key(v), (counts.get(key(v)) ?? 0) + 1);
      let sq = 0;
      for (const [k, c] of counts) {
        sq += c * c;
        pooledCounts.set(k, (pooledCounts.get(k) ?? 0) + w * c);
      }
      observed += (w * (m * m - sq)) / (m - 1);
    } else {
      let s = 0;
      let s2 = 0;
      for (const v of values) {
        if (typeof v !== 'number' || !Number.isFinite(v)) throw new AnalyticsError('BAD_INPUT', `krippendorffAlpha: INTERVAL needs numbers, got ${String(v)}`);
        s += v;
        s2 += v * v;
      }
      pooledSum += w * s;
      pooledSq += w * s2;
      observed += (w * 2 * (m * s2 - s * s)) / (m - 1);
    }
  });
  if (n < 2) return Number.NaN;
  let expected: number;
  if (level === 'NOMINAL') {
    let sq = 0;
    for (const c of pooledCounts.values()) sq += c * c;
    expected = n * n - sq;
  } else {
    expected = 2 * (n * pooledSq - pooledSum * pooledSum);
  }
  if (!(expected > 0)) return Number.NaN;
  const Do = observed / n;
  const De = expected / (n * (n - 1));
  return 1 - Do / De;
}

function key(r: string | number): string {
  return typeof r === 'number' ? `n:${r}` : `s:${r}`;
}

/**
 * Percentile bootstrap of any report-weighted statistic: point = statistic(null) (every report
 * once), replicate b = statistic(row b of the B × n multiplicity matrix), interval as
 * {@link estimateFrom}; replicates where the statistic is undefined (NaN) are dropped.
 * Complexity: B calls of the statistic.
 *
 * @throws AnalyticsError LENGTH_MISMATCH when the matrix is not B × n.
 */
export function bootstrapStatistic(
  statistic: (weights: ArrayLike<number> | null) => number,
  multiplicities: Int32Array,
  n: number,
  confidence: number = DEFAULT_CONFIDENCE,
): Estimate {
  if (n < 1 || multiplicities.length % n !== 0) throw new AnalyticsError('LENGTH_MISMATCH', `bootstrapStatistic: ${multiplicities.length} multiplicities for ${n} reports`);
  const B = multiplicities.length / n;
  const replicates = new Float64Array(B);
  for (let b = 0; b < B; b++) replicates[b] = statistic(multiplicities.subarray(b * n, (b + 1) * n));
  return estimateFrom(statistic(null), replicates, confidence);
}
