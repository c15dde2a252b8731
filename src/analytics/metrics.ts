/**
 * Per-variable metrics (docs/scoring.md §2) and aggregates (§4).
 *
 * Every metric is written as a *grouped mean*: reports carry a group code (the reference class
 * for balanced accuracy, one common group for plain means) and an item score; the metric is the
 * mean over non-empty groups of the group's mean item score. The bootstrap (bootstrap/)
 * evaluates the same expression with multiplicity weights, so point estimates and replicates
 * share one definition.
 */
import type { EmbedderId, SimilarityLookup } from './embedding/embedder';
import { AnalyticsError } from './errors';
import { cellsEqual, collapseValue, hasCollapse } from './normalise';
import type { RecordCell } from './normalise';
import { INVALID_CATEGORIES } from './types';
import type { InvalidCategory, NormalisedCell, VariableSpec, VariableType } from './types';

/** Which statistic a variable's primary score is. */
export type MetricKind = 'BALANCED_ACCURACY' | 'ACCURACY' | 'COSINE_SIMILARITY' | 'SYMMETRIC_SIMILARITY';

/** Primary metric of each variable type (docs/scoring.md §1 table). */
export function primaryMetric(type: VariableType): MetricKind {
  switch (type) {
    case 'CATEGORICAL':
    case 'BINARY':
      return 'BALANCED_ACCURACY';
    case 'NUMERIC':
    case 'EXACT_STRING':
      return 'ACCURACY';
    case 'FREE_TEXT':
      return 'COSINE_SIMILARITY';
    case 'LIST':
      return 'SYMMETRIC_SIMILARITY';
    default: {
      const never: never = type;
      throw new AnalyticsError('BAD_SPEC', `unknown variable type ${String(never)}`);
    }
  }
}

/**
 * Grouped mean: Σ_g [D_g > 0] (N_g / D_g) / #{g : D_g > 0} with N_g = Σ_{i: g_i = g} w_i x_i and
 * D_g = Σ_{i: g_i = g} w_i. Reports with a negative group are left out. Weights default to 1.
 * With groups = reference classes and x = correctness this is balanced accuracy; with a single
 * group it is the (weighted) mean. Returns NaN when no group has positive weight. O(n + G).
 *
 * @throws AnalyticsError LENGTH_MISMATCH when arrays differ in length.
 */
export function groupedMean(
  groups: ArrayLike<number>,
  items: ArrayLike<number>,
  weights?: ArrayLike<number> | null,
): number {
  const n = groups.length;
  if (items.length !== n || (weights && weights.length !== n)) {
    throw new AnalyticsError('LENGTH_MISMATCH', `groupedMean: lengths ${n}, ${items.length}, ${weights?.length ?? n}`);
  }
  let G = 0;
  for (let i = 0; i < n; i++) if (groups[i]! >= G) G = groups[i]! + 1;
  const num = new Float64Array(G);
  const den = new Float64Array(G);
  for (let i = 0; i < n; i++) {
    const g = groups[i]!;
    if (g < 0) continue;
    const w = weights ? weights[i]! : 1;
    if (w === 0) continue;
    num[g]! += w * items[i]!;
    den[g]! += w;
  }
  let sum = 0;
  let k = 0;
  for (let g = 0; g < G; g++) {
    if (den[g]! > 0) {
      sum += num[g]! / den[g]!;
      k++;
    }
  }
  return k === 0 ? NaN : sum / k;
}

/** A class label for the label-level functions; `null` in predictions is an INVALID answer. */
export type Label = string | number;

/**
 * Balanced accuracy: mean over the classes present in `yTrue` of recall TP_c / (TP_c + FN_c).
 * Classes that occur only in predictions add no term; a `null` prediction (INVALID) is wrong.
 * Equals scikit-learn `balanced_accuracy_score(y_true, y_pred, adjusted=False)` (without the
 * warning for predicted-only classes). Optional non-negative sample weights. Source: extraction
 * paper Suppl. B eq. (1); docs/scoring.md §2. O(n).
 *
 * @throws AnalyticsError EMPTY_INPUT for no reports; LENGTH_MISMATCH for unequal lengths.
 */
