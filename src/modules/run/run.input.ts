import { Field, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import { JSONScalar } from '../../graphql/scalars';
import { ImportFormat } from '../imports/import.types';
import { GraphQLUpload, type FileUpload } from '../imports/upload';
import { PromptStrategy, Run, RunSource, RunStatus } from './run.entity';
import { PredictionStatus } from './prediction.entity';

export enum PredictionLayout {
  JSON_COLUMN = 'JSON_COLUMN',
  WIDE = 'WIDE',
  RAW_OUTPUT = 'RAW_OUTPUT',
  MEDICAL_RECORD_LLM_CSV = 'MEDICAL_RECORD_LLM_CSV',
}
registerEnumType(PredictionLayout, {
  name: 'PredictionLayout',
  description:
    'JSON_COLUMN: one field holds the extracted object (JSON or a Python dict literal). WIDE: one field per variable key. ' +
    'RAW_OUTPUT: one field holds the raw model output, parsed as ReportQL parses its own runs. ' +
    'MEDICAL_RECORD_LLM_CSV: the output CSV of the MedicalRecordLLM framework (extracted_data, raw_output, reasoning, candidates).',
});

@InputType()
export class ImportPredictionsInput {
  @Field(() => ID) datasetId!: string;
  @Field({ description: 'Served model name; a model without endpoint is created for it when new.' }) modelName!: string;
  @Field(() => String, { nullable: true, description: 'Run name; default "<model> · <strategy> (imported)".' }) name?: string | null;
  @Field(() => PromptStrategy, { defaultValue: PromptStrategy.ZERO_SHOT }) strategy!: PromptStrategy;
  @Field(() => ID, { nullable: true }) promptId?: string | null;
  @Field(() => ImportFormat) format!: ImportFormat;
  @Field(() => PredictionLayout) layout!: PredictionLayout;
  @Field(() => String, { nullable: true, description: 'The file content, UTF-8 (or upload it as file).' }) content?: string | null;
  @Field(() => GraphQLUpload, {
    nullable: true,
    description: 'The file as a GraphQL multipart request upload (instead of content); UTF-8.',
  })
  file?: Promise<FileUpload> | null;
  @Field(() => String, { nullable: true, description: 'Field with the report external id; default "id" (framework CSV: detected).' })
  idField?: string | null;
  @Field(() => String, { nullable: true, description: 'JSON_COLUMN: field with the extracted object (default "extracted_data").' })
  objectField?: string | null;
  @Field(() => String, { nullable: true, description: 'Field with the raw model output (RAW_OUTPUT default "raw_output").' })
  rawField?: string | null;
  @Field(() => String, { nullable: true }) reasoningField?: string | null;
  @Field(() => String, { nullable: true, description: 'RAW_OUTPUT: field with the finish reason (default "finish_reason"); "length" marks truncation.' })
  finishReasonField?: string | null;
  @Field(() => String, { nullable: true, description: 'Field with the prompt tokens of each prediction (a whole number), for the run usage.' })
  promptTokensField?: string | null;
  @Field(() => String, { nullable: true, description: 'Field with the completion tokens of each prediction (a whole number).' })
  completionTokensField?: string | null;
  @Field(() => String, { nullable: true, description: 'Field with the latency of each prediction, milliseconds (a number ≥ 0).' })
  latencyMsField?: string | null;
  @Field(() => JSONScalar, { nullable: true, description: 'WIDE: variable key → column, where they differ.' })
  columnMap?: Record<string, string> | null;
  @Field(() => JSONScalar, { nullable: true, description: 'What is known of how the run was made (sampling, prompt, …).' })
  config?: Record<string, unknown> | null;
  @Field(() => String, { nullable: true }) delimiter?: string | null;
}

@ObjectType()
export class ImportPredictionsPayload {
  @Field(() => Run) run!: Run;
  @Field(() => Int) imported!: number;
  @Field(() => Int, { description: 'Dataset reports the file has no row for; they score as INVALID (MISSING).' })
  missingReports!: number;
}

@InputType()
export class RunFilter {
  @Field(() => ID, { nullable: true }) datasetId?: string | null;
  @Field(() => ID, { nullable: true }) modelId?: string | null;
  @Field(() => PromptStrategy, { nullable: true }) strategy?: PromptStrategy | null;
  @Field(() => RunStatus, { nullable: true }) status?: RunStatus | null;
  @Field(() => RunSource, { nullable: true }) source?: RunSource | null;
}

@InputType()
export class PredictionFilter {
  @Field(() => PredictionStatus, { nullable: true }) status?: PredictionStatus | null;
  @Field({ nullable: true, description: 'Only predictions with at least one invalid field (true) or none (false).' })
  hasInvalid?: boolean;
}
