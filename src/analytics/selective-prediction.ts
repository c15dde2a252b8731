/**
 * Confidence and selective prediction (docs/scoring.md §11): where a field's confidence comes
 * from (self-consistency votes, token log-probabilities), and how well it ranks right values
 * above wrong ones (risk–coverage, AURC, coverage at a target accuracy) and states its own
 * accuracy (Brier score, expected calibration error).
 */
import { AnalyticsError } from './errors';
import { scoreGreater } from './tolerance';

/** One field of a variable: its confidence (null: none was observed) and its item score (§4). */
export interface ConfidentField {
  confidence: number | null;
  /** Item score in [0, 1] (1/0 for categorical, binary, numeric and exact variables). */
  score: number;
}

/** One point of the risk–coverage curve: the fields with confidence ≥ `confidence`. */
export interface RiskCoveragePoint {
  /** The threshold t: the confidence of the block that ends here. */
  confidence: number;
  /** Fields with confidence ≥ t. */
  fields: number;
  /** Share of the fields with a confidence that have confidence ≥ t. */
  coverage: number;
  /** Mean item score of those fields. */
  selectiveAccuracy: number;
  risk: number;
}

export interface RiskCoverage {
  /** Fields given, with a confidence or not. */
  fields: number;
  /** Fields with a confidence (the n of the curve). */
  withConfidence: number;
  /** withConfidence / fields; null with no fields. */
  confidenceShare: number | null;
  /** One point per block of equal confidences, highest confidence first. */
  curve: RiskCoveragePoint[];
  /** Area under the risk–coverage curve; null with no field with a confidence. */
  aurc: number | null;
}

/** Default target accuracy of {@link coverageAtAccuracy}. */
export const DEFAULT_TARGET_ACCURACY = 0.95;

/** Number of bins of the expected calibration error. */
export const CALIBRATION_BINS = 10;

function checkUnit(x: number, what: string): void {
  if (!(x >= 0 && x <= 1)) throw new AnalyticsError('OUT_OF_RANGE', `${what} must be in [0, 1], got ${x}`);
}

function checkFields(fields: readonly ConfidentField[]): void {
  for (const f of fields) {
    if (f.confidence !== null) checkUnit(f.confidence, 'a confidence');
    checkUnit(f.score, 'an item score');
  }
}

/** Fields with a confidence, highest confidence first; equal confidences keep the input order. */
function rankedByConfidence(fields: readonly ConfidentField[]): ConfidentField[] {
  return fields.filter((f) => f.confidence !== null).sort((a, b) => b.confidence! - a.confidence!);
}

/**
 * Risk–coverage curve and AURC of one variable of a run (docs/scoring.md §11).
 *
 * Definition: over the n fields with a confidence, sorted by confidence descending, fields whose
 * confidences are exactly equal (===) form one block and enter together. At the end of each block
 * with confidence t: coverage = #{confidence ≥ t}/n, selective accuracy = their mean item score,
 * risk = 1 − selective accuracy. AURC = (1/n) Σ_{i=1..n} risk of the first i fields, each field
 * of a block getting the block's risk, i.e. (1/n) Σ_blocks |block|·risk(block end). The share of
 * the fields that have a confidence is reported beside it. Reference: Geifman & El-Yaniv,
 * "Selective classification for deep neural networks" (2017), with §11's ties rule.
 * Complexity: O(n log n).
 *
 * @throws AnalyticsError OUT_OF_RANGE for a confidence or item score outside [0, 1] (or NaN).
 */
export function riskCoverage(fields: readonly ConfidentField[]): RiskCoverage {
  checkFields(fields);
  const ranked = rankedByConfidence(fields);
  const n = ranked.length;
  const curve: RiskCoveragePoint[] = [];
  let sum = 0;
  let area = 0;
  let i = 0;
  while (i < n) {
    const t = ranked[i]!.confidence!;
    let j = i;
    while (j < n && ranked[j]!.confidence === t) sum += ranked[j++]!.score;
    const selectiveAccuracy = sum / j;
    const risk = 1 - selectiveAccuracy;
    area += (j - i) * risk;
    curve.push({ confidence: t, fields: j, coverage: j / n, selectiveAccuracy, risk });
    i = j;
  }
  return {
    fields: fields.length,
    withConfidence: n,
    confidenceShare: fields.length === 0 ? null : n / fields.length,
    curve,
    aurc: n === 0 ? null : area / n,
  };
}

