/**
 * Pairwise preference matrices of many related profiles (bootstrap replicates) as updates of
 * one base matrix: in each replicate, a voter's preferences differ from its base preferences
 * only for pairs of candidates whose scores changed order, so the replicate's matrix is the
 * base matrix plus those pairs' changes, found by sorting each voter's base order by the
 * replicate's scores.
 */
import { scoreGreater } from './tolerance';

/**
 * Builder of `pairwiseMatrix`-equal matrices for profiles over one candidate set and one voter
 * set. Voter weights must be non-negative integers with an exact total (then every entry is an
 * exact integer, whatever order it is summed in).
 */
export class PairwiseUpdates {
  /** base[i·n + j]: Σ weight over voters whose base level of i exceeds that of j. */
  private readonly base: Float64Array;
  /** Per voter: candidates with a base score, base score descending (offset v·n, count baseCount[v]). */
  private readonly baseOrder: Int32Array;
  private readonly baseCount: Int32Array;
  /** Per voter and base-order position: first position after its group of equal base scores. */
  private readonly groupEnd: Int32Array;
  /** Per voter: base level of each candidate (−1 without a base score). */
  private readonly baseLevel: Int32Array;
  /** Per voter: whether any two candidates share a base level. */
  private readonly baseTies: Uint8Array;
  /** Scratch: one voter's base order being sorted by replicate score, with their scores and base levels. */
  private readonly sorted: Int32Array;
  private readonly sortedScore: Float64Array;
  private readonly sortedLevel: Int32Array;
  /** Scratch: changed pairs of one voter, +(a·n + b + 1) for "a over b" → "b over a", −(…) for "a over b" → tie. */
  private changes: Int32Array;

  /**
   * @param baseScores baseScores[v·n + c]: any reference profile (e.g. mean replicate scores);
   *   the closer to the replicates, the fewer changed pairs. NaN = no base preference.
   */
  constructor(
    private readonly n: number,
    private readonly V: number,
    private readonly weights: Float64Array,
    baseScores: Float64Array,
  ) {
    this.base = new Float64Array(n * n);
    this.baseOrder = new Int32Array(V * n);
    this.baseCount = new Int32Array(V);
    this.groupEnd = new Int32Array(V * n);
    this.baseLevel = new Int32Array(V * n).fill(-1);
    this.baseTies = new Uint8Array(V);
    this.sorted = new Int32Array(n);
    this.sortedScore = new Float64Array(n);
    this.sortedLevel = new Int32Array(n);
    this.changes = new Int32Array(4 * n);
    for (let v = 0; v < V; v++) {
      const row = v * n;
      const idx: number[] = [];
      for (let c = 0; c < n; c++) if (!Number.isNaN(baseScores[row + c]!)) idx.push(c);
      idx.sort((a, b) => (baseScores[row + b]! > baseScores[row + a]! ? 1 : baseScores[row + b]! < baseScores[row + a]! ? -1 : a - b));
      const m = idx.length;
      this.baseCount[v] = m;
      let level = 0;
      for (let i = m - 1; i >= 0; i--) {
        if (i < m - 1 && baseScores[row + idx[i]!]! !== baseScores[row + idx[i + 1]!]!) level++;
        this.baseLevel[row + idx[i]!] = level;
      }
      for (let i = 0; i < m; i++) this.baseOrder[row + i] = idx[i]!;
      for (let i = m - 1; i >= 0; i--) {
        this.groupEnd[row + i] =
          i + 1 < m && this.baseLevel[row + idx[i + 1]!] === this.baseLevel[row + idx[i]!] ? this.groupEnd[row + i + 1]! : i + 1;
        if (this.groupEnd[row + i]! > i + 1) this.baseTies[v] = 1;
      }
      const weight = weights[v]!;
      if (weight === 0) continue;
      const levels = this.baseLevel.subarray(row, row + n);
      for (let a = 0; a < n; a++) {
        const la = levels[a]!;
        if (la < 0) continue;
        for (let b = 0; b < n; b++) {
          const lb = levels[b]!;
          if (lb >= 0 && la > lb) this.base[a * n + b] += weight;
        }
      }
    }
  }

