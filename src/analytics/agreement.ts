/**
 * Inter-rater agreement, the human ceiling (docs/scoring.md §7): annotators scored against each
 * other with each variable's own metric, with a bootstrap CI from resampling reports.
 */
import {
  DEFAULT_BOOTSTRAP_RESAMPLES,
  DEFAULT_BOOTSTRAP_SEED,
  DEFAULT_CONFIDENCE,
  bootstrapMultiplicities,
  estimateFrom,
  groupedMeanReplicates,
} from './bootstrap';
import type { Estimate } from './bootstrap';
import type { EmbedderId, SimilarityLookup } from './embedding/embedder';
import { AnalyticsError } from './errors';
import { encodeReferences, groupedMean, itemScores, primaryMetric } from './metrics';
import type { MetricKind } from './metrics';
import type { RecordCell } from './normalise';
import type { NormalisedCell, VariableSpec } from './types';

/** One annotator's normalised records, one per report, in the dataset's report order. */
export interface AnnotatorRecords {
  id: string;
  /** Records from `normaliseRecord(specs, raw, 'reference')`; `undefined` = report not annotated. */
  records: readonly (Readonly<Record<string, RecordCell>> | undefined)[];
}

export interface AgreementInput {
  specs: readonly VariableSpec[];
  annotators: readonly AnnotatorRecords[];
  /** Needed when a FREE_TEXT or LIST variable has differing strings. */
  similarity?: SimilarityLookup | null;
  embedder?: EmbedderId | null;
  resamples?: number;
  seed?: number;
  confidence?: number;
  /** Shared B × n multiplicity matrix (e.g. the one the dataset's model runs used). */
  multiplicities?: Int32Array | null;
}

/** Agreement of one annotator pair on one variable. */
export interface PairAgreement {
  a: string;
  b: string;
  /** Reports both annotated for the variable. */
  n: number;
  /** B scored against A (A as reference). */
  bAgainstA: number;
  /** A scored against B. */
  aAgainstB: number;
  /** Mean of the two directions. */
  value: number;
}

export interface VariableAgreement {
  key: string;
  metric: MetricKind;
  /** Mean over pairs with at least one common report; NaN when there is none. */
  estimate: Estimate;
  pairs: PairAgreement[];
}

export interface AgreementResult {
  annotators: string[];
  n: number;
  resamples: number;
  perVariable: VariableAgreement[];
  /** Weighted macro average over variables that have an agreement. */
  macro: Estimate;
  /** Replicates, entry (variable v, replicate b) at v·B + b. */
  replicates: Float64Array;
  macroReplicates: Float64Array;
  embedder: EmbedderId | null;
}

function cellOf(a: AnnotatorRecords, i: number, key: string): RecordCell {
  const rec = a.records[i];
  if (rec === undefined) return undefined;
  const cell = rec[key];
  return cell === undefined || cell.status === 'INVALID' ? undefined : cell;
}

/**
 * Inter-rater agreement (docs/scoring.md §7). For each variable and each unordered annotator pair
 * (A, B): on the reports both annotated, score B against A and A against B with the variable's
 * primary metric and average the two; average over pairs that share a report; macro-average
 * over variables (spec weights, default 1) that have an agreement. The CI resamples reports
 * with the multiplicity matrix (seeded; pass the model runs' matrix to pair IRA with them) and
 * recomputes every pair, direction and variable per replicate. O(P · V · B · n) for P pairs.
 *
 * @throws AnalyticsError BAD_INPUT for fewer than two annotators, duplicate ids or differing
 *   report counts; as `itemScore` when a similarity lookup is needed and missing.
 */
