import { Field, Float, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import type { RunSettings } from '../../extraction/run-snapshot';
import { JSONScalar } from '../../graphql/scalars';
import { SamplingParams } from '../endpoint/model.entity';
import { Prompt } from '../prompt/prompt.entity';
import { PredictedField, Prediction, PredictionStatus } from '../run/prediction.entity';
import { PromptStrategy } from '../run/run.entity';
import { UseCase } from '../use-case/use-case.entity';

export enum ConfigFormat {
  MEDICAL_RECORD_LLM_YAML = 'MEDICAL_RECORD_LLM_YAML',
}
registerEnumType(ConfigFormat, {
  name: 'ConfigFormat',
  description: 'MEDICAL_RECORD_LLM_YAML: the prompt (and model) YAML of the MedicalRecordLLM framework.',
});

export enum EvidenceMode {
  NONE = 'NONE',
  QUOTES = 'QUOTES',
}
registerEnumType(EvidenceMode, {
  name: 'EvidenceMode',
  description: 'NONE: values only (the prompt as without evidence). QUOTES: the model also gives verbatim quotes per variable, aligned to spans of the report.',
});

/** Decoding and strategy settings that do not vary across an experiment's grid. */
@InputType()
export class RunSettingsInput {
  @Field(() => SamplingParams, { nullable: true, description: "Over the model's default sampling parameters." })
  sampling?: SamplingParams | null;
  @Field(() => [String], { nullable: true, description: 'Examples by name (one/few-shot, chain of thought).' }) exampleNames?: string[] | null;
  @Field(() => Int, { nullable: true, description: 'Examples drawn at random with the seed (default 1 one-shot, 3 few-shot).' })
  exampleCount?: number | null;
  @Field(() => Int, { nullable: true, description: 'Self-consistency samples k.' }) samples?: number | null;
  @Field(() => [Float], { nullable: true, description: 'Self-consistency: one temperature per sample.' }) temperatures?: number[] | null;
  @Field(() => Int, {
    nullable: true,
    description: "Cut the report to this many tokens (≈ 4 characters each); recorded as inputTruncated. Default for runs: what fits the model's context (maxModelLen).",
  })
  contextLimitTokens?: number | null;
  @Field({ nullable: true, description: 'False sends the system rules as a user message.' }) systemMessagesAllowed?: boolean;
  @Field({ nullable: true, description: 'Merge consecutive messages of the same role (Gemma-style templates).' }) mergeConsecutiveMessages?: boolean;
  @Field(() => Int, { nullable: true, description: 'Prompt graph: timeout per step, milliseconds.' }) stepTimeoutMs?: number | null;
  @Field(() => Int, {
    nullable: true,
    description: 'Overall time one report may take, every call, retry and backoff included, milliseconds. Default: four endpoint timeouts plus a minute, within the bound the server allows.',
  })
  deadlineMs?: number | null;
  @Field(() => EvidenceMode, {
    nullable: true,
    defaultValue: EvidenceMode.NONE,
    description: 'QUOTES: the model also gives verbatim quotes per variable; each field then has its evidence spans in the report.',
  })
  evidence?: EvidenceMode | null;
}

/**
 * The settings of one model call pattern: strategy and its switches. What the snapshot builder
 * takes (RunSettings), whose ranges are declared beside it (RUN_SETTING_LIMITS, SAMPLING_LIMITS).
 */
@InputType()
export class StrategySettingsInput extends RunSettingsInput implements RunSettings {
  @Field(() => PromptStrategy, { defaultValue: PromptStrategy.ZERO_SHOT }) strategy!: PromptStrategy;
  @Field({ defaultValue: false, description: 'Constrained decoding: response_format json_schema from the variables.' }) constrained!: boolean;
  @Field({ nullable: true, description: 'Thinking on/off (chat_template_kwargs.enable_thinking; reasoning_effort for Ollama); unset: server default.' })
  thinking?: boolean;
  @Field({ defaultValue: true, description: 'With the rich system prompt (guided) or without it (zero-shot, RADS paper).' }) guided!: boolean;
}

@InputType({ description: "Where an extract call's result is kept, to be scored later." })
export class ExtractStoreInput {
  @Field(() => ID, { description: 'A dataset of the use case: the text becomes (or is) its report.' }) datasetId!: string;
  @Field(() => String, { nullable: true, description: 'The report id in the dataset; default: reportId.' }) externalId?: string | null;
}

@InputType({ description: 'One report through a model with a strategy; nothing is stored unless asked (store).' })
export class ExtractInput extends StrategySettingsInput {
  @Field(() => ID) modelId!: string;
  @Field(() => ID) useCaseId!: string;
  @Field(() => ID, { nullable: true, description: "A prompt of the use case; default: the use case's newest prompt, else the built-in layout." })
  promptId?: string | null;
  @Field() text!: string;
  @Field({ defaultValue: 'report', description: 'Shown to the model as the report id.' }) reportId!: string;
  @Field(() => ExtractStoreInput, {
    nullable: true,
    description:
      "Keep the result as a prediction: the text is added to the dataset (or found there by its id, with the same text) and the prediction goes to the dataset's run of these settings (one per model × prompt × settings, created on first use), so service calls can be scored like any run. Give service calls a dataset of their own: the other runs of a dataset have no prediction for the texts added to it.",
  })
  store?: ExtractStoreInput | null;
}

@ObjectType()
export class ExtractPayload {
  @Field(() => PredictionStatus, { description: 'FAILED when the endpoint gave no answer; see error and errorCode.' }) status!: PredictionStatus;
  @Field(() => String, { nullable: true, description: 'Why it failed: a short message, secrets redacted.' }) error!: string | null;
  @Field(() => String, { nullable: true, description: 'HTTP_<status>, RATE_LIMITED, TIMEOUT, CONNECTION, UNREADABLE, DEADLINE, …' }) errorCode!: string | null;
  @Field(() => [String], { description: 'Settings the endpoint may not honour (unsupported options, greedy samples, …).' }) warnings!: string[];
  @Field(() => JSONScalar, { description: 'Normalised values by key (MISSING as null; invalid keys left out).' }) values!: Record<string, unknown>;
  @Field(() => [PredictedField]) fields!: PredictedField[];
  @Field(() => JSONScalar, { nullable: true, description: 'The JSON object taken as the answer.' }) json!: Record<string, unknown> | null;
  @Field(() => [String], { description: 'Raw output: one per call (samples, graph steps).' }) raw!: string[];
  @Field(() => [String], { description: 'Reasoning per call, where the model gave any.' }) reasoning!: string[];
  @Field(() => String, { nullable: true }) parseError!: string | null;
  @Field(() => String, { nullable: true }) finishReason!: string | null;
  @Field({ description: 'A call stopped at the token limit.' }) truncated!: boolean;
  @Field({ description: 'The report was cut to the context limit.' }) inputTruncated!: boolean;
  @Field(() => Int) latencyMs!: number;
  @Field(() => Int, { nullable: true }) promptTokens!: number | null;
  @Field(() => Int, { nullable: true }) completionTokens!: number | null;
  @Field(() => Int) attempts!: number;
  @Field(() => Int, { description: 'Chat calls made.' }) calls!: number;
  @Field(() => JSONScalar, { nullable: true, description: 'Self-consistency samples, each with its temperature and answer.' }) samples!: unknown;
  @Field(() => JSONScalar, { nullable: true, description: 'Prompt-graph steps with status, keys and answers.' }) steps!: unknown;
  @Field(() => [String], { description: 'Variables a prompt-graph condition skipped (they took their default).' }) skipped!: string[];
  @Field(() => Prediction, { nullable: true, description: 'The stored prediction, when store was given.' }) prediction!: Prediction | null;
}

@InputType()
export class ImportUseCaseConfigInput {
  @Field(() => ID) projectId!: string;
  @Field() name!: string;
  @Field(() => ConfigFormat, { defaultValue: ConfigFormat.MEDICAL_RECORD_LLM_YAML }) format!: ConfigFormat;
  @Field({ description: 'The prompt config YAML (field_instructions, task, examples).' }) promptYaml!: string;
  @Field(() => String, { nullable: true, description: 'The model config YAML (sampling, self_consistency_sampling).' }) modelYaml?: string | null;
  @Field(() => String, { nullable: true }) description?: string | null;
  @Field(() => String, { nullable: true }) language?: string | null;
}

@ObjectType()
export class ImportUseCaseConfigPayload {
  @Field(() => UseCase) useCase!: UseCase;
  @Field(() => Prompt) prompt!: Prompt;
  @Field(() => JSONScalar, { nullable: true, description: 'The model config as read (sampling, self-consistency), kept in the prompt settings.' })
  modelConfig!: unknown;
  @Field(() => [String], { description: 'What was ignored or assumed.' }) warnings!: string[];
}
