/** Margin matrices (w_ij − w_ji) of a component, and the Borda and Copeland scores read from them. */
import { boundScratch, growBoundScratch, SCAN_CHUNK } from './insertion-search';

/**
 * Tile edge of {@link marginMatrix}'s transposed reads: one chunk of
 * boundedInsertionSearch (insertion-search.ts), which the chunk sums marginMatrix writes rely on.
 */
export const MARGIN_TILE = SCAN_CHUNK;
/** marginMatrix copies a row's entries in blocks when the runs of consecutive members average at least this many. */
const MARGIN_BLOCK_RUN = 32;
/**
 * Scratch of marginMatrix: where each run of consecutive members starts, then k. Shared by every
 * call in this thread and not reentrant: valid only during one synchronous marginMatrix call.
 */
let marginRuns = new Int32Array(0);

/**
 * m[a·k + b] = w[ga][gb] − w[gb][ga] for ga = global[a], gb = global[b]: each entry the same
 * difference of the same two numbers as read pair by pair. Rows are copied first, then each pair
 * is formed tile by tile, so the transposed reads stay in cache. With `sums`, also writes the
 * chunk sums of boundedInsertionSearch (insertion-search.ts) into boundScratch for the identity
 * order (labels in chunk c are c·16 .. c·16 + 15, one tile): every margin is met once per pair
 * there, so they cost no extra pass over m. Only for integer margins (exact sums in any order).
 */
export function marginMatrix(w: Float64Array, n: number, global: ArrayLike<number>, k: number, m: Float64Array, sums: boolean): void {
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
 * Borda margins (Σ_j m_ij) and Copeland wins (1 per margin above eps, ½ per tie) of a k × k
 * margin matrix m_ij = w_ij − w_ji. O(k²).
 */
export function bordaCopeland(m: Float64Array, k: number, eps: number): { borda: Float64Array; copeland: Float64Array } {
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
