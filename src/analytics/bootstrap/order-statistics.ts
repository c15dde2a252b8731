/**
 * The few order statistics a percentile interval reads, found without sorting every replicate:
 * by a histogram, by tail buffers, or by Floyd–Rivest selection.
 */

/**
 * Puts each sorted position k in `need` of the finite `values` in its place: afterwards values[k]
 * is the value an ascending sort would put there (other entries are left in some order). A sort
 * when −0 is present or there are fewer than SELECT_MIN values; otherwise a histogram of the
 * values (O(m)), or, when a needed bucket is crowded, tail buffers for tail positions or
 * selection (O(m) expected). May reorder `need`.
 */
export function placeOrderStatistics(values: Float64Array, need: number[], negativeZero: boolean): void {
  const m = values.length;
  // Sizes of the bottom and top sets that hold every needed order statistic.
  let kLow = 0;
  let kHigh = 0;
  for (const k of need) {
    if (2 * k < m) kLow = Math.max(kLow, k + 1);
    else kHigh = Math.max(kHigh, m - k);
  }
  if (negativeZero || m < SELECT_MIN) {
    // A sort orders −0 before +0, which selection by `<` cannot see; keep the sort there.
    values.sort();
  } else if (histogramOrderStatistics(values, need)) {
    // Done in place: the usual case.
  } else if (kLow + kHigh <= Math.min(m / 8, TAIL_MAX) && tailOrderStatistics(values, need, kLow, kHigh)) {
    // Tail quantiles over skewed values: done in place by tailOrderStatistics.
  } else {
    // Other levels: place each needed order statistic by selection (O(m) each).
    need.sort((a, b) => a - b);
    let left = 0;
    for (const k of need) {
      if (k < left) continue;
      if (k === left) {
        // Right after a selected position: the minimum of the rest.
        let at = k;
        for (let i = k + 1; i < m; i++) if (values[i]! < values[at]!) at = i;
        swap(values, k, at);
      } else {
        selectInPlace(values, k, left, m - 1);
      }
      left = k + 1;
    }
  }
}

/** Below this many values a sort is as fast as selection. */
const SELECT_MIN = 64;
/** Histogram buckets: at most this many, and at most this many values in a needed bucket. */
const HIST_MAX_BUCKETS = 4096;
const HIST_MAX_IN_BUCKET = 64;
/*
 * The histogram's buffers below are shared by every call in this thread and not reentrant: each
 * is valid only during one synchronous histogramOrderStatistics call, which leaves histSlots all
 * −1 again before it returns.
 */
const histCounts = new Int32Array(HIST_MAX_BUCKETS);
/** Slot of each needed bucket, −1 elsewhere (reset after each use). */
const histSlots = new Int8Array(HIST_MAX_BUCKETS).fill(-1);
/** Values of the needed buckets: at most 4 positions are needed, so at most 4 slots. */
const histPicked = new Float64Array(4 * HIST_MAX_IN_BUCKET);

/**
 * Order statistics by bucketing: bucket(x) = ⌊(x − min)·NB/(max − min)⌋ is non-decreasing in x
 * (each rounding step is monotone), so the value of sorted position k lies in the bucket where
 * the cumulative count passes k, at rank k − (count before it). Three passes (range, counts,
 * collect the needed buckets' values) and a sort of those few values: O(m + NB). Writes each
 * needed position of `values`; returns false, leaving `values` unchanged, when the range is
 * not representable or a needed bucket holds more than HIST_MAX_IN_BUCKET values (then
 * another method is used).
 */
function histogramOrderStatistics(values: Float64Array, need: readonly number[]): boolean {
  const m = values.length;
  let lo = values[0]!;
  let hi = lo;
  for (let i = 1; i < m; i++) {
    const x = values[i]!;
    if (x < lo) lo = x;
    if (x > hi) hi = x;
  }
  if (lo === hi) {
    for (const k of need) values[k] = lo;
    return true;
  }
  let NB = 256;
  while (NB < HIST_MAX_BUCKETS && NB * 4 < m) NB *= 2;
  const scale = NB / (hi - lo);
  if (!(scale > 0 && scale < Infinity)) return false;
  const last = NB - 1;
  const counts = histCounts;
  counts.fill(0, 0, NB);
  for (let i = 0; i < m; i++) {
    const b = ((values[i]! - lo) * scale) | 0;
    counts[b < last ? b : last]!++;
  }
  // Needed buckets in ascending order (need may be unsorted): slot per bucket, count before it.
  const order = [...need].sort((a, b) => a - b);
  const slotOf = histSlots;
  const bucketOfSlot: number[] = [];
  const before: number[] = [];
  let cum = 0;
  let q = 0;
  for (let b = 0; b < NB && q < order.length; b++) {
    const c = counts[b]!;
    if (order[q]! < cum + c) {
      if (c > HIST_MAX_IN_BUCKET) {
        for (const used of bucketOfSlot) slotOf[used] = -1;
        return false;
      }
      slotOf[b] = bucketOfSlot.length;
      bucketOfSlot.push(b);
      before.push(cum);
      while (q < order.length && order[q]! < cum + c) q++;
    }
    cum += c;
  }
  // Collect the needed buckets' values (slot s at picked[s·MAX …]) and sort each.
  const picked = histPicked;
  const fill = [0, 0, 0, 0, 0, 0, 0, 0].slice(0, bucketOfSlot.length);
  for (let i = 0; i < m; i++) {
    const x = values[i]!;
    const b = ((x - lo) * scale) | 0;
    const s = slotOf[b < last ? b : last]!;
    if (s >= 0) picked[s * HIST_MAX_IN_BUCKET + fill[s]!++] = x;
  }
  for (let s = 0; s < bucketOfSlot.length; s++) {
    insertionSort(picked, s * HIST_MAX_IN_BUCKET, s * HIST_MAX_IN_BUCKET + fill[s]!);
    slotOf[bucketOfSlot[s]!] = -1;
  }
  const out: number[] = [];
  for (const k of need) {
    let s = bucketOfSlot.length - 1;
    while (before[s]! > k) s--;
    out.push(picked[s * HIST_MAX_IN_BUCKET + k - before[s]!]!);
  }
  need.forEach((k, j) => {
    values[k] = out[j]!;
  });
  return true;
}

