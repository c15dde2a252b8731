/**
 * Aligning a model's quotes to the report they claim to quote (METRICS.md §10).
 *
 * A quote becomes a span `[start, end)` of the stored report text in UTF-16 code units, by the
 * first rule that applies: EXACT (a plain substring), NORMALISED (a substring once text and
 * quote are normalised alike), FUZZY (the best window of the normalised text within 0.15 of the
 * quote by Levenshtein similarity), else UNALIGNED with no span. Alignment never invents a span.
 *
 * The normalised text keeps, for each of its code units, the range of original code units that
 * produced it, so a normalised match maps back to whole original characters (a ligature, an
 * expanded character, a surrogate pair, a base letter with its combining marks).
 *
 * Cost: normalising the report once per report (`alignmentIndex`), then per quote one native
 * substring search, and for quotes that need the fuzzy rule one bit-parallel pass over the text
 * (Myers' algorithm in 32-bit blocks) that finds the only window ends that can qualify, whose
 * windows are then measured exactly.
 */
import { distance } from 'fastest-levenshtein';

export type EvidenceStatus = 'EXACT' | 'NORMALISED' | 'FUZZY' | 'UNALIGNED';

export interface AlignedQuote {
  /** what the model quoted, as it wrote it (untrusted text) */
  quote: string;
  status: EvidenceStatus;
  /** first UTF-16 code unit of the span in the report text; null when UNALIGNED */
  start: number | null;
  /** one past the span's last code unit; null when UNALIGNED */
  end: number | null;
  /** the report's text of the span; null when UNALIGNED */
  text: string | null;
  /** how many times the quote was found by the deciding rule; 0 when UNALIGNED */
  occurrences: number;
}

/** A report's text prepared for aligning any number of quotes against it. */
export interface AlignmentIndex {
  readonly text: string;
  /** the normalised text (rule 2) */
  readonly normalised: string;
  /** per code unit of `normalised`: the original code units [start, end) it came from */
  readonly originStart: Int32Array;
  readonly originEnd: Int32Array;
  /** the normalised text's code points, and where each begins in `normalised` (one extra entry at the end) */
  readonly codePoints: Int32Array;
  readonly codePointUnit: Int32Array;
  /** per code unit of `normalised` (and its end): the index of the code point it belongs to */
  readonly unitCodePoint: Int32Array;
}

/** Similarity threshold 0.85 as the exact ratio d / max(m, w) ≤ 3/20. */
const MAX_DISTANCE_NUMERATOR = 3;
const MAX_DISTANCE_DENOMINATOR = 20;
const SPACE = 0x20;

/**
 * `(?<=\p{L})[-\u00AD][ \t]*\r?\n[ \t]*(?=\p{L})` of METRICS.md §10 without its lookbehind, which
 * the engine would try at every position of a long text: the letter before is checked by
 * `precededByLetter`.
 */
const END_OF_LINE_HYPHENATION = /[-\u00AD][ \t]*\r?\n[ \t]*(?=\p{L})/gu;
const LETTER = /^\p{L}$/u;
const SOFT_HYPHEN = /\u00AD/g;
/** Runs of whitespace that are not already one plain space. */
const WHITESPACE_TO_COLLAPSE = /\s{2,}|[^\S ]/g;
/** Code points that continue the character before them: combining marks, and Hangul medial and final jamo. */
const CONTINUES_CHARACTER = /^[\p{M}\u1160-\u11FF\uD7B0-\uD7FF]$/u;

interface Mapped {
  value: string;
  units: Uint16Array;
  originStart: Int32Array;
  originEnd: Int32Array;
}

/**
 * For code units below U+0300 (Latin, Latin-1, Latin Extended A/B: Dutch and Czech letters),
 * the unit that NFKC, lower case, NFKC gives when the character stands alone and maps to one
 * unit; -1 where it maps to more or fewer (e.g. "¼", "ŉ").
 */
