/**
 * Kemeny–Young rank aggregation (docs/scoring.md §6).
 *
 * Candidates are runs or models; voters are variables or use cases, each giving a score vector
 * over the candidates (higher is better). The consensus order minimises the total pairwise
 * disagreement with the voters. It is solved exactly by dynamic programming over subsets after a
 * Condorcet decomposition, and by a deterministic local search beyond the exact limit.
 */
import { unsafeUniformIntDistribution, xoroshiro128plus } from 'pure-rand';
import type { RandomGenerator } from 'pure-rand';
import { AnalyticsError } from './errors';
import { scoreGreater, scoreTieClasses, tieClassesAlong } from './tolerance';

/**
 * Pairwise preference matrix: `w[i * n + j]` is the (weighted) number of voters that strictly
 * prefer candidate i to candidate j. The diagonal is 0.
 */
export interface PairwiseMatrix {
  readonly n: number;
  readonly w: Float64Array;
  /** Number of voters that built the matrix. */
  readonly voterCount: number;
  /** Sum of voter weights (equals voterCount with unit weights). */
  readonly totalWeight: number;
  /** True when every entry is an integer, so totals compare exactly. */
  readonly integral: boolean;
}

export interface PairwiseOptions {
  /** Non-negative finite weight per voter (default 1 each). */
  voterWeights?: ArrayLike<number> | null;
}

/** Tie-break keys between equally optimal orders: higher macro average first, then name, then index. */
export interface KemenyTieBreak {
  /** Per-candidate macro average; higher is placed first. NaN sorts after every number. */
  macro?: ArrayLike<number> | null;
  /** Per-candidate name; compared by UTF-16 code units (locale independent). */
  names?: readonly string[] | null;
}

export interface KemenyOptions extends KemenyTieBreak {
  /**
   * Largest Condorcet component solved exactly by the subset DP (default 22, about 0.1 s, at most
   * {@link KEMENY_MAX_EXACT}). Memory is 8·2^k bytes for a component of k candidates.
   */
  exactLimit?: number;
  /** Split into Condorcet components before solving (default true; false is for testing). */
  decompose?: boolean;
  /** Iterated-local-search perturbations per heuristic component (default 200). */
  restarts?: number;
  /** Seed of the perturbation generator (default 42). */
  seed?: number;
  /** Extra start orders for the heuristic (full candidate orders, e.g. a previous result). */
  warmStarts?: readonly (readonly number[])[] | null;
  /** Cap on insertion sweeps per local search (default 1000). */
  maxSweeps?: number;
  /**
   * Tie-break priority given directly (lower first; distinct values), instead of computing it
   * from `macro` and `names`. Only the relative order of the values is used, so the priority of
   * a larger field restricted to a subset of its candidates keeps that field's tie-break.
   */
  priority?: ArrayLike<number> | null;
}

export interface KemenyResult {
  /** Candidate indices, best first. */
  order: number[];
  /** rank[c] = 1-based position of candidate c in `order`. */
  rank: number[];
  /** Total disagreement Σ_{i before j} w[j][i] of `order`. */
  score: number;
  /** Σ_{i<j} min(w_ij, w_ji): no order can score below it. */
  lowerBound: number;
  /** score − lowerBound. */
  gap: number;
  /** True when `order` is proven optimal (every Condorcet component solved by the DP). */
  exact: boolean;
  voterCount: number;
  /** Sizes of the Condorcet components, in consensus order. */
  componentSizes: number[];
}

/** Hard cap of the exact DP: 2^25 doubles is 256 MiB. */
export const KEMENY_MAX_EXACT = 25;
const DEFAULT_EXACT_LIMIT = 22;

/**
 * Builds the pairwise preference matrix of a set of voters.
 *
 * Definition: w[i][j] = Σ_v weight_v · [s_v(i) > s_v(j)], where "greater" is strict beyond the
 * relative tolerance of docs/scoring.md §6: s_v(i) − s_v(j) > 1e-12 · max(1, |s_v(i)|, |s_v(j)|)
 * ({@link scoreGreater}). A voter that scores i and j equally, or equally up to the last bits of
 * floating-point rounding, prefers neither (docs/scoring.md §6 "Ties in a voter"). A NaN score means the voter has no opinion
 * on that candidate (e.g. a variable without reference values in a bootstrap replicate): it
 * adds nothing to any pair involving the candidate, exactly like a tie.
 *
 * Source: docs/scoring.md §6; Kemeny (1959); Wikipedia "Kemeny–Young method".
 * Complexity: O(V · n²) time, O(n²) memory.
 *
 * @param scores scores[v][c] = voter v's score of candidate c (higher is better).
 * @throws AnalyticsError EMPTY_INPUT without voters or candidates; LENGTH_MISMATCH when score
 *   vectors or weights have different lengths; BAD_INPUT for a negative or non-finite weight.
 */
export function pairwiseMatrix(scores: readonly ArrayLike<number>[], options: PairwiseOptions = {}): PairwiseMatrix {
  if (scores.length === 0) throw new AnalyticsError('EMPTY_INPUT', 'pairwiseMatrix: no voters');
  const n = scores[0]!.length;
  if (n === 0) throw new AnalyticsError('EMPTY_INPUT', 'pairwiseMatrix: no candidates');
  const weights = options.voterWeights ?? null;
  if (weights !== null && weights.length !== scores.length) {
    throw new AnalyticsError(
      'LENGTH_MISMATCH',
      `pairwiseMatrix: ${weights.length} weights for ${scores.length} voters`,
    );
  }
  const w = new Float64Array(n * n);
  let totalWeight = 0;
  for (let v = 0; v < scores.length; v++) {
    const s = scores[v]!;
    if (s.length !== n) {
      throw new AnalyticsError('LENGTH_MISMATCH', `pairwiseMatrix: voter ${v} scores ${s.length} candidates, expected ${n}`);
    }
    const weight = weights === null ? 1 : weights[v]!;
    if (!Number.isFinite(weight) || weight < 0) {
      throw new AnalyticsError('BAD_INPUT', `pairwiseMatrix: voter ${v} has weight ${weight}`);
    }
    totalWeight += weight;
    if (weight === 0) continue;
    for (let i = 0; i < n; i++) {
      const si = s[i]!;
      if (Number.isNaN(si)) continue;
      const row = i * n;
      for (let j = 0; j < n; j++) {
        if (scoreGreater(si, s[j]!)) w[row + j] += weight;
      }
    }
  }
  return { n, w, voterCount: scores.length, totalWeight, integral: isIntegral(w) };
}