export function balancedAccuracy(
  yTrue: readonly Label[],
  yPred: readonly (Label | null)[],
  weights?: ArrayLike<number> | null,
): number {
  if (yTrue.length !== yPred.length) {
    throw new AnalyticsError('LENGTH_MISMATCH', `balancedAccuracy: ${yTrue.length} references, ${yPred.length} predictions`);
  }
  if (yTrue.length === 0) throw new AnalyticsError('EMPTY_INPUT', 'balancedAccuracy: no reports');
  const codes = new Map<string, number>();
  const groups = new Int32Array(yTrue.length);
  const correct = new Float64Array(yTrue.length);
  yTrue.forEach((y, i) => {
    const key = `${typeof y}:${String(y)}`;
    let g = codes.get(key);
    if (g === undefined) {
      g = codes.size;
      codes.set(key, g);
    }
    groups[i] = g;
    const p = yPred[i];
    correct[i] = p !== null && p !== undefined && typeof p === typeof y && p === y ? 1 : 0;
  });
  return groupedMean(groups, correct, weights);
}

/**
 * Accuracy: fraction of reports whose prediction equals the reference (`null` prediction =
 * INVALID = wrong). Source: extraction paper Suppl. B eq. (2). O(n).
 *
 * @throws AnalyticsError EMPTY_INPUT / LENGTH_MISMATCH as {@link balancedAccuracy}.
 */
export function accuracy(yTrue: readonly Label[], yPred: readonly (Label | null)[]): number {
  if (yTrue.length !== yPred.length) {
    throw new AnalyticsError('LENGTH_MISMATCH', `accuracy: ${yTrue.length} references, ${yPred.length} predictions`);
  }
  if (yTrue.length === 0) throw new AnalyticsError('EMPTY_INPUT', 'accuracy: no reports');
  let k = 0;
  yTrue.forEach((y, i) => {
    if (yPred[i] === y) k++;
  });
  return k / yTrue.length;
}

/**
 * Symmetric list similarity of one report (extraction paper Suppl. B eq. (5)):
 * ½ (mean_{g∈G} max_{p∈P} s(g,p) + mean_{p∈P} max_{g∈G} s(p,g)); both lists empty → 1, exactly
 * one empty → 0. O(|G|·|P|) similarity look-ups.
 */
export function symmetricSimilarity(
  reference: readonly string[],
  prediction: readonly string[],
  similarity: SimilarityLookup,
): number {
  if (reference.length === 0 && prediction.length === 0) return 1;
  if (reference.length === 0 || prediction.length === 0) return 0;
  // An item present on both sides has max similarity 1 (cosine ≤ 1), so only the other items
  // need look-ups; each pair is looked up at most once.
  const inP = new Set(prediction);
  const inG = new Set(reference);
  const memo = new Map<string, number>();
  const sim = (g: string, p: string): number => {
    if (g === p) return 1;
    const key = `${g}\u0000${p}`;
    let v = memo.get(key);
    if (v === undefined) {
      v = similarity(g, p);
      memo.set(key, v);
    }
    return v;
  };
  let recall = 0;
  for (const g of reference) {
    if (inP.has(g)) {
      recall += 1;
      continue;
    }
    let best = -Infinity;
    for (const p of prediction) best = Math.max(best, sim(g, p));
    recall += best;
  }
  let precision = 0;
  for (const p of prediction) {
    if (inG.has(p)) {
      precision += 1;
      continue;
    }
    let best = -Infinity;
    for (const g of reference) best = Math.max(best, sim(g, p));
    precision += best;
  }
  return 0.5 * (recall / reference.length + precision / prediction.length);
}

export interface ItemScoreOptions {
  /** Needed for FREE_TEXT and LIST variables whose strings differ. */
  similarity?: SimilarityLookup | null;
  /** Score with the variable's collapse map applied to both sides (collapsed scoring). */
  collapsed?: boolean;
}

function requireSimilarity(spec: VariableSpec, opts?: ItemScoreOptions): SimilarityLookup {
  if (!opts?.similarity) {
    throw new AnalyticsError('BAD_INPUT', `variable "${spec.key}" (${spec.type}) needs a similarity lookup`);
  }
  return opts.similarity;
}