  /** True when voter weights allow this builder (non-negative integers with an exact total). */
  static accepts(weights: ArrayLike<number>): boolean {
    let total = 0;
    for (let v = 0; v < weights.length; v++) {
      const w = weights[v]!;
      if (!(Number.isInteger(w) && w >= 0)) return false;
      total += w;
    }
    return total <= 2 ** 31;
  }

  /**
   * Writes the pairwise matrix of profile s (s[v·n + c], NaN = no opinion) into w: equal entry
   * for entry to `pairwiseMatrix` of the same scores and weights.
   *
   * Method, per voter: the base order (base score descending) is insertion-sorted by the
   * replicate's scores, descending and stable. Each candidate c passes exactly the candidates
   * before it in the base order that it beats in the replicate (those pairs turn round), and
   * lands right after those it equals (those pairs become ties): each changed pair is met once.
   * The raw comparisons decide the preferences when no two different scores lie within the
   * tolerance, checked on the sorted neighbours (see `applyChanges`); the changes are applied
   * as they are met and taken back when that check fails. Pairs tied in the base are compared
   * directly. A voter whose missing scores differ
   * from the base, or whose scores are not levelled, has its base contribution removed and its
   * replicate contribution added pair by pair, O(n²).
   *
   * Complexity: O(n²) to copy the base, per voter O(n + changed pairs + pairs tied in the base).
   */
  matrix(s: Float64Array, w: Float64Array): void {
    const { n, V, weights } = this;
    w.set(this.base);
    for (let v = 0; v < V; v++) {
      const weight = weights[v]!;
      if (weight === 0) continue;
      const row = v * n;
      if (!(this.presentAsBase(s, row, v) && this.applyChanges(s, row, v, weight, w))) {
        this.recompute(s, row, weight, w);
        continue;
      }
      if (this.baseTies[v] === 1) this.addBaseTies(s, row, v, weight, w);
    }
  }

  /** Whether voter v has a score in s for exactly the candidates it has a base score for. */
  private presentAsBase(s: Float64Array, row: number, v: number): boolean {
    const { n } = this;
    let present = 0;
    for (let c = 0; c < n; c++) {
      const has = !Number.isNaN(s[row + c]!);
      if (has !== this.baseLevel[row + c]! >= 0) return false;
      if (has) present++;
    }
    return present === this.baseCount[v]!;
  }

  /**
   * Insertion-sorts voter v's base order by the scores in s (descending, stable) into `sorted`
   * and applies the changes of the pairs of different base levels whose preference changed to
   * w, recording them in `changes`. When the scores are not levelled, takes the changes back
   * and returns false: for scores sorted descending, scoreGreater(x, y) ⟺ x > y for every pair
   * when every two different neighbours z > z' satisfy scoreGreater (the neighbour pair at the
   * endpoint of larger magnitude already differs by more than 1e-12·max(1, |x|, |y|), and
   * floating-point subtraction is monotone; equal scores are never preferred). It fails when two
   * different scores are within the tolerance, or a score is infinite (scoreGreater never holds
   * against ±∞). The sorted scores and levels are moved along with the candidates, so the sort
   * reads them in sequence.
   */
  private applyChanges(s: Float64Array, row: number, v: number, weight: number, w: Float64Array): boolean {
    if (this.baseTies[v] === 0) return this.applyChangesUntied(s, row, v, weight, w);
    const { n } = this;
    const m = this.baseCount[v]!;
    const order = this.baseOrder;
    const level = this.baseLevel;
    const sorted = this.sorted;
    const sortedScore = this.sortedScore;
    const sortedLevel = this.sortedLevel;
    let changes = this.changes;
    let count = 0;
    for (let i = 0; i < m; i++) {
      const c = order[row + i]!;
      const x = s[row + c]!;
      const lc = level[row + c]!;
      if (count + i > changes.length) changes = this.grow(count + i);
      const rowC = c * n;
      let j = i - 1;
      for (; j >= 0; j--) {
        const y = sortedScore[j]!;
        if (!(y < x)) break;
        const a = sorted[j]!;
        const la = sortedLevel[j]!;
        sorted[j + 1] = a;
        sortedScore[j + 1] = y;
        sortedLevel[j + 1] = la;
        if (la > lc) {
          const pair = a * n + c;
          w[pair] -= weight;
          w[rowC + a] += weight;
          changes[count++] = pair + 1;
        }
      }
      sorted[j + 1] = c;
      sortedScore[j + 1] = x;
      sortedLevel[j + 1] = lc;
      for (let t = j; t >= 0; t--) {
        if (sortedScore[t]! !== x) break;
        if (count === changes.length) changes = this.grow(count + 1);
        if (sortedLevel[t]! > lc) {
          const pair = sorted[t]! * n + c;
          w[pair] -= weight;
          changes[count++] = -(pair + 1);
        }
      }
    }
    return this.levelled(m, count, weight, w);
  }

