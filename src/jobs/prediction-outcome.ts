/**
 * How one report's extraction ends, for runs (the executor) and extract calls alike: a strategy's
 * result or error becomes the prediction row that is stored and what the caller is told.
 */
import { alignmentIndex, alignQuote, type AlignedQuote, type AlignmentIndex } from '../extraction/evidence-alignment';
import type { ExtractionResult } from '../extraction/types';
import { describeFailure, redact, type Failure } from './failure';
import { UnstorableRowError, unstorableProblem, type PredictionRow, type RowKey } from './prediction-writer';

/** A FAILED row with nothing in it yet. */
export function emptyRow(key: RowKey): PredictionRow {
  return {
    ...key,
    status: 'FAILED',
    values: null,
    cells: {},
    parsed: null,
    raw: null,
    reasoning: null,
    samples: null,
    finishReason: null,
    latencyMs: null,
    promptTokens: null,
    completionTokens: null,
    attempts: 1,
    error: null,
    errorCode: null,
    inputTruncated: false,
    evidence: null,
  };
}

/**
 * Each variable's quotes aligned to spans of the report text (METRICS.md §10), against the whole
 * stored text even when the prompt had it cut to the context: a span is a place in the report.
 */
export function alignedEvidence(reportText: string, quotes: Readonly<Record<string, readonly string[]>>): Record<string, AlignedQuote[]> {
  const out: Record<string, AlignedQuote[]> = {};
  let index: AlignmentIndex | null = null;
  for (const [key, list] of Object.entries(quotes)) {
    if (list.length > 0) index ??= alignmentIndex(reportText);
    out[key] = list.map((quote) => alignQuote(index!, quote));
  }
  return out;
}

/** The row of a report the strategy answered: cells (skipped ones marked), outputs, usage. */
export function succeededRow(key: RowKey, result: ExtractionResult, reportText: string): PredictionRow {
  const skipped = new Set(result.skipped);
  const cells: Record<string, unknown> = {};
  for (const [k, cell] of Object.entries(result.cells)) cells[k] = skipped.has(k) ? { ...cell, skipped: true } : cell;
  const joined = (x: string | string[] | null): string | null => (x === null ? null : Array.isArray(x) ? x.filter((s) => s).join('\n\n') || null : x);
  return {
    ...emptyRow(key),
    status: 'SUCCEEDED',
    values: result.values,
    cells,
    parsed: result.json,
    raw: joined(result.raw),
    reasoning: joined(result.reasoning),
    samples: (result.samples ?? result.steps ?? null) as unknown[] | null,
    finishReason: result.finishReason,
    latencyMs: Math.round(result.latencyMs),
    promptTokens: result.promptTokens,
    completionTokens: result.completionTokens,
    attempts: result.attempts,
    inputTruncated: result.inputTruncated,
    evidence: result.quotes ? alignedEvidence(reportText, result.quotes) : null,
  };
}

/**
 * The row that replaces `row` when what the endpoint answered cannot be stored as it is (NUL
 * characters, lone surrogates, numbers out of range, or PostgreSQL refused it): FAILED with the
 * code UNSTORABLE and the usage of the calls, so the run can finish and resumeRun tries it again.
 */
export function unstorableRow(row: PredictionRow, error: unknown): PredictionRow {
  const { projectId, runId, reportId } = row;
  return {
    ...emptyRow({ projectId, runId, reportId }),
    latencyMs: row.latencyMs,
    attempts: row.attempts,
    error: error instanceof UnstorableRowError ? error.message : "the endpoint's answer could not be stored",
    errorCode: 'UNSTORABLE',
  };
}

/** How the strategy ended: its result, or what it threw and how long it ran until then. */
export type StrategyEnding = { result: ExtractionResult } | { error: unknown; latencyMs: number };

export interface OutcomeSettings {
  /** The report's deadline, named in the message of a report that ran out of it. */
  deadlineMs: number;
  /** Redacted from every stored message (the endpoint's API key). */
  secrets: readonly (string | null | undefined)[];
  /** The report's whole text, which the quotes of an answer with evidence are aligned to. */
  reportText: string;
}

/** The row to store; the strategy's result, or the failure in the row; how long the report took. */
export type PredictionOutcome =
  | { status: 'SUCCEEDED'; row: PredictionRow; result: ExtractionResult; latencyMs: number }
  | { status: 'FAILED'; row: PredictionRow; failure: Failure; latencyMs: number };

/**
 * The prediction a strategy's ending makes. A result that cannot be stored as it is fails with
 * UNSTORABLE (the usage of its calls kept); an error becomes a FAILED row with the failure's code
 * and its message in our own words, secrets redacted.
 */
export function predictionOutcome(key: RowKey, ending: StrategyEnding, settings: OutcomeSettings): PredictionOutcome {
  if ('result' in ending) {
    const row = succeededRow(key, ending.result, settings.reportText);
    const problem = unstorableProblem(row);
    const latencyMs = Math.round(ending.result.latencyMs);
    if (!problem) return { status: 'SUCCEEDED', row, result: ending.result, latencyMs };
    const error = new UnstorableRowError(problem);
    return { status: 'FAILED', row: unstorableRow(row, error), failure: describeFailure(error, settings.deadlineMs, row.attempts), latencyMs };
  }
  const failure = describeFailure(ending.error, settings.deadlineMs, 1);
  const message = redact(failure.message, settings.secrets);
  return {
    status: 'FAILED',
    row: { ...emptyRow(key), latencyMs: ending.latencyMs, attempts: failure.attempts, error: message, errorCode: failure.code },
    failure: { ...failure, message },
    latencyMs: ending.latencyMs,
  };
}
