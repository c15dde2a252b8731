/** Condorcet decomposition, and the solve of a matrix component by component. */
import type { PairwiseMatrix } from './pairwise';
import { checkedExactLimit, DEFAULT_EXACT_LIMIT } from './options';
import { exactOrderInto, KEEP_EXACT_SUBSETS, sharedExactScratch } from './exact';
import { MARGIN_TILE } from './margins';
import { givenPriority, sortByPriority, tieBreakPriority } from './tie-break';
import type { KemenyTieBreak } from './tie-break';

/**
 * The consensus order of a matrix solved component by component: the Condorcet components
 * (or all candidates as one, without `decompose`) in consensus order, each of at most
 * `exactLimit` candidates by the exact DP, a larger one by `large` (local indices into its
 * members, best first).
 */
export function solveByComponents(
  matrix: PairwiseMatrix,
  options: KemenyTieBreak & { exactLimit?: number; priority?: ArrayLike<number> | null },
  decompose: boolean,
  large: LargeComponentSolver,
): { order: number[]; exact: boolean; componentSizes: number[] } {
  const { n } = matrix;
  const exactLimit = checkedExactLimit(options.exactLimit ?? DEFAULT_EXACT_LIMIT);
  const priority = options.priority == null ? tieBreakPriority(n, options) : givenPriority(n, options.priority);
  const solver = new ComponentSolver(n);
  const exact = solver.solve(matrix, priority, decompose, exactLimit, large);
  return { order: Array.from(solver.order), exact, componentSizes: solver.componentSizes() };
}

/** Solver of one component beyond the exact limit: local indices into `members`, best first. */
export type LargeComponentSolver = (members: Int32Array, localPriority: Int32Array, eps: number) => ArrayLike<number>;

/**
 * The component-by-component solve of {@link solveByComponents} with scratch buffers kept
 * between calls (one per bootstrap run instead of one set per replicate). After `solve`,
 * `order` holds the consensus order and members[bounds[i] .. bounds[i + 1]) component i.
 */
export class ComponentSolver {
  readonly order: Int32Array;
  private readonly members: Int32Array;
  private readonly bounds: Int32Array;
  private count = 0;
  private readonly copeland: Int32Array;
  private readonly buckets: Int32Array;
  private readonly localPriority: Int32Array;
  private readonly localOrder: Int32Array;
  private sub = new Float64Array(0);

  constructor(n: number) {
    this.order = new Int32Array(n);
    this.members = new Int32Array(n);
    this.bounds = new Int32Array(n + 1);
    this.copeland = new Int32Array(n);
    this.buckets = new Int32Array(2 * n);
    this.localPriority = new Int32Array(n);
    this.localOrder = new Int32Array(n);
  }

  /** Consensus order of `matrix` (n candidates) into `order`; returns whether every component was solved exactly. */
  solve(matrix: PairwiseMatrix, priority: ArrayLike<number>, decompose: boolean, exactLimit: number, large: LargeComponentSolver): boolean {
    const { n, w } = matrix;
    const eps = matrix.integral ? 0 : 1e-9 * Math.max(1, matrix.totalWeight);
    const { members, bounds, order, localPriority, localOrder } = this;
    if (decompose) {
      this.decompose(w, n, eps, priority);
    } else {
      for (let i = 0; i < n; i++) members[i] = i;
      sortByPriority(members, 0, n, priority);
      bounds[0] = 0;
      bounds[1] = n;
      this.count = 1;
    }
    let exact = true;
    let at = 0;
    for (let comp = 0; comp < this.count; comp++) {
      const from = bounds[comp]!;
      const k = bounds[comp + 1]! - from;
      if (k === 1) {
        order[at++] = members[from]!;
        continue;
      }
      for (let i = 0; i < k; i++) localPriority[i] = priority[members[from + i]!]!;
      if (k <= exactLimit) {
        if (this.sub.length < k * k) this.sub = new Float64Array(exactLimit * exactLimit);
        const sub = this.sub;
        for (let a = 0; a < k; a++) {
          const row = members[from + a]! * n;
          for (let b = 0; b < k; b++) sub[a * k + b] = w[row + members[from + b]!]!;
        }
        exactOrderInto(sub, k, localPriority, eps, sharedExactScratch, localOrder);
        sharedExactScratch.trim(KEEP_EXACT_SUBSETS);
        for (let i = 0; i < k; i++) order[at++] = members[from + localOrder[i]!]!;
      } else {
        exact = false;
        const local = large(members.subarray(from, from + k), localPriority.slice(0, k), eps);
        for (let i = 0; i < k; i++) order[at++] = members[from + local[i]!]!;
      }
    }
    return exact;
  }