/**
 * Per-report item score (docs/scoring.md §4) of one prediction against one reference:
 * - CATEGORICAL/BINARY/NUMERIC/EXACT_STRING: 1 if equal (MISSING equals MISSING, numbers within
 *   the variable's tolerance), else 0;
 * - FREE_TEXT: both MISSING → 1; one MISSING or INVALID → 0; identical → 1; else s(ref, pred);
 * - LIST: symmetric similarity with MISSING read as the empty list; INVALID → 0.
 * INVALID predictions score 0 everywhere, even against a MISSING reference. O(1) or
 * O(|G|·|P|) for lists.
 *
 * @throws AnalyticsError BAD_INPUT when a similarity is needed and none is given.
 */
export function itemScore(
  spec: VariableSpec,
  reference: NormalisedCell,
  prediction: NormalisedCell,
  opts?: ItemScoreOptions,
): number {
  if (prediction.status === 'INVALID' || reference.status === 'INVALID') return 0;
  switch (spec.type) {
    case 'CATEGORICAL':
    case 'BINARY': {
      const r = opts?.collapsed ? collapseValue(spec, reference) : reference;
      const p = opts?.collapsed ? collapseValue(spec, prediction) : prediction;
      return cellsEqual(r, p) ? 1 : 0;
    }
    case 'NUMERIC':
      return cellsEqual(reference, prediction, spec.tolerance ?? 0) ? 1 : 0;
    case 'EXACT_STRING':
      return cellsEqual(reference, prediction) ? 1 : 0;
    case 'FREE_TEXT': {
      if (reference.status === 'MISSING' || prediction.status === 'MISSING') {
        return reference.status === prediction.status ? 1 : 0;
      }
      const a = String(reference.value);
      const b = String(prediction.value);
      return a === b ? 1 : requireSimilarity(spec, opts)(a, b);
    }
    case 'LIST': {
      const a = reference.status === 'VALUE' ? asList(reference.value) : [];
      const b = prediction.status === 'VALUE' ? asList(prediction.value) : [];
      if (a.length === 0 || b.length === 0) return a.length === b.length ? 1 : 0;
      return symmetricSimilarity(a, b, requireSimilarity(spec, opts));
    }
    default: {
      const never: never = spec.type;
      throw new AnalyticsError('BAD_SPEC', `unknown variable type ${String(never)}`);
    }
  }
}

function asList(v: string | number | string[]): string[] {
  return Array.isArray(v) ? v : [String(v)];
}

/** Reference encoding of one variable: group code per report (−1 = not annotated) and the class names. */
export interface ReferenceEncoding {
  /** Group per report: the reference class index for balanced accuracy, 0 for plain means, −1 for no reference. */
  groups: Int32Array;
  /** Class name of each group (`"MISSING"` is written as the symbol below). */
  classes: string[];
  /** Number of reports with a reference. */
  n: number;
}

/** Class name used for the MISSING reference class. */
export const MISSING_CLASS = '\u2205MISSING';

/**
 * Encode a variable's references for a metric: for BALANCED_ACCURACY each reference class
 * (option, or MISSING; after collapsing when `collapsed`) gets a group in order of first
 * appearance; other metrics put every annotated report in group 0. An absent reference
 * (`undefined`) gets −1 and is excluded; an INVALID reference (malformed annotation) is also
 * excluded. O(n).
 */
export function encodeReferences(
  spec: VariableSpec,
  references: readonly RecordCell[],
  metric: MetricKind = primaryMetric(spec.type),
  collapsed = false,
): ReferenceEncoding {
  const groups = new Int32Array(references.length);
  const index = new Map<string, number>();
  const classes: string[] = [];
  let n = 0;
  references.forEach((cell, i) => {
    if (cell === undefined || cell.status === 'INVALID') {
      groups[i] = -1;
      return;
    }
    n++;
    if (metric !== 'BALANCED_ACCURACY') {
      groups[i] = 0;
      if (classes.length === 0) classes.push('ALL');
      return;
    }
    const c = collapsed ? collapseValue(spec, cell) : cell;
    const name = c.status === 'VALUE' ? String(c.value) : MISSING_CLASS;
    let g = index.get(name);
    if (g === undefined) {
      g = classes.length;
      index.set(name, g);
      classes.push(name);
    }
    groups[i] = g;
  });
  return { groups, classes, n };
}