const SIMPLE_BELOW_MARKS = (() => {
  const table = new Int32Array(0x300).fill(-1);
  for (let c = 0; c < 0x300; c += 1) {
    const n = String.fromCharCode(c).normalize('NFKC').toLowerCase().normalize('NFKC');
    if (n.length === 1) table[c] = n.charCodeAt(0);
  }
  return table;
})();

const UTF16 = new TextDecoder('utf-16le');

/** Growable UTF-16 buffer with each unit's origin. */
class MappedBuilder {
  units: Uint16Array;
  start: Int32Array;
  end: Int32Array;
  length = 0;

  constructor(capacity: number) {
    this.units = new Uint16Array(capacity);
    this.start = new Int32Array(capacity);
    this.end = new Int32Array(capacity);
  }

  push(unit: number, from: number, to: number): void {
    if (this.length === this.units.length) this.grow();
    this.units[this.length] = unit;
    this.start[this.length] = from;
    this.end[this.length] = to;
    this.length += 1;
  }

  copy(from: Mapped, at: number, until: number): void {
    const count = until - at;
    while (this.length + count > this.units.length) this.grow();
    this.units.set(from.units.subarray(at, until), this.length);
    this.start.set(from.originStart.subarray(at, until), this.length);
    this.end.set(from.originEnd.subarray(at, until), this.length);
    this.length += count;
  }

  build(): Mapped {
    const units = this.units.subarray(0, this.length);
    const value = UTF16.decode(new Uint8Array(units.buffer, units.byteOffset, units.byteLength));
    return { value, units, originStart: this.start.subarray(0, this.length), originEnd: this.end.subarray(0, this.length) };
  }

  private grow(): void {
    const size = Math.max(16, this.units.length * 2);
    const units = new Uint16Array(size);
    const start = new Int32Array(size);
    const end = new Int32Array(size);
    units.set(this.units);
    start.set(this.start);
    end.set(this.end);
    this.units = units;
    this.start = start;
    this.end = end;
  }
}

/**
 * Rule 2's normalisation with the origin of every code unit: NFKC, lower case, NFKC per
 * character (a base with its combining marks, so composition behaves as on the whole string),
 * then end-of-line hyphenation joined, other soft hyphens removed, whitespace runs as one space.
 */
function normaliseMapped(text: string): Mapped {
  const out = new MappedBuilder(text.length + 16);
  const length = text.length;
  let i = 0;
  while (i < length) {
    const c = text.charCodeAt(i);
    const next = i + 1 < length ? text.charCodeAt(i + 1) : 0;
    const simple = c < 0x300 ? SIMPLE_BELOW_MARKS[c]! : -1;
    if (simple >= 0 && (next < 0x300 || !continuesCharacter(text, i + 1))) {
      out.push(simple, i, i + 1);
      i += 1;
      continue;
    }
    let end = i + (c >= 0xd800 && c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff ? 2 : 1);
    while (end < length && continuesCharacter(text, end)) end += text.codePointAt(end)! > 0xffff ? 2 : 1;
    const piece = text.slice(i, end).normalize('NFKC').toLowerCase().normalize('NFKC');
    for (let k = 0; k < piece.length; k += 1) out.push(piece.charCodeAt(k), i, end);
    i = end;
  }
  let mapped = out.build();
  mapped = rewrite(mapped, END_OF_LINE_HYPHENATION, false, precededByLetter);
  mapped = rewrite(mapped, SOFT_HYPHEN, false);
  return rewrite(mapped, WHITESPACE_TO_COLLAPSE, true);
}

function continuesCharacter(text: string, at: number): boolean {
  const c = text.charCodeAt(at);
  if (c < 0x300) return false;
  return CONTINUES_CHARACTER.test(String.fromCodePoint(text.codePointAt(at)!));
}

function precededByLetter(text: string, at: number): boolean {
  if (at === 0) return false;
  const before = text.charCodeAt(at - 1);
  const start = before >= 0xdc00 && before <= 0xdfff && at >= 2 ? at - 2 : at - 1;
  return LETTER.test(String.fromCodePoint(text.codePointAt(start)!));
}

/**
 * Removes every match of `pattern` (that `accept` accepts), or replaces it with one space mapped
 * to the whole match.
 */
