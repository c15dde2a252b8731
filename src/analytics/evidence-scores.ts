/**
 * Evidence scores (docs/scoring.md §10): how often a variable's values are grounded in the
 * report, how many quotes could not be found, and how well the aligned spans match the spans an
 * annotator marked (strict, lenient and character precision, recall and F1).
 *
 * Every score here is a ratio of sums over reports, so each is returned with its per-report
 * numerators and denominators: the bootstrap (§5) resamples reports as a vector of
 * multiplicities w and recomputes each ratio from w-weighted sums of those counts
 * ({@link weightedRatio}, {@link spanScoresWeighted}, {@link spanScoreReplicates}), paired with
 * the value scores when it is given the same multiplicity matrix. A macro average over variables
 * is then, replicate by replicate, the weighted mean of the variables' replicates that are
 * defined (not NaN) in that replicate, as bootstrapGrid forms the value scores' macro average.
 */
import {
  DEFAULT_BOOTSTRAP_RESAMPLES,
  DEFAULT_BOOTSTRAP_SEED,
  DEFAULT_CONFIDENCE,
  bootstrapMultiplicities,
  estimateFrom,
} from './bootstrap';
import type { Estimate, MultiplicityMatrix } from './bootstrap';
import { AnalyticsError } from './errors';
import type { NormalisedCell } from './types';

/** How a quote was found in the report (§10 rules 1–4). */
export type QuoteStatus = 'EXACT' | 'NORMALISED' | 'FUZZY' | 'UNALIGNED';

/**
 * One quote of a field as alignment left it: a span `[start, end)` in UTF-16 code units of the
 * report text unless UNALIGNED (then start and end are null and ignored).
 */
export interface QuoteEvidence {
  status: QuoteStatus;
  start: number | null;
  end: number | null;
}

/** A span `[start, end)` of a report's text in UTF-16 code units, 0 ≤ start < end. */
export interface TextSpan {
  start: number;
  end: number;
}

/** A ratio with the counts it is made of; `ratio` is null when the denominator is 0. */
export interface RatioCount {
  numerator: number;
  denominator: number;
  ratio: number | null;
}

/** One field of a run for one variable and report: its normalised value and its quotes. */
export interface EvidenceField {
  cell: NormalisedCell;
  quotes: readonly QuoteEvidence[];
}

/** Per-report numerators and denominators of one ratio of sums, in the dataset's report order. */
export interface ReportRatioCounts {
  numerator: Float64Array;
  denominator: Float64Array;
}

/** Grounding and unaligned-quote rates of one variable of a run, with their per-report counts. */
export interface EvidenceRates {
  grounding: RatioCount;
  unalignedQuotes: RatioCount;
  perReport: { grounding: ReportRatioCounts; unalignedQuotes: ReportRatioCounts };
}

function ratioOf(numerator: number, denominator: number): RatioCount {
  return { numerator, denominator, ratio: denominator === 0 ? null : numerator / denominator };
}

function checkSpan(start: unknown, end: unknown, what: string): void {
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || (start as number) < 0 || (end as number) <= (start as number)) {
    throw new AnalyticsError(
      'BAD_INPUT',
      `${what} must have integer offsets with 0 <= start < end, got [${String(start)}, ${String(end)})`,
    );
  }
}

/**
 * The spans of a field's aligned quotes (status other than UNALIGNED), in the quotes' order,
 * duplicates kept. O(q).
 *
 * @throws AnalyticsError BAD_INPUT when an aligned quote lacks integer offsets 0 ≤ start < end,
 *   or a status is not one of §10's.
 */
export function alignedSpans(quotes: readonly QuoteEvidence[]): TextSpan[] {
  const spans: TextSpan[] = [];
  for (const q of quotes) {
    if (q.status === 'UNALIGNED') continue;
    if (q.status !== 'EXACT' && q.status !== 'NORMALISED' && q.status !== 'FUZZY') {
      throw new AnalyticsError('BAD_INPUT', `unknown quote status ${String(q.status)}`);
    }
    checkSpan(q.start, q.end, 'an aligned quote');
    spans.push({ start: q.start!, end: q.end! });
  }
  return spans;
}

/**
 * Grounding rate and unaligned-quote rate of one variable of a run (docs/scoring.md §10,
 * "Without gold spans"), `fields[i]` being report i's field (undefined: the run has no field
 * there, which adds nothing).
 *
 * Definition: grounding = #{fields with a valid, non-missing value (cell status VALUE) and at
 * least one aligned quote} / #{fields with a valid, non-missing value}; unaligned-quote rate =
 * #{UNALIGNED quotes} / #{quotes}, counting the quotes of every field whatever its validity.
 * Each ratio is null on a zero denominator. Per report, the numerators and denominators (0/1 for
 * grounding, quote counts for the other) are what {@link weightedRatio} resamples.
 * Complexity: O(n + total quotes).
 *
 * @throws AnalyticsError BAD_INPUT as {@link alignedSpans} for an aligned quote without a span.
 */