/**
 * Item scores of one run on one variable: `itemScore` for each report with a reference, NaN
 * where the reference is absent. A missing prediction (`undefined`) is INVALID/MISSING
 * (docs/scoring.md §5). O(n) plus similarity look-ups.
 *
 * @throws AnalyticsError LENGTH_MISMATCH when the arrays differ in length; BAD_INPUT as itemScore.
 */
export function itemScores(
  spec: VariableSpec,
  references: readonly RecordCell[],
  predictions: readonly (NormalisedCell | undefined)[],
  opts?: ItemScoreOptions,
): Float64Array {
  if (references.length !== predictions.length) {
    throw new AnalyticsError('LENGTH_MISMATCH', `variable "${spec.key}": ${references.length} references, ${predictions.length} predictions`);
  }
  const out = new Float64Array(references.length);
  references.forEach((ref, i) => {
    out[i] = ref === undefined || ref.status === 'INVALID' ? NaN : itemScore(spec, ref, predictions[i] ?? NO_ANSWER, opts);
  });
  return out;
}

/** How a report without a prediction (or without the key) is scored: INVALID, category MISSING (docs/scoring.md §5). */
export const NO_ANSWER: NormalisedCell = Object.freeze({ status: 'INVALID', category: 'MISSING' }) as NormalisedCell;

/** Effective and conditional value of one metric. */
export interface ScorePair {
  /** INVALID counted as wrong (the default everywhere). NaN when no report has a reference. */
  effective: number;
  /** On reports with a valid prediction only; null when there is none. */
  conditional: number | null;
}

/** Full per-variable result (docs/scoring.md §2). */
export interface VariableScore {
  key: string;
  type: VariableType;
  metric: MetricKind;
  /** Primary score, effective (= `primary.effective`). */
  value: number;
  primary: ScorePair;
  /** Plain accuracy (exact equality of normalised values; for FREE_TEXT/LIST, identical strings / multisets). */
  accuracy: ScorePair;
  /** Collapsed-scoring variants, present for categorical variables with a collapse map. */
  collapsed: { primary: ScorePair; accuracy: ScorePair } | null;
  /** Reports with a reference. */
  n: number;
  /** Valid predictions among them (VALUE or MISSING). */
  valid: number;
  /** valid / n (NaN when n = 0). */
  validity: number;
  invalid: Record<InvalidCategory, number>;
  /** Embedding provider behind similarity scores, when one was used. */
  embedder: EmbedderId | null;
}

export interface ScoreVariableOptions extends Omit<ItemScoreOptions, 'collapsed'> {
  /** Recorded on the score for FREE_TEXT / LIST variables. */
  embedder?: EmbedderId | null;
}

function pair(groups: Int32Array, items: Float64Array, validMask: Uint8Array): ScorePair {
  const effective = groupedMean(groups, items);
  const condGroups = groups.map((g, i) => (validMask[i] ? g : -1));
  const hasValid = condGroups.some((g) => g >= 0);
  return { effective, conditional: hasValid ? groupedMean(condGroups, items) : null };
}

function equalityItems(
  spec: VariableSpec,
  references: readonly RecordCell[],
  predictions: readonly (NormalisedCell | undefined)[],
  collapsed: boolean,
): Float64Array {
  const tol = spec.type === 'NUMERIC' ? spec.tolerance ?? 0 : 0;
  return Float64Array.from(references, (ref, i) => {
    if (ref === undefined || ref.status === 'INVALID') return NaN;
    const p = predictions[i] ?? NO_ANSWER;
    const r = collapsed ? collapseValue(spec, ref) : ref;
    const q = collapsed ? collapseValue(spec, p) : p;
    return cellsEqual(r, q, tol) ? 1 : 0;
  });
}

/**
 * Score one run on one variable (docs/scoring.md §2): the primary metric (balanced accuracy,
 * accuracy, cosine or symmetric similarity by type), plain accuracy, validity and the INVALID
 * breakdown by category, effective and conditional variants, and exact/collapsed variants for
 * categorical variables with a collapse map. Reports whose reference is absent are left out.
 * O(n) plus similarity look-ups.
 *
 * @throws AnalyticsError LENGTH_MISMATCH; BAD_INPUT when a similarity lookup is needed and missing.
 */
