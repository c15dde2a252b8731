/**
 * SELF_CONSISTENCY: k samples of the chain-of-thought prompt, each sent with ITS OWN temperature
 * (and seed + i when a seed is set, so samples differ even at equal temperatures), run
 * concurrently; each variable is then aggregated over the samples' normalised cells
 * (aggregation.ts: majority of at least two votes, else embedding medoid; free text and lists by
 * medoid). Every sample is kept in the result. A failed sample does not vote; if every sample
 * fails, the first error is thrown.
 */
import { aggregateCells, lexicalEmbedFn } from '../aggregation';
import { ExtractionError } from '../errors';
import { buildMessages } from '../prompt-builder';
import type { CallRecord, ExtractionResult, SampleRecord, SelfConsistencyOptions, StrategyContext } from '../types';
import { buildRequest, callOnce, errorMessage, now, prepare, STRATEGY_FAMILY, sumNullable, valuesOf, type Strategy } from './common';

/** Base temperature when the run sets none (the paper's common setting). */
export const DEFAULT_BASE_TEMPERATURE = 0.6;
export const DEFAULT_SAMPLES = 3;
/** Spacing of the default temperatures (paper §2.3: original ± 0.1). */
export const TEMPERATURE_STEP = 0.1;

/**
 * The temperature of every sample: the given list, or k values centred on the base temperature
 * in steps of 0.1 (k = 3 → [t − 0.1, t, t + 0.1]), the window moved inside [0, 2] at the edges.
 * @throws ExtractionError BAD_INPUT when samples and temperatures disagree or are out of range.
 */
export function samplingTemperatures(opts: SelfConsistencyOptions | null | undefined, base: number | undefined): number[] {
  const given = opts?.temperatures;
  const k = opts?.samples ?? given?.length ?? DEFAULT_SAMPLES;
  if (!Number.isInteger(k) || k < 1) throw new ExtractionError('BAD_INPUT', `self-consistency needs k >= 1 samples, got ${k}`);
  if (given && given.length > 0) {
    if (given.length !== k) {
      throw new ExtractionError('BAD_INPUT', `${k} samples but ${given.length} temperatures`);
    }
    for (const t of given) {
      if (!Number.isFinite(t) || t < 0 || t > 2) throw new ExtractionError('BAD_INPUT', `temperature ${t} outside [0, 2]`);
    }
    return [...given];
  }
  const t = base ?? DEFAULT_BASE_TEMPERATURE;
  // The window slides inside [0, 2] rather than being clamped, so k samples keep k distinct
  // temperatures at the edges too (base 0, k = 3 → [0, 0.1, 0.2], not [0, 0, 0.1]).
  const width = TEMPERATURE_STEP * (k - 1);
  const start = Math.min(Math.max(0, t - width / 2), Math.max(0, 2 - width));
  return Array.from({ length: k }, (_, i) => Math.round(Math.min(2, start + TEMPERATURE_STEP * i) * 1e6) / 1e6);
}

export async function runSelfConsistency(ctx: StrategyContext): Promise<ExtractionResult> {
  const t0 = now();
  const p = prepare(ctx, 'SELF_CONSISTENCY');
  const temperatures = samplingTemperatures(ctx.selfConsistency, ctx.sampling?.temperature);
  const messages = buildMessages({
    variables: p.variables,
    family: STRATEGY_FAMILY.SELF_CONSISTENCY,
    parts: ctx.parts,
    examples: p.examples,
    report: p.report,
    guided: ctx.guided,
    systemMessagesAllowed: ctx.systemMessagesAllowed,
    mergeConsecutiveMessages: ctx.mergeConsecutiveMessages,
    missingTokens: ctx.missingTokens,
    evidence: ctx.evidence === 'QUOTES',
  });
  const seeds = temperatures.map((_, i) => (ctx.seed === undefined || ctx.seed === null ? null : ctx.seed + i));
  const settled = await Promise.allSettled(
    temperatures.map((temperature, i) =>
      callOnce(ctx, buildRequest(ctx, messages.map((m) => ({ ...m })), p.variables, { temperature, seed: seeds[i] }), p.variables),
    ),
  );

  const samples: SampleRecord[] = settled.map((s, i) =>
    s.status === 'fulfilled'
      ? { index: i, temperature: temperatures[i]!, seed: seeds[i]!, error: null, ...s.value }
      : { index: i, temperature: temperatures[i]!, seed: seeds[i]!, error: errorMessage(s.reason) },
  );
  const ok = settled
    .map((s, i) => (s.status === 'fulfilled' ? { i, call: s.value } : null))
    .filter((x): x is { i: number; call: CallRecord } => x !== null);
  if (ok.length === 0) {
    const first = settled[0] as PromiseRejectedResult;
    throw first.reason;
  }

  const embed = ctx.embed ?? lexicalEmbedFn;
  const cells: ExtractionResult['cells'] = {};
  const json: Record<string, unknown> = {};
  // The quotes of the sample whose value was chosen: another sample's quotes may support another value.
  const quotes: Record<string, string[]> = {};
  for (const v of p.variables) {
    const perSample = settled.map((s) => (s.status === 'fulfilled' ? s.value.cells[v.key] : undefined));
    const outcome = await aggregateCells(v, perSample, embed);
    cells[v.key] = outcome.cell;
    quotes[v.key] = [];
    if (outcome.winner !== null) {
      const winner = (settled[outcome.winner] as PromiseFulfilledResult<CallRecord>).value;
      const winnerJson = winner.json;
      if (winnerJson && Object.prototype.hasOwnProperty.call(winnerJson, v.key)) json[v.key] = winnerJson[v.key];
      quotes[v.key] = winner.quotes?.[v.key] ?? [];
    }
  }
  const calls = ok.map((x) => x.call);
  const truncated = calls.some((c) => c.truncated);
  const result: ExtractionResult = {
    strategy: 'SELF_CONSISTENCY',
    values: valuesOf(cells),
    cells,
    json: calls.some((c) => c.json !== null) ? json : null,
    raw: samples.map((s) => s.raw ?? ''),
    reasoning: samples.map((s) => s.reasoning ?? ''),
    parseError: calls.every((c) => c.parseError !== null) ? calls[0]!.parseError : null,
    finishReason: truncated ? 'length' : calls[0]!.finishReason,
    truncated,
    inputTruncated: p.inputTruncated,
    latencyMs: now() - t0,
    promptTokens: sumNullable(calls.map((c) => c.promptTokens)),
    completionTokens: sumNullable(calls.map((c) => c.completionTokens)),
    attempts: calls.reduce((a, c) => a + c.attempts, 0) + failedAttempts(settled),
    calls: settled.length,
    samples,
    skipped: [],
  };
  if (ctx.evidence === 'QUOTES') result.quotes = quotes;
  return result;
}

function failedAttempts(settled: readonly PromiseSettledResult<unknown>[]): number {
  let n = 0;
  for (const s of settled) {
    if (s.status !== 'rejected') continue;
    const a = (s.reason as { attempts?: unknown } | null)?.attempts;
    n += typeof a === 'number' && a > 0 ? a : 1;
  }
  return n;
}

export const selfConsistency: Strategy = {
  name: 'SELF_CONSISTENCY',
  family: 'REASONING',
  run: runSelfConsistency,
};
