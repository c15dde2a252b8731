/** The exact Kemeny–Young DP over subsets of one Condorcet component. */

/** Tables of {@link exactOrderInto}, grown on demand and reused across calls. */
export class ExactScratch {
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
export function exactOrderInto(a: Float64Array, k: number, priority: Int32Array, eps: number, scratch: ExactScratch, out: Int32Array): void {
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