export function scoreVariable(
  spec: VariableSpec,
  references: readonly RecordCell[],
  predictions: readonly (NormalisedCell | undefined)[],
  opts?: ScoreVariableOptions,
): VariableScore {
  const metric = primaryMetric(spec.type);
  const enc = encodeReferences(spec, references, metric);
  const items = itemScores(spec, references, predictions, opts ?? undefined);
  const invalid = Object.fromEntries(INVALID_CATEGORIES.map((c) => [c, 0])) as Record<InvalidCategory, number>;
  const validMask = new Uint8Array(references.length);
  let valid = 0;
  references.forEach((ref, i) => {
    if (enc.groups[i]! < 0 || ref === undefined) return;
    const p = predictions[i] ?? NO_ANSWER;
    if (p.status === 'INVALID') invalid[p.category]++;
    else {
      validMask[i] = 1;
      valid++;
    }
  });
  const primary = pair(enc.groups, items, validMask);
  const accEnc = metric === 'BALANCED_ACCURACY' ? encodeReferences(spec, references, 'ACCURACY') : enc;
  const accuracyPair =
    metric === 'ACCURACY' ? primary : pair(accEnc.groups, equalityItems(spec, references, predictions, false), validMask);
  let collapsed: VariableScore['collapsed'] = null;
  if (hasCollapse(spec)) {
    const cEnc = encodeReferences(spec, references, metric, true);
    const cItems = equalityItems(spec, references, predictions, true);
    collapsed = { primary: pair(cEnc.groups, cItems, validMask), accuracy: pair(accEnc.groups, cItems, validMask) };
  }
  const usesSimilarity = metric === 'COSINE_SIMILARITY' || metric === 'SYMMETRIC_SIMILARITY';
  return {
    key: spec.key,
    type: spec.type,
    metric,
    value: primary.effective,
    primary,
    accuracy: accuracyPair,
    collapsed,
    n: enc.n,
    valid,
    validity: enc.n === 0 ? NaN : valid / enc.n,
    invalid,
    embedder: usesSimilarity ? opts?.embedder ?? null : null,
  };
}

/**
 * Macro average (docs/scoring.md §4, extraction paper Suppl. B eq. (7)): Σ_v w_v S_v / Σ_v w_v over
 * variables with a finite score (a variable with no annotated report has no score and is left
 * out); weights default to 1. NaN when no variable has a score. O(V).
 *
 * @throws AnalyticsError BAD_INPUT for a negative or non-finite weight.
 */
export function macroAverage(scores: readonly { value: number; weight?: number | null }[]): number {
  let num = 0;
  let den = 0;
  for (const s of scores) {
    const w = s.weight ?? 1;
    if (!(w >= 0) || !Number.isFinite(w)) throw new AnalyticsError('BAD_INPUT', `macroAverage: weight ${w}`);
    if (!Number.isFinite(s.value) || w === 0) continue;
    num += w * s.value;
    den += w;
  }
  return den === 0 ? NaN : num / den;
}

/**
 * Per-report score (docs/scoring.md §4): for each report, the (weighted) mean over variables of its
 * item score, over the variables that have a reference for that report (NaN items are skipped);
 * NaN for a report with no annotated variable. `itemsByVariable[v][i]` as from {@link itemScores}.
 * O(V·n).
 *
 * @throws AnalyticsError LENGTH_MISMATCH when variables have different report counts.
 */
export function perReportScores(
  itemsByVariable: readonly ArrayLike<number>[],
  weights?: readonly number[] | null,
): Float64Array {
  const n = itemsByVariable[0]?.length ?? 0;
  const out = new Float64Array(n);
  const den = new Float64Array(n);
  itemsByVariable.forEach((items, v) => {
    if (items.length !== n) throw new AnalyticsError('LENGTH_MISMATCH', `perReportScores: variable ${v} has ${items.length} reports, not ${n}`);
    const w = weights?.[v] ?? 1;
    for (let i = 0; i < n; i++) {
      const x = items[i]!;
      if (Number.isNaN(x)) continue;
      out[i]! += w * x;
      den[i]! += w;
    }
  });
  for (let i = 0; i < n; i++) out[i] = den[i]! > 0 ? out[i]! / den[i]! : NaN;
  return out;
}
