/** Insertion local search and the tie polish shared by the heuristic and the repair. */

/** Positions per chunk of the bounds of {@link boundedInsertionSearch}: 2^SCAN_SHIFT. */
export const SCAN_SHIFT = 4;
export const SCAN_CHUNK = 1 << SCAN_SHIFT;

/**
 * Insertion local search: moves each candidate to the position that lowers the score most,
 * until a sweep improves nothing (or maxSweeps). Each sweep is O(k²). Moving x from p to q < p
 * changes the score by Σ_{q ≤ r < p} (a[y_r][x] − a[x][y_r]) = −Σ m[x][y_r]; to q > p by
 * Σ_{p < r ≤ q} m[x][y_r]. Returns the number of sweeps when the last one moved nothing (a fixed
 * point), −1 when maxSweeps ran out first.
 */
export function insertionSearch(m: Float64Array, k: number, order: Int32Array, eps: number, maxSweeps: number, sumsReady = false): number {
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

/**
 * Chunk sums of {@link boundedInsertionSearch}, grown on demand and reused across calls.
 * Shared by every solver of this thread and not reentrant: between marginMatrix writing them
 * (`sums`) and the search that reads them (`sumsReady`) nothing else may run a bounded search
 * or a marginMatrix with sums. The solvers are synchronous and call neither from a callback,
 * which keeps that true; each worker thread has its own copy of the module.
 */
export const boundScratch = { pos: new Float64Array(0), neg: new Float64Array(0) };

export function growBoundScratch(size: number): void {
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
export function tiePolish(m: Float64Array, k: number, order: Int32Array, priority: Int32Array, eps: number): boolean {
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
