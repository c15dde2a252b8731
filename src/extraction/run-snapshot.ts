/**
 * The immutable configuration of an executed run: everything that decides what is sent to the
 * endpoint for a report, frozen when the run starts (the model's defaults merged, the prompt's
 * parts at that version, the examples already drawn with the run's seed). The executor rebuilds
 * a StrategyContext from it for every report, so a run's outputs do not change when the model,
 * the prompt or the use case is edited while it runs.
 */
import type { EndpointKind } from '../llm/types';
import type { FrameworkModelConfig } from './config-yaml';
import { CHARS_PER_TOKEN } from './context-limit';
import { ExtractionError } from './errors';
import { strategyExamples } from './example-selection';
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
import { EVIDENCE_KEY, type EvidenceMode } from './types';

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
  /**
   * QUOTES: the model is asked for verbatim quotes per variable. Absent when NONE, so that the
   * snapshots (and the extract fingerprints) of runs without evidence stay as they were.
   */
  evidence?: 'QUOTES';
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
  if (snapshot.evidence) ctx.evidence = snapshot.evidence;
  if (signal) ctx.signal = signal;
  return ctx;
}

/** Self-consistency samples per report: each is a model call. */
export const MAX_SAMPLES = 20;
/** Longest overall deadline of one report; a work item's lease is at least twice this. */
export const MAX_DEADLINE_MS = 420_000;
/** Output budget assumed when a run sets no maxTokens, for fitting the report into the context. */
const DEFAULT_OUTPUT_TOKENS = 2048;

/** Decoding parameters as a request or a model's defaults give them: unset ones may be null. */
export type SamplingSettings = { [K in keyof SamplingParams | 'seed']?: number | null };

/** What a run or an extract call asks for (the GraphQL StrategySettingsInput). */
export interface RunSettings {
  strategy: StrategyName;
  sampling?: SamplingSettings | null;
  exampleNames?: string[] | null;
  exampleCount?: number | null;
  samples?: number | null;
  temperatures?: number[] | null;
  contextLimitTokens?: number | null;
  systemMessagesAllowed?: boolean | null;
  mergeConsecutiveMessages?: boolean | null;
  stepTimeoutMs?: number | null;
  deadlineMs?: number | null;
  constrained: boolean;
  thinking?: boolean | null;
  guided: boolean;
  /** default NONE */
  evidence?: EvidenceMode | null;
}

interface Range {
  min: number;
  max: number;
  /** a whole number */
  integer?: boolean;
  /** strictly above min */
  above?: boolean;
}

/** The whole-number settings of {@link RunSettings} and their ranges (`temperatures`: its length). */
export const RUN_SETTING_LIMITS = {
  samples: { min: 1, max: MAX_SAMPLES },
  temperatures: { min: 1, max: MAX_SAMPLES },
  exampleCount: { min: 1, max: 20 },
  contextLimitTokens: { min: 1, max: 10_000_000 },
  stepTimeoutMs: { min: 1, max: 3_600_000 },
  deadlineMs: { min: 1000, max: MAX_DEADLINE_MS },
} as const satisfies Record<string, Range>;

/** The range each sampling parameter may take (what vLLM, SGLang and OpenAI accept). */
export const SAMPLING_LIMITS: Readonly<Record<keyof SamplingSettings, Range>> = {
  temperature: { min: 0, max: 2 },
  topP: { min: 0, max: 1, above: true },
  topK: { min: -1, max: 100_000, integer: true },
  maxTokens: { min: 1, max: 10_000_000, integer: true },
  seed: { min: 0, max: 2_147_483_647, integer: true },
  frequencyPenalty: { min: -2, max: 2 },
  presencePenalty: { min: -2, max: 2 },
  repetitionPenalty: { min: 0, max: 10, above: true },
};

/** Each self-consistency temperature, as the samples are sent. */
const TEMPERATURE_RANGE = { min: 0, max: 2 };

/** A setting out of its range: the input it is in and what it must be. */
export interface SettingProblem {
  field: string;
  message: string;
}

