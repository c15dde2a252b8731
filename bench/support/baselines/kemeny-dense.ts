/**
 * Speed baseline and reference of the heuristic: the previous Kemeny–Young solver, written
 * plainly (column reads, array splices, one allocation per component): Condorcet components by
 * Tarjan's algorithm, the subset DP, and the local-search heuristic. src/analytics/kemeny/ must
 * return its results bit for bit (tests/unit/analytics/rank-intervals-equivalence.test.ts) and
 * is timed against it (bench/kemeny). It shares the pairwise matrix, the score, the lower bound
 * and the tie-break with src/analytics/kemeny/; for an independent check of the optimum see
 * ../oracles/. Inputs are trusted: no argument checks.
 */
import { unsafeUniformIntDistribution, xoroshiro128plus } from 'pure-rand';
import type { RandomGenerator } from 'pure-rand';
import { kemenyLowerBound, kemenyScore, tieBreakPriority } from '../../../src/analytics/kemeny';
import type { KemenyOptions, KemenyResult, PairwiseMatrix } from '../../../src/analytics/kemeny';

const DEFAULT_EXACT_LIMIT = 22;
/**
 * The consensus of src/analytics/kemeny's kemenyFromMatrix (same options, same result): each
 * Condorcet component by the subset DP up to exactLimit, by the heuristic beyond it.
 */
export function kemenyFromMatrix(matrix: PairwiseMatrix, options: KemenyOptions = {}): KemenyResult {
  const { n, w } = matrix;
  const exactLimit = options.exactLimit ?? DEFAULT_EXACT_LIMIT;
  const priority = tieBreakPriority(n, options);
  const warmStarts = options.warmStarts ?? [];
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