export function evidenceRates(fields: readonly (EvidenceField | undefined)[]): EvidenceRates {
  const n = fields.length;
  const grounding: ReportRatioCounts = { numerator: new Float64Array(n), denominator: new Float64Array(n) };
  const unaligned: ReportRatioCounts = { numerator: new Float64Array(n), denominator: new Float64Array(n) };
  let gNum = 0;
  let gDen = 0;
  let uNum = 0;
  let uDen = 0;
  for (let i = 0; i < n; i++) {
    const f = fields[i];
    if (f === undefined) continue;
    const aligned = alignedSpans(f.quotes).length;
    const unalignedHere = f.quotes.length - aligned;
    if (f.cell.status === 'VALUE') {
      const grounded = aligned > 0 ? 1 : 0;
      grounding.numerator[i] = grounded;
      grounding.denominator[i] = 1;
      gNum += grounded;
      gDen++;
    }
    unaligned.numerator[i] = unalignedHere;
    unaligned.denominator[i] = f.quotes.length;
    uNum += unalignedHere;
    uDen += f.quotes.length;
  }
  return {
    grounding: ratioOf(gNum, gDen),
    unalignedQuotes: ratioOf(uNum, uDen),
    perReport: { grounding, unalignedQuotes: unaligned },
  };
}

/** One report of a variable: the run's quotes there and the reference annotator's gold spans. */
export interface SpanReport {
  /** The run's field's quotes (unaligned ones are no span); empty or undefined: nothing predicted. */
  predicted?: readonly QuoteEvidence[] | null;
  /** Gold spans; null or undefined: the reference gave no spans here, so the report does not count. */
  gold?: readonly TextSpan[] | null;
}

/**
 * Per-report counts of span matching, each array of length n in the dataset's report order;
 * reports that do not count hold zeros.
 */
export interface SpanCounts {
  /** Predicted spans (or code units) that match a gold one. */
  matchedPredicted: Float64Array;
  predicted: Float64Array;
  /** Gold spans (or code units) that match a predicted one. */
  matchedGold: Float64Array;
  gold: Float64Array;
}

/** Span precision, recall and F1; null where §10 says the score is undefined. */
export interface SpanScores {
  precision: number | null;
  recall: number | null;
  f1: number | null;
}

/** Strict, lenient and character counts of one variable of a run against the gold spans. */
export interface SpanCountsResult {
  /** 1 where the report counts (the reference gave spans there, possibly none), else 0. */
  counting: Uint8Array;
  /** Number of counting reports. */
  reports: number;
  strict: SpanCounts;
  lenient: SpanCounts;
  character: SpanCounts;
}

function emptyCounts(n: number): SpanCounts {
  return {
    matchedPredicted: new Float64Array(n),
    predicted: new Float64Array(n),
    matchedGold: new Float64Array(n),
    gold: new Float64Array(n),
  };
}

/** Distinct spans sorted by start, then end. */
function distinctSorted(spans: readonly TextSpan[]): TextSpan[] {
  const sorted = [...spans].sort((a, b) => a.start - b.start || a.end - b.end);
  const out: TextSpan[] = [];
  for (const s of sorted) {
    const last = out[out.length - 1];
    if (last === undefined || last.start !== s.start || last.end !== s.end) out.push(s);
  }
  return out;
}

/** Union of spans sorted by start: disjoint, non-adjacent-merged intervals, ascending. */
function unionOf(sorted: readonly TextSpan[]): TextSpan[] {
  const out: TextSpan[] = [];
  for (const s of sorted) {
    const last = out[out.length - 1];
    if (last !== undefined && s.start <= last.end) {
      if (s.end > last.end) last.end = s.end;
    } else {
      out.push({ start: s.start, end: s.end });
    }
  }
  return out;
}

/**
 * Whether span s shares a code unit with the union (disjoint, ascending). A span overlaps some
 * span of a set exactly when it overlaps the set's union, since the union covers the same code
 * units. O(log u).
 */
function overlapsUnion(s: TextSpan, union: readonly TextSpan[]): boolean {
  // the last interval starting before s.end is the only candidate: earlier ones end before it starts
  let lo = 0;
  let hi = union.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (union[mid]!.start < s.end) lo = mid + 1;
    else hi = mid;
  }
  return lo > 0 && union[lo - 1]!.end > s.start;
}

