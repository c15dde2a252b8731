/**
 * Comparison rules at the boundaries (docs/scoring.md §1 Numbers, §6 Ties): numeric tolerance that
 * is inclusive in spite of binary rounding, and the relative tolerance under which two scores
 * are the same score wherever scores are compared.
 */

/** Relative tolerance of score comparisons (docs/scoring.md §6): |a − b| ≤ 1e-12 · max(1, |a|, |b|). */
export const SCORE_RELATIVE_TOLERANCE = 1e-12;

/**
 * Whether two scores are the same score (docs/scoring.md §6 "Ties in a voter").
 *
 * Definition: |a − b| ≤ 1e-12 · max(1, |a|, |b|). Two balanced accuracies that are the same
 * rational number (7/18 from recalls 0, 1/6, 1 and from 2/3, 1/2, 0) differ in the last bit of
 * their floating-point sums; they are equal here. NaN equals nothing (not even NaN).
 * Complexity: O(1).
 */
export function scoresEqual(a: number, b: number): boolean {
  if (a === b) return true;
  return Math.abs(a - b) <= SCORE_RELATIVE_TOLERANCE * Math.max(1, Math.abs(a), Math.abs(b));
}

/**
 * Whether score a is strictly better (greater) than score b: a > b and not {@link scoresEqual}.
 * False whenever either is NaN. Complexity: O(1).
 */
export function scoreGreater(a: number, b: number): boolean {
  return a > b && a - b > SCORE_RELATIVE_TOLERANCE * Math.max(1, Math.abs(a), Math.abs(b));
}

/**
 * Three-way comparison of scores for sorting, higher first: negative when a is strictly better,
 * positive when b is, 0 when they are the same score ({@link scoresEqual}); NaN sorts after every
 * number and equals NaN. Not transitive on its own (a ≈ b ≈ c with a ≉ c): sort with
 * {@link scoreTieClasses} where a total order is needed. Complexity: O(1).
 */
export function compareScoresDescending(a: number, b: number): number {
  const na = Number.isNaN(a);
  const nb = Number.isNaN(b);
  if (na || nb) return na === nb ? 0 : na ? 1 : -1;
  if (scoreGreater(a, b)) return -1;
  if (scoreGreater(b, a)) return 1;
  return 0;
}

/**
 * Tie classes of scores, best first: the scores sorted descending (NaN last) are cut into
 * classes, each opened by its highest member (its leader) and holding every following score
 * equal to the leader within the tolerance of {@link scoresEqual}. Anchoring at the leader makes
 * the classes a partition independent of the input order (chains a ≈ b ≈ c with a ≉ c are cut
 * at c), so "same score" is an equivalence relation wherever ties are broken. NaN scores share
 * the last class. Returns the class index of each input, 0 = best. Complexity: O(n log n).
 */
export function scoreTieClasses(scores: ArrayLike<number>): Int32Array {
  const n = scores.length;
  const idx = Array.from({ length: n }, (_, i) => i);
  idx.sort((a, b) => {
    const x = scores[a]!;
    const y = scores[b]!;
    const nx = Number.isNaN(x);
    const ny = Number.isNaN(y);
    if (nx || ny) return nx === ny ? a - b : nx ? 1 : -1;
    return y > x ? 1 : y < x ? -1 : a - b;
  });
  const out = new Int32Array(n);
  tieClassesAlong(scores, idx, out);
  return out;
}

/**
 * The classes of {@link scoreTieClasses} into `out`, given `order`: the inputs already sorted as
 * it sorts them (highest first, NaN last). For callers that keep the order between calls. O(n).
 */
export function tieClassesAlong(scores: ArrayLike<number>, order: ArrayLike<number>, out: Int32Array): void {
  let cls = -1;
  let leader = Number.NaN;
  let nanClass = -1;
  for (let p = 0; p < order.length; p++) {
    const i = order[p]!;
    const x = scores[i]!;
    if (Number.isNaN(x)) {
      if (nanClass < 0) nanClass = ++cls;
      out[i] = nanClass;
      continue;
    }
    if (cls < 0 || !scoresEqual(leader, x)) {
      cls++;
      leader = x;
    }
    out[i] = cls;
  }
}

/**
 * Numeric equality within an absolute tolerance t (docs/scoring.md §1 Numbers).
 *
 * Definition: with t = 0 the numbers must be equal; with t > 0,
 * |a − b| ≤ t + 1e-12 · max(1, |a|, |b|), so the boundary is inclusive in spite of binary
 * rounding (1.1 against 1.0 with t = 0.1 is equal, although 1.1 − 1.0 = 0.10000000000000009).
 * Complexity: O(1).
 */
export function numbersEqualWithin(a: number, b: number, tolerance: number): boolean {
  if (a === b) return true;
  if (!(tolerance > 0)) return false;
  return Math.abs(a - b) <= tolerance + SCORE_RELATIVE_TOLERANCE * Math.max(1, Math.abs(a), Math.abs(b));
}
