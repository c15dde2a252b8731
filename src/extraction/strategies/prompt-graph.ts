/**
 * PROMPT_GRAPH: one chain-of-thought prompt per step of the graph (prompt-graph-plan.ts). A step
 * starts once the steps it waits for are done; independent branches run concurrently. The step's
 * prompt holds only the variables still to ask (field instructions, JSON template, example
 * outputs and reasoning lines restricted to them) and, after the report, the answers of its
 * ancestor steps. Conditions are evaluated on normalised values. Skipped variables take their
 * default and are listed in `skipped`. Each step has its own timeout; a step that fails or times
 * out leaves its variables without an answer (INVALID/MISSING), and variables depending on them
 * are not asked either (also INVALID/MISSING: nothing was decided). If every executed step fails,
 * the first error is thrown.
 */
import { foldText, normaliseValue } from '../../analytics/normalise';
import type { NormalisedCell } from '../../analytics/types';
import { planGraph, type GraphStepPlan } from '../prompt-graph-plan';
import { buildMessages } from '../prompt-builder';
import type { CallRecord, ExtractionResult, ExtractionVariable, StepRecord, StrategyContext } from '../types';
import { conditionHolds } from '../variables';
import { buildRequest, callOnce, errorMessage, now, prepare, STRATEGY_FAMILY, sumNullable, valuesOf, type Strategy } from './common';

class StepTimeout extends Error {
  constructor(readonly ms: number) {
    super(`step timed out after ${ms} ms`);
    this.name = 'StepTimeout';
  }
}

type KeyState =
  | { kind: 'ASKED'; cell: NormalisedCell; rawValue: unknown; hasRaw: boolean; quotes: string[] }
  | { kind: 'SKIPPED'; cell: NormalisedCell }
  | { kind: 'UNANSWERED'; cell: NormalisedCell };

async function withTimeout<T>(
  ms: number | null | undefined,
  outer: AbortSignal | undefined,
  run: (signal: AbortSignal | undefined) => Promise<T>,
): Promise<T> {
  if (!ms) return run(outer);
  const controller = new AbortController();
  const onAbort = (): void => controller.abort(outer?.reason);
  if (outer) {
    if (outer.aborted) controller.abort(outer.reason);
    else outer.addEventListener('abort', onAbort, { once: true });
  }
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const err = new StepTimeout(ms);
      controller.abort(err);
      reject(err);
    }, ms);
  });
  try {
    return await Promise.race([run(controller.signal), timeout]);
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener('abort', onAbort);
  }
}

function lookupRaw(json: Record<string, unknown> | null, key: string): { has: boolean; value: unknown } {
  if (!json) return { has: false, value: undefined };
  if (Object.prototype.hasOwnProperty.call(json, key)) return { has: true, value: json[key] };
  const want = foldText(key);
  const hits = Object.keys(json).filter((k) => foldText(k) === want);
  return hits.length === 1 ? { has: true, value: json[hits[0]!] } : { has: false, value: undefined };
}

