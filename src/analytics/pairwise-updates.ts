/**
 * Pairwise preference matrices of many related profiles (bootstrap replicates) as updates of
 * one base matrix: in each replicate, a voter's preferences differ from its base preferences
 * only for pairs of candidates whose scores changed order, so the replicate's matrix is the
 * base matrix plus those pairs' changes, found along each voter's base order.
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
  /** Per voter: the candidates with a score in the last replicate, ascending (warm start of the sort). */
  private readonly sortedRep: Int32Array;
  private readonly repLevel: Int32Array;
  private readonly suffixMax: Int32Array;

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
    this.sortedRep = new Int32Array(V * n);
    this.repLevel = new Int32Array(n);
    this.suffixMax = new Int32Array(n + 1);
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
      for (let i = 0; i < m; i++) {
        this.baseOrder[row + i] = idx[i]!;
        this.sortedRep[row + i] = idx[m - 1 - i]!;
      }
      for (let i = m - 1; i >= 0; i--) {
        this.groupEnd[row + i] =
          i + 1 < m && this.baseLevel[row + idx[i + 1]!] === this.baseLevel[row + idx[i]!] ? this.groupEnd[row + i + 1]! : i + 1;
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
   * Method, per voter: the replicate's scores are sorted by insertion sort from the previous
   * replicate's order (O(n + inversions)) and given integer levels, which decide every strict
   * preference when no two different scores lie within the tolerance (see `scoreLevels`). Then,
   * along the base order, each candidate a is compared with the candidates of its base tie
   * group and with the lower ones until the suffix maximum of replicate levels drops below a's
   * (no later candidate can then match or beat a), and each pair whose preference differs from
   * the base gets the voter's weight moved. A voter whose missing scores differ from the base,
   * or whose scores are not levelled, has its base contribution removed and its replicate
   * contribution added pair by pair, O(n²).
   *
   * Complexity: O(n²) to copy the base, per voter O(n + inversions + changed neighbourhood).
   */
  matrix(s: Float64Array, w: Float64Array): void {
    const { n, V, weights } = this;
    w.set(this.base);
    for (let v = 0; v < V; v++) {
      const weight = weights[v]!;
      if (weight === 0) continue;
      const row = v * n;
      if (!this.scoreLevels(s, row, v)) {
        this.recompute(s, row, weight, w);
        continue;
      }
      const R = this.repLevel;
      const m = this.baseCount[v]!;
      const order = this.baseOrder.subarray(row, row + m);
      const groupEnd = this.groupEnd.subarray(row, row + m);
      const sufMax = this.suffixMax;
      sufMax[m] = -1;
      for (let j = m - 1; j >= 0; j--) {
        const r = R[order[j]!]!;
        sufMax[j] = r > sufMax[j + 1]! ? r : sufMax[j + 1]!;
      }
      for (let i = 0; i < m; i++) {
        const a = order[i]!;
        const ra = R[a]!;
        const ge = groupEnd[i]!;
        const rowA = a * n;
        for (let j = i + 1; j < ge; j++) {
          const b = order[j]!;
          const rb = R[b]!;
          if (ra > rb) w[rowA + b] += weight;
          else if (rb > ra) w[b * n + a] += weight;
        }
        for (let j = ge; j < m && sufMax[j]! >= ra; j++) {
          const b = order[j]!;
          const rb = R[b]!;
          if (rb >= ra) {
            w[rowA + b] -= weight;
            if (rb > ra) w[b * n + a] += weight;
          }
        }
      }
    }
  }

  /**
   * Replicate levels of voter v into repLevel: for candidates with a score, scoreGreater(x, y) ⟺
   * level(x) > level(y). Sorting the distinct scores, when every two neighbours z > z' satisfy
   * scoreGreater, so does every pair x > y: the neighbour pair at the endpoint of larger
   * magnitude already differs by more than 1e-12·max(1, |x|, |y|), and floating-point
   * subtraction is monotone; equal scores are never preferred. Returns false when the voter's
   * missing scores differ from its base's, or two different scores are within the tolerance
   * (or infinite: scoreGreater never holds against ±∞).
   */
  private scoreLevels(s: Float64Array, row: number, v: number): boolean {
    const { n } = this;
    const m = this.baseCount[v]!;
    let present = 0;
    for (let c = 0; c < n; c++) {
      const has = !Number.isNaN(s[row + c]!);
      if (has !== this.baseLevel[row + c]! >= 0) return false;
      if (has) present++;
    }
    if (present !== m) return false;
    const sorted = this.sortedRep.subarray(row, row + m);
    for (let i = 1; i < m; i++) {
      const c = sorted[i]!;
      const x = s[row + c]!;
      let j = i - 1;
      while (j >= 0 && s[row + sorted[j]!]! > x) {
        sorted[j + 1] = sorted[j]!;
        j--;
      }
      sorted[j + 1] = c;
    }
    const R = this.repLevel;
    let level = 0;
    for (let i = 0; i < m; i++) {
      const c = sorted[i]!;
      if (i > 0) {
        const lo = s[row + sorted[i - 1]!]!;
        const hi = s[row + c]!;
        if (hi !== lo) {
          if (!scoreGreater(hi, lo)) return false;
          level++;
        }
      }
      R[c] = level;
    }
    return true;
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
