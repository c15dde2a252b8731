/**
 * Types of the extraction engine. The chat contract is llm/types.ts's (types only): the engine
 * never calls the transport, the caller injects a ChatFn.
 */
import type { NormalisedCell, VariableSpec } from '../analytics/types';
import type { ChatFn, EmbedFn } from '../llm/types';

export type { ChatCompletion, ChatFn, ChatMessage, ChatRequest, EmbedFn, JsonSchemaFormat } from '../llm/types';

// --- variables ---

/** Condition of a prompt-graph step: holds when the normalised value of `key` is one of `values`. */
export interface DependsOn {
  key: string;
  /** compared with the parent's normalised value, case-insensitively after trimming */
  values: string[];
}

/** One sub-field of a framework "dictionary" / "list of dictionaries" variable. */
export interface StructureField {
  key: string;
  type?: string;
  options?: unknown[];
  constraints?: string;
}

/** A variable as the extraction engine sees it: the scoring spec plus what the prompt needs. */
export interface ExtractionVariable extends VariableSpec {
  /** What the variable is (shown in the field instructions before the instructions). */
  description?: string | null;
  /** How to fill it in; lines starting with "- " render as bullets. Framework: `constraints`. */
  instructions?: string | null;
  /**
   * The value the model is told to use when the report says nothing (any JSON value), and the
   * value a skipped prompt-graph variable takes. undefined: none stated.
   */
  default?: unknown;
  /** Position in the JSON template and the field instructions (ascending; ties keep list order). */
  order?: number | null;
  /** Prompt-graph step (framework `chain_order`); integers, need not be contiguous. */
  graphStep?: number | null;
  /** The variable is asked only when this condition holds (framework `depends_on`). */
  dependsOn?: DependsOn | null;
  /**
   * Type name shown to the model ("float", "number_or_missing", …); defaults to a name derived
   * from `type`. Kept so that framework configs round-trip.
   */
  frameworkType?: string | null;
  /** Sub-fields of a framework dictionary type (the variable is FREE_TEXT for scoring). */
  structure?: StructureField[] | null;
  /** Placeholder value in the JSON template; default derived from the type ("" or [] or the structure). */
  templateValue?: unknown;
  /** Keys of a framework field this engine does not use (notes, item_type, …), kept for export. */
  frameworkExtra?: Record<string, unknown> | null;
}

// --- prompts ---

/**
 * Overridable prompt parts: templates with placeholders (see prompt-builder.ts). A missing part
 * uses the built-in text of the paper's Table A3.
 */
export interface PromptParts {
  system?: string | null;
  fieldInstructions?: string | null;
  task?: string | null;
  exampleIntro?: string | null;
  report?: string | null;
  previousAnswers?: string | null;
  final?: string | null;
}

export interface PromptExample {
  /** Name for explicit selection ("one-shot with example 'sarcoma-2'"). */
  name?: string | null;
  input: string;
  /** Reasoning shown before the output in chain-of-thought family prompts; one line per field. */
  reasoning?: string | null;
  /** Expected answer (parsed JSON object). */
  output: Record<string, unknown>;
}

export interface ReportInput {
  id: string;
  text: string;
}

export type StrategyName =
  | 'ZERO_SHOT'
  | 'ONE_SHOT'
  | 'FEW_SHOT'
  | 'CHAIN_OF_THOUGHT'
  | 'SELF_CONSISTENCY'
  | 'PROMPT_GRAPH';

export const STRATEGY_NAMES: readonly StrategyName[] = [
  'ZERO_SHOT',
  'ONE_SHOT',
  'FEW_SHOT',
  'CHAIN_OF_THOUGHT',
  'SELF_CONSISTENCY',
  'PROMPT_GRAPH',
];

/** DIRECT: JSON only (zero/one/few-shot). REASONING: reason first, then JSON (CoT, SC, graph). */
export type PromptFamily = 'DIRECT' | 'REASONING';

export interface SamplingParams {
  temperature?: number;
  topP?: number;
  topK?: number;
  maxTokens?: number;
  frequencyPenalty?: number;
  presencePenalty?: number;
  repetitionPenalty?: number;
}

/** Cap on the report text put into the prompt; tokens are approximated as 4 characters. */
export interface ContextLimit {
  maxChars?: number;
  maxTokens?: number;
}

export interface SelfConsistencyOptions {
  /** number of samples k (default 3, or the length of `temperatures`) */
  samples?: number;
  /** one temperature per sample; default: base ± 0.1 steps centred on the base temperature */
  temperatures?: number[];
}

export interface PromptGraphOptions {
  /** per-step timeout; a step that times out is recorded as TIMEOUT and its variables get no answer */
  stepTimeoutMs?: number;
}

