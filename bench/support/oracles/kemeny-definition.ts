/**
 * Oracle: the pieces of the Kemeny–Young definition (docs/scoring.md §6) that the brute force and
 * the subset DP share, written from the text and not from src/analytics: the voters' pairwise
 * preferences, an order's disagreement, and the tie-break priority.
 */

/** docs/scoring.md §6: i and j are the same score when |s_i − s_j| ≤ 1e-12 · max(1, |s_i|, |s_j|). */
export function sameScore(a: number, b: number): boolean {
  if (a === b) return true;
  return Math.abs(a - b) <= 1e-12 * Math.max(1, Math.abs(a), Math.abs(b));
}

/** A voter scoring a above b, and not the same score, prefers a; NaN (no opinion) prefers nothing. */
export function prefers(a: number, b: number): boolean {
  if (Number.isNaN(a) || Number.isNaN(b)) return false;
  return a > b && !sameScore(a, b);
}

/**
 * prefer[i][j] = Σ over voters v (weight u_v, default 1) of u_v · [v prefers i to j], as nested
 * arrays: scores[v][c] is voter v's score of candidate c.
 */
export function preferenceCounts(scores: readonly ArrayLike<number>[], weights: ArrayLike<number> | null = null): number[][] {
  const n = scores[0]!.length;
  const prefer = Array.from({ length: n }, () => new Array<number>(n).fill(0));
  scores.forEach((s, v) => {
    const u = weights === null ? 1 : weights[v]!;
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) if (i !== j && prefers(s[i]!, s[j]!)) prefer[i]![j]! += u;
    }
  });
  return prefer;
}

/** Nested arrays from a row-major n × n matrix. */
export function rows(n: number, w: ArrayLike<number>): number[][] {
  return Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => w[i * n + j]!));
}

/**
 * The objective of docs/scoring.md §6: Σ over pairs with a placed before b of prefer[b][a], the
 * weight of the voters that would rather have b first.
 */
export function disagreement(prefer: readonly (readonly number[])[], order: readonly number[]): number {
  let total = 0;
  for (let p = 0; p < order.length; p++) {
    for (let q = p + 1; q < order.length; q++) total += prefer[order[q]!]![order[p]!]!;
  }
  return total;
}

/**
 * Tie-break priority (lower first) of docs/scoring.md §6: higher macro average first, then name
 * by UTF-16 code units, then index. Macro averages that are the same score count as equal: sorted
 * descending (NaN last), they are cut into tie classes, each opened by its highest member and
 * holding every following value that is the same score as that member (tolerance.ts states the
 * rule; "the same score" alone is no equivalence: 0 ≈ −∞ ≈ 0.75 with 0 ≉ 0.75).
 */
export function tieBreakOrder(n: number, macro: ArrayLike<number> | null = null, names: readonly string[] | null = null): number[] {
  const tieClass = new Array<number>(n).fill(0);
  if (macro !== null) {
    const descending = Array.from({ length: n }, (_, c) => c).sort((a, b) => {
      const x = macro[a]!;
      const y = macro[b]!;
      if (Number.isNaN(x) || Number.isNaN(y)) return Number(Number.isNaN(x)) - Number(Number.isNaN(y));
      return x > y ? -1 : x < y ? 1 : 0;
    });
    let leader = Number.NaN;
    let k = -1;
    for (const c of descending) {
      const x = macro[c]!;
      const joins = k >= 0 && (Number.isNaN(x) ? Number.isNaN(leader) : sameScore(leader, x));
      if (!joins) {
        k++;
        leader = x;
      }
      tieClass[c] = k;
    }
  }
  const before = (a: number, b: number): number => {
    if (tieClass[a] !== tieClass[b]) return tieClass[a]! - tieClass[b]!;
    if (names !== null && names[a] !== names[b]) return names[a]! < names[b]! ? -1 : 1;
    return a - b;
  };
  const byPriority = Array.from({ length: n }, (_, c) => c).sort(before);
  const priority = new Array<number>(n);
  byPriority.forEach((c, p) => {
    priority[c] = p;
  });
  return priority;
}

/**
 * Whether order x comes before order y in the tie-break: at the first position where they
 * differ, x's candidate has the lower priority.
 */
export function preferredOrder(x: readonly number[], y: readonly number[], priority: ArrayLike<number>): boolean {
  for (let p = 0; p < x.length; p++) {
    if (x[p] !== y[p]) return priority[x[p]!]! < priority[y[p]!]!;
  }
  return false;
}