  /** Sizes of the last solve's components, in consensus order. */
  componentSizes(): number[] {
    const sizes: number[] = [];
    for (let comp = 0; comp < this.count; comp++) sizes.push(this.bounds[comp + 1]! - this.bounds[comp]!);
    return sizes;
  }

  /**
   * Strongly connected components of "j does not strictly beat i" (edge i→j when
   * w_ji − w_ij ≤ eps) into members/bounds, in consensus order, members sorted by priority.
   *
   * Method: with c(i) = #{j: i strictly beats j} − #{j: j strictly beats i} (Copeland), every
   * member of an earlier component has a larger c than every member of a later one (it beats all
   * later candidates; within its component it loses at most k₁ − 1 pairs, while the later one
   * wins at most k₂ − 1 within its own and loses to all k₁ before: the difference is at least 2).
   * So the components are contiguous in the order by c (then index; a counting sort, c lies in
   * −(n−1)..n−1), and a prefix T of p candidates is a union of leading components iff each of
   * them strictly beats each of the n − p others, i.e. iff Σ_{i∈T} c(i) = p(n − p) (the sum is
   * the strict wins of T over the others minus the others' wins over T, at most p(n − p) and 0
   * respectively). O(n²) reads, one pass over the pairs.
   */
  private decompose(w: Float64Array, n: number, eps: number, priority: ArrayLike<number>): void {
    const { copeland, buckets, members, bounds } = this;
    copeland.fill(0);
    // Pairs tile by tile, so the transposed reads w[j][i] stay in cache; the counts are
    // integers, the same in any order.
    const T = MARGIN_TILE;
    for (let i0 = 0; i0 < n; i0 += T) {
      const i1 = Math.min(n, i0 + T);
      for (let j0 = i0; j0 < n; j0 += T) {
        const j1 = Math.min(n, j0 + T);
        for (let i = i0; i < i1; i++) {
          const row = i * n;
          let wins = 0;
          for (let j = j0 === i0 ? i + 1 : j0; j < j1; j++) {
            const d = w[row + j]! - w[j * n + i]!;
            // +1, −1 or 0 without a branch on the sign (an unpredictable one).
            const s = Number(d > eps) - Number(-d > eps);
            wins += s;
            copeland[j] -= s;
          }
          copeland[i] += wins;
        }
      }
    }
    // Bucket n − 1 − c(i): Copeland descending, then index ascending.
    buckets.fill(0);
    for (let i = 0; i < n; i++) buckets[n - 1 - copeland[i]! + 1]++;
    for (let key = 1; key < 2 * n; key++) buckets[key] += buckets[key - 1]!;
    for (let i = 0; i < n; i++) members[buckets[n - 1 - copeland[i]!]!++] = i;
    let count = 0;
    let start = 0;
    let sum = 0;
    bounds[0] = 0;
    for (let p = 0; p < n; p++) {
      sum += copeland[members[p]!]!;
      if (sum === (p + 1) * (n - p - 1)) {
        sortByPriority(members, start, p + 1, priority);
        start = p + 1;
        bounds[++count] = start;
      }
    }
    this.count = count;
  }
}