function rewrite(input: Mapped, pattern: RegExp, toSpace: boolean, accept?: (text: string, at: number) => boolean): Mapped {
  pattern.lastIndex = 0;
  if (!pattern.test(input.value)) return input;
  pattern.lastIndex = 0;
  const out = new MappedBuilder(input.value.length);
  let copied = 0;
  for (const match of input.value.matchAll(pattern)) {
    const at = match.index;
    if (accept && !accept(input.value, at)) continue;
    const after = at + match[0].length;
    out.copy(input, copied, at);
    if (toSpace) out.push(SPACE, input.originStart[at]!, input.originEnd[after - 1]!);
    copied = after;
  }
  out.copy(input, copied, input.value.length);
  return out.build();
}

/** Normalises a quote as rule 2 does (the same steps as the text, then trimmed). */
export function normaliseQuote(quote: string): string {
  return normaliseMapped(quote).value.trim();
}

/** Prepares a report's text once for aligning its quotes. */
export function alignmentIndex(text: string): AlignmentIndex {
  const mapped = normaliseMapped(text);
  const normalised = mapped.value;
  const points = new Int32Array(normalised.length);
  const units = new Int32Array(normalised.length + 1);
  const pointAt = new Int32Array(normalised.length + 1);
  let n = 0;
  for (let i = 0; i < normalised.length; ) {
    const cp = normalised.codePointAt(i)!;
    points[n] = cp;
    units[n] = i;
    pointAt[i] = n;
    if (cp > 0xffff) pointAt[i + 1] = n;
    n += 1;
    i += cp > 0xffff ? 2 : 1;
  }
  units[n] = normalised.length;
  pointAt[normalised.length] = n;
  return {
    text,
    normalised,
    originStart: mapped.originStart,
    originEnd: mapped.originEnd,
    codePoints: points.slice(0, n),
    codePointUnit: units.slice(0, n + 1),
    unitCodePoint: pointAt,
  };
}

/** Aligns every quote of a field (or of a whole prediction) against one report. */
export function alignQuotes(text: string, quotes: readonly string[]): AlignedQuote[] {
  if (quotes.length === 0) return [];
  const index = alignmentIndex(text);
  return quotes.map((quote) => alignQuote(index, quote));
}

/** The first rule of METRICS.md §10 that applies to one quote. */
export function alignQuote(index: AlignmentIndex, quote: string): AlignedQuote {
  const normalisedQuote = normaliseQuote(quote);
  if (normalisedQuote === '') return unaligned(quote);
  const exact = index.text.indexOf(quote);
  if (exact >= 0) {
    return span(index, quote, 'EXACT', exact, exact + quote.length, countOccurrences(index.text, quote, exact));
  }
  const normalisedAt = index.normalised.indexOf(normalisedQuote);
  if (normalisedAt >= 0) {
    const last = normalisedAt + normalisedQuote.length - 1;
    return span(
      index,
      quote,
      'NORMALISED',
      index.originStart[normalisedAt]!,
      index.originEnd[last]!,
      countOccurrences(index.normalised, normalisedQuote, normalisedAt),
    );
  }
  const fuzzy = bestFuzzyWindow(index, normalisedQuote);
  if (!fuzzy) return unaligned(quote);
  const firstUnit = index.codePointUnit[fuzzy.start]!;
  const lastUnit = index.codePointUnit[fuzzy.end]! - 1;
  return span(index, quote, 'FUZZY', index.originStart[firstUnit]!, index.originEnd[lastUnit]!, fuzzy.occurrences);
}

function span(index: AlignmentIndex, quote: string, status: EvidenceStatus, start: number, end: number, occurrences: number): AlignedQuote {
  return { quote, status, start, end, text: index.text.slice(start, end), occurrences };
}

function unaligned(quote: string): AlignedQuote {
  return { quote, status: 'UNALIGNED', start: null, end: null, text: null, occurrences: 0 };
}

/** Distinct start positions of `needle` in `haystack`, overlapping ones included. */
function countOccurrences(haystack: string, needle: string, first: number): number {
  let count = 0;
  for (let at = first; at >= 0; at = haystack.indexOf(needle, at + 1)) count += 1;
  return count;
}

