/**
 * Multiple-testing adjustments of p-values across strata (docs/scoring.md §8 contrasts).
 */
import { AnalyticsError } from './errors';

/**
 * Benjamini–Hochberg adjusted p-values (q-values) controlling the false discovery rate.
 *
 * Definition: with the m finite p-values sorted ascending p_(1) ≤ … ≤ p_(m),
 * q_(i) = min_{j ≥ i} min(1, m·p_(j)/j), returned in the input order. NaN p-values (e.g. a
 * stratum where the contrast is not estimable) are left out of m and get a NaN q-value.
 * Equals statsmodels `multipletests(p, method="fdr_bh")[1]` on finite input.
 * Source: Benjamini & Hochberg, JRSS B 57 (1995); docs/scoring.md §8.
 * Complexity: O(m log m).
 * @throws AnalyticsError OUT_OF_RANGE for a p-value outside [0, 1].
 */
export function benjaminiHochberg(pValues: ArrayLike<number>): Float64Array {
  const { order, m } = sortedFinite(pValues);
  const q = new Float64Array(pValues.length).fill(Number.NaN);
  let running = 1;
  for (let r = m - 1; r >= 0; r--) {
    const i = order[r]!;
    running = Math.min(running, (m * pValues[i]!) / (r + 1));
    q[i] = running;
  }
  return q;
}

/**
 * Holm step-down adjusted p-values (family-wise error rate).
 *
 * Definition: q_(i) = max_{j ≤ i} min(1, (m − j + 1)·p_(j)), in the input order; NaN p-values
 * are left out as in {@link benjaminiHochberg}. Equals statsmodels `multipletests(p,
 * method="holm")[1]`. Source: Holm, Scand. J. Stat. 6 (1979). Complexity: O(m log m).
 * @throws AnalyticsError OUT_OF_RANGE for a p-value outside [0, 1].
 */
export function holm(pValues: ArrayLike<number>): Float64Array {
  const { order, m } = sortedFinite(pValues);
  const q = new Float64Array(pValues.length).fill(Number.NaN);
  let running = 0;
  for (let r = 0; r < m; r++) {
    const i = order[r]!;
    running = Math.max(running, Math.min(1, (m - r) * pValues[i]!));
    q[i] = running;
  }
  return q;
}

function sortedFinite(pValues: ArrayLike<number>): { order: number[]; m: number } {
  const order: number[] = [];
  for (let i = 0; i < pValues.length; i++) {
    const p = pValues[i]!;
    if (Number.isNaN(p)) continue;
    if (!(p >= 0 && p <= 1)) throw new AnalyticsError('OUT_OF_RANGE', `p-value ${p} at index ${i}`);
    order.push(i);
  }
  // Stable by index among equal p-values, so the result does not depend on the sort engine.
  order.sort((a, b) => pValues[a]! - pValues[b]! || a - b);
  return { order, m: order.length };
}
