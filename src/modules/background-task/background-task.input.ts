import { Field, InputType, ObjectType } from 'type-graphql';
import { ImportAnnotationsInput } from '../annotation/annotation.input';
import { ImportReportsInput } from '../dataset/dataset.input';
import { ImportPredictionsInput } from '../run/run.input';
import { StartExperimentInput } from '../run/run-execution.input';
import { BackgroundTask } from './background-task.entity';

const IDEMPOTENCY_KEY = {
  nullable: true,
  description:
    'Your key for this request (at most 200 characters, unique in the project): a request repeated with the same key answers the task the first one started instead of starting another.',
};

@InputType({ description: "importReports' input, run as a background task." })
export class StartReportImportInput extends ImportReportsInput {
  @Field(() => String, IDEMPOTENCY_KEY) idempotencyKey?: string | null;
}

@InputType({ description: "importAnnotations' input, run as a background task." })
export class StartAnnotationImportInput extends ImportAnnotationsInput {
  @Field(() => String, IDEMPOTENCY_KEY) idempotencyKey?: string | null;
}

@InputType({ description: "importPredictions' input, run as a background task." })
export class StartPredictionImportInput extends ImportPredictionsInput {
  @Field(() => String, IDEMPOTENCY_KEY) idempotencyKey?: string | null;
}

@InputType({ description: "startExperiment's input, run as a background task." })
export class StartExperimentTaskInput extends StartExperimentInput {
  @Field(() => String, IDEMPOTENCY_KEY) idempotencyKey?: string | null;
}

@ObjectType()
export class StartBackgroundTaskPayload {
  @Field(() => BackgroundTask) task!: BackgroundTask;
  @Field({ description: 'False when the idempotency key found a task started before: nothing new was started.' }) created!: boolean;
}
