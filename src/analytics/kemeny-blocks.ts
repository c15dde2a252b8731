/**
 * Kemeny–Young consensus of many related profiles (bootstrap replicates) without building each
 * profile's full pairwise matrix: the Condorcet decomposition is found from the voters' scores
 * along a sorted order, certified for far-apart candidates by per-voter range minima, and only
 * the blocks it leaves are given a dense matrix and solved by {@link kemenyFromMatrix}.
 */
import { kemenyFromMatrix } from './kemeny';
import type { PairwiseMatrix } from './kemeny';
import { SCORE_RELATIVE_TOLERANCE, scoreGreater } from './tolerance';

export interface BlockConsensusOptions {
  /** Largest Condorcet component solved exactly (as {@link kemenyFromMatrix}'s exactLimit). */
  exactLimit: number;
  /** Insertion sweeps per local search in heuristic components. */
  maxSweeps: number;
  /** Full candidate order used as a warm start of every heuristic component (or null). */
  warmStart: readonly number[] | null;
}

/**
 * Solver for one candidate set and voter set, reused across profiles (its buffers are sized
 * once). Voter weights must be non-negative integers (then every pairwise total is an exact
 * integer, as in `pairwiseMatrix`).
 */
export class BlockConsensus {
  private readonly size: number;
  private readonly key: Float64Array;
  private readonly sigma: Int32Array;
  private readonly reach: Int32Array;
  private readonly tree: Float64Array;
  private readonly localIndex: Int32Array;
  private readonly warmPosition: Int32Array | null;
  private readonly totalWeight: number;
  private threshold = 0;
  private s: Float64Array = new Float64Array(0);

  /**
   * @param n candidates
   * @param V voters
   * @param weights integer weight per voter
   */
  constructor(
    private readonly n: number,
    private readonly V: number,
    private readonly weights: Float64Array,
    private readonly options: BlockConsensusOptions,
  ) {
    let size = 1;
    while (size < n) size <<= 1;
    this.size = size;
    this.key = new Float64Array(n);
    this.sigma = new Int32Array(n);
    this.reach = new Int32Array(n);
    this.tree = new Float64Array(V * 2 * size);
    this.localIndex = new Int32Array(n).fill(-1);
    let total = 0;
    for (let v = 0; v < V; v++) total += weights[v]!;
    this.totalWeight = total;
    const warm = options.warmStart;
    this.warmPosition = warm === null ? null : Int32Array.from(warm);
  }