/** The first setting of `settings` out of its range, or null. */
export function runSettingsProblem(settings: RunSettings): SettingProblem | null {
  const counted: Partial<Record<keyof typeof RUN_SETTING_LIMITS, number | null>> = { ...settings, temperatures: settings.temperatures?.length };
  for (const [field, { min, max }] of Object.entries(RUN_SETTING_LIMITS)) {
    const value = counted[field as keyof typeof RUN_SETTING_LIMITS];
    if (value !== null && value !== undefined && (!Number.isInteger(value) || value < min || value > max)) {
      return { field, message: `${field} must be an integer from ${min} to ${max}` };
    }
  }
  for (const [key, value] of Object.entries(settings.sampling ?? {})) {
    const range = SAMPLING_LIMITS[key as keyof SamplingSettings];
    if (value === null || value === undefined || !range) continue;
    const bad = !Number.isFinite(value) || (range.integer && !Number.isInteger(value)) || value > range.max || (range.above ? value <= range.min : value < range.min);
    if (bad) {
      const low = range.above ? `above ${range.min}` : `from ${range.min}`;
      return { field: `sampling.${key}`, message: `sampling.${key} must be ${range.integer ? 'a whole number' : 'a number'} ${low} ${range.above ? 'and at most' : 'to'} ${range.max}` };
    }
  }
  for (const [i, t] of (settings.temperatures ?? []).entries()) {
    if (!Number.isFinite(t) || t < TEMPERATURE_RANGE.min || t > TEMPERATURE_RANGE.max) {
      return { field: 'temperatures', message: `temperatures[${i}] must be from ${TEMPERATURE_RANGE.min} to ${TEMPERATURE_RANGE.max}` };
    }
  }
  return null;
}

/** What a snapshot is built from: the model, its endpoint, the prompt and the use case's variables. */
export interface SnapshotSource {
  model: { id: string; servedName: string; maxModelLen: number | null; defaultSampling: SamplingSettings | null };
  endpoint: { id: string; kind: EndpointKind; timeoutMs: number; capabilities: { jsonSchema?: boolean | null; thinkingToggle?: boolean | null } };
  prompt: {
    id: string;
    version: number;
    parts: PromptParts;
    /** every example of the prompt, their output keys in variable order */
    examples: readonly PromptExample[];
    /** the imported model config (MedicalRecordLLM model YAML) kept with the prompt */
    modelConfig: FrameworkModelConfig | null;
  } | null;
  variables: ExtractionVariable[];
  missingTokens: string[] | null;
}

function definedSampling(sampling: SamplingSettings | null | undefined): SamplingParams & { seed?: number } {
  const out: Record<string, number> = {};
  for (const [key, value] of Object.entries(sampling ?? {})) if (typeof value === 'number') out[key] = value;
  return out;
}