/**
 * Coverage at target accuracy a (docs/scoring.md §11): the largest coverage of the risk–coverage
 * curve whose selective accuracy is ≥ a, compared with the score tolerance of §6 (an accuracy
 * within 1e-12·max(1, |a|) below a reaches it), even where the curve dips below a at smaller
 * coverages; 0 when no point reaches a; null when no field has a confidence. This is the share of
 * values a hospital could accept without review at that accuracy. Complexity: O(n log n), or
 * O(blocks) given a curve.
 *
 * @throws AnalyticsError OUT_OF_RANGE for a target outside [0, 1], or as {@link riskCoverage}.
 */
export function coverageAtAccuracy(
  fieldsOrCurve: readonly ConfidentField[] | RiskCoverage,
  target: number = DEFAULT_TARGET_ACCURACY,
): number | null {
  checkUnit(target, 'the target accuracy');
  const rc = Array.isArray(fieldsOrCurve) ? riskCoverage(fieldsOrCurve) : (fieldsOrCurve as RiskCoverage);
  if (rc.withConfidence === 0) return null;
  let best = 0;
  for (const p of rc.curve) {
    if (!scoreGreater(target, p.selectiveAccuracy) && p.coverage > best) best = p.coverage;
  }
  return best;
}

/** Calibration of one categorical or binary variable of a run. */
export interface Calibration {
  /** Fields with a confidence. */
  n: number;
  /** mean((c − correct)²); null when n = 0. */
  brier: number | null;
  /** Σ_bins (n_bin/n)·|mean c − mean correct|; null when n = 0. */
  ece: number | null;
  /** Per bin k (confidences in [k/10, (k+1)/10), the last bin closed): count, mean c, accuracy. */
  bins: { count: number; meanConfidence: number | null; accuracy: number | null }[];
}

/** Bin of a confidence: min(9, ⌊10·c⌋) in IEEE double, so 0.3 is in bin 3 and 1.0 in bin 9. */
export function calibrationBin(confidence: number): number {
  return Math.min(CALIBRATION_BINS - 1, Math.floor(CALIBRATION_BINS * confidence));
}

/**
 * Brier score and expected calibration error of the fields with a confidence (docs/scoring.md
 * §11, categorical and binary variables; correct = item score 1).
 *
 * Definition: Brier = (1/n) Σ (c_i − correct_i)²; ECE = Σ_bins (n_bin/n)·|mean c − mean correct|
 * over 10 bins, bin = {@link calibrationBin}(c). Fields without a confidence are left out.
 * Reference: Brier (1950); Naeini, Cooper & Hauskrecht (2015) for the ECE; scikit-learn's
 * `brier_score_loss` is the oracle of the Brier score. Complexity: O(n).
 *
 * @throws AnalyticsError OUT_OF_RANGE for a confidence outside [0, 1]; BAD_INPUT for an item
 *   score other than 0 or 1 (calibration is of right or wrong values).
 */