export function interRaterAgreement(input: AgreementInput): AgreementResult {
  const { specs, annotators } = input;
  if (annotators.length < 2) throw new AnalyticsError('BAD_INPUT', 'inter-rater agreement needs at least two annotators');
  const ids = annotators.map((a) => a.id);
  if (new Set(ids).size !== ids.length) throw new AnalyticsError('BAD_INPUT', 'duplicate annotator ids');
  const n = annotators[0]!.records.length;
  for (const a of annotators) {
    if (a.records.length !== n) {
      throw new AnalyticsError('LENGTH_MISMATCH', `annotator "${a.id}" has ${a.records.length} records, expected ${n}`);
    }
  }
  if (specs.length === 0) throw new AnalyticsError('EMPTY_INPUT', 'inter-rater agreement needs variables');
  const confidence = input.confidence ?? DEFAULT_CONFIDENCE;
  const B = input.resamples ?? (input.multiplicities ? input.multiplicities.length / n : DEFAULT_BOOTSTRAP_RESAMPLES);
  const W = input.multiplicities ?? bootstrapMultiplicities(n, B, input.seed ?? DEFAULT_BOOTSTRAP_SEED);
  if (W.length !== n * B) throw new AnalyticsError('LENGTH_MISMATCH', `multiplicities hold ${W.length} entries, expected ${B} × ${n}`);

  const V = specs.length;
  const replicates = new Float64Array(V * B);
  const pairReps = new Float64Array(2 * B);
  const points: number[] = [];
  const perVariable: VariableAgreement[] = specs.map((spec, v) => {
    const metric = primaryMetric(spec.type);
    const pairs: PairAgreement[] = [];
    const sum = new Float64Array(B);
    const count = new Float64Array(B);
    for (let x = 0; x < annotators.length; x++) {
      for (let y = x + 1; y < annotators.length; y++) {
        const A = annotators[x]!;
        const Bn = annotators[y]!;
        const refA: RecordCell[] = [];
        const refB: RecordCell[] = [];
        let common = 0;
        for (let i = 0; i < n; i++) {
          const ca = cellOf(A, i, spec.key);
          const cb = cellOf(Bn, i, spec.key);
          const both = ca !== undefined && cb !== undefined;
          if (both) common++;
          refA.push(both ? ca : undefined);
          refB.push(both ? cb : undefined);
        }
        if (common === 0) continue;
        const opts = { similarity: input.similarity ?? null };
        const itemsBA = itemScores(spec, refA, refB as (NormalisedCell | undefined)[], opts);
        const itemsAB = itemScores(spec, refB, refA as (NormalisedCell | undefined)[], opts);
        const groupsA = encodeReferences(spec, refA, metric).groups;
        const groupsB = encodeReferences(spec, refB, metric).groups;
        const bAgainstA = groupedMean(groupsA, itemsBA);
        const aAgainstB = groupedMean(groupsB, itemsAB);
        pairs.push({ a: A.id, b: Bn.id, n: common, bAgainstA, aAgainstB, value: (bAgainstA + aAgainstB) / 2 });
        groupedMeanReplicates(groupsA, [itemsBA], W, B, { out: pairReps, offset: 0, runStride: B });
        groupedMeanReplicates(groupsB, [itemsAB], W, B, { out: pairReps, offset: B, runStride: B });
        for (let b = 0; b < B; b++) {
          const r = (pairReps[b]! + pairReps[B + b]!) / 2;
          if (Number.isFinite(r)) {
            sum[b]! += r;
            count[b]!++;
          }
        }
      }
    }
    for (let b = 0; b < B; b++) replicates[v * B + b] = count[b]! > 0 ? sum[b]! / count[b]! : NaN;
    const value = pairs.length === 0 ? NaN : pairs.reduce((s, p) => s + p.value, 0) / pairs.length;
    points.push(value);
    return {
      key: spec.key,
      metric,
      estimate: estimateFrom(value, replicates.subarray(v * B, (v + 1) * B), confidence),
      pairs,
    };
  });

  const weights = specs.map((s) => s.weight ?? 1);
  const macroOf = (get: (v: number) => number): number => {
    let num = 0;
    let den = 0;
    for (let v = 0; v < V; v++) {
      const x = get(v);
      if (!Number.isFinite(x) || weights[v] === 0) continue;
      num += weights[v]! * x;
      den += weights[v]!;
    }
    return den === 0 ? NaN : num / den;
  };
  const macroReplicates = new Float64Array(B);
  for (let b = 0; b < B; b++) macroReplicates[b] = macroOf((v) => replicates[v * B + b]!);
  const usesSimilarity = specs.some((s) => s.type === 'FREE_TEXT' || s.type === 'LIST');
  return {
    annotators: ids,
    n,
    resamples: B,
    perVariable,
    macro: estimateFrom(macroOf((v) => points[v]!), macroReplicates, confidence),
    replicates,
    macroReplicates,
    embedder: usesSimilarity ? input.embedder ?? null : null,
  };
}