function coveredUnits(union: readonly TextSpan[]): number {
  let total = 0;
  for (const u of union) total += u.end - u.start;
  return total;
}

/** Code units in both unions (each disjoint, ascending). O(a + b). */
function intersectionUnits(a: readonly TextSpan[], b: readonly TextSpan[]): number {
  let i = 0;
  let j = 0;
  let total = 0;
  while (i < a.length && j < b.length) {
    const lo = Math.max(a[i]!.start, b[j]!.start);
    const hi = Math.min(a[i]!.end, b[j]!.end);
    if (hi > lo) total += hi - lo;
    if (a[i]!.end < b[j]!.end) i++;
    else j++;
  }
  return total;
}

/**
 * Per-report span matching counts of one variable of a run against the gold spans
 * (docs/scoring.md §10, "Against gold spans").
 *
 * Definition: report i counts when `reports[i].gold` is a list (an empty list counts; null or
 * undefined excludes it). Per counting report, predicted spans (the aligned quotes' spans) and
 * gold spans are sets: duplicates removed. Strict: a predicted span is matched when a gold span
 * has the same start and end, and a gold span likewise. Lenient: a span is matched when it
 * shares at least one code unit with a span of the other side (not one-to-one). Character: the
 * sets of code units covered by the union of each side's spans; matched = the code units in
 * both. The scores are then {@link spanScoresWeighted} of these counts.
 * Complexity: O(Σ_i (p_i + g_i) log(p_i + g_i)) for p_i predicted and g_i gold spans.
 *
 * @throws AnalyticsError BAD_INPUT for a span without integer offsets 0 ≤ start < end.
 */
export function spanCounts(reports: readonly SpanReport[]): SpanCountsResult {
  const n = reports.length;
  const counting = new Uint8Array(n);
  const strict = emptyCounts(n);
  const lenient = emptyCounts(n);
  const character = emptyCounts(n);
  let counted = 0;
  for (let i = 0; i < n; i++) {
    const r = reports[i]!;
    const predictedSpans = r.predicted ? alignedSpans(r.predicted) : [];
    if (r.gold === null || r.gold === undefined) continue;
    for (const g of r.gold) checkSpan(g.start, g.end, 'a gold span');
    counting[i] = 1;
    counted++;
    const pred = distinctSorted(predictedSpans);
    const gold = distinctSorted(r.gold);
    const goldKeys = new Set(gold.map((s) => `${s.start}:${s.end}`));
    let strictMatched = 0;
    for (const p of pred) if (goldKeys.has(`${p.start}:${p.end}`)) strictMatched++;
    strict.matchedPredicted[i] = strictMatched;
    strict.predicted[i] = pred.length;
    strict.matchedGold[i] = strictMatched;
    strict.gold[i] = gold.length;

    const predUnion = unionOf(pred);
    const goldUnion = unionOf(gold);
    let lp = 0;
    for (const p of pred) if (overlapsUnion(p, goldUnion)) lp++;
    let lg = 0;
    for (const g of gold) if (overlapsUnion(g, predUnion)) lg++;
    lenient.matchedPredicted[i] = lp;
    lenient.predicted[i] = pred.length;
    lenient.matchedGold[i] = lg;
    lenient.gold[i] = gold.length;

    const both = intersectionUnits(predUnion, goldUnion);
    character.matchedPredicted[i] = both;
    character.predicted[i] = coveredUnits(predUnion);
    character.matchedGold[i] = both;
    character.gold[i] = coveredUnits(goldUnion);
  }
  return { counting, reports: counted, strict, lenient, character };
}

function checkWeights(n: number, weights: ArrayLike<number> | null | undefined): void {
  if (!weights) return;
  if (weights.length !== n) throw new AnalyticsError('LENGTH_MISMATCH', `weights hold ${weights.length} entries, expected ${n}`);
  for (let i = 0; i < n; i++) {
    const w = weights[i]!;
    if (!(w >= 0) || !Number.isFinite(w)) {
      throw new AnalyticsError('BAD_INPUT', `weights must be finite and non-negative, got ${w} at ${i}`);
    }
  }
}

/**
 * Σ_i w_i·num_i / Σ_i w_i·den_i, null when the weighted denominator is 0; weights default to 1
 * (the full-sample ratio). A bootstrap replicate is this with the replicate's multiplicities.
 * O(n).
 *
 * @throws AnalyticsError LENGTH_MISMATCH for arrays of different lengths; BAD_INPUT for a negative
 *   or non-finite weight.
 */
