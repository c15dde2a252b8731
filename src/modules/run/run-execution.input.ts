import { Field, Float, ID, InputType, Int, ObjectType } from 'type-graphql';
import { RunSettingsInput, StrategySettingsInput } from '../extraction/extraction.input';
import { Experiment } from './experiment.entity';
import { PromptStrategy, Run, RunProgress, RunStatus } from './run.entity';

@InputType({ description: 'One text of an ad-hoc batch.' })
export class AdHocTextInput {
  @Field(() => String, { nullable: true, description: 'Your id of the text; default "text-<n>" in list order.' }) externalId?: string | null;
  @Field() text!: string;
}

@InputType({ description: 'A model × prompt × strategy over a dataset, or over a list of texts, executed by the workers.' })
export class StartRunInput extends StrategySettingsInput {
  @Field(() => ID) modelId!: string;
  @Field(() => ID, { nullable: true, description: 'The reports to run over. Give either datasetId or useCaseId with texts.' })
  datasetId?: string | null;
  @Field(() => ID, { nullable: true, description: "With texts: the use case whose variables are extracted. With a dataset it may only name the dataset's own use case." }) useCaseId?: string | null;
  @Field(() => [AdHocTextInput], {
    nullable: true,
    description: 'Ad-hoc texts (a batch for a service): they become a new dataset of the use case, so the run can be scored once annotated.',
  })
  texts?: AdHocTextInput[] | null;
  @Field(() => ID, { nullable: true, description: "A prompt of the use case; default: the use case's newest prompt, else the built-in layout." })
  promptId?: string | null;
  @Field(() => String, { nullable: true, description: 'Default "<model> · <strategy>".' }) name?: string | null;
}

@ObjectType()
export class StartRunPayload {
  @Field(() => Run) run!: Run;
}

@InputType({ description: 'The grid models × prompts × strategies × thinking × constrained × guided, one run each, over one dataset.' })
export class StartExperimentInput {
  @Field(() => ID) datasetId!: string;
  @Field() name!: string;
  @Field(() => [ID]) modelIds!: string[];
  @Field(() => [ID], { nullable: true, description: "Default: the use case's newest prompt." }) promptIds?: string[] | null;
  @Field(() => [PromptStrategy]) strategies!: PromptStrategy[];
  @Field(() => [Boolean], { nullable: true, description: 'Thinking settings to cross, e.g. [true, false]; default: the server default only.' })
  thinking?: boolean[] | null;
  @Field(() => [Boolean], { nullable: true, description: 'Constrained decoding settings to cross; default [false].' }) constrained?: boolean[] | null;
  @Field(() => [Boolean], { nullable: true, description: 'Guided (rich system prompt) settings to cross; default [true].' }) guided?: boolean[] | null;
  @Field(() => RunSettingsInput, { nullable: true, description: 'Settings shared by every run of the grid.' }) settings?: RunSettingsInput | null;
}

@ObjectType()
export class StartExperimentPayload {
  @Field(() => Experiment) experiment!: Experiment;
  @Field(() => [Run]) runs!: Run[];
}

@InputType()
export class CancelRunInput {
  @Field(() => ID) runId!: string;
}

@ObjectType()
export class CancelRunPayload {
  @Field(() => Run) run!: Run;
}

@InputType()
export class ResumeRunInput {
  @Field(() => ID) runId!: string;
}

@ObjectType()
export class ResumeRunPayload {
  @Field(() => Run) run!: Run;
  @Field(() => Int, { description: 'Failed predictions removed to be tried again.' }) retried!: number;
  @Field(() => Int, { description: 'Reports queued again (pending and retried).' }) queued!: number;
}

@InputType()
export class CancelExperimentInput {
  @Field(() => ID) experimentId!: string;
}

@InputType()
export class ResumeExperimentInput {
  @Field(() => ID) experimentId!: string;
}

@ObjectType()
export class ExperimentPayload {
  @Field(() => Experiment) experiment!: Experiment;
  @Field(() => [Run]) runs!: Run[];
}

@ObjectType({ description: "An experiment's runs and reports, counted." })
export class ExperimentProgress {
  @Field(() => Int) runs!: number;
  @Field(() => Int) queued!: number;
  @Field(() => Int) running!: number;
  @Field(() => Int) succeeded!: number;
  @Field(() => Int) partial!: number;
  @Field(() => Int) failed!: number;
  @Field(() => Int) cancelled!: number;
  @Field(() => Int, { description: 'Reports over all runs.' }) total!: number;
  @Field(() => Int) predictionsSucceeded!: number;
  @Field(() => Int) predictionsFailed!: number;
  @Field(() => Int) pending!: number;
  @Field(() => Float, { description: 'Share of reports done, 0 to 1.' }) fraction!: number;
  @Field(() => Boolean, { description: 'Every run is over (succeeded, partial, failed or cancelled).' }) finished!: boolean;
}

@ObjectType()
export class RunProgressEvent {
  @Field(() => Run) run!: Run;
  @Field(() => RunStatus) status!: RunStatus;
  @Field(() => RunProgress) progress!: RunProgress;
  @Field(() => String, { nullable: true, description: 'The newest failure of the run: a short message, secrets redacted.' }) lastError!: string | null;
}

@ObjectType()
export class ExperimentProgressEvent {
  @Field(() => Experiment) experiment!: Experiment;
  @Field(() => ExperimentProgress) progress!: ExperimentProgress;
}

@ObjectType({ description: "The endpoint's Prometheus metrics sampled while the run executed (vLLM, SGLang); null fields: the endpoint has no such metric." })
export class RunTelemetry {
  @Field(() => Int, { description: 'Samples taken (every 2 s while the run had calls in flight).' }) samples!: number;
  @Field(() => Float, { nullable: true, description: 'Mean KV-cache use, 0 to 1.' }) meanKvCacheUsage!: number | null;
  @Field(() => Float, { nullable: true, description: 'Mean requests running at the endpoint (all its clients).' }) meanRunning!: number | null;
  @Field(() => Float, { nullable: true, description: 'Mean requests waiting at the endpoint: its queue depth.' }) meanWaiting!: number | null;
  @Field(() => Float, { nullable: true, description: 'Prefix-cache hits per queried token over the run (both counters as differences between the first and last sample).' })
  prefixCacheHitRate!: number | null;
  @Field(() => Float, { nullable: true, description: 'Tokens the endpoint generated per second over the run, for all its clients.' })
  endpointGenerationTokensPerSecond!: number | null;
  @Field(() => Float, {
    nullable: true,
    description: "The run's completion tokens per second divided by the mean KV-cache use: its throughput corrected for cache utilisation.",
  })
  tokensPerSecondAtFullCache!: number | null;
}