export async function runPromptGraph(ctx: StrategyContext): Promise<ExtractionResult> {
  const t0 = now();
  const p = prepare(ctx, 'PROMPT_GRAPH');
  const plan = planGraph(p.variables);
  const byKey = new Map<string, ExtractionVariable>(p.variables.map((v) => [v.key, v]));
  const state = new Map<string, KeyState>();
  const records = new Map<number, StepRecord>();
  const calls: CallRecord[] = [];
  const errors: unknown[] = [];
  const normOpts = { missingTokens: ctx.missingTokens ?? null };

  const skip = (v: ExtractionVariable): KeyState => ({ kind: 'SKIPPED', cell: normaliseValue(v, v.default ?? null, normOpts) });
  const unanswered = (detail: string): KeyState => ({ kind: 'UNANSWERED', cell: { status: 'INVALID', category: 'MISSING', detail } });

  const runStep = async (step: GraphStepPlan): Promise<void> => {
    const ask: ExtractionVariable[] = [];
    const skippedHere: string[] = [];
    for (const key of step.keys) {
      const v = byKey.get(key)!;
      if (!v.dependsOn) {
        ask.push(v);
        continue;
      }
      const parent = state.get(v.dependsOn.key);
      if (!parent || parent.kind === 'UNANSWERED') {
        state.set(key, unanswered('condition could not be evaluated: parent step failed'));
      } else if (parent.kind === 'ASKED' && conditionHolds(v.dependsOn, parent.cell, ctx.missingTokens ?? undefined)) {
        ask.push(v);
      } else {
        state.set(key, skip(v));
        skippedHere.push(key);
      }
    }
    const base: StepRecord = { step: step.step, keys: step.keys, after: step.after, status: 'SKIPPED', skipped: skippedHere, error: null };
    if (ask.length === 0) {
      records.set(step.step, base);
      return;
    }
    const previous: Record<string, unknown> = {};
    for (const a of step.ancestors) {
      for (const key of plan.steps.find((s) => s.step === a)!.keys) {
        const st = state.get(key);
        if (st?.kind !== 'ASKED') continue;
        previous[key] = st.cell.status === 'VALUE' ? st.cell.value : st.hasRaw ? st.rawValue : null;
      }
    }
    const messages = buildMessages({
      variables: p.variables,
      scopeKeys: ask.map((v) => v.key),
      family: STRATEGY_FAMILY.PROMPT_GRAPH,
      parts: ctx.parts,
      examples: p.examples,
      report: p.report,
      previousAnswers: previous,
      guided: ctx.guided,
      systemMessagesAllowed: ctx.systemMessagesAllowed,
      mergeConsecutiveMessages: ctx.mergeConsecutiveMessages,
      missingTokens: ctx.missingTokens,
      evidence: ctx.evidence === 'QUOTES',
    });
    try {
      const call = await withTimeout(ctx.graph?.stepTimeoutMs, ctx.signal, (signal) =>
        callOnce(ctx, buildRequest(ctx, messages, ask, signal ? { signal } : undefined), ask),
      );
      calls.push(call);
      for (const v of ask) {
        const raw = lookupRaw(call.json, v.key);
        state.set(v.key, { kind: 'ASKED', cell: call.cells[v.key]!, rawValue: raw.value, hasRaw: raw.has, quotes: call.quotes?.[v.key] ?? [] });
      }
      records.set(step.step, { ...base, ...call, status: 'COMPLETED' });
    } catch (e) {
      errors.push(e);
      const timedOut = e instanceof StepTimeout;
      for (const v of ask) state.set(v.key, unanswered(timedOut ? 'step timed out' : 'step failed'));
      records.set(step.step, { ...base, status: timedOut ? 'TIMEOUT' : 'FAILED', error: errorMessage(e) });
    }
  };

  const running = new Map<number, Promise<void>>();
  const launch = (step: GraphStepPlan): Promise<void> => {
    let pr = running.get(step.step);
    if (!pr) {
      const waits = step.after.map((a) => launch(plan.steps.find((s) => s.step === a)!));
      pr = Promise.all(waits).then(() => runStep(step));
      running.set(step.step, pr);
    }
    return pr;
  };
  await Promise.all(plan.steps.map(launch));

  if (calls.length === 0 && errors.length > 0) throw errors[0];

  const cells: ExtractionResult['cells'] = {};
  const json: Record<string, unknown> = {};
  const skipped: string[] = [];
  // Each variable's quotes from the step that asked it; a skipped or unanswered one has none.
  const quotes: Record<string, string[]> = {};
  for (const v of p.variables) {
    const st = state.get(v.key)!;
    cells[v.key] = st.cell;
    quotes[v.key] = st.kind === 'ASKED' ? st.quotes : [];
    if (st.kind === 'SKIPPED') {
      skipped.push(v.key);
      json[v.key] = v.default ?? null;
    } else if (st.kind === 'ASKED' && st.hasRaw) {
      json[v.key] = st.rawValue;
    }
  }
  const steps = plan.steps.map((s) => records.get(s.step)!);
  const executed = steps.filter((s) => s.status === 'COMPLETED');
  const truncated = calls.some((c) => c.truncated);
  const result: ExtractionResult = {
    strategy: 'PROMPT_GRAPH',
    values: valuesOf(cells),
    cells,
    json,
    raw: executed.map((s) => s.raw ?? ''),
    reasoning: executed.map((s) => s.reasoning ?? ''),
    parseError: executed.find((s) => s.parseError)?.parseError ?? null,
    finishReason: truncated ? 'length' : (executed[0]?.finishReason ?? null),
    truncated,
    inputTruncated: p.inputTruncated,
    latencyMs: now() - t0,
    promptTokens: sumNullable(calls.map((c) => c.promptTokens)),
    completionTokens: sumNullable(calls.map((c) => c.completionTokens)),
    attempts: calls.reduce((a, c) => a + c.attempts, 0) + errors.length,
    calls: calls.length + errors.length,
    steps,
    skipped,
  };
  if (ctx.evidence === 'QUOTES') result.quotes = quotes;
  return result;
}

export const promptGraph: Strategy = {
  name: 'PROMPT_GRAPH',
  family: 'REASONING',
  run: runPromptGraph,
};
