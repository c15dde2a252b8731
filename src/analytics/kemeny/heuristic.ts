/** The deterministic heuristic of a component beyond the exact limit: starts, local search, restarts. */
import { unsafeUniformIntDistribution, xoroshiro128plus } from 'pure-rand';
import type { RandomGenerator } from 'pure-rand';
import { insertionSearch, tiePolish } from './insertion-search';
import { bordaCopeland } from './margins';

export function subMatrix(w: Float64Array, n: number, members: ArrayLike<number>): Float64Array {
  const k = members.length;
  const out = new Float64Array(k * k);
  for (let a = 0; a < k; a++) {
    const row = members[a]! * n;
    for (let b = 0; b < k; b++) out[a * k + b] = w[row + members[b]!]!;
  }
  return out;
}

export interface HeuristicSettings {
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
export function heuristicOrder(a: Float64Array, k: number, priority: Int32Array, eps: number, settings: HeuristicSettings): number[] {
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
