/** The exact Kemeny–Young DP over subsets of one Condorcet component. */

/** Tables of {@link exactOrderInto}, grown on demand and reused across calls. */
export class ExactScratch {
  /** Drops the tables of more than `subsets` subsets, keeping the small ones. */
  trim(subsets: number): void {
    if (this.h.length > subsets) this.h = new Float64Array(0);
    if (this.hInt.length > subsets) this.hInt = new Int32Array(0);
    if (this.winner.length > subsets) {
      this.winner = new Int8Array(0);
      this.loser = new Int8Array(0);
    }
  }

  h = new Float64Array(0);
  /** h where every cost is an integer below 2^31: half the memory to read, the same numbers. */
  hInt = new Int32Array(0);
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
 * Largest DP table, in subsets, that {@link sharedExactScratch} keeps between solves: 2^20, a
 * component of 20 candidates (10 MiB with the winner and loser tables). Larger components
 * allocate their tables per solve and hand them back to the collector.
 */
export const KEEP_EXACT_SUBSETS = 1 << 20;

/**
 * The exact DP's tables shared by every solve of this thread, so that repeated solves (the
 * consensus of each request, each bootstrap replicate) neither allocate nor collect up to 10 MiB
 * each time; allocating and collecting them made the time per solve vary several-fold. Not
 * reentrant: valid only during one synchronous {@link exactOrderInto} call, which calls nothing
 * that solves again; each worker thread has its own copy of this module.
 */
export const sharedExactScratch = new ExactScratch();

/**
 * Exact subset DP on a k×k local matrix `a` (a[i*k+j] = weight preferring i to j), local order
 * best first into out[0..k). h[T] = min cost of ordering the set T; adding c in front of T∖{c}
 * costs colsum_T(c).
 *
 * With eps = 0 and integer entries whose total is below 2^31 (every cost an exact integer that an
 * Int32Array holds, so h is kept in half the memory: the same numbers), a set T with a strict
 * Condorcet winner x (a[x][c] > a[c][x] for every other c in T) gets h[T] from x alone: moving
 * x to the front of any order of T strictly lowers its cost, so every optimal order of T starts
 * with x and the minimum over c is x's term, the same number. Likewise a set with a strict
 * Condorcet loser y (beaten by every other member) gets h[T] = h[T∖{y}] + rowsum_{T∖{y}}(y):
 * every optimal order of T ends with y, and its cost is that of T∖{y} in front plus the pairs
 * y loses by coming last. Both values are the exact minimum, so h is the same array, bit for
 * bit. Winners and losers are found in the same pass as h, lowest member first (see
 * {@link subsetCostsWithExtremes}); the rebuild is unchanged.
 */
export function exactOrderInto(a: Float64Array, k: number, priority: Int32Array, eps: number, scratch: ExactScratch, out: Int32Array): void {
  const lowBits = k >> 1;
  const highBits = k - lowBits;
  // colLow[L*k + c] = Σ_{j∈L} a[j][c] for subsets L of the low bits; colHigh likewise.
  if (scratch.colLow.length < (1 << lowBits) * k) scratch.colLow = new Float64Array((1 << lowBits) * k);
  if (scratch.colHigh.length < (1 << highBits) * k) scratch.colHigh = new Float64Array((1 << highBits) * k);
  const colLow = scratch.colLow;
  const colHigh = scratch.colHigh;
  columnSumTable(a, k, 0, lowBits, colLow);
  columnSumTable(a, k, lowBits, highBits, colHigh);
  const size = 1 << k;
  let h: Float64Array | Int32Array;
  if (eps === 0 && integerTotal(a, k) <= 0x7fffffff) {
    condorcetBeats(a, k, scratch);
    // rowLow[L*k + c] = Σ_{j∈L} a[c][j]: the row sums of the transpose's column sums.
    if (scratch.rowLow.length < (1 << lowBits) * k) scratch.rowLow = new Float64Array((1 << lowBits) * k);
    if (scratch.rowHigh.length < (1 << highBits) * k) scratch.rowHigh = new Float64Array((1 << highBits) * k);
    if (scratch.transpose.length < k * k) scratch.transpose = new Float64Array(k * k);
    const aT = scratch.transpose;
    for (let i = 0; i < k; i++) for (let j = 0; j < k; j++) aT[j * k + i] = a[i * k + j]!;
    columnSumTable(aT, k, 0, lowBits, scratch.rowLow);
    columnSumTable(aT, k, lowBits, highBits, scratch.rowHigh);
    if (scratch.hInt.length < size) scratch.hInt = new Int32Array(size);
    subsetCostsWithExtremes(k, lowBits, scratch);
    h = scratch.hInt;
  } else {
    if (scratch.h.length < size) scratch.h = new Float64Array(size);
    subsetCosts(k, lowBits, scratch.h, colLow, colHigh);
    h = scratch.h;
  }
  rebuild(h, k, lowBits, colLow, colHigh, priority, eps, out);
}

/**
 * The first optimal order by priority, front to back: from the full set T, the candidate of
 * lowest priority whose h[T∖{c}] + colsum_T∖{c}(c) attains h[T] (within eps), then T∖{c}.
 */
function rebuild(
  h: Float64Array | Int32Array,
  k: number,
  lowBits: number,
  colLow: Float64Array,
  colHigh: Float64Array,
  priority: Int32Array,
  eps: number,
  out: Int32Array,
): void {
  const lowMask = (1 << lowBits) - 1;
  const size = 1 << k;
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

/** Σ of the entries of `a` when each is a non-negative integer (every partial sum exact below 2^53), else Infinity. */
function integerTotal(a: Float64Array, k: number): number {
  let total = 0;
  for (let x = 0; x < k * k; x++) {
    const v = a[x]!;
    if (!(Number.isInteger(v) && v >= 0)) return Infinity;
    total += v;
  }
  return total;
}

/**
 * h[T] for every subset T of the k local candidates: the least cost of ordering T,
 * min over c ∈ T of h[T∖{c}] + colsum_T∖{c}(c), the column sums read from the two half tables.
 */
function subsetCosts(k: number, lowBits: number, h: Float64Array, colLow: Float64Array, colHigh: Float64Array): void {
  const size = 1 << k;
  const lowMask = (1 << lowBits) - 1;
  h[0] = 0;
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
}

/**
 * {@link subsetCosts} for exact sums, taking h[T] from T's strict Condorcet winner or loser where
 * it has one (see {@link exactOrderInto}). winner[T] and loser[T] are found in the same pass,
 * from the lowest member c of T and R = T ∖ {c} (R < T, so already known): c wins T iff it
 * beats all of R; otherwise only R's winner can win T, iff it beats c (losers likewise); −1 where
 * there is none.
 */
function subsetCostsWithExtremes(k: number, lowBits: number, scratch: ExactScratch): void {
  const size = 1 << k;
  const lowMask = (1 << lowBits) - 1;
  if (scratch.winner.length < size) {
    scratch.winner = new Int8Array(size);
    scratch.loser = new Int8Array(size);
  }
  const { hInt: h, colLow, colHigh, rowLow, rowHigh, beats, beatenBy, winner, loser } = scratch;
  h[0] = 0;
  winner[0] = -1;
  loser[0] = -1;
  for (let t = 1; t < size; t++) {
    const low = t & -t;
    const c = 31 - Math.clz32(low);
    const rest = t ^ low;
    let x = c;
    if ((beats[c]! & rest) !== rest) {
      x = winner[rest]!;
      if (x >= 0 && ((beats[x]! >>> c) & 1) === 0) x = -1;
    }
    let y = c;
    if ((beatenBy[c]! & rest) !== rest) {
      y = loser[rest]!;
      if (y >= 0 && ((beatenBy[y]! >>> c) & 1) === 0) y = -1;
    }
    winner[t] = x;
    loser[t] = y;
    const lowBase = (t & lowMask) * k;
    const highBase = (t >>> lowBits) * k;
    if (x >= 0) {
      h[t] = h[t ^ (1 << x)]! + colLow[lowBase + x]! + colHigh[highBase + x]!;
    } else if (y >= 0) {
      h[t] = h[t ^ (1 << y)]! + rowLow[lowBase + y]! + rowHigh[highBase + y]!;
    } else {
      let best = Infinity;
      let others = t;
      while (others !== 0) {
        const bit = others & -others;
        const d = 31 - Math.clz32(bit);
        const value = h[t ^ bit]! + colLow[lowBase + d]! + colHigh[highBase + d]!;
        if (value < best) best = value;
        others ^= bit;
      }
      h[t] = best;
    }
  }
}

/** beats[c] and beatenBy[c]: bit masks of the candidates that c strictly beats and that strictly beat c. O(k²). */
function condorcetBeats(a: Float64Array, k: number, scratch: ExactScratch): void {
  if (scratch.beats.length < k) {
    scratch.beats = new Int32Array(k);
    scratch.beatenBy = new Int32Array(k);
  }
  const { beats, beatenBy } = scratch;
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