  /** True when voter weights allow this solver (non-negative integers with an exact total). */
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
   * Consensus ranks of one profile, identical to `kemenyFromMatrix(pairwiseMatrix(profile),
   * { priority, exactLimit, maxSweeps, restarts: 0, warmStarts })`.
   *
   * Method: candidates are sorted by their mean score σ (any order is correct; a good one
   * leaves small blocks). For each position j the leftmost earlier position whose candidate does
   * not strictly beat σ_j by pairwise majority is found by a descent of a segment tree of
   * per-voter score minima over σ: a node all of whose candidates are certified to beat σ_j
   * (voters whose node minimum is strictly above σ_j's score outweigh all the others) is
   * skipped, other nodes are opened down to exact pairwise margins. A cut of σ that no such pair
   * crosses separates Condorcet components (every candidate before it strictly beats every one
   * after it), so the blocks between cuts are unions of whole components, solved independently
   * from their own k×k matrices with the full field's tie-break priority.
   *
   * Complexity: O(V·n log n) for the sort and the tree, O(V·(log n + u_j)) per position where
   * u_j counts tree nodes not certified, and Σ_blocks O(V·k² + solve(k)).
   *
   * @param s s[v·n + c] = voter v's score of candidate c (NaN = no opinion).
   * @param priority tie-break priority of the full field (distinct integers, lower first).
   * @param rank output: rank[c] = 1-based consensus position.
   * @returns whether the consensus is proven optimal, or null when a score is infinite (the
   *   caller then uses the dense matrix).
   */
  solve(s: Float64Array, priority: Int32Array, rank: Int32Array): boolean | null {
    const { n, V, weights, key, sigma } = this;
    this.s = s;
    let maxAbs = 1;
    for (let c = 0; c < n; c++) {
      let sum = 0;
      let weight = 0;
      for (let v = 0; v < V; v++) {
        const x = s[v * n + c]!;
        if (Number.isNaN(x)) continue;
        if (!Number.isFinite(x)) return null;
        const a = Math.abs(x);
        if (a > maxAbs) maxAbs = a;
        sum += weights[v]! * x;
        weight += weights[v]!;
      }
      key[c] = weight > 0 ? sum / weight : -Infinity;
      sigma[c] = c;
    }
    // A voter separates a node from a candidate when node minimum − score exceeds the tolerance
    // at the largest magnitude in the profile, widened by a relative 1e-6 so that floating-point
    // rounding cannot turn any member's strict preference into a tie.
    this.threshold = SCORE_RELATIVE_TOLERANCE * maxAbs * (1 + 1e-6);
    sigma.sort((a, b) => key[b]! - key[a]! || a - b);
    this.buildTree();

    const reach = this.reach;
    reach[0] = n;
    for (let j = 1; j < n; j++) reach[j] = this.leftmostFailure(j);

    let exact = true;
    let blockEnd = n - 1;
    let minReach = n;
    for (let p = n - 1; p >= 0; p--) {
      // Cut between p − 1 and p when no position ≥ p reaches before p.
      if (reach[p]! < minReach) minReach = reach[p]!;
      if (p === 0 || minReach > p - 1) {
        if (!this.solveBlock(p, blockEnd, priority, rank)) exact = false;
        blockEnd = p - 1;
      }
    }
    return exact;
  }

  private buildTree(): void {
    const { n, V, size, tree, sigma, s } = this;
    for (let v = 0; v < V; v++) {
      const base = v * 2 * size;
      const row = v * n;
      for (let p = 0; p < size; p++) tree[base + size + p] = p < n ? s[row + sigma[p]!]! : Number.NaN;
      for (let node = size - 1; node >= 1; node--) {
        tree[base + node] = Math.min(tree[base + 2 * node]!, tree[base + 2 * node + 1]!);
      }
    }
  }

  /** Whether every candidate under `node` strictly beats candidate c by pairwise majority. */
  private certified(node: number, c: number): boolean {
    const { V, n, weights, tree, size, s, threshold } = this;
    let bound = 0;
    let remaining = this.totalWeight;
    for (let v = 0; v < V; v++) {
      const w = weights[v]!;
      remaining -= w;
      if (tree[v * 2 * size + node]! - s[v * n + c]! > threshold) bound += w;
      else bound -= w;
      if (bound + remaining <= 0) return false;
    }
    return bound > 0;
  }

  /** Whether candidate a fails to strictly beat candidate b (pairwise margin ≤ 0). */
  private fails(a: number, b: number): boolean {
    const { V, n, weights, s } = this;
    let margin = 0;
    for (let v = 0; v < V; v++) {
      const x = s[v * n + a]!;
      const y = s[v * n + b]!;
      if (scoreGreater(x, y)) margin += weights[v]!;
      else if (scoreGreater(y, x)) margin -= weights[v]!;
    }
    return margin <= 0;
  }

  /** Leftmost position i < j whose candidate fails to strictly beat σ_j, or n. */
  private leftmostFailure(j: number): number {
    const c = this.sigma[j]!;
    const found = this.descend(1, 0, this.size - 1, j - 1, c);
    return found < 0 ? this.n : found;
  }

  private descend(node: number, lo: number, hi: number, last: number, c: number): number {
    if (lo > last) return -1;
    if (hi <= last && this.certified(node, c)) return -1;
    if (lo === hi) return this.fails(this.sigma[lo]!, c) ? lo : -1;
    const mid = (lo + hi) >> 1;
    const left = this.descend(2 * node, lo, mid, last, c);
    if (left >= 0) return left;
    return this.descend(2 * node + 1, mid + 1, hi, last, c);
  }

  /** Solves σ positions first..last as one field; returns whether that solution is exact. */
  private solveBlock(first: number, last: number, priority: Int32Array, rank: Int32Array): boolean {
    const { sigma, V, n, weights, s, localIndex } = this;
    const k = last - first + 1;
    if (k === 1) {
      rank[sigma[first]!] = first + 1;
      return true;
    }
    const members = Array.from(sigma.subarray(first, last + 1));
    members.forEach((c, i) => (localIndex[c] = i));
    const w = new Float64Array(k * k);
    for (let v = 0; v < V; v++) {
      const weight = weights[v]!;
      if (weight === 0) continue;
      const row = v * n;
      for (let a = 0; a < k; a++) {
        const x = s[row + members[a]!]!;
        if (Number.isNaN(x)) continue;
        for (let b = 0; b < k; b++) if (scoreGreater(x, s[row + members[b]!]!)) w[a * k + b] += weight;
      }
    }
    const matrix: PairwiseMatrix = { n: k, w, voterCount: V, totalWeight: this.totalWeight, integral: true };
    const warm = this.warmPosition;
    const warmStarts: number[][] = [];
    if (warm !== null) {
      const start: number[] = [];
      for (let p = 0; p < warm.length; p++) if (localIndex[warm[p]!]! >= 0) start.push(localIndex[warm[p]!]!);
      warmStarts.push(start);
    }
    const result = kemenyFromMatrix(matrix, {
      priority: Int32Array.from(members, (c) => priority[c]!),
      exactLimit: this.options.exactLimit,
      maxSweeps: this.options.maxSweeps,
      restarts: 0,
      warmStarts,
    });
    members.forEach((c) => (localIndex[c] = -1));
    result.order.forEach((i, p) => (rank[members[i]!] = first + p + 1));
    return result.exact;
  }
}