function estimateTokens(value: unknown): number {
  const text = typeof value === 'string' ? value : JSON.stringify(value ?? '');
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

/**
 * The immutable configuration of a run (or of one extract call): the model's defaults, the
 * prompt's imported model config and the settings merged in that order; the examples chosen
 * with the seed; the report budget that fits the model's context. Warnings name what the
 * endpoint may not honour.
 * @throws ExtractionError BAD_INPUT on a setting out of range, NO_EXAMPLES on examples that do
 *   not exist; `field` names the input.
 */
export function buildRunSnapshot(source: SnapshotSource, settings: RunSettings): { snapshot: RunSnapshot; warnings: string[] } {
  const problem = runSettingsProblem(settings);
  if (problem) throw Object.assign(new ExtractionError('BAD_INPUT', problem.message), { field: problem.field });
  const { model, endpoint, prompt, variables } = source;
  const warnings: string[] = [];
  // The prompt's imported model config is the experiment's setting: it refines the model's
  // defaults; what the settings say wins over both.
  const modelConfig = prompt?.modelConfig ?? null;
  const sampling = { ...definedSampling(model.defaultSampling), ...definedSampling(modelConfig?.sampling), ...definedSampling(settings.sampling) };
  const { seed, ...decoding } = sampling;
  const strategy = settings.strategy;
  if (strategy === 'SELF_CONSISTENCY' && decoding.topK === 1) {
    // top_k 1 is greedy whatever the temperature: every sample would be the same answer.
    delete decoding.topK;
    warnings.push('top_k 1 makes every self-consistency sample greedy; it is not sent for this strategy');
  }
  const systemMessagesAllowed = settings.systemMessagesAllowed ?? modelConfig?.systemMessagesAllowed ?? null;
  const mergeConsecutiveMessages = settings.mergeConsecutiveMessages ?? modelConfig?.mergeConsecutiveMessages ?? null;
  const temperatures = settings.temperatures ?? (settings.samples ? null : (modelConfig?.selfConsistency?.temperatures ?? null));
  const thinkingGiven = settings.thinking !== undefined && settings.thinking !== null;
  if (settings.constrained && endpoint.capabilities.jsonSchema === false) {
    warnings.push('constrained decoding requested, but the endpoint probe found json_schema output unsupported');
  }
  if (thinkingGiven && endpoint.capabilities.thinkingToggle === false) {
    warnings.push('a thinking setting was given, but the endpoint probe found the thinking toggle unsupported');
  }
  if (thinkingGiven && endpoint.kind === 'OPENAI') warnings.push('OpenAI endpoints take no thinking toggle; it is not sent');

  const examples = strategyExamples(strategy, prompt?.examples ?? [], { names: settings.exampleNames ?? [], count: settings.exampleCount ?? undefined, seed: seed ?? null });
  const parts = prompt?.parts ?? {};

  // What fits the model's context: its length less the output budget and everything of the
  // prompt that is not the report.
  let contextLimit: ContextLimit | null = settings.contextLimitTokens ? { maxTokens: settings.contextLimitTokens } : null;
  if (model.maxModelLen) {
    const overhead = estimateTokens(parts) + estimateTokens(examples) + estimateTokens(variables) + 512;
    const budget = Math.max(256, model.maxModelLen - (decoding.maxTokens ?? DEFAULT_OUTPUT_TOKENS) - overhead);
    if (!contextLimit || (contextLimit.maxTokens ?? Infinity) > budget) {
      if (contextLimit) warnings.push(`contextLimitTokens lowered to ${budget}, what fits the model's context of ${model.maxModelLen} tokens`);
      contextLimit = { maxTokens: budget };
    }
  }
  const snapshot: RunSnapshot = {
    version: RUN_SNAPSHOT_VERSION,
    strategy,
    model: { id: model.id, servedName: model.servedName, endpointId: endpoint.id, maxModelLen: model.maxModelLen },
    prompt: prompt ? { id: prompt.id, version: prompt.version } : null,
    variables,
    parts,
    examples,
    sampling: decoding,
    seed: seed ?? null,
    constrained: settings.constrained,
    thinking: endpoint.kind === 'OPENAI' ? null : (settings.thinking ?? null),
    guided: settings.guided,
    systemMessagesAllowed,
    mergeConsecutiveMessages,
    contextLimit,
    missingTokens: source.missingTokens,
    selfConsistency:
      strategy === 'SELF_CONSISTENCY' ? { ...(settings.samples ? { samples: settings.samples } : {}), ...(temperatures ? { temperatures } : {}) } : null,
    graph: settings.stepTimeoutMs ? { stepTimeoutMs: settings.stepTimeoutMs } : null,
    deadlineMs: settings.deadlineMs ?? Math.min(MAX_DEADLINE_MS, 4 * endpoint.timeoutMs + 60_000),
  };
  if (settings.evidence === 'QUOTES') {
    const clash = variables.find((v) => v.key.trim().toLowerCase() === EVIDENCE_KEY);
    if (clash) {
      // The quotes sit beside the values under this key: a variable of that name would be ambiguous.
      throw Object.assign(new ExtractionError('BAD_INPUT', `evidence QUOTES needs the answer key "${EVIDENCE_KEY}", which a variable of the use case already uses`), { field: 'evidence' });
    }
    snapshot.evidence = 'QUOTES';
  }
  return { snapshot, warnings };
}