interface Window {
  start: number;
  end: number;
  distance: number;
  /** max(m, w): similarity = 1 − distance / scale */
  scale: number;
}

/**
 * Rule 3 on code points. Every window that can reach the threshold has a Levenshtein distance of
 * at most K = ⌊3·max(m, ⌊1.2m⌋)/20⌋ to the quote. So it holds one of K + 1 disjoint pieces of the
 * quote unchanged (found by substring search), and its end is among the positions where the
 * smallest distance of the quote to any substring ending there is ≤ K (one bit-parallel pass
 * over the regions around those pieces); only windows ending there are measured.
 */
function bestFuzzyWindow(index: AlignmentIndex, normalisedQuote: string): { start: number; end: number; occurrences: number } | null {
  const quotePoints = Array.from(normalisedQuote, (ch) => ch.codePointAt(0)!);
  const m = quotePoints.length;
  const points = index.codePoints;
  const minWidth = Math.ceil(0.8 * m);
  const maxWidth = Math.floor(1.2 * m);
  if (m === 0 || points.length < minWidth) return null;
  const maxDistance = Math.floor((MAX_DISTANCE_NUMERATOR * Math.max(m, maxWidth)) / MAX_DISTANCE_DENOMINATOR);
  const codes = new QuoteCodes(quotePoints);
  let best: Window | null = null;
  const ties: Window[] = [];
  try {
    const compactQuote = codes.encode(quotePoints, 0, m);
    const ends: number[] = [];
    for (const [from, to] of candidateRegions(index, quotePoints, maxDistance)) codes.candidateEnds(points, from, to, maxDistance, ends);
    for (const end of ends) {
      if (points[end - 1] === SPACE) continue;
      const regionStart = Math.max(0, end - maxWidth);
      const region = codes.encode(points, regionStart, end);
      for (let width = minWidth; width <= maxWidth && width <= end; width += 1) {
        const start = end - width;
        if (points[start] === SPACE) continue;
        const d = distance(compactQuote, region.slice(start - regionStart));
        const scale = Math.max(m, width);
        if (d * MAX_DISTANCE_DENOMINATOR > MAX_DISTANCE_NUMERATOR * scale) continue;
        const candidate: Window = { start, end, distance: d, scale };
        const order = best ? compareSimilarity(candidate, best) : -1;
        if (order < 0) {
          best = candidate;
          ties.length = 0;
        }
        if (order <= 0) ties.push(candidate);
      }
    }
  } finally {
    codes.release();
  }
  if (!best) return null;
  // Ties: the earliest start, then the width closest to m, then the shorter.
  ties.sort(
    (a, b) =>
      a.start - b.start ||
      Math.abs(a.end - a.start - m) - Math.abs(b.end - b.start - m) ||
      a.end - a.start - (b.end - b.start),
  );
  let occurrences = 0;
  let freeFrom = 0;
  for (const window of ties) {
    if (window.start < freeFrom) continue;
    occurrences += 1;
    freeFrom = window.end;
  }
  const chosen = ties[0]!;
  return { start: chosen.start, end: chosen.end, occurrences };
}

/**
 * Where a window within K edits of the quote can lie, in code points [from, to), merged: around
 * every exact occurrence of one of K + 1 disjoint pieces of the quote (pigeonhole: K edits leave
 * one piece untouched). The whole text when the pieces are too common for regions to help.
 */