export interface ExampleSelection {
  /** explicit example names, in this order */
  names?: string[];
  /** how many to draw at random with the seed (default 1 for ONE_SHOT, 3 otherwise) */
  count?: number;
  /** the examples were chosen already (a run's snapshot): show all of them, in their order */
  chosen?: boolean;
}

/** NONE: values only (the paper's prompt). QUOTES: zero or more verbatim quotes per variable too. */
export type EvidenceMode = 'NONE' | 'QUOTES';

/** The answer object's key holding the quotes: {variableKey: ["quote", …]} beside the values. */
export const EVIDENCE_KEY = 'evidence';

export interface StrategyContext {
  chat: ChatFn;
  model: string;
  variables: readonly ExtractionVariable[];
  parts?: PromptParts | null;
  examples?: readonly PromptExample[] | null;
  exampleSelection?: ExampleSelection | null;
  report: ReportInput;
  sampling?: SamplingParams | null;
  /** run seed: example draws and the `seed` sent to the server (default 42 for draws, unset on the wire) */
  seed?: number | null;
  /** constrained decoding: send a JSON schema built from the variables as response_format */
  constrained?: boolean;
  thinking?: boolean;
  /** rich system prompt (RADS "guided") vs none (RADS "zero-shot"); default true */
  guided?: boolean;
  systemMessagesAllowed?: boolean;
  mergeConsecutiveMessages?: boolean;
  contextLimit?: ContextLimit | null;
  /** missing tokens of the use case, passed to normalisation */
  missingTokens?: readonly string[] | null;
  embed?: EmbedFn;
  selfConsistency?: SelfConsistencyOptions | null;
  graph?: PromptGraphOptions | null;
  /** ask for quotes per variable (default NONE: the prompt and schema without them) */
  evidence?: EvidenceMode;
  signal?: AbortSignal;
}

/** What the output parser makes of one completion. */
export interface ParsedOutput {
  /** the answer object (last JSON object that parses after repair), or null */
  json: Record<string, unknown> | null;
  reasoning: string | null;
  /** why no object could be used: null when json is set or no braces were found */
  parseError: string | null;
  cells: Record<string, NormalisedCell>;
  /** finish_reason 'length' */
  truncated: boolean;
  /** the object needed repair (trailing commas, quotes, Python literals, unterminated, …) */
  repaired: boolean;
  /** with evidence asked for: the quotes per variable, taken out of `json` */
  quotes?: Record<string, string[]>;
}

export interface CallRecord {
  raw: string;
  reasoning: string | null;
  json: Record<string, unknown> | null;
  parseError: string | null;
  cells: Record<string, NormalisedCell>;
  finishReason: string | null;
  truncated: boolean;
  latencyMs: number;
  promptTokens: number | null;
  completionTokens: number | null;
  attempts: number;
  /** with evidence: the quotes this call gave per variable */
  quotes?: Record<string, string[]>;
}

export interface SampleRecord extends Partial<CallRecord> {
  index: number;
  temperature: number;
  seed: number | null;
  /** transport error of this sample (the others still vote) */
  error: string | null;
}

export type StepStatus = 'COMPLETED' | 'SKIPPED' | 'FAILED' | 'TIMEOUT';

export interface StepRecord extends Partial<CallRecord> {
  step: number;
  keys: string[];
  /** steps whose answers this step waited for and saw */
  after: number[];
  status: StepStatus;
  /** keys of this step whose condition did not hold */
  skipped: string[];
  error: string | null;
}

/** Normalised value of a cell in JSON-safe form: VALUE → value, MISSING → null (INVALID keys are absent). */
export type ResultValue = string | number | string[] | null;

export interface ExtractionResult {
  strategy: StrategyName;
  values: Record<string, ResultValue>;
  cells: Record<string, NormalisedCell>;
  /** the answer object (single call), the voted answer (SC), or the merged step answers (graph) */
  json: Record<string, unknown> | null;
  /** raw output: one string for a single call, one per sample (SC) or per executed step (graph) */
  raw: string | string[];
  reasoning: string | string[] | null;
  parseError: string | null;
  finishReason: string | null;
  /** any call stopped at the token limit */
  truncated: boolean;
  /** the report text was cut to the context limit */
  inputTruncated: boolean;
  latencyMs: number;
  promptTokens: number | null;
  completionTokens: number | null;
  attempts: number;
  /** number of chat calls made */
  calls: number;
  samples?: SampleRecord[];
  steps?: StepRecord[];
  /** variables not asked because their prompt-graph condition did not hold (they take their default) */
  skipped: string[];
  /**
   * With evidence: the model's quotes per variable, as it wrote them (untrusted), from the call
   * whose value was taken (the chosen sample, the variable's step); absent without evidence.
   */
  quotes?: Record<string, string[]>;
}
