/**
 * Test oracle: the straightforward Kemeny–Young solver (docs/scoring.md §6) — full pairwise matrix,
 * Condorcet decomposition, subset DP, and the local-search heuristic written plainly (column
 * reads, array splices). The optimised src/analytics/kemeny.ts must return the same results.
 *
 *
 * Candidates are runs or models; voters are variables or use cases, each giving a score vector
 * over the candidates (higher is better). The consensus order minimises the total pairwise
 * disagreement with the voters. It is solved exactly by dynamic programming over subsets after a
 * Condorcet decomposition, and by a deterministic local search beyond the exact limit.
 */
import { unsafeUniformIntDistribution, xoroshiro128plus } from 'pure-rand';
import type { RandomGenerator } from 'pure-rand';
import { AnalyticsError } from '../../../src/analytics/errors';
import { scoreGreater, scoreTieClasses } from '../../../src/analytics/tolerance';

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
  const { n, w } = matrix;
  const exactLimit = options.exactLimit ?? DEFAULT_EXACT_LIMIT;
  if (!Number.isInteger(exactLimit) || exactLimit < 0 || exactLimit > KEMENY_MAX_EXACT) {
    throw new AnalyticsError('OUT_OF_RANGE', `kemeny: exactLimit ${exactLimit} outside 0..${KEMENY_MAX_EXACT}`);
  }
  const priority = tieBreakPriority(n, options);
  const warmStarts = options.warmStarts ?? [];
  for (const start of warmStarts) {
    if (start.length !== n) throw new AnalyticsError('LENGTH_MISMATCH', `kemeny: warm start of length ${start.length}`);
    assertPermutation(start, n);
  }
  const eps = matrix.integral ? 0 : 1e-9 * Math.max(1, matrix.totalWeight);
  const components = options.decompose === false ? [allCandidates(n, priority)] : condorcetComponents(matrix, eps, priority);

  const order: number[] = [];
  let exact = true;
  for (const members of components) {
    const k = members.length;
    if (k === 1) {
      order.push(members[0]!);
      continue;
    }
    const local = subMatrix(w, n, members);
    const localPriority = Int32Array.from(members, (c) => priority[c]!);
    let localOrder: number[];
    if (k <= exactLimit) {
      localOrder = exactOrder(local, k, localPriority, eps);
    } else {
      exact = false;
      const position = new Int32Array(n).fill(-1);
      members.forEach((c, i) => {
        position[c] = i;
      });
      const starts = warmStarts.map((s) => s.filter((c) => position[c]! >= 0).map((c) => position[c]!));
      localOrder = heuristicOrder(local, k, localPriority, eps, {
        restarts: options.restarts ?? 200,
        seed: options.seed ?? 42,
        maxSweeps: options.maxSweeps ?? 1000,
        starts,
      });
    }
    for (const i of localOrder) order.push(members[i]!);
  }
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
    componentSizes: components.map((c) => c.length),
  };
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

function allCandidates(n: number, priority: Int32Array): number[] {
  return Array.from({ length: n }, (_, i) => i).sort((a, b) => priority[a]! - priority[b]!);
}

function subMatrix(w: Float64Array, n: number, members: readonly number[]): Float64Array {
  const k = members.length;
  const out = new Float64Array(k * k);
  for (let a = 0; a < k; a++) {
    const row = members[a]! * n;
    for (let b = 0; b < k; b++) out[a * k + b] = w[row + members[b]!]!;
  }
  return out;
}

/**
 * Strongly connected components of "j does not strictly beat i" (edge i→j when
 * w_ji − w_ij ≤ eps), returned in consensus order, members sorted by priority.
 */