/**
 * Wraps an existing n×n matrix (row-major, w[i·n+j] = weight of voters preferring i to j).
 * Without the voters, `totalWeight` is taken as the largest w_ij + w_ji (it only scales the
 * equality tolerance used with fractional weights).
 *
 * Complexity: O(n²).
 * @throws AnalyticsError BAD_INPUT when the length is not n², an entry is negative or not
 *   finite, or the diagonal is not zero.
 */
export function pairwiseFromMatrix(n: number, w: ArrayLike<number>, voterCount = 0): PairwiseMatrix {
  if (!Number.isInteger(n) || n < 1) throw new AnalyticsError('EMPTY_INPUT', `pairwiseFromMatrix: n = ${n}`);
  if (w.length !== n * n) throw new AnalyticsError('BAD_INPUT', `pairwiseFromMatrix: ${w.length} entries for n = ${n}`);
  const copy = Float64Array.from(w);
  let maxPair = 0;
  for (let i = 0; i < n; i++) {
    if (copy[i * n + i] !== 0) throw new AnalyticsError('BAD_INPUT', 'pairwiseFromMatrix: non-zero diagonal');
    for (let j = 0; j < n; j++) {
      const x = copy[i * n + j]!;
      if (!Number.isFinite(x) || x < 0) throw new AnalyticsError('BAD_INPUT', `pairwiseFromMatrix: entry ${x}`);
      if (j > i) maxPair = Math.max(maxPair, x + copy[j * n + i]!);
    }
  }
  return { n, w: copy, voterCount, totalWeight: maxPair, integral: isIntegral(copy) };
}

function isIntegral(w: Float64Array): boolean {
  for (let k = 0; k < w.length; k++) if (!Number.isInteger(w[k]!)) return false;
  return true;
}

/**
 * Kemeny score (total disagreement) of an order.
 *
 * Definition: Σ over pairs (a placed before b) of w[b][a], the weight of voters that strictly
 * prefer b to a. Source: docs/scoring.md §6 objective; paper Supplementary B eq. (8).
 * Complexity: O(n²).
 * @throws AnalyticsError BAD_INPUT when `order` is not a permutation of 0..n−1.
 */
export function kemenyScore(matrix: PairwiseMatrix, order: readonly number[]): number {
  assertPermutation(order, matrix.n);
  const { n, w } = matrix;
  let score = 0;
  for (let p = 0; p < n; p++) {
    const a = order[p]!;
    for (let q = p + 1; q < n; q++) score += w[order[q]! * n + a]!;
  }
  return score;
}

/**
 * Lower bound Σ_{i<j} min(w_ij, w_ji) of the Kemeny score of any order (each pair costs at
 * least its minority weight). Complexity: O(n²).
 */
export function kemenyLowerBound(matrix: PairwiseMatrix): number {
  const { n, w } = matrix;
  let lb = 0;
  for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) lb += Math.min(w[i * n + j]!, w[j * n + i]!);
  return lb;
}

/**
 * Total tie-break priority of candidates: priority[c] = position of c when candidates are sorted
 * by macro average descending (NaN last), then name ascending (code-unit order), then index.
 * Macro averages that are the same score within the relative tolerance of docs/scoring.md §6 are
 * equal here: they fall into one tie class of {@link scoreTieClasses} (classes anchored at their
 * highest member, so the order is total and independent of the input order), and the name
 * decides between them. Among equally optimal orders the consensus is the one whose priority
 * sequence is lexicographically smallest, i.e. at the first position where two optimal orders
 * differ, the candidate with the higher macro average (then smaller name) comes first.
 *
 * Complexity: O(n log n).
 * @throws AnalyticsError LENGTH_MISMATCH when a key array does not have n entries.
 */
export function tieBreakPriority(n: number, keys: KemenyTieBreak = {}): Int32Array {
  const macro = keys.macro ?? null;
  const names = keys.names ?? null;
  if (macro !== null && macro.length !== n) {
    throw new AnalyticsError('LENGTH_MISMATCH', `tie-break: ${macro.length} macro averages for ${n} candidates`);
  }
  if (names !== null && names.length !== n) {
    throw new AnalyticsError('LENGTH_MISMATCH', `tie-break: ${names.length} names for ${n} candidates`);
  }
  const classes = macro === null ? null : scoreTieClasses(macro);
  const idx = Array.from({ length: n }, (_, i) => i);
  idx.sort((a, b) => {
    if (classes !== null && classes[a] !== classes[b]) return classes[a]! - classes[b]!;
    if (names !== null) {
      const sa = names[a]!;
      const sb = names[b]!;
      if (sa !== sb) return sa < sb ? -1 : 1;
    }
    return a - b;
  });
  const priority = new Int32Array(n);
  idx.forEach((c, p) => {
    priority[c] = p;
  });
  return priority;
}

/**
 * {@link tieBreakPriority} for many macro-average vectors over one candidate set and one name
 * list: the same priorities, computed without allocation. The candidates' order by macro
 * average (descending, NaN last, then index; the order {@link scoreTieClasses} cuts into tie
 * classes) is kept between calls and insertion-sorted from there, so macro averages close to
 * the previous call's (bootstrap replicates) cost O(n + pairs that changed order); the names
 * are ranked once. Within each tie class the candidates are then ordered by name rank.
 */
export class TieBreakPriorities {
  /** Position of each candidate by name ascending (code-unit order), then index. */
  private readonly nameRank: Int32Array;
  /** Candidates by macro average, kept between calls. */
  private readonly byMacro: Int32Array;
  private readonly tieClass: Int32Array;
  private readonly values: Float64Array;
  private readonly group: Int32Array;