function candidateRegions(index: AlignmentIndex, quotePoints: readonly number[], maxDistance: number): [number, number][] {
  const n = index.codePoints.length;
  const m = quotePoints.length;
  const pieces = maxDistance + 1;
  // Pieces this short occur everywhere: a scan of the whole text is cheaper than their regions.
  if (m / pieces < 4) return [[0, n]];
  const regions: [number, number][] = [];
  let covered = 0;
  for (let k = 0; k < pieces; k += 1) {
    const offset = Math.floor((k * m) / pieces);
    const piece = String.fromCodePoint(...quotePoints.slice(offset, Math.floor(((k + 1) * m) / pieces)));
    for (let at = index.normalised.indexOf(piece); at >= 0; at = index.normalised.indexOf(piece, at + 1)) {
      const point = index.unitCodePoint[at]!;
      const from = Math.max(0, point - offset - maxDistance);
      const to = Math.min(n, point - offset + m + maxDistance);
      regions.push([from, to]);
      covered += to - from;
      if (covered > n / 4) return [[0, n]];
    }
  }
  regions.sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const region of regions) {
    const last = merged[merged.length - 1];
    if (last && region[0] <= last[1]) last[1] = Math.max(last[1], region[1]);
    else merged.push([region[0], region[1]]);
  }
  return merged;
}

/** Negative when `a` is more similar than `b` (exactly: d_a/s_a < d_b/s_b), 0 when equal. */
function compareSimilarity(a: Window, b: Window): number {
  return a.distance * b.scale - b.distance * a.scale;
}

/**
 * Slots of the quote's code points in the search scratch table. Module scratch, reused by every
 * quote and cleared by `release`: not reentrant (alignment is synchronous).
 */
const bmpSlots = new Int32Array(0x10000);

/**
 * The quote's distinct code points numbered 1…k, every other code point 0. The Levenshtein
 * distance between the quote and a window depends only on which characters are equal, so
 * encoding both with one code unit per slot leaves it unchanged, and a code point counts as
 * one character whatever its UTF-16 length.
 */
class QuoteCodes {
  private readonly astral = new Map<number, number>();
  private readonly distinct: number[] = [];

  constructor(private readonly quotePoints: readonly number[]) {
    for (const cp of quotePoints) {
      if (this.slot(cp) !== 0) continue;
      this.distinct.push(cp);
      if (cp <= 0xffff) bmpSlots[cp] = this.distinct.length;
      else this.astral.set(cp, this.distinct.length);
    }
  }

  slot(cp: number): number {
    return cp <= 0xffff ? bmpSlots[cp]! : (this.astral.get(cp) ?? 0);
  }

  /** One code unit per code point: 0x01 for "not in the quote", 0x100 + slot otherwise (surrogates skipped). */
  encode(points: ArrayLike<number>, from: number, to: number): string {
    const units = new Uint16Array(to - from);
    for (let i = from; i < to; i += 1) {
      const slot = this.slot(points[i]!);
      const unit = slot === 0 ? 1 : 0x100 + slot;
      units[i - from] = unit >= 0xd800 ? unit + 0x800 : unit;
    }
    let out = '';
    for (let i = 0; i < units.length; i += 8192) out += String.fromCharCode(...units.subarray(i, i + 8192));
    return out;
  }

  /**
   * Ends e in (from, to] where min over s ≥ from of lev(quote, text[s, e)) ≤ maxDistance, added
   * to `ends`: Myers' bit-parallel approximate search (Myers 1999) in blocks of 32 rows (Hyyrö 2003), the top
   * row zero so that a match may start anywhere.
   */
  candidateEnds(text: Int32Array, from: number, to: number, maxDistance: number, ends: number[]): void {
    const m = this.quotePoints.length;
    const blocks = Math.ceil(m / 32);
    const peq = new Int32Array((this.distinct.length + 1) * blocks);
    this.quotePoints.forEach((cp, row) => {
      peq[this.slot(cp) * blocks + (row >>> 5)]! |= 1 << (row & 31);
    });
    if (blocks === 1) {
      this.scanOneBlock(peq, text, from, to, m, maxDistance, ends);
      return;
    }
    if (blocks === 2) {
      this.scanTwoBlocks(peq, text, from, to, m, maxDistance, ends);
      return;
    }
    const pv = new Int32Array(blocks).fill(-1);
    const mv = new Int32Array(blocks);
    const lastHigh = 1 << ((m - 1) & 31);
    let score = m;
    for (let j = from; j < to; j += 1) {
      const cp = text[j]!;
      const base = (cp <= 0xffff ? bmpSlots[cp]! : (this.astral.get(cp) ?? 0)) * blocks;
      let carry = 0;
      for (let b = 0; b < blocks; b += 1) {
        const p = pv[b]!;
        const mm = mv[b]!;
        let eq = peq[base + b]!;
        const xv = eq | mm;
        if (carry < 0) eq |= 1;
        const xh = ((((eq & p) + p) | 0) ^ p) | eq;
        let ph = mm | ~(xh | p);
        let mh = p & xh;
        const high = b === blocks - 1 ? lastHigh : -0x80000000;
        const out = (ph & high) !== 0 ? 1 : (mh & high) !== 0 ? -1 : 0;
        ph <<= 1;
        mh <<= 1;
        if (carry < 0) mh |= 1;
        else if (carry > 0) ph |= 1;
        pv[b] = mh | ~(xv | ph);
        mv[b] = ph & xv;
        carry = out;
      }
      score += carry;
      if (score <= maxDistance) ends.push(j + 1);
    }
  }

