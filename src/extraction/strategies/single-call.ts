/** ZERO_SHOT, ONE_SHOT, FEW_SHOT and CHAIN_OF_THOUGHT: one prompt, one call. */
import { buildMessages } from '../prompt-builder';
import type { ExtractionResult, StrategyContext, StrategyName } from '../types';
import { buildRequest, callOnce, now, prepare, STRATEGY_FAMILY, valuesOf, type Strategy } from './common';

export async function runSingleCall(ctx: StrategyContext, strategy: StrategyName): Promise<ExtractionResult> {
  const t0 = now();
  const family = STRATEGY_FAMILY[strategy];
  const p = prepare(ctx, strategy);
  const messages = buildMessages({
    variables: p.variables,
    family,
    parts: ctx.parts,
    examples: p.examples,
    report: p.report,
    guided: ctx.guided,
    systemMessagesAllowed: ctx.systemMessagesAllowed,
    mergeConsecutiveMessages: ctx.mergeConsecutiveMessages,
    missingTokens: ctx.missingTokens,
    evidence: ctx.evidence === 'QUOTES',
  });
  const call = await callOnce(ctx, buildRequest(ctx, messages, p.variables), p.variables);
  const result: ExtractionResult = {
    strategy,
    values: valuesOf(call.cells),
    cells: call.cells,
    json: call.json,
    raw: call.raw,
    reasoning: call.reasoning,
    parseError: call.parseError,
    finishReason: call.finishReason,
    truncated: call.truncated,
    inputTruncated: p.inputTruncated,
    latencyMs: now() - t0,
    promptTokens: call.promptTokens,
    completionTokens: call.completionTokens,
    attempts: call.attempts,
    calls: 1,
    skipped: [],
  };
  if (call.quotes) result.quotes = call.quotes;
  return result;
}

/** A strategy that makes one call with the prompt family of `name`. */
export function singleCallStrategy(name: StrategyName): Strategy {
  return { name, family: STRATEGY_FAMILY[name], run: (ctx) => runSingleCall(ctx, name) };
}