  /** @throws AnalyticsError LENGTH_MISMATCH when `names` does not have n entries. */
  constructor(
    private readonly n: number,
    names: readonly string[] | null = null,
  ) {
    if (names !== null && names.length !== n) {
      throw new AnalyticsError('LENGTH_MISMATCH', `tie-break: ${names.length} names for ${n} candidates`);
    }
    const byName = Array.from({ length: n }, (_, i) => i);
    if (names !== null) {
      byName.sort((a, b) => {
        const sa = names[a]!;
        const sb = names[b]!;
        if (sa !== sb) return sa < sb ? -1 : 1;
        return a - b;
      });
    }
    this.nameRank = new Int32Array(n);
    byName.forEach((c, p) => {
      this.nameRank[c] = p;
    });
    this.byMacro = Int32Array.from({ length: n }, (_, i) => i);
    this.tieClass = new Int32Array(n);
    this.values = new Float64Array(n);
    this.group = new Int32Array(n);
  }

  /**
   * priority[c] = tieBreakPriority(n, { macro, names })[c].
   * @throws AnalyticsError LENGTH_MISMATCH when `macro` does not have n entries.
   */
  into(macro: ArrayLike<number>, priority: Int32Array): void {
    const { n, byMacro, tieClass, values, nameRank, group } = this;
    if (macro.length !== n) throw new AnalyticsError('LENGTH_MISMATCH', `tie-break: ${macro.length} macro averages for ${n} candidates`);
    for (let c = 0; c < n; c++) values[c] = macro[c]!;
    for (let i = 1; i < n; i++) {
      const c = byMacro[i]!;
      const x = values[c]!;
      let j = i - 1;
      for (; j >= 0; j--) {
        const a = byMacro[j]!;
        if (!macroBefore(x, c, values[a]!, a)) break;
        byMacro[j + 1] = a;
      }
      byMacro[j + 1] = c;
    }
    // The classes of scoreTieClasses, read along the same order.
    tieClassesAlong(values, byMacro, tieClass);
    // Classes are non-decreasing along byMacro: order each run of one class by name rank.
    let from = 0;
    while (from < n) {
      const k = tieClass[byMacro[from]!]!;
      let to = from + 1;
      while (to < n && tieClass[byMacro[to]!] === k) to++;
      for (let p = from; p < to; p++) group[p] = byMacro[p]!;
      for (let i = from + 1; i < to; i++) {
        const c = group[i]!;
        let j = i - 1;
        for (; j >= from && nameRank[group[j]!]! > nameRank[c]!; j--) group[j + 1] = group[j]!;
        group[j + 1] = c;
      }
      for (let p = from; p < to; p++) priority[group[p]!] = p;
      from = to;
    }
  }
}

/** Whether macro average x of candidate a comes before y of b: higher first, NaN last, then index. */
function macroBefore(x: number, a: number, y: number, b: number): boolean {
  if (x > y) return true;
  if (x < y) return false;
  if (x === y) return a < b;
  const nx = Number.isNaN(x);
  const ny = Number.isNaN(y);
  if (nx && ny) return a < b;
  return ny;
}

/**
 * Kemeny–Young consensus order of a pairwise matrix.
 *
 * Definition: π* = argmin_π Σ_{a before b in π} w[b][a] (docs/scoring.md §6; paper Supplementary B
 * eqs. (8)–(9)), ties between optimal orders broken by {@link tieBreakPriority}.
 *
 * Method. (1) Condorcet decomposition: the strongly connected components of the graph with an
 * edge i→j whenever j does not strictly beat i (w_ji ≤ w_ij) are totally ordered, every member
 * of an earlier component strictly beating every member of a later one; moving all of an earlier
 * component ahead of a later one strictly lowers the score, so every optimal order is a
 * concatenation of optimal orders of the components (extended Condorcet criterion, Truchon 1998).
 * (2) A component of k ≤ exactLimit candidates is solved exactly by the subset DP
 * h(T) = min_{c∈T} [Σ_{j∈T} w[j][c] + h(T∖{c})] (cost of ordering T with c first), with column
 * sums over T read from two half-width tables; the lexicographically preferred optimum is then
 * rebuilt front to back by taking, at each step, the highest-priority c that attains h(T).
 * (3) Larger components use a deterministic heuristic: Copeland, Borda, tie-break and warm
 * starts, each improved by insertion local search, then seeded iterated local search with
 * segment-reversal perturbations, and a final pass of zero-cost adjacent swaps toward the
 * tie-break order. The result then reports exact = false and the gap to the lower bound.
 *
 * With integer weights totals are compared exactly. With fractional weights, totals within
 * 1e-9·(total weight) are treated as equal, so the returned order is optimal up to that amount.
 *
 * Complexity: O(n²) decomposition; O(2^k·k) time and 8·2^k bytes per exact component of size k;
 * O(sweeps·k²) per local search for heuristic components.
 * @throws AnalyticsError OUT_OF_RANGE when exactLimit exceeds {@link KEMENY_MAX_EXACT};
 *   LENGTH_MISMATCH for tie-break keys or warm starts of the wrong length; BAD_INPUT when a
 *   warm start is not a permutation.
 */
export function kemenyFromMatrix(matrix: PairwiseMatrix, options: KemenyOptions = {}): KemenyResult {
  const { n } = matrix;
  const { order, exact, componentSizes } = kemenyOrder(matrix, options);
  const score = kemenyScore(matrix, order);
  const lowerBound = kemenyLowerBound(matrix);
  const rank = new Array<number>(n);
  order.forEach((c, p) => {
    rank[c] = p + 1;
  });
  return {
    order,
    rank,
    score,
    lowerBound,
    gap: score - lowerBound,
    exact,
    voterCount: matrix.voterCount,
    componentSizes,
  };
}

/**
 * The consensus order of {@link kemenyFromMatrix} without its score and lower bound (two O(n²)
 * passes): for callers that need only the order, such as each bootstrap replicate.
 */
export function kemenyOrder(
  matrix: PairwiseMatrix,
  options: KemenyOptions = {},
): { order: number[]; exact: boolean; componentSizes: number[] } {
  const { n, w } = matrix;
  const warmStarts = options.warmStarts ?? [];
  for (const start of warmStarts) {
    if (start.length !== n) throw new AnalyticsError('LENGTH_MISMATCH', `kemeny: warm start of length ${start.length}`);
    assertPermutation(start, n);
  }
  return solveByComponents(matrix, options, options.decompose !== false, (members, localPriority, eps) => {
    const position = new Int32Array(n).fill(-1);
    members.forEach((c, i) => {
      position[c] = i;
    });
    const starts = warmStarts.map((s) => s.filter((c) => position[c]! >= 0).map((c) => position[c]!));
    return heuristicOrder(subMatrix(w, n, members), members.length, localPriority, eps, {
      restarts: options.restarts ?? 200,
      seed: options.seed ?? 42,
      maxSweeps: options.maxSweeps ?? 1000,
      starts,
    });
  });
}