function condorcetComponents(matrix: PairwiseMatrix, eps: number, priority: Int32Array): number[][] {
  const { n, w } = matrix;
  const edge = (i: number, j: number): boolean => i !== j && w[j * n + i]! - w[i * n + j]! <= eps;
  // Iterative Tarjan: n is small (hundreds at most) but recursion depth could still reach n.
  const index = new Int32Array(n).fill(-1);
  const low = new Int32Array(n);
  const onStack = new Uint8Array(n);
  const stack: number[] = [];
  const comps: number[][] = [];
  let counter = 0;
  for (let root = 0; root < n; root++) {
    if (index[root] !== -1) continue;
    const work: Array<[number, number]> = [[root, 0]];
    index[root] = low[root] = counter++;
    stack.push(root);
    onStack[root] = 1;
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const v = frame[0];
      let j = frame[1];
      let descended = false;
      while (j < n) {
        if (edge(v, j)) {
          if (index[j] === -1) {
            frame[1] = j + 1;
            index[j] = low[j] = counter++;
            stack.push(j);
            onStack[j] = 1;
            work.push([j, 0]);
            descended = true;
            break;
          } else if (onStack[j] === 1) {
            low[v] = Math.min(low[v]!, index[j]!);
          }
        }
        j++;
      }
      if (descended) continue;
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1]![0];
        low[parent] = Math.min(low[parent]!, low[v]!);
      }
      if (low[v] === index[v]) {
        const comp: number[] = [];
        let x: number;
        do {
          x = stack.pop()!;
          onStack[x] = 0;
          comp.push(x);
        } while (x !== v);
        comps.push(comp);
      }
    }
  }
  // Between components every pair is a strict win one way, so the condensation is a transitive
  // tournament: sorting by the number of components beaten gives the consensus order.
  const compOf = new Int32Array(n);
  comps.forEach((comp, k) => comp.forEach((c) => (compOf[c] = k)));
  const beaten = comps.map((comp) => {
    const rep = comp[0]!;
    let count = 0;
    for (let k = 0; k < comps.length; k++) {
      if (k !== compOf[rep] && w[rep * n + comps[k]![0]!]! - w[comps[k]![0]! * n + rep]! > eps) count++;
    }
    return count;
  });
  const orderIdx = comps.map((_, k) => k).sort((a, b) => beaten[b]! - beaten[a]!);
  return orderIdx.map((k) => comps[k]!.slice().sort((a, b) => priority[a]! - priority[b]!));
}

/**
 * Exact subset DP on a k×k local matrix `a` (a[i*k+j] = weight preferring i to j).
 * h[T] = min cost of ordering the set T; adding c in front of T∖{c} costs colsum_T(c).
 */
function exactOrder(a: Float64Array, k: number, priority: Int32Array, eps: number): number[] {
  const lowBits = k >> 1;
  const highBits = k - lowBits;
  const lowMask = (1 << lowBits) - 1;
  // colLow[L*k + c] = Σ_{j∈L} a[j][c] for subsets L of the low bits; colHigh likewise.
  const colLow = columnSumTable(a, k, 0, lowBits);
  const colHigh = columnSumTable(a, k, lowBits, highBits);
  const size = 1 << k;
  const h = new Float64Array(size);
  for (let t = 1; t < size; t++) {
    const lowBase = (t & lowMask) * k;
    const highBase = (t >>> lowBits) * k;
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
  const order: number[] = [];
  let t = size - 1;
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
    order.push(chosen);
    t ^= 1 << chosen;
  }
  return order;
}

/** table[S*k + c] = Σ_{b∈S} a[(offset+b)*k + c] for every subset S of `bits` candidates. */
function columnSumTable(a: Float64Array, k: number, offset: number, bits: number): Float64Array {
  const size = 1 << bits;
  const table = new Float64Array(size * k);
  for (let s = 1; s < size; s++) {
    const bit = s & -s;
    const b = 31 - Math.clz32(bit);
    const prev = (s ^ bit) * k;
    const row = (offset + b) * k;
    const base = s * k;
    for (let c = 0; c < k; c++) table[base + c] = table[prev + c]! + a[row + c]!;
  }
  return table;
}

interface HeuristicSettings {
  restarts: number;
  seed: number;
  maxSweeps: number;
  starts: number[][];
}

function localScore(a: Float64Array, k: number, order: readonly number[]): number {
  let score = 0;
  for (let p = 0; p < k; p++) {
    const x = order[p]!;
    for (let q = p + 1; q < k; q++) score += a[order[q]! * k + x]!;
  }
  return score;
}

/** True when order x precedes order y lexicographically by priority. */
function lexLess(x: readonly number[], y: readonly number[], priority: Int32Array): boolean {
  for (let p = 0; p < x.length; p++) {
    const d = priority[x[p]!]! - priority[y[p]!]!;
    if (d !== 0) return d < 0;
  }
  return false;
}