/** Sorts a[from..to) ascending in place (for a few values). */
function insertionSort(a: Float64Array, from: number, to: number): void {
  for (let i = from + 1; i < to; i++) {
    const x = a[i]!;
    let j = i;
    for (; j > from && a[j - 1]! > x; j--) a[j] = a[j - 1]!;
    a[j] = x;
  }
}

/** Largest total size of the tail buffers (beyond it selection is as fast). */
const TAIL_MAX = 256;

/**
 * Writes the needed order statistics into their sorted positions of `values`, from the kLow
 * smallest and kHigh largest values found by {@link extremes}. Returns false, leaving `values`
 * unchanged, when the input order made the buffers too costly (the caller then selects).
 */
function tailOrderStatistics(values: Float64Array, need: readonly number[], kLow: number, kHigh: number): boolean {
  const m = values.length;
  const low = new Float64Array(Math.max(1, kLow));
  const high = new Float64Array(Math.max(1, kHigh));
  if (!extremes(values, low, kLow, high, kHigh)) return false;
  for (const k of need) values[k] = 2 * k < m ? low[k]! : high[m - 1 - k]!;
  return true;
}

/**
 * In one pass over a (finite values), the kLow smallest values (ascending, into low) and the
 * kHigh largest (descending, into high), by insertion into the sorted buffers; a value is
 * compared with the current buffer ends only. O(m + k · insertions), with k(1 + ln(m / k)) insertions in
 * expectation when a is in random order (as bootstrap replicates are); gives up (returns false)
 * after four times that many plus 64, which bounds the work on adversarial orders.
 * Needs kLow + kHigh ≤ m.
 */
function extremes(a: Float64Array, low: Float64Array, kLow: number, high: Float64Array, kHigh: number): boolean {
  const m = a.length;
  const k = Math.max(kLow, kHigh);
  let budget = 2 * 4 * k * (1 + Math.log(m / k)) + 64;
  // Buffers start full of ±Infinity, so (a being finite) the first values always enter.
  low.fill(Infinity);
  high.fill(-Infinity);
  const lastLow = kLow - 1;
  const lastHigh = kHigh - 1;
  let lowTop = kLow > 0 ? Infinity : -Infinity;
  let highTop = kHigh > 0 ? -Infinity : Infinity;
  for (let i = 0; i < m; i++) {
    const x = a[i]!;
    if (x < lowTop) {
      if (--budget < 0) return false;
      lowTop = insertAscending(low, lastLow, x);
    }
    if (x > highTop) {
      if (--budget < 0) return false;
      highTop = insertDescending(high, lastHigh, x);
    }
  }
  return true;
}

/** Insert x into buf (ascending), dropping buf[last]; returns the new buf[last]. */
function insertAscending(buf: Float64Array, last: number, x: number): number {
  let j = last;
  for (; j > 0 && buf[j - 1]! > x; j--) buf[j] = buf[j - 1]!;
  buf[j] = x;
  return buf[last]!;
}

/** Insert x into buf (descending), dropping buf[last]; returns the new buf[last]. */
function insertDescending(buf: Float64Array, last: number, x: number): number {
  let j = last;
  for (; j > 0 && buf[j - 1]! < x; j--) buf[j] = buf[j - 1]!;
  buf[j] = x;
  return buf[last]!;
}


/**
 * Floyd–Rivest selection: reorders a[left..right] so that a[k] is the value a sort would put
 * there, with no larger value before it and no smaller after it. Expected O(right − left).
 */
function selectInPlace(a: Float64Array, k: number, left: number, right: number): void {
  while (right > left) {
    if (right - left > 600) {
      const size = right - left + 1;
      const i = k - left + 1;
      const z = Math.log(size);
      const s = 0.5 * Math.exp((2 * z) / 3);
      const sd = 0.5 * Math.sqrt((z * s * (size - s)) / size) * (i - size / 2 < 0 ? -1 : 1);
      const newLeft = Math.max(left, Math.floor(k - (i * s) / size + sd));
      const newRight = Math.min(right, Math.floor(k + ((size - i) * s) / size + sd));
      selectInPlace(a, k, newLeft, newRight);
    }
    const t = a[k]!;
    let i = left;
    let j = right;
    swap(a, left, k);
    if (a[right]! > t) swap(a, left, right);
    while (i < j) {
      swap(a, i, j);
      i++;
      j--;
      while (a[i]! < t) i++;
      while (a[j]! > t) j--;
    }
    if (a[left] === t) swap(a, left, j);
    else {
      j++;
      swap(a, j, right);
    }
    if (j <= k) left = j + 1;
    if (k <= j) right = j - 1;
  }
}

function swap(a: Float64Array, i: number, j: number): void {
  const t = a[i]!;
  a[i] = a[j]!;
  a[j] = t;
}