/**
 * The consensus order of a matrix solved component by component: the Condorcet components
 * (or all candidates as one, without `decompose`) in consensus order, each of at most
 * `exactLimit` candidates by the exact DP, a larger one by `large` (local indices into its
 * members, best first).
 */
function solveByComponents(
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

function checkedExactLimit(exactLimit: number): number {
  if (!Number.isInteger(exactLimit) || exactLimit < 0 || exactLimit > KEMENY_MAX_EXACT) {
    throw new AnalyticsError('OUT_OF_RANGE', `kemeny: exactLimit ${exactLimit} outside 0..${KEMENY_MAX_EXACT}`);
  }
  return exactLimit;
}

/** Solver of one component beyond the exact limit: local indices into `members`, best first. */
type LargeComponentSolver = (members: Int32Array, localPriority: Int32Array, eps: number) => ArrayLike<number>;

/**
 * The component-by-component solve of {@link solveByComponents} with scratch buffers kept
 * between calls (one per bootstrap run instead of one set per replicate). After `solve`,
 * `order` holds the consensus order and members[bounds[i] .. bounds[i + 1]) component i.
 */
class ComponentSolver {
  readonly order: Int32Array;
  private readonly members: Int32Array;
  private readonly bounds: Int32Array;
  private count = 0;
  private readonly copeland: Int32Array;
  private readonly buckets: Int32Array;
  private readonly localPriority: Int32Array;
  private readonly localOrder: Int32Array;
  private sub = new Float64Array(0);
  private readonly exactScratch = new ExactScratch();

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
        exactOrderInto(sub, k, localPriority, eps, this.exactScratch, localOrder);
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

export interface KemenyRepairOptions extends KemenyTieBreak {
  /** Largest Condorcet component solved exactly by the subset DP (default 22, at most {@link KEMENY_MAX_EXACT}). */
  exactLimit?: number;
  /**
   * Start order of all candidates, typically the full-sample consensus; each large component
   * starts from it restricted to its members. Default: each component's Copeland order.
   */
  start?: readonly number[] | null;
  /** Cap on insertion sweeps per component, counted over all rounds (default 1000). */
  maxSweeps?: number;
  /** Tie-break priority given directly, as in {@link KemenyOptions.priority}. */
  priority?: ArrayLike<number> | null;
}

/**
 * Kemeny–Young order by repair of one start order: the per-replicate solver of bootstrap rank
 * intervals, where the full-sample consensus is already close to each replicate's optimum.
 *
 * Definition. The Condorcet components of the matrix, in consensus order, as in
 * {@link kemenyOrder}; a component of k ≤ exactLimit candidates gets the exact DP's order
 * (the same as {@link kemenyOrder}'s). A larger component starts from `start` restricted to its
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
 * @throws AnalyticsError OUT_OF_RANGE when exactLimit exceeds {@link KEMENY_MAX_EXACT};
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
   *   start is not a permutation; OUT_OF_RANGE when exactLimit exceeds {@link KEMENY_MAX_EXACT}.
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

/**
 * Borda margins (Σ_j m_ij) and Copeland wins (1 per margin above eps, ½ per tie) of a k × k
 * margin matrix m_ij = w_ij − w_ji. O(k²).
 */
function bordaCopeland(m: Float64Array, k: number, eps: number): { borda: Float64Array; copeland: Float64Array } {
  const borda = new Float64Array(k);
  const copeland = new Float64Array(k);
  for (let i = 0; i < k; i++) {
    for (let j = 0; j < k; j++) {
      if (i === j) continue;
      const d = m[i * k + j]!;
      borda[i] += d;
      copeland[i] += d > eps ? 1 : d < -eps ? 0 : 0.5;
    }
  }
  return { borda, copeland };
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

/** Positions per chunk of the bounds of {@link boundedInsertionSearch}: 2^SCAN_SHIFT. */
const SCAN_SHIFT = 4;
const SCAN_CHUNK = 1 << SCAN_SHIFT;
/**
 * Tile edge of {@link marginMatrix}'s transposed reads: one chunk of
 * {@link boundedInsertionSearch}, which the chunk sums marginMatrix writes rely on.
 */
const MARGIN_TILE = SCAN_CHUNK;
/** marginMatrix copies a row's entries in blocks when the runs of consecutive members average at least this many. */
const MARGIN_BLOCK_RUN = 32;
/** Scratch of marginMatrix: where each run of consecutive members starts, then k. */
let marginRuns = new Int32Array(0);

/**
 * m[a·k + b] = w[ga][gb] − w[gb][ga] for ga = global[a], gb = global[b]: each entry the same
 * difference of the same two numbers as read pair by pair. Rows are copied first, then each pair
 * is formed tile by tile, so the transposed reads stay in cache. With `sums`, also writes the
 * chunk sums of {@link boundedInsertionSearch} for the identity order (labels in chunk c are
 * c·16 .. c·16 + 15, one tile): every margin is met once per pair there, so they cost no extra
 * pass over m. Only for integer margins (exact sums in any order).
 */
function marginMatrix(w: Float64Array, n: number, global: ArrayLike<number>, k: number, m: Float64Array, sums: boolean): void {
  // Where global[b + 1] = global[b] + 1, a row's entries are one block of w, and a block copy
  // (set) is several times faster than reading them one by one through `global`
  // (bench/RESULTS.md). In rank intervals, whose labels follow the start order, a large
  // component's members are mostly such runs. A component whose runs average fewer than
  // MARGIN_BLOCK_RUN members is read one by one.
  if (marginRuns.length < k + 1) marginRuns = new Int32Array(k + 1);
  let runs = 0;
  for (let b = 0; b < k; b++) if (b === 0 || global[b]! !== global[b - 1]! + 1) marginRuns[runs++] = b;
  marginRuns[runs] = k;
  if (runs * MARGIN_BLOCK_RUN <= k) {
    for (let a = 0; a < k; a++) {
      const row = global[a]! * n;
      const out = a * k;
      for (let r = 0; r < runs; r++) {
        const from = marginRuns[r]!;
        const start = row + global[from]!;
        m.set(w.subarray(start, start + marginRuns[r + 1]! - from), out + from);
      }
    }
  } else {
    for (let a = 0; a < k; a++) {
      const row = global[a]! * n;
      const out = a * k;
      for (let b = 0; b < k; b++) m[out + b] = w[row + global[b]!]!;
    }
  }
  const T = MARGIN_TILE;
  const nc = Math.ceil(k / T);
  if (sums) growBoundScratch(k * nc);
  // pos/neg first hold Σ|v| and Σv per row and chunk; see boundedInsertionSearch.
  const abs = boundScratch.pos;
  const sum = boundScratch.neg;
  if (sums) {
    abs.fill(0, 0, k * nc);
    sum.fill(0, 0, k * nc);
  }
  for (let a0 = 0, ca = 0; a0 < k; a0 += T, ca++) {
    const a1 = Math.min(k, a0 + T);
    for (let b0 = a0, cb = ca; b0 < k; b0 += T, cb++) {
      const b1 = Math.min(k, b0 + T);
      for (let a = a0; a < a1; a++) {
        const ra = a * k;
        let rowAbs = 0;
        let rowSum = 0;
        for (let b = b0 === a0 ? a + 1 : b0; b < b1; b++) {
          const x = m[ra + b]!;
          const y = m[b * k + a]!;
          const v = x - y;
          m[ra + b] = v;
          m[b * k + a] = y - x;
          if (sums) {
            const av = Math.abs(v);
            rowAbs += av;
            rowSum += v;
            abs[b * nc + ca] += av;
            sum[b * nc + ca] -= v;
          }
        }
        if (sums) {
          abs[a * nc + cb] += rowAbs;
          sum[a * nc + cb] += rowSum;
        }
      }
    }
  }
  if (sums) {
    for (let x = 0; x < k * nc; x++) {
      const a = abs[x]!;
      const s = sum[x]!;
      abs[x] = (a + s) / 2;
      sum[x] = (a - s) / 2;
    }
  }
  for (let a = 0; a < k; a++) m[a * k + a] -= m[a * k + a]!;
}

/**
 * Kemeny–Young consensus of voters' score vectors: {@link pairwiseMatrix} then
 * {@link kemenyFromMatrix}. See those for definition, source, complexity and errors.
 */
export function kemeny(
  scores: readonly ArrayLike<number>[],
  options: KemenyOptions & PairwiseOptions = {},
): KemenyResult {
  return kemenyFromMatrix(pairwiseMatrix(scores, options), options);
}

function givenPriority(n: number, given: ArrayLike<number>): Int32Array {
  if (given.length !== n) throw new AnalyticsError('LENGTH_MISMATCH', `kemeny: ${given.length} priorities for ${n} candidates`);
  const priority = Int32Array.from(given);
  const sorted = priority.slice().sort();
  for (let k = 0; k < n; k++) {
    if (priority[k] !== given[k] || (k > 0 && sorted[k] === sorted[k - 1])) {
      throw new AnalyticsError('BAD_INPUT', 'kemeny: priorities must be distinct integers');
    }
  }
  return priority;
}

function assertPermutation(order: readonly number[], n: number): void {
  if (order.length !== n) throw new AnalyticsError('BAD_INPUT', `order of length ${order.length}, expected ${n}`);
  const seen = new Uint8Array(n);
  for (const c of order) {
    if (!Number.isInteger(c) || c < 0 || c >= n || seen[c] === 1) {
      throw new AnalyticsError('BAD_INPUT', 'order is not a permutation of the candidates');
    }
    seen[c] = 1;
  }
}

/** Sorts candidates[from..to) by priority ascending (distinct priorities: one result). */
function sortByPriority(candidates: Int32Array, from: number, to: number, priority: ArrayLike<number>): void {
  if (to - from > 32) {
    candidates.subarray(from, to).sort((x, y) => priority[x]! - priority[y]!);
    return;
  }
  for (let i = from + 1; i < to; i++) {
    const c = candidates[i]!;
    const pc = priority[c]!;
    let j = i - 1;
    for (; j >= from && priority[candidates[j]!]! > pc; j--) candidates[j + 1] = candidates[j]!;
    candidates[j + 1] = c;
  }
}

function subMatrix(w: Float64Array, n: number, members: ArrayLike<number>): Float64Array {
  const k = members.length;
  const out = new Float64Array(k * k);
  for (let a = 0; a < k; a++) {
    const row = members[a]! * n;
    for (let b = 0; b < k; b++) out[a * k + b] = w[row + members[b]!]!;
  }
  return out;
}

/** Tables of {@link exactOrderInto}, grown on demand and reused across calls. */
class ExactScratch {
  h = new Float64Array(0);
  colLow = new Float64Array(0);
  colHigh = new Float64Array(0);
  rowLow = new Float64Array(0);
  rowHigh = new Float64Array(0);
  transpose = new Float64Array(0);
  /** winner[T]: the candidate of T that strictly beats every other member, −1 when none does. */
  winner = new Int8Array(0);
  /** loser[T]: the candidate of T that every other member strictly beats, −1 when there is none. */
  loser = new Int8Array(0);
  /** beats[c]: bit mask of the candidates that c strictly beats. */
  beats = new Int32Array(0);
  /** beatenBy[c]: bit mask of the candidates that strictly beat c. */
  beatenBy = new Int32Array(0);
}

/**
 * Exact subset DP on a k×k local matrix `a` (a[i*k+j] = weight preferring i to j), local order
 * best first into out[0..k). h[T] = min cost of ordering the set T; adding c in front of T∖{c}
 * costs colsum_T(c).
 *
 * With eps = 0 and every sum exact (integer entries, total at most 2^53), a set T with a strict
 * Condorcet winner x (a[x][c] > a[c][x] for every other c in T) gets h[T] from x alone: moving
 * x to the front of any order of T strictly lowers its cost, so every optimal order of T starts
 * with x and the minimum over c is x's term, the same number. Likewise a set with a strict
 * Condorcet loser y (beaten by every other member) gets h[T] = h[T∖{y}] + rowsum_{T∖{y}}(y):
 * every optimal order of T ends with y, and its cost is that of T∖{y} in front plus the pairs
 * y loses by coming last. Both values are the exact minimum, so h is the same array, bit for
 * bit. Winners and losers come from one pass, lowest member first (see {@link condorcetExtremes});
 * the rebuild is unchanged.
 */
function exactOrderInto(a: Float64Array, k: number, priority: Int32Array, eps: number, scratch: ExactScratch, out: Int32Array): void {
  const lowBits = k >> 1;
  const highBits = k - lowBits;
  const lowMask = (1 << lowBits) - 1;
  // colLow[L*k + c] = Σ_{j∈L} a[j][c] for subsets L of the low bits; colHigh likewise.
  if (scratch.colLow.length < (1 << lowBits) * k) scratch.colLow = new Float64Array((1 << lowBits) * k);
  if (scratch.colHigh.length < (1 << highBits) * k) scratch.colHigh = new Float64Array((1 << highBits) * k);
  const colLow = scratch.colLow;
  const colHigh = scratch.colHigh;
  columnSumTable(a, k, 0, lowBits, colLow);
  columnSumTable(a, k, lowBits, highBits, colHigh);
  const size = 1 << k;
  if (scratch.h.length < size) scratch.h = new Float64Array(size);
  const h = scratch.h;
  const extremes = eps === 0 && exactSums(a, k);
  if (extremes) {
    condorcetExtremes(a, k, scratch);
    // rowLow[L*k + c] = Σ_{j∈L} a[c][j]: the row sums of the transpose's column sums.
    if (scratch.rowLow.length < (1 << lowBits) * k) scratch.rowLow = new Float64Array((1 << lowBits) * k);
    if (scratch.rowHigh.length < (1 << highBits) * k) scratch.rowHigh = new Float64Array((1 << highBits) * k);
    if (scratch.transpose.length < k * k) scratch.transpose = new Float64Array(k * k);
    const aT = scratch.transpose;
    for (let i = 0; i < k; i++) for (let j = 0; j < k; j++) aT[j * k + i] = a[i * k + j]!;
    columnSumTable(aT, k, 0, lowBits, scratch.rowLow);
    columnSumTable(aT, k, lowBits, highBits, scratch.rowHigh);
  }
  const { winner, loser, rowLow, rowHigh } = scratch;
  h[0] = 0;
  for (let t = 1; t < size; t++) {
    const lowBase = (t & lowMask) * k;
    const highBase = (t >>> lowBits) * k;
    if (extremes) {
      const x = winner[t]!;
      if (x >= 0) {
        h[t] = h[t ^ (1 << x)]! + colLow[lowBase + x]! + colHigh[highBase + x]!;
        continue;
      }
      const y = loser[t]!;
      if (y >= 0) {
        h[t] = h[t ^ (1 << y)]! + rowLow[lowBase + y]! + rowHigh[highBase + y]!;
        continue;
      }
    }
    let best = Infinity;
    let rest = t;
    while (rest !== 0) {
      const bit = rest & -rest;
      const c = 31 - Math.clz32(bit);
      const value = h[t ^ bit]! + colLow[lowBase + c]! + colHigh[highBase + c]!;
      if (value < best) best = value;
      rest ^= bit;
    }
    h[t] = best;
  }
  let t = size - 1;
  let at = 0;
  while (t !== 0) {
    const lowBase = (t & lowMask) * k;
    const highBase = (t >>> lowBits) * k;
    const target = h[t]! + eps;
    let chosen = -1;
    let rest = t;
    while (rest !== 0) {
      const bit = rest & -rest;
      const c = 31 - Math.clz32(bit);
      const value = h[t ^ bit]! + colLow[lowBase + c]! + colHigh[highBase + c]!;
      if (value <= target && (chosen === -1 || priority[c]! < priority[chosen]!)) chosen = c;
      rest ^= bit;
    }
    out[at++] = chosen;
    t ^= 1 << chosen;
  }
}

/** Whether every entry of `a` is a non-negative integer and their total is at most 2^53 (every partial sum exact). */
function exactSums(a: Float64Array, k: number): boolean {
  let total = 0;
  for (let x = 0; x < k * k; x++) {
    const v = a[x]!;
    if (!(Number.isInteger(v) && v >= 0)) return false;
    total += v;
  }
  return total <= 2 ** 53;
}

/**
 * For every subset T of the k local candidates, into scratch: winner[T], the member that
 * strictly beats every other member, and loser[T], the member every other member strictly
 * beats, each −1 when there is none. With c the lowest member of T and R = T ∖ {c}: c wins T iff
 * it beats all of R; otherwise only R's winner can win T, iff it beats c (losers likewise).
 * O(k² + 2^k).
 */
function condorcetExtremes(a: Float64Array, k: number, scratch: ExactScratch): void {
  if (scratch.beats.length < k) {
    scratch.beats = new Int32Array(k);
    scratch.beatenBy = new Int32Array(k);
  }
  if (scratch.winner.length < 1 << k) {
    scratch.winner = new Int8Array(1 << k);
    scratch.loser = new Int8Array(1 << k);
  }
  const { beats, beatenBy, winner, loser } = scratch;
  for (let x = 0; x < k; x++) {
    let wins = 0;
    let losses = 0;
    for (let y = 0; y < k; y++) {
      if (a[x * k + y]! > a[y * k + x]!) wins |= 1 << y;
      else if (a[y * k + x]! > a[x * k + y]!) losses |= 1 << y;
    }
    beats[x] = wins;
    beatenBy[x] = losses;
  }
  winner[0] = -1;
  loser[0] = -1;
  for (let t = 1; t < 1 << k; t++) {
    const low = t & -t;
    const c = 31 - Math.clz32(low);
    const rest = t ^ low;
    if ((beats[c]! & rest) === rest) {
      winner[t] = c;
    } else {
      const x = winner[rest]!;
      winner[t] = x >= 0 && ((beats[x]! >>> c) & 1) === 1 ? x : -1;
    }
    if ((beatenBy[c]! & rest) === rest) {
      loser[t] = c;
    } else {
      const y = loser[rest]!;
      loser[t] = y >= 0 && ((beatenBy[y]! >>> c) & 1) === 1 ? y : -1;
    }
  }
}

/** table[S*k + c] = Σ_{b∈S} a[(offset+b)*k + c] for every subset S of `bits` candidates. */
function columnSumTable(a: Float64Array, k: number, offset: number, bits: number, table: Float64Array): void {
  const size = 1 << bits;
  table.fill(0, 0, k);
  for (let s = 1; s < size; s++) {
    const bit = s & -s;
    const b = 31 - Math.clz32(bit);
    const prev = (s ^ bit) * k;
    const row = (offset + b) * k;
    const base = s * k;
    for (let c = 0; c < k; c++) table[base + c] = table[prev + c]! + a[row + c]!;
  }
}

interface HeuristicSettings {
  restarts: number;
  seed: number;
  maxSweeps: number;
  starts: number[][];
}

/** Score Σ_{p<q} a[order[q]][order[p]], read along rows of the transpose aT (same summation order). */
function localScore(aT: Float64Array, k: number, order: Int32Array): number {
  let score = 0;
  for (let p = 0; p < k; p++) {
    const row = order[p]! * k;
    for (let q = p + 1; q < k; q++) score += aT[row + order[q]!]!;
  }
  return score;
}

/** True when order x precedes order y lexicographically by priority. */
function lexLess(x: Int32Array, y: Int32Array, priority: Int32Array): boolean {
  for (let p = 0; p < x.length; p++) {
    const d = priority[x[p]!]! - priority[y[p]!]!;
    if (d !== 0) return d < 0;
  }
  return false;
}

function sameOrder(x: Int32Array, y: Int32Array): boolean {
  for (let p = 0; p < x.length; p++) if (x[p] !== y[p]) return false;
  return true;
}

/**
 * Deterministic local search of one component. Works on the margin matrix
 * m[x·k + y] = a[x][y] − a[y][x] (every step reads one row, contiguous) and on Int32Array
 * orders; each margin is the same floating-point difference the plain definition forms per
 * step, summed in the same order, so the result is bit-identical to it. A start equal to an
 * earlier start, or to an earlier search's converged result (a fixed point of the search), is
 * not searched again: the search is deterministic, so it would return the same order.
 */
function heuristicOrder(a: Float64Array, k: number, priority: Int32Array, eps: number, settings: HeuristicSettings): number[] {
  const m = new Float64Array(k * k);
  const aT = new Float64Array(k * k);
  for (let i = 0; i < k; i++) {
    for (let j = 0; j < k; j++) {
      m[i * k + j] = a[i * k + j]! - a[j * k + i]!;
      aT[i * k + j] = a[j * k + i]!;
    }
  }
  const { borda, copeland } = bordaCopeland(m, k, eps);
  const ids = Array.from({ length: k }, (_, i) => i);
  const byPriority = ids.slice().sort((x, y) => priority[x]! - priority[y]!);
  const byBorda = ids.slice().sort((x, y) => borda[y]! - borda[x]! || priority[x]! - priority[y]!);
  const byCopeland = ids
    .slice()
    .sort((x, y) => copeland[y]! - copeland[x]! || borda[y]! - borda[x]! || priority[x]! - priority[y]!);

  let best: Int32Array | null = null;
  let bestScore = Infinity;
  const consider = (order: Int32Array): void => {
    const s = localScore(aT, k, order);
    if (best === null || s < bestScore - eps || (s <= bestScore + eps && lexLess(order, best, priority))) {
      best = order.slice();
      bestScore = Math.min(s, bestScore);
    }
  };
  // Searched starts: the start, its result, and whether the result is a fixed point.
  const searched: { start: Int32Array; result: Int32Array; converged: boolean }[] = [];
  for (const start of [byCopeland, byBorda, byPriority, ...settings.starts]) {
    const order = Int32Array.from(start);
    let known: Int32Array | null = null;
    for (const e of searched) {
      if (sameOrder(e.start, order) || (e.converged && sameOrder(e.result, order))) {
        known = e.result;
        break;
      }
    }
    if (known !== null) {
      consider(known);
      continue;
    }
    const converged = insertionSearch(m, k, order, eps, settings.maxSweeps) >= 0;
    searched.push({ start: Int32Array.from(start), result: order.slice(), converged });
    consider(order);
  }
  const rng: RandomGenerator = xoroshiro128plus(settings.seed);
  for (let r = 0; r < settings.restarts && k > 2; r++) {
    const order = (best as Int32Array | null)!.slice();
    // Segment reversal (as the paper's annealing move) followed by local search.
    const i = unsafeUniformIntDistribution(0, k - 2, rng);
    const j = unsafeUniformIntDistribution(i + 1, k - 1, rng);
    for (let x = i, y = j; x < y; x++, y--) {
      const tmp = order[x]!;
      order[x] = order[y]!;
      order[y] = tmp;
    }
    insertionSearch(m, k, order, eps, settings.maxSweeps);
    consider(order);
  }
  const final = (best as Int32Array | null)!;
  tiePolish(m, k, final, priority, eps);
  return Array.from(final);
}

/**
 * Insertion local search: moves each candidate to the position that lowers the score most,
 * until a sweep improves nothing (or maxSweeps). Each sweep is O(k²). Moving x from p to q < p
 * changes the score by Σ_{q ≤ r < p} (a[y_r][x] − a[x][y_r]) = −Σ m[x][y_r]; to q > p by
 * Σ_{p < r ≤ q} m[x][y_r]. Returns the number of sweeps when the last one moved nothing (a fixed
 * point), −1 when maxSweeps ran out first.
 */
function insertionSearch(m: Float64Array, k: number, order: Int32Array, eps: number, maxSweeps: number, sumsReady = false): number {
  if (eps === 0 && k >= 2 * SCAN_CHUNK) return boundedInsertionSearch(m, k, order, maxSweeps, sumsReady);
  for (let sweep = 0; sweep < maxSweeps; sweep++) {
    let improved = false;
    for (let p = 0; p < k; p++) {
      const x = order[p]!;
      const row = x * k;
      let bestDelta = -eps;
      let bestPos = -1;
      let d = 0;
      for (let q = p - 1; q >= 0; q--) {
        d -= m[row + order[q]!]!;
        if (d < bestDelta) {
          bestDelta = d;
          bestPos = q;
        }
      }
      d = 0;
      for (let q = p + 1; q < k; q++) {
        d += m[row + order[q]!]!;
        if (d < bestDelta) {
          bestDelta = d;
          bestPos = q;
        }
      }
      if (bestPos >= 0) {
        if (bestPos < p) order.copyWithin(bestPos + 1, bestPos, p);
        else order.copyWithin(p, p + 1, bestPos + 1);
        order[bestPos] = x;
        improved = true;
      }
    }
    if (!improved) return sweep + 1;
  }
  return -1;
}

/** Chunk sums of {@link boundedInsertionSearch}, grown on demand and reused across calls. */
const boundScratch = { pos: new Float64Array(0), neg: new Float64Array(0) };

function growBoundScratch(size: number): void {
  if (boundScratch.pos.length < size) {
    boundScratch.pos = new Float64Array(size);
    boundScratch.neg = new Float64Array(size);
  }
}

/**
 * {@link insertionSearch} for integer margins (exact sums), with the same moves, that stops a
 * scan once no position beyond can beat the best move found. Positions are cut into chunks of
 * {@link SCAN_CHUNK}; for every candidate x and chunk c, pos[x·nc + c] = Σ max(0, m[x][y]) and
 * neg[x·nc + c] = Σ max(0, −m[x][y]) over the candidates y in chunk c. Scanning left from p,
 * every later partial sum is at least d − (positive mass of x left of the scan), so once
 * d − Σ_{chunks left} pos ≥ bestDelta no later position can be strictly better; scanning right
 * likewise with neg. The first position attaining the strict minimum is the same, so the order
 * after every move, and the result, are the plain search's. A move shifts one candidate per
 * chunk boundary it crosses; each such shift updates the sums in O(k). Returns what
 * {@link insertionSearch} returns.
 */
function boundedInsertionSearch(m: Float64Array, k: number, order: Int32Array, maxSweeps: number, sumsReady: boolean): number {
  const C = SCAN_CHUNK;
  const nc = Math.ceil(k / C);
  if (!sumsReady) growBoundScratch(k * nc);
  const { pos, neg } = boundScratch;
  // m is antisymmetric, so m[z][y] = −m[y][z]: the column of y is read as the row of y.
  const shift = (y: number, from: number, to: number): void => {
    const row = y * k;
    for (let z = 0; z < k; z++) {
      const v = m[row + z]!;
      if (v < 0) {
        pos[z * nc + from] += v;
        pos[z * nc + to] -= v;
      } else if (v > 0) {
        neg[z * nc + from] -= v;
        neg[z * nc + to] += v;
      }
    }
  };
  // Read along rows (m[z][y] = −m[y][z]); the sums of integers are exact in any order, so
  // Σ max(0, v) = (Σ|v| + Σv) / 2 and Σ max(0, −v) = (Σ|v| − Σv) / 2 without a branch on the sign.
  for (let z = 0; z < k && !sumsReady; z++) {
    const row = z * k;
    for (let c = 0; c < nc; c++) {
      let abs = 0;
      let sum = 0;
      const end = Math.min(k, (c + 1) * C);
      for (let r = c * C; r < end; r++) {
        const v = m[row + order[r]!]!;
        abs += Math.abs(v);
        sum += v;
      }
      pos[z * nc + c] = (abs + sum) / 2;
      neg[z * nc + c] = (abs - sum) / 2;
    }
  }
  for (let sweep = 0; sweep < maxSweeps; sweep++) {
    let improved = false;
    for (let p = 0; p < k; p++) {
      const x = order[p]!;
      const row = x * k;
      const xc = x * nc;
      const cp = (p / C) | 0;
      let bestDelta = 0;
      let bestPos = -1;
      let d = 0;
      let rest = 0;
      for (let c = 0; c <= cp; c++) rest += pos[xc + c]!;
      // bound = d − (positive mass of x not yet scanned on the left, or more): a positive margin
      // scanned lowers d and that mass alike, a negative one raises d alone.
      let bound = -rest;
      for (let q = p - 1; q >= 0; q--) {
        const v = m[row + order[q]!]!;
        d -= v;
        if (d < bestDelta) {
          bestDelta = d;
          bestPos = q;
        }
        if ((q & (C - 1)) === 0) {
          rest -= pos[xc + (q >> SCAN_SHIFT)]!;
          bound = d - rest;
        } else if (v < 0) {
          bound -= v;
        }
        if (bound >= bestDelta) break;
      }
      d = 0;
      rest = 0;
      for (let c = cp; c < nc; c++) rest += neg[xc + c]!;
      bound = -rest;
      for (let q = p + 1; q < k; q++) {
        const v = m[row + order[q]!]!;
        d += v;
        if (d < bestDelta) {
          bestDelta = d;
          bestPos = q;
        }
        if (((q + 1) & (C - 1)) === 0) {
          rest -= neg[xc + ((q + 1) >> SCAN_SHIFT) - 1]!;
          bound = d - rest;
        } else if (v > 0) {
          bound += v;
        }
        if (bound >= bestDelta) break;
      }
      if (bestPos >= 0) {
        if (bestPos < p) {
          for (let r = bestPos; r < p; r++) if ((r + 1) % C === 0) shift(order[r]!, (r + 1) / C - 1, (r + 1) / C);
          order.copyWithin(bestPos + 1, bestPos, p);
        } else {
          for (let r = p + 1; r <= bestPos; r++) if (r % C === 0) shift(order[r]!, r / C, r / C - 1);
          order.copyWithin(p, p + 1, bestPos + 1);
        }
        const to = (bestPos / C) | 0;
        if (to !== cp) shift(x, cp, to);
        order[bestPos] = x;
        improved = true;
      }
    }
    if (!improved) return sweep + 1;
  }
  return -1;
}

/** Zero-cost adjacent swaps toward the tie-break order; terminates as priority inversions drop. */
function tiePolish(m: Float64Array, k: number, order: Int32Array, priority: Int32Array, eps: number): boolean {
  let any = false;
  let changed = true;
  while (changed) {
    changed = false;
    for (let p = 0; p + 1 < k; p++) {
      const x = order[p]!;
      const y = order[p + 1]!;
      if (priority[y]! < priority[x]! && Math.abs(m[y * k + x]!) <= eps) {
        order[p] = y;
        order[p + 1] = x;
        changed = true;
        any = true;
      }
    }
  }
  return any;
}