export function calibration(fields: readonly ConfidentField[]): Calibration {
  checkFields(fields);
  const count = new Float64Array(CALIBRATION_BINS);
  const sumC = new Float64Array(CALIBRATION_BINS);
  const sumCorrect = new Float64Array(CALIBRATION_BINS);
  let n = 0;
  let squares = 0;
  for (const f of fields) {
    if (f.confidence === null) continue;
    if (f.score !== 0 && f.score !== 1) {
      throw new AnalyticsError('BAD_INPUT', `calibration needs item scores of 0 or 1, got ${f.score}`);
    }
    const c = f.confidence;
    const d = c - f.score;
    squares += d * d;
    const k = calibrationBin(c);
    count[k]!++;
    sumC[k]! += c;
    sumCorrect[k]! += f.score;
    n++;
  }
  let ece = 0;
  const bins: Calibration['bins'] = [];
  for (let k = 0; k < CALIBRATION_BINS; k++) {
    const m = count[k]!;
    if (m === 0) {
      bins.push({ count: 0, meanConfidence: null, accuracy: null });
      continue;
    }
    const meanC = sumC[k]! / m;
    const acc = sumCorrect[k]! / m;
    ece += (m / n) * Math.abs(meanC - acc);
    bins.push({ count: m, meanConfidence: meanC, accuracy: acc });
  }
  return { n, brier: n === 0 ? null : squares / n, ece: n === 0 ? null : ece, bins };
}

/**
 * Self-consistency confidence of a chosen value (docs/scoring.md §11): the share of the k
 * samples whose normalised value equals the chosen one, under the caller's equality of
 * normalised values (the one the vote used). Null with no samples. Complexity: O(k) equality
 * tests.
 */
export function selfConsistencyConfidence<T>(
  samples: readonly T[],
  chosen: T,
  equal: (a: T, b: T) => boolean,
): number | null {
  if (samples.length === 0) return null;
  let agree = 0;
  for (const s of samples) if (equal(s, chosen)) agree++;
  return agree / samples.length;
}

/**
 * Self-consistency confidence of a free-text or list value chosen as the embedding medoid
 * (docs/scoring.md §11): the medoid's mean similarity to the other samples, given those
 * similarities (one per other sample, in [0, 1] as §2's similarities are). Null when there is no
 * other sample. Complexity: O(k).
 *
 * @throws AnalyticsError OUT_OF_RANGE for a similarity outside [0, 1] (or NaN).
 */
export function medoidConfidence(similaritiesToOthers: readonly number[]): number | null {
  if (similaritiesToOthers.length === 0) return null;
  let sum = 0;
  for (const x of similaritiesToOthers) {
    checkUnit(x, 'a similarity');
    sum += x;
  }
  return sum / similaritiesToOthers.length;
}

/** One generated token with its text and natural-log probability, as chat endpoints return them. */
export interface TokenLogprob {
  token: string;
  logprob: number;
}

/**
 * Token log-probability confidence of a value (docs/scoring.md §11): exp(mean log-probability
 * of the tokens that spell the value). The tokens, in order, spell the generated text (the
 * concatenation of their texts); `start`–`end` is the value's range in that text in UTF-16 code
 * units, keys and quotes excluded (for `"grade": "G2"` the range of `G2`). A token spells the
 * value when it shares at least one code unit with the range, so a token `"G` that joins the
 * opening quote to the value counts and a token of the key or of the quotes alone does not.
 * Null when no token does (an empty range). Complexity: O(tokens).
 *
 * @throws AnalyticsError BAD_INPUT for offsets that are not integers 0 ≤ start ≤ end or that
 *   reach past the tokens' text; OUT_OF_RANGE for a log-probability that is not finite and ≤ 0.
 */
export function logprobConfidence(tokens: readonly TokenLogprob[], start: number, end: number): number | null {
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end < start) {
    throw new AnalyticsError('BAD_INPUT', `a value range needs integer offsets 0 <= start <= end, got [${start}, ${end})`);
  }
  let offset = 0;
  let sum = 0;
  let k = 0;
  for (const t of tokens) {
    if (!(Number.isFinite(t.logprob) && t.logprob <= 0)) {
      throw new AnalyticsError('OUT_OF_RANGE', `a token log-probability must be finite and <= 0, got ${t.logprob}`);
    }
    const next = offset + t.token.length;
    if (Math.max(offset, start) < Math.min(next, end)) {
      sum += t.logprob;
      k++;
    }
    offset = next;
  }
  if (end > offset) {
    throw new AnalyticsError('BAD_INPUT', `the value range ends at ${end}, past the ${offset} code units the tokens spell`);
  }
  return k === 0 ? null : Math.exp(sum / k);
}
