/** What every strategy shares: preparing the context, building requests, one call, the result shape. */
import type { NormalisedCell } from '../../analytics/types';
import { applyContextLimit } from '../context-limit';
import { strategyExamples } from '../example-selection';
import { parseOutput } from '../output-parser';
import { buildResponseFormat } from '../response-schema';
import type {
  CallRecord,
  ChatMessage,
  ChatRequest,
  ExtractionResult,
  ExtractionVariable,
  PromptExample,
  PromptFamily,
  ReportInput,
  ResultValue,
  StrategyContext,
  StrategyName,
} from '../types';
import { sortVariables, validateVariables } from '../variables';

export interface Strategy {
  name: StrategyName;
  family: PromptFamily;
  run(ctx: StrategyContext): Promise<ExtractionResult>;
}

export const STRATEGY_FAMILY: Readonly<Record<StrategyName, PromptFamily>> = {
  ZERO_SHOT: 'DIRECT',
  ONE_SHOT: 'DIRECT',
  FEW_SHOT: 'DIRECT',
  CHAIN_OF_THOUGHT: 'REASONING',
  SELF_CONSISTENCY: 'REASONING',
  PROMPT_GRAPH: 'REASONING',
};

export interface Prepared {
  variables: ExtractionVariable[];
  report: ReportInput;
  inputTruncated: boolean;
  examples: PromptExample[];
}

/** Validates variables, applies the context limit and picks the examples. */
export function prepare(ctx: StrategyContext, strategy: StrategyName): Prepared {
  validateVariables(ctx.variables);
  const { report, truncated } = applyContextLimit(ctx.report, ctx.contextLimit);
  const examples = strategyExamples(strategy, ctx.examples ?? [], { ...ctx.exampleSelection, seed: ctx.seed });
  return { variables: sortVariables(ctx.variables), report, inputTruncated: truncated, examples };
}

/** The chat request: decoding parameters passed through, only those that are set. */
export function buildRequest(
  ctx: StrategyContext,
  messages: ChatMessage[],
  schemaVariables: readonly ExtractionVariable[],
  overrides?: { temperature?: number; seed?: number | null; signal?: AbortSignal },
): ChatRequest {
  const s = ctx.sampling ?? {};
  const req: ChatRequest = { model: ctx.model, messages };
  const temperature = overrides?.temperature ?? s.temperature;
  if (temperature !== undefined) req.temperature = temperature;
  if (s.topP !== undefined) req.topP = s.topP;
  if (s.topK !== undefined) req.topK = s.topK;
  if (s.maxTokens !== undefined) req.maxTokens = s.maxTokens;
  const seed = overrides && 'seed' in overrides ? overrides.seed : ctx.seed;
  if (seed !== undefined && seed !== null) req.seed = seed;
  if (s.frequencyPenalty !== undefined) req.frequencyPenalty = s.frequencyPenalty;
  if (s.presencePenalty !== undefined) req.presencePenalty = s.presencePenalty;
  if (s.repetitionPenalty !== undefined) req.repetitionPenalty = s.repetitionPenalty;
  if (ctx.constrained) req.responseFormat = buildResponseFormat(schemaVariables, undefined, ctx.evidence === 'QUOTES');
  if (ctx.thinking !== undefined) req.thinking = ctx.thinking;
  const signal = overrides?.signal ?? ctx.signal;
  if (signal) req.signal = signal;
  return req;
}

/** One chat call, parsed against `variables`. Transport errors propagate. */
export async function callOnce(
  ctx: StrategyContext,
  request: ChatRequest,
  variables: readonly ExtractionVariable[],
): Promise<CallRecord> {
  const completion = await ctx.chat(request);
  const parsed = parseOutput(
    { content: completion.content, reasoning: completion.reasoning, finishReason: completion.finishReason },
    variables,
    { missingTokens: ctx.missingTokens, evidence: ctx.evidence === 'QUOTES' },
  );
  const record: CallRecord = {
    raw: completion.content,
    reasoning: parsed.reasoning,
    json: parsed.json,
    parseError: parsed.parseError,
    cells: parsed.cells,
    finishReason: completion.finishReason,
    truncated: parsed.truncated,
    latencyMs: completion.latencyMs,
    promptTokens: completion.promptTokens,
    completionTokens: completion.completionTokens,
    attempts: completion.attempts,
  };
  if (parsed.quotes) record.quotes = parsed.quotes;
  return record;
}

/** JSON-safe values: VALUE → value, MISSING → null, INVALID → key left out (see cells). */
export function valuesOf(cells: Readonly<Record<string, NormalisedCell>>): Record<string, ResultValue> {
  const out: Record<string, ResultValue> = {};
  for (const [k, c] of Object.entries(cells)) {
    if (c.status === 'VALUE') out[k] = c.value;
    else if (c.status === 'MISSING') out[k] = null;
  }
  return out;
}

/** Sum that stays null when every term is null. */
export function sumNullable(xs: readonly (number | null | undefined)[]): number | null {
  let s = 0;
  let any = false;
  for (const x of xs) {
    if (x !== null && x !== undefined) {
      s += x;
      any = true;
    }
  }
  return any ? s : null;
}

export function now(): number {
  return performance.now();
}

export function errorMessage(e: unknown): string {
  if (e instanceof Error) {
    const code = (e as { code?: unknown }).code;
    return typeof code === 'string' ? `${code}: ${e.message}` : e.message;
  }
  return String(e);
}