export function weightedRatio(counts: ReportRatioCounts, weights?: ArrayLike<number> | null): number | null {
  const n = counts.numerator.length;
  if (counts.denominator.length !== n) {
    throw new AnalyticsError('LENGTH_MISMATCH', `numerators hold ${n} entries, denominators ${counts.denominator.length}`);
  }
  checkWeights(n, weights);
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    const w = weights ? weights[i]! : 1;
    if (w === 0) continue;
    num += w * counts.numerator[i]!;
    den += w * counts.denominator[i]!;
  }
  return den === 0 ? null : num / den;
}

/**
 * F1 of §10 from P and R: 2PR/(P + R); 0 when P + R = 0 or exactly one of them is null; null
 * when both are. O(1).
 */
export function spanF1(precision: number | null, recall: number | null): number | null {
  if (precision === null && recall === null) return null;
  if (precision === null || recall === null) return 0;
  const sum = precision + recall;
  return sum === 0 ? 0 : (2 * precision * recall) / sum;
}

/**
 * Micro-averaged span precision, recall and F1 (docs/scoring.md §10) from per-report counts and
 * report weights (multiplicities; default 1, the full sample).
 *
 * Definition: P = Σ w·matchedPredicted / Σ w·predicted (null when that denominator is 0),
 * R = Σ w·matchedGold / Σ w·gold (null likewise), F1 = {@link spanF1}(P, R). A bootstrap
 * replicate is this function with the replicate's multiplicities, so its F1 is computed from its
 * own P and R. O(n).
 *
 * @throws AnalyticsError LENGTH_MISMATCH for arrays of different lengths; BAD_INPUT for a negative
 *   or non-finite weight.
 */
export function spanScoresWeighted(counts: SpanCounts, weights?: ArrayLike<number> | null): SpanScores {
  const precision = weightedRatio({ numerator: counts.matchedPredicted, denominator: counts.predicted }, weights);
  const recall = weightedRatio({ numerator: counts.matchedGold, denominator: counts.gold }, weights);
  return { precision, recall, f1: spanF1(precision, recall) };
}

/** Bootstrap replicates of P, R and F1, replicate b at index b; NaN where the score is null. */
export interface SpanScoreReplicates {
  precision: Float64Array;
  recall: Float64Array;
  f1: Float64Array;
}

function checkMatrix(n: number, multiplicities: MultiplicityMatrix, B: number): void {
  if (!Number.isInteger(B) || B < 1) throw new AnalyticsError('BAD_INPUT', `bootstrap needs B >= 1 resamples, got ${B}`);
  if (multiplicities.length !== n * B) {
    throw new AnalyticsError('LENGTH_MISMATCH', `multiplicities hold ${multiplicities.length} entries, expected ${B} × ${n}`);
  }
}

/**
 * {@link spanScoresWeighted} on every row of a B × n multiplicity matrix (row b = resample b, as
 * {@link bootstrapMultiplicities} draws it): the §5 replicates, paired with every other score
 * computed on the same matrix. Null scores become NaN, which {@link estimateFrom} drops.
 * O(B · n) time, O(B) memory besides the result.
 *
 * @throws AnalyticsError LENGTH_MISMATCH when the matrix is not B × n; BAD_INPUT for B < 1.
 */
export function spanScoreReplicates(counts: SpanCounts, multiplicities: MultiplicityMatrix, B: number): SpanScoreReplicates {
  const n = counts.predicted.length;
  for (const a of [counts.matchedPredicted, counts.matchedGold, counts.gold]) {
    if (a.length !== n) throw new AnalyticsError('LENGTH_MISMATCH', `span counts hold ${a.length} and ${n} entries`);
  }
  checkMatrix(n, multiplicities, B);
  const precision = new Float64Array(B);
  const recall = new Float64Array(B);
  const f1 = new Float64Array(B);
  const { matchedPredicted, predicted, matchedGold, gold } = counts;
  for (let b = 0; b < B; b++) {
    const off = b * n;
    let mp = 0;
    let p = 0;
    let mg = 0;
    let g = 0;
    for (let i = 0; i < n; i++) {
      const w = multiplicities[off + i]!;
      if (w === 0) continue;
      mp += w * matchedPredicted[i]!;
      p += w * predicted[i]!;
      mg += w * matchedGold[i]!;
      g += w * gold[i]!;
    }
    const P = p === 0 ? null : mp / p;
    const R = g === 0 ? null : mg / g;
    const F = spanF1(P, R);
    precision[b] = P ?? NaN;
    recall[b] = R ?? NaN;
    f1[b] = F ?? NaN;
  }
  return { precision, recall, f1 };
}

