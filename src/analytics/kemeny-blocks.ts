/**
 * Kemeny–Young consensus of many related profiles (bootstrap replicates) without building each
 * profile's full pairwise matrix: the Condorcet decomposition is found from the voters' scores
 * along a sorted order, certified for far-apart candidates by per-voter range minima, and only
 * the blocks it leaves are given a dense matrix and solved by {@link kemenyFromMatrix}.
 */
import { kemenyFromMatrix } from './kemeny';
import type { PairwiseMatrix } from './kemeny';
import { SCORE_RELATIVE_TOLERANCE, scoreGreater } from './tolerance';

/** Level of a NaN score in {@link BlockConsensus.voterLevels}: above every real level. */
const NO_OPINION = 0x7fffffff;

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
  /** Block start positions (a stack) while cutting σ. */
  private readonly reach: Int32Array;
  private readonly tree: Float64Array;
  private readonly localIndex: Int32Array;
  private readonly level: Int32Array;
  private readonly byScore: Int32Array;
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
    this.level = new Int32Array(n);
    this.byScore = new Int32Array(n);
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
   * leaves small blocks). Going along σ, candidate σ_j is checked against the candidates
   * before the open block for the leftmost one that does not strictly beat it by pairwise
   * majority (all blocks back to that one merge), and otherwise against its left neighbour and
   * the open block (it joins the block, or opens a new one). The searches descend a segment
   * tree of per-voter score minima over σ: a node all of whose candidates are certified to beat
   * σ_j (voters whose node minimum is strictly above σ_j's score outweigh all the others) is
   * skipped, other nodes are opened down to exact pairwise margins. A cut of σ that no failing pair
   * crosses separates Condorcet components (every candidate before it strictly beats every one
   * after it), so the blocks between cuts are unions of whole components, solved independently
   * from their own k×k matrices with the full field's tie-break priority.
   *
   * Complexity: O(V·n log n) for the sort and the tree, O(V·(log n + u_j)) per position where
   * u_j counts tree nodes not certified, and Σ_blocks O(V·k log k + V·k² + solve(k)) (the k×k
   * matrix from integer score levels per voter).
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

    // Blocks of σ positions as a stack of start positions: candidate σ_j joins the open block
    // when it fails against one of its members, merges every block back to the one holding the
    // leftmost earlier candidate it fails against, and opens a new block otherwise. Every
    // failing pair (i, j) thus lies inside one block, and no cut is left out.
    const starts = this.reach;
    let top = 0;
    starts[0] = 0;
    for (let j = 1; j < n; j++) {
      const c = sigma[j]!;
      const open = starts[top]!;
      const f = open > 0 ? this.descend(1, 0, this.size - 1, 0, open - 1, c) : -1;
      if (f >= 0) {
        while (starts[top]! > f) top--;
      } else if (!(this.fails(sigma[j - 1]!, c) || (j - 2 >= open && this.descend(1, 0, this.size - 1, open, j - 2, c) >= 0))) {
        starts[++top] = j;
      }
    }
    let exact = true;
    let blockEnd = n - 1;
    for (let t = top; t >= 0; t--) {
      if (!this.solveBlock(starts[t]!, blockEnd, priority, rank)) exact = false;
      blockEnd = starts[t]! - 1;
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
      if (bound - remaining > 0) return true;
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

  /**
   * Leftmost σ position in [first, last] whose candidate fails to strictly beat c, or −1.
   * Nodes inside the range that are certified to beat c are skipped whole.
   */
  private descend(node: number, lo: number, hi: number, first: number, last: number, c: number): number {
    if (lo > last || hi < first) return -1;
    if (lo >= first && hi <= last && this.certified(node, c)) return -1;
    if (lo === hi) return this.fails(this.sigma[lo]!, c) ? lo : -1;
    const mid = (lo + hi) >> 1;
    const left = this.descend(2 * node, lo, mid, first, last, c);
    if (left >= 0) return left;
    return this.descend(2 * node + 1, mid + 1, hi, first, last, c);
  }


  /**
   * Integer levels of one voter's scores of `members` such that, for scores that are not NaN,
   * scoreGreater(x_a, x_b) ⟺ level[a] > level[b]; a NaN score (no opinion) gets {@link NO_OPINION},
   * above every level, so it is never preferred over anyone, and the caller skips its row.
   * Returns false when the voter has two different scores within the tolerance of each other
   * (then only the pairwise test is correct).
   *
   * Why levels suffice: sort the distinct scores; when every two neighbours z_i > z_{i+1}
   * satisfy scoreGreater, so does every pair x > y, because the neighbour pair at the endpoint
   * of larger magnitude already differs by more than 1e-12·max(1, |x|, |y|) and floating-point
   * subtraction is monotone. Equal scores are never strictly preferred. O(k log k).
   */
  private voterLevels(row: number, members: number[], level: Int32Array): boolean {
    const { s, byScore } = this;
    const k = members.length;
    const idx = byScore.subarray(0, k);
    let m = 0;
    for (let a = 0; a < k; a++) {
      if (Number.isNaN(s[row + members[a]!]!)) level[a] = NO_OPINION;
      else idx[m++] = a;
    }
    const sorted = idx.subarray(0, m).sort((a, b) => s[row + members[a]!]! - s[row + members[b]!]!);
    let current = 0;
    for (let i = 0; i < m; i++) {
      const a = sorted[i]!;
      if (i > 0) {
        const lo = s[row + members[sorted[i - 1]!]!]!;
        const hi = s[row + members[a]!]!;
        if (hi !== lo) {
          if (!scoreGreater(hi, lo)) return false;
          current++;
        }
      }
      level[a] = current;
    }
    return true;
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
    const level = this.level.subarray(0, k);
    for (let v = 0; v < V; v++) {
      const weight = weights[v]!;
      if (weight === 0) continue;
      const row = v * n;
      if (this.voterLevels(row, members, level)) {
        for (let a = 0; a < k; a++) {
          const la = level[a]!;
          if (la === NO_OPINION) continue;
          const base = a * k;
          for (let b = 0; b < k; b++) if (la > level[b]!) w[base + b] += weight;
        }
        continue;
      }
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
