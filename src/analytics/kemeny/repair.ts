/** Kemeny–Young by repair of a start order: the per-replicate solver of bootstrap rank intervals. */
import { AnalyticsError } from '../errors';
import { ComponentSolver } from './components';
import type { LargeComponentSolver } from './components';
import { insertionSearch, SCAN_CHUNK, tiePolish } from './insertion-search';
import { bordaCopeland, marginMatrix } from './margins';
import { checkedExactLimit, DEFAULT_EXACT_LIMIT } from './options';
import type { KemenyRepairOptions } from './options';
import type { PairwiseMatrix } from './pairwise';
import { assertPermutation } from './score';
import { givenPriority, tieBreakPriority } from './tie-break';

/**
 * Kemeny–Young order by repair of one start order: the per-replicate solver of bootstrap rank
 * intervals, where the full-sample consensus is already close to each replicate's optimum.
 *
 * Definition. The Condorcet components of the matrix, in consensus order, as in
 * kemenyOrder (consensus.ts); a component of k ≤ exactLimit candidates gets the exact DP's order
 * (the same as kemenyOrder's). A larger component starts from `start` restricted to its
 * members (without `start`: Copeland wins descending, then Borda margin descending, then
 * tie-break priority) and is repaired by rounds of
 *  (a) insertion sweeps until a sweep moves nothing: each position p in turn, its candidate x
 *      moves to the position q that lowers the score most, by more than the comparison
 *      tolerance (0 with integer weights), the first such q scanning from p − 1 down to 0 and
 *      then from p + 1 up; and
 *  (b) adjacent swaps of pairs with equal pairwise weights (margin within the tolerance) whose
 *      later member has the higher tie-break priority, until none is left;
 * until a round's (b) changes nothing, or `maxSweeps` insertion sweeps in all have run (then
 * (b) once more). The result is then a local optimum: no single insertion of one candidate
 * elsewhere lowers the score (across components neither: each earlier component strictly beats
 * each later one), and no adjacent tie stands against the tie-break. Its score is at most that
 * of `start` (moves only lower it, swaps of equal pairs keep it, and the Condorcet ordering of
 * components does not raise it). It is not always the optimum; `exact` says whether every
 * component was solved by the DP.
 *
 * The result depends only on the matrix, the tie-break and the options: it is a deterministic
 * function of them.
 *
 * Complexity: O(n²) decomposition; O(2^k·k) per exact component; per repaired component O(k²)
 * to set up plus O(k²) per sweep at worst, usually O(k · distance moved) with integer weights
 * (scans stop once no farther position can be better); a start close to a local optimum needs
 * few sweeps.
 * @throws AnalyticsError OUT_OF_RANGE when exactLimit exceeds KEMENY_MAX_EXACT (options.ts);
 *   LENGTH_MISMATCH for tie-break keys or a start of the wrong length; BAD_INPUT when the start
 *   is not a permutation.
 */
export function kemenyRepairOrder(
  matrix: PairwiseMatrix,
  options: KemenyRepairOptions = {},
): { order: number[]; exact: boolean; componentSizes: number[] } {
  const { n } = matrix;
  const solver = new KemenyRepairSolver(n, options);
  const priority = options.priority == null ? tieBreakPriority(n, options) : givenPriority(n, options.priority);
  const exact = solver.solve(matrix, priority);
  return { order: Array.from(solver.order), exact, componentSizes: solver.componentSizes() };
}

/**
 * {@link kemenyRepairOrder} for many matrices of n candidates with one start, exact limit and
 * sweep cap, checked once: the per-replicate solver of bootstrap rank intervals. Scratch
 * buffers are kept between calls; each call's result is kemenyRepairOrder's for that matrix
 * and priority.
 */
export class KemenyRepairSolver {
  private readonly components: ComponentSolver;
  private readonly startPosition: Int32Array | null;
  private readonly exactLimit: number;
  private readonly maxSweeps: number;
  private w: Float64Array = new Float64Array(0);
  private readonly repair: LargeComponentSolver;
  private readonly repairScratch = new RepairScratch();

  /**
   * @throws AnalyticsError LENGTH_MISMATCH for a start of the wrong length; BAD_INPUT when the
   *   start is not a permutation; OUT_OF_RANGE when exactLimit exceeds KEMENY_MAX_EXACT
   *   (options.ts).
   */
  constructor(
    private readonly n: number,
    options: { exactLimit?: number; start?: readonly number[] | null; maxSweeps?: number } = {},
  ) {
    const start = options.start ?? null;
    let startPosition: Int32Array | null = null;
    if (start !== null) {
      if (start.length !== n) throw new AnalyticsError('LENGTH_MISMATCH', `kemeny: start of length ${start.length}`);
      assertPermutation(start, n);
      startPosition = new Int32Array(n);
      for (let p = 0; p < n; p++) startPosition[start[p]!] = p;
    }
    this.startPosition = startPosition;
    this.exactLimit = checkedExactLimit(options.exactLimit ?? DEFAULT_EXACT_LIMIT);
    this.maxSweeps = options.maxSweeps ?? 1000;
    this.components = new ComponentSolver(n);
    this.repair = (members, localPriority, eps) =>
      repairComponent(this.w, this.n, members, this.startPosition, localPriority, eps, this.maxSweeps, this.repairScratch);
  }