  /** The same search for quotes of 33 to 64 code points, in registers. */
  private scanTwoBlocks(peq: Int32Array, text: Int32Array, from: number, to: number, m: number, maxDistance: number, ends: number[]): void {
    const high = 1 << (m - 33);
    let pv0 = -1;
    let mv0 = 0;
    let pv1 = -1;
    let mv1 = 0;
    let score = m;
    for (let j = from; j < to; j += 1) {
      const cp = text[j]!;
      const base = (cp <= 0xffff ? bmpSlots[cp]! : (this.astral.get(cp) ?? 0)) << 1;
      // Rows 1–32: the top row is zero, so no horizontal carry comes in.
      const eq0 = peq[base]!;
      const xv0 = eq0 | mv0;
      const xh0 = ((((eq0 & pv0) + pv0) | 0) ^ pv0) | eq0;
      let ph0 = mv0 | ~(xh0 | pv0);
      let mh0 = pv0 & xh0;
      const carry = ph0 < 0 ? 1 : mh0 < 0 ? -1 : 0;
      ph0 <<= 1;
      mh0 <<= 1;
      pv0 = mh0 | ~(xv0 | ph0);
      mv0 = ph0 & xv0;
      // Rows 33–m, with the first block's carry.
      let eq1 = peq[base + 1]!;
      const xv1 = eq1 | mv1;
      if (carry < 0) eq1 |= 1;
      const xh1 = ((((eq1 & pv1) + pv1) | 0) ^ pv1) | eq1;
      let ph1 = mv1 | ~(xh1 | pv1);
      let mh1 = pv1 & xh1;
      if ((ph1 & high) !== 0) score += 1;
      else if ((mh1 & high) !== 0) score -= 1;
      ph1 <<= 1;
      mh1 <<= 1;
      if (carry < 0) mh1 |= 1;
      else if (carry > 0) ph1 |= 1;
      pv1 = mh1 | ~(xv1 | ph1);
      mv1 = ph1 & xv1;
      if (score <= maxDistance) ends.push(j + 1);
    }
  }

  /** The same search for quotes of at most 32 code points, in registers. */
  private scanOneBlock(peq: Int32Array, text: Int32Array, from: number, to: number, m: number, maxDistance: number, ends: number[]): void {
    const high = 1 << (m - 1);
    let pv = -1;
    let mv = 0;
    let score = m;
    for (let j = from; j < to; j += 1) {
      const cp = text[j]!;
      const eq = peq[cp <= 0xffff ? bmpSlots[cp]! : (this.astral.get(cp) ?? 0)]!;
      const xv = eq | mv;
      const xh = ((((eq & pv) + pv) | 0) ^ pv) | eq;
      let ph = mv | ~(xh | pv);
      let mh = pv & xh;
      if ((ph & high) !== 0) score += 1;
      else if ((mh & high) !== 0) score -= 1;
      ph <<= 1;
      mh <<= 1;
      pv = mh | ~(xv | ph);
      mv = ph & xv;
      if (score <= maxDistance) ends.push(j + 1);
    }
  }

  release(): void {
    for (const cp of this.distinct) if (cp <= 0xffff) bmpSlots[cp] = 0;
  }
}