/**
 * Bootstrap replicates of a ratio of sums (a grounding or unaligned-quote rate) on every row of a
 * B × n multiplicity matrix; NaN where the replicate's denominator is 0. O(B · n).
 *
 * @throws AnalyticsError LENGTH_MISMATCH when the matrix is not B × n; BAD_INPUT for B < 1.
 */
export function ratioReplicates(counts: ReportRatioCounts, multiplicities: MultiplicityMatrix, B: number): Float64Array {
  const n = counts.numerator.length;
  if (counts.denominator.length !== n) {
    throw new AnalyticsError('LENGTH_MISMATCH', `numerators hold ${n} entries, denominators ${counts.denominator.length}`);
  }
  checkMatrix(n, multiplicities, B);
  const out = new Float64Array(B);
  for (let b = 0; b < B; b++) {
    const off = b * n;
    let num = 0;
    let den = 0;
    for (let i = 0; i < n; i++) {
      const w = multiplicities[off + i]!;
      if (w === 0) continue;
      num += w * counts.numerator[i]!;
      den += w * counts.denominator[i]!;
    }
    out[b] = den === 0 ? NaN : num / den;
  }
  return out;
}

/** How the intervals are drawn: the dataset's shared matrix, or (n, B, seed) to draw it. */
export interface EvidenceIntervalOptions {
  /** The B × n matrix every run of the dataset uses (pairs these intervals with the value scores). */
  multiplicities?: MultiplicityMatrix | null;
  /** B (default 1000; with a matrix, its row count). */
  resamples?: number;
  /** Seed of a matrix drawn here (default 42). */
  seed?: number;
  /** Coverage of the percentile interval (default 0.95). */
  confidence?: number;
}

/** Span scores with their percentile intervals; an estimate's value is NaN where the score is null. */
export interface SpanScoreEstimates {
  point: SpanScores;
  precision: Estimate;
  recall: Estimate;
  f1: Estimate;
  replicates: SpanScoreReplicates;
}

function matrixFor(n: number, options: EvidenceIntervalOptions): { W: MultiplicityMatrix; B: number } {
  if (options.multiplicities) {
    const B = options.resamples ?? options.multiplicities.length / n;
    return { W: options.multiplicities, B };
  }
  const B = options.resamples ?? DEFAULT_BOOTSTRAP_RESAMPLES;
  return { W: bootstrapMultiplicities(n, B, options.seed ?? DEFAULT_BOOTSTRAP_SEED), B };
}

/**
 * Span precision, recall and F1 with their §5 intervals: the point estimates on the full sample,
 * the percentile interval (type 7, {@link estimateFrom}) of {@link spanScoreReplicates} over the
 * shared or seeded multiplicity matrix; replicates where a score is null are left out of its
 * interval (`resamples` counts the rest). O(B · n + B log B).
 *
 * @throws AnalyticsError as {@link spanScoreReplicates}; OUT_OF_RANGE for confidence outside (0, 1);
 *   BAD_INPUT for n = 0 when no matrix is given.
 */
export function spanScoreEstimates(counts: SpanCounts, options: EvidenceIntervalOptions = {}): SpanScoreEstimates {
  const n = counts.predicted.length;
  const { W, B } = matrixFor(n, options);
  const confidence = options.confidence ?? DEFAULT_CONFIDENCE;
  const point = spanScoresWeighted(counts);
  const replicates = spanScoreReplicates(counts, W, B);
  return {
    point,
    precision: estimateFrom(point.precision ?? NaN, replicates.precision, confidence),
    recall: estimateFrom(point.recall ?? NaN, replicates.recall, confidence),
    f1: estimateFrom(point.f1 ?? NaN, replicates.f1, confidence),
    replicates,
  };
}

/**
 * A ratio of sums with its §5 interval (grounding or unaligned-quote rate): value on the full
 * sample (NaN when null), percentile interval of {@link ratioReplicates}. O(B · n + B log B).
 *
 * @throws AnalyticsError as {@link ratioReplicates}; OUT_OF_RANGE for confidence outside (0, 1).
 */
export function ratioEstimate(counts: ReportRatioCounts, options: EvidenceIntervalOptions = {}): Estimate {
  const n = counts.numerator.length;
  const { W, B } = matrixFor(n, options);
  const replicates = ratioReplicates(counts, W, B);
  return estimateFrom(weightedRatio(counts) ?? NaN, replicates, options.confidence ?? DEFAULT_CONFIDENCE);
}