  /** Consensus order of the candidates, best first, of the last {@link solve}. */
  get order(): Int32Array {
    return this.components.order;
  }

  /**
   * Repairs `matrix` (n candidates) with tie-break `priority` (lower first, distinct, not
   * checked) into {@link order}; returns whether every component was solved exactly.
   */
  solve(matrix: PairwiseMatrix, priority: ArrayLike<number>): boolean {
    if (matrix.n !== this.n) throw new AnalyticsError('LENGTH_MISMATCH', `kemeny: matrix of ${matrix.n} candidates for ${this.n}`);
    this.w = matrix.w;
    return this.components.solve(matrix, priority, true, this.exactLimit, this.repair);
  }

  /** Sizes of the Condorcet components of the last {@link solve}, in consensus order. */
  componentSizes(): number[] {
    return this.components.componentSizes();
  }
}

/** Scratch of {@link repairComponent}, grown on demand and reused across calls. */
class RepairScratch {
  m = new Float64Array(0);
  keys = new Int32Array(0);
  slot = new Int32Array(0);
  global = new Int32Array(0);
}

/** The repair of {@link kemenyRepairOrder} on one component; returns local indices into `members`. */
function repairComponent(
  w: Float64Array,
  n: number,
  members: ArrayLike<number>,
  startPosition: Int32Array | null,
  priority: Int32Array,
  eps: number,
  maxSweeps: number,
  scratch: RepairScratch,
): Int32Array {
  const k = members.length;
  if (scratch.m.length < k * k) scratch.m = new Float64Array(k * k);
  const m = scratch.m;
  let order: Int32Array;
  // With a start, the search runs on labels in start order (label i: the member i-th in the
  // start, so the start is the identity and its matrix rows are read in sequence) and the
  // result is mapped back. The search reads labels only through m and the priorities, both
  // relabelled alike, so it makes the same moves.
  let startLocal: Int32Array | null = null;
  let searchPriority = priority;
  // Whether marginMatrix left the chunk sums of the start order for the first search.
  let sumsReady = false;
  if (startPosition !== null) {
    // Start positions are distinct: sort them as numbers and map each back to its member.
    if (scratch.keys.length < k) scratch.keys = new Int32Array(k);
    if (scratch.slot.length < n) scratch.slot = new Int32Array(n);
    const { slot } = scratch;
    const keys = scratch.keys.subarray(0, k);
    for (let x = 0; x < k; x++) {
      const at = startPosition[members[x]!]!;
      keys[x] = at;
      slot[at] = x;
    }
    keys.sort();
    startLocal = new Int32Array(k);
    for (let i = 0; i < k; i++) startLocal[i] = slot[keys[i]!]!;
    if (scratch.global.length < k) scratch.global = new Int32Array(k);
    const global = scratch.global;
    for (let i = 0; i < k; i++) global[i] = members[startLocal[i]!]!;
    sumsReady = eps === 0 && k >= 2 * SCAN_CHUNK;
    marginMatrix(w, n, global, k, m, sumsReady);
    searchPriority = new Int32Array(k);
    for (let i = 0; i < k; i++) searchPriority[i] = priority[startLocal[i]!]!;
    order = new Int32Array(k);
    for (let i = 0; i < k; i++) order[i] = i;
  } else {
    marginMatrix(w, n, members, k, m, false);
    const { borda, copeland } = bordaCopeland(m, k, eps);
    const ids = Array.from({ length: k }, (_, i) => i);
    ids.sort((x, y) => copeland[y]! - copeland[x]! || borda[y]! - borda[x]! || priority[x]! - priority[y]!);
    order = Int32Array.from(ids);
  }
  let budget = maxSweeps;
  for (;;) {
    const used = insertionSearch(m, k, order, eps, budget, sumsReady);
    sumsReady = false;
    if (used < 0) {
      tiePolish(m, k, order, searchPriority, eps);
      break;
    }
    budget -= used;
    if (!tiePolish(m, k, order, searchPriority, eps)) break;
    if (budget === 0) break;
  }
  if (startLocal !== null) for (let p = 0; p < k; p++) order[p] = startLocal[order[p]!]!;
  return order;
}