  /**
   * {@link applyChanges} for a voter without ties in its base: every candidate before c in the
   * base order has a higher base level, so each pair met changes and no levels are carried.
   */
  private applyChangesUntied(s: Float64Array, row: number, v: number, weight: number, w: Float64Array): boolean {
    const { n } = this;
    const m = this.baseCount[v]!;
    const order = this.baseOrder;
    const sorted = this.sorted;
    const sortedScore = this.sortedScore;
    let changes = this.changes;
    let count = 0;
    for (let i = 0; i < m; i++) {
      const c = order[row + i]!;
      const x = s[row + c]!;
      if (count + i > changes.length) changes = this.grow(count + i);
      const rowC = c * n;
      let j = i - 1;
      for (; j >= 0; j--) {
        const y = sortedScore[j]!;
        if (!(y < x)) break;
        const a = sorted[j]!;
        sorted[j + 1] = a;
        sortedScore[j + 1] = y;
        const pair = a * n + c;
        w[pair] -= weight;
        w[rowC + a] += weight;
        changes[count++] = pair + 1;
      }
      sorted[j + 1] = c;
      sortedScore[j + 1] = x;
      for (let t = j; t >= 0 && sortedScore[t] === x; t--) {
        if (count === changes.length) changes = this.grow(count + 1);
        const pair = sorted[t]! * n + c;
        w[pair] -= weight;
        changes[count++] = -(pair + 1);
      }
    }
    return this.levelled(m, count, weight, w);
  }

  /**
   * Whether the sorted scores of one voter are levelled (see {@link applyChanges}); if not,
   * takes back the `count` changes recorded.
   */
  private levelled(m: number, count: number, weight: number, w: Float64Array): boolean {
    const { n, changes } = this;
    const sortedScore = this.sortedScore;
    for (let i = 1; i < m; i++) {
      const hi = sortedScore[i - 1]!;
      const lo = sortedScore[i]!;
      if (hi !== lo && !scoreGreater(hi, lo)) {
        for (let k = 0; k < count; k++) {
          const code = changes[k]!;
          const pair = (code > 0 ? code : -code) - 1;
          w[pair] += weight;
          if (code > 0) {
            const a = (pair / n) | 0;
            const b = pair - a * n;
            w[b * n + a] -= weight;
          }
        }
        return false;
      }
    }
    return true;
  }

  private grow(atLeast: number): Int32Array {
    const next = new Int32Array(Math.max(atLeast, 2 * this.changes.length));
    next.set(this.changes);
    this.changes = next;
    return next;
  }

  /** Preferences in s between candidates that voter v's base ties (levelled scores: raw comparison). */
  private addBaseTies(s: Float64Array, row: number, v: number, weight: number, w: Float64Array): void {
    const { n } = this;
    const m = this.baseCount[v]!;
    for (let i = 0; i < m; i++) {
      const ge = this.groupEnd[row + i]!;
      const a = this.baseOrder[row + i]!;
      const x = s[row + a]!;
      for (let j = i + 1; j < ge; j++) {
        const b = this.baseOrder[row + j]!;
        const y = s[row + b]!;
        if (x > y) w[a * n + b] += weight;
        else if (y > x) w[b * n + a] += weight;
      }
    }
  }

  /** Removes voter v's base preferences from w and adds its preferences in s pair by pair. */
  private recompute(s: Float64Array, row: number, weight: number, w: Float64Array): void {
    const { n } = this;
    const levels = this.baseLevel.subarray(row, row + n);
    for (let a = 0; a < n; a++) {
      const la = levels[a]!;
      const x = s[row + a]!;
      const rowA = a * n;
      for (let b = 0; b < n; b++) {
        if (la >= 0 && levels[b]! >= 0 && la > levels[b]!) w[rowA + b] -= weight;
        if (scoreGreater(x, s[row + b]!)) w[rowA + b] += weight;
      }
    }
  }
}
