/**
 * The immutable configuration of an executed run: everything that decides what is sent to the
 * endpoint for a report, frozen when the run starts (the model's defaults merged, the prompt's
 * parts at that version, the examples already drawn with the run's seed). The executor rebuilds
 * a StrategyContext from it for every report, so a run's outputs do not change when the model,
 * the prompt or the use case is edited while it runs.
 */
import type {
  ChatFn,
  ContextLimit,
  ExtractionVariable,
  PromptExample,
  PromptGraphOptions,
  PromptParts,
  ReportInput,
  SamplingParams,
  SelfConsistencyOptions,
  StrategyContext,
  StrategyName,
} from './types';

export const RUN_SNAPSHOT_VERSION = 1;

export interface RunSnapshot {
  version: typeof RUN_SNAPSHOT_VERSION;
  strategy: StrategyName;
  model: { id: string; servedName: string; endpointId: string; maxModelLen: number | null };
  prompt: { id: string; version: number } | null;
  variables: ExtractionVariable[];
  parts: PromptParts;
  /** The examples shown to the model, already chosen (by name or drawn with the seed), in prompt order. */
  examples: PromptExample[];
  sampling: SamplingParams;
  seed: number | null;
  constrained: boolean;
  thinking: boolean | null;
  guided: boolean;
  systemMessagesAllowed: boolean | null;
  mergeConsecutiveMessages: boolean | null;
  contextLimit: ContextLimit | null;
  missingTokens: string[] | null;
  selfConsistency: SelfConsistencyOptions | null;
  graph: PromptGraphOptions | null;
  /** Overall time a report may take (every call, retry and backoff of it), milliseconds. */
  deadlineMs: number;
}

/** Concurrent chat calls one report of this run makes at most (self-consistency samples run at once). */
export function callsPerReport(snapshot: Pick<RunSnapshot, 'strategy' | 'selfConsistency'>): number {
  if (snapshot.strategy !== 'SELF_CONSISTENCY') return 1;
  return snapshot.selfConsistency?.temperatures?.length ?? snapshot.selfConsistency?.samples ?? 3;
}

/** The engine's context for one report of a run. */
export function strategyContext(snapshot: RunSnapshot, chat: ChatFn, report: ReportInput, signal?: AbortSignal): StrategyContext {
  const ctx: StrategyContext = {
    chat,
    model: snapshot.model.servedName,
    variables: snapshot.variables,
    parts: snapshot.parts,
    examples: snapshot.examples,
    exampleSelection: { chosen: true },
    report,
    sampling: snapshot.sampling,
    seed: snapshot.seed,
    constrained: snapshot.constrained,
    guided: snapshot.guided,
    contextLimit: snapshot.contextLimit,
    missingTokens: snapshot.missingTokens,
    selfConsistency: snapshot.selfConsistency,
    graph: snapshot.graph,
  };
  if (snapshot.thinking !== null) ctx.thinking = snapshot.thinking;
  if (snapshot.systemMessagesAllowed !== null) ctx.systemMessagesAllowed = snapshot.systemMessagesAllowed;
  if (snapshot.mergeConsecutiveMessages !== null) ctx.mergeConsecutiveMessages = snapshot.mergeConsecutiveMessages;
  if (signal) ctx.signal = signal;
  return ctx;
}