function heuristicOrder(a: Float64Array, k: number, priority: Int32Array, eps: number, settings: HeuristicSettings): number[] {
  const borda = new Float64Array(k);
  const copeland = new Float64Array(k);
  for (let i = 0; i < k; i++) {
    for (let j = 0; j < k; j++) {
      if (i === j) continue;
      const d = a[i * k + j]! - a[j * k + i]!;
      borda[i] += d;
      copeland[i] += d > eps ? 1 : d < -eps ? 0 : 0.5;
    }
  }
  const ids = Array.from({ length: k }, (_, i) => i);
  const byPriority = ids.slice().sort((x, y) => priority[x]! - priority[y]!);
  const byBorda = ids.slice().sort((x, y) => borda[y]! - borda[x]! || priority[x]! - priority[y]!);
  const byCopeland = ids
    .slice()
    .sort((x, y) => copeland[y]! - copeland[x]! || borda[y]! - borda[x]! || priority[x]! - priority[y]!);

  let best: number[] | null = null;
  let bestScore = Infinity;
  const consider = (order: number[]): void => {
    const s = localScore(a, k, order);
    if (best === null || s < bestScore - eps || (s <= bestScore + eps && lexLess(order, best, priority))) {
      best = order.slice();
      bestScore = Math.min(s, bestScore);
    }
  };
  for (const start of [byCopeland, byBorda, byPriority, ...settings.starts]) {
    const order = start.slice();
    insertionSearch(a, k, order, eps, settings.maxSweeps);
    consider(order);
  }
  const rng: RandomGenerator = xoroshiro128plus(settings.seed);
  for (let r = 0; r < settings.restarts && k > 2; r++) {
    const order = best!.slice();
    // Segment reversal (as the paper's annealing move) followed by local search.
    const i = unsafeUniformIntDistribution(0, k - 2, rng);
    const j = unsafeUniformIntDistribution(i + 1, k - 1, rng);
    for (let x = i, y = j; x < y; x++, y--) {
      const tmp = order[x]!;
      order[x] = order[y]!;
      order[y] = tmp;
    }
    insertionSearch(a, k, order, eps, settings.maxSweeps);
    consider(order);
  }
  const final = (best as number[] | null)!;
  tiePolish(a, k, final, priority, eps);
  return final;
}

/**
 * Insertion local search: moves each candidate to the position that lowers the score most,
 * until a sweep improves nothing (or maxSweeps). Each sweep is O(k²).
 */
function insertionSearch(a: Float64Array, k: number, order: number[], eps: number, maxSweeps: number): void {
  for (let sweep = 0; sweep < maxSweeps; sweep++) {
    let improved = false;
    for (let p = 0; p < k; p++) {
      const x = order[p]!;
      let bestDelta = -eps;
      let bestPos = -1;
      let d = 0;
      for (let q = p - 1; q >= 0; q--) {
        const y = order[q]!;
        d += a[y * k + x]! - a[x * k + y]!;
        if (d < bestDelta) {
          bestDelta = d;
          bestPos = q;
        }
      }
      d = 0;
      for (let q = p + 1; q < k; q++) {
        const y = order[q]!;
        d += a[x * k + y]! - a[y * k + x]!;
        if (d < bestDelta) {
          bestDelta = d;
          bestPos = q;
        }
      }
      if (bestPos >= 0) {
        order.splice(p, 1);
        order.splice(bestPos, 0, x);
        improved = true;
      }
    }
    if (!improved) return;
  }
}

/** Zero-cost adjacent swaps toward the tie-break order; terminates as priority inversions drop. */
function tiePolish(a: Float64Array, k: number, order: number[], priority: Int32Array, eps: number): void {
  let changed = true;
  while (changed) {
    changed = false;
    for (let p = 0; p + 1 < k; p++) {
      const x = order[p]!;
      const y = order[p + 1]!;
      if (priority[y]! < priority[x]! && Math.abs(a[y * k + x]! - a[x * k + y]!) <= eps) {
        order[p] = y;
        order[p + 1] = x;
        changed = true;
      }
    }
  }
}
