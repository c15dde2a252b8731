import { Arg, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root, Subscription } from 'type-graphql';
import type { GraphQLContext } from '../../graphql/context';
import { decodeId, fromGlobalId } from '../../graphql/node';
import { annotatorById, backgroundTaskById, datasetById, experimentById, runById } from '../../graphql/node-loaders';
import { subscription, type BusEvent } from '../../graphql/pubsub';
import { JSONScalar } from '../../graphql/scalars';
import { Annotator } from '../annotation/annotator.entity';
import { Dataset } from '../dataset/dataset.entity';
import { Experiment } from '../run/experiment.entity';
import { Run } from '../run/run.entity';
import { BackgroundTask, BackgroundTaskError, BackgroundTaskKind, BackgroundTaskStatus } from './background-task.entity';
import {
  StartAnnotationImportInput,
  StartBackgroundTaskPayload,
  StartExperimentTaskInput,
  StartPredictionImportInput,
  StartReportImportInput,
} from './background-task.input';

const OVER = new Set([BackgroundTaskStatus.SUCCEEDED, BackgroundTaskStatus.FAILED]);
/** Subscriptions reload this often without events: a missed notification is noticed. */
const REFRESH_MS = 5000;

@Resolver(() => BackgroundTask)
export class BackgroundTaskResolver {
  @Mutation(() => StartBackgroundTaskPayload, {
    description: 'importReports as a background task: the file is stored and a worker imports it, all or nothing. Follow the task with backgroundTaskProgress.',
  })
  startReportImport(@Arg('input') input: StartReportImportInput, @Ctx() ctx: GraphQLContext): Promise<StartBackgroundTaskPayload> {
    const ids = { datasetId: decodeId(input.datasetId, 'Dataset', 'datasetId') };
    return ctx.services.tasks.startImport(BackgroundTaskKind.REPORT_IMPORT, ctx.principal, ids, input, ctx.inlineFiles, ctx.deadline);
  }

  @Mutation(() => StartBackgroundTaskPayload, { description: 'importAnnotations as a background task: the file is stored and a worker imports it, all or nothing.' })
  startAnnotationImport(@Arg('input') input: StartAnnotationImportInput, @Ctx() ctx: GraphQLContext): Promise<StartBackgroundTaskPayload> {
    const ids = { datasetId: decodeId(input.datasetId, 'Dataset', 'datasetId') };
    return ctx.services.tasks.startImport(BackgroundTaskKind.ANNOTATION_IMPORT, ctx.principal, ids, input, ctx.inlineFiles, ctx.deadline);
  }

  @Mutation(() => StartBackgroundTaskPayload, { description: 'importPredictions as a background task: the file is stored and a worker imports it, all or nothing.' })
  startPredictionImport(@Arg('input') input: StartPredictionImportInput, @Ctx() ctx: GraphQLContext): Promise<StartBackgroundTaskPayload> {
    const ids = {
      datasetId: decodeId(input.datasetId, 'Dataset', 'datasetId'),
      promptId: input.promptId ? decodeId(input.promptId, 'Prompt', 'promptId') : null,
    };
    return ctx.services.tasks.startImport(BackgroundTaskKind.PREDICTION_IMPORT, ctx.principal, ids, input, ctx.inlineFiles, ctx.deadline);
  }

  @Mutation(() => StartBackgroundTaskPayload, {
    description: 'startExperiment as a background task: a worker creates the experiment, its runs and their work items, all or nothing.',
  })
  startExperimentTask(@Arg('input') input: StartExperimentTaskInput, @Ctx() ctx: GraphQLContext): Promise<StartBackgroundTaskPayload> {
    return ctx.services.tasks.startExperiment(
      ctx.principal,
      input,
      {
        datasetId: decodeId(input.datasetId, 'Dataset', 'datasetId'),
        modelIds: input.modelIds.map((id) => decodeId(id, 'Model', 'modelIds')),
        promptIds: (input.promptIds ?? []).map((id) => decodeId(id, 'Prompt', 'promptIds')),
      },
      ctx.deadline,
    );
  }

  @Query(() => BackgroundTask, { nullable: true, description: 'A background task by its ID; null when it does not exist or is not yours.' })
  backgroundTask(@Arg('id', () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<BackgroundTask | null> {
    const decoded = fromGlobalId(id);
    if (!decoded || decoded.type !== 'BackgroundTask') return Promise.resolve(null);
    return ctx.loaders.get(backgroundTaskById).load(decoded.id);
  }

  @Subscription(() => BackgroundTask, {
    description: "A background task's status and progress: the current state first, then after every change, until it SUCCEEDED or FAILED.",
    subscribe: async ({ args, context }) => {
      const ctx = context as GraphQLContext;
      const taskId = decodeId((args as { backgroundTaskId: string }).backgroundTaskId, 'BackgroundTask', 'backgroundTaskId');
      await ctx.services.tasks.get(ctx.principal, taskId);
      const load = async (_events: BusEvent[], end: () => void): Promise<BackgroundTask[]> => {
        const task = await ctx.services.tasks.get(ctx.principal, taskId);
        if (OVER.has(task.status)) end();
        return [task];
      };
      return subscription(ctx.services.bus, (e) => e.kind === 'task' && e.taskId === taskId, load, (end) => load([], end), {
        refreshMs: REFRESH_MS,
        key: (t) => JSON.stringify([t.status, t.processed, t.attempts]),
      });
    },
  })
  backgroundTaskProgress(@Root() task: BackgroundTask, @Arg('backgroundTaskId', () => ID) _backgroundTaskId: string): BackgroundTask {
    return task;
  }

  @FieldResolver(() => BackgroundTaskError, { nullable: true, description: 'Set when the task FAILED.' })
  error(@Root() task: BackgroundTask): BackgroundTaskError | null {
    if (task.errorCode === null) return null;
    return { code: task.errorCode, message: task.errorMessage ?? '', details: task.errorDetails };
  }

  @FieldResolver(() => JSONScalar, {
    nullable: true,
    description:
      'When the task SUCCEEDED: what the synchronous mutation would have counted ({inserted, updated} of a report import, {reports, values} of an annotation import, {imported, missingReports} of a prediction import, {runs} of an experiment).',
  })
  result(@Root() task: BackgroundTask): Record<string, number> | null {
    if (!task.result) return null;
    const { experimentId: _e, annotatorId: _a, runId: _r, ...counts } = task.result;
    return counts as Record<string, number>;
  }

  @FieldResolver(() => Annotator, { nullable: true, description: 'The annotator an annotation import wrote, once it SUCCEEDED.' })
  annotator(@Root() task: BackgroundTask, @Ctx() ctx: GraphQLContext): Promise<Annotator | null> {
    const annotatorId = task.result?.annotatorId;
    return annotatorId ? ctx.loaders.get(annotatorById).load(annotatorId) : Promise.resolve(null);
  }

  @FieldResolver(() => Run, { nullable: true, description: 'The run a prediction import created, once it SUCCEEDED.' })
  run(@Root() task: BackgroundTask, @Ctx() ctx: GraphQLContext): Promise<Run | null> {
    const runId = task.result?.runId;
    return runId ? ctx.loaders.get(runById).load(runId) : Promise.resolve(null);
  }

  @FieldResolver(() => Dataset, { nullable: true, description: 'The dataset the task writes into (its import, or the experiment over it).' })
  dataset(@Root() task: BackgroundTask, @Ctx() ctx: GraphQLContext): Promise<Dataset | null> {
    const datasetId = task.input['datasetId'];
    return typeof datasetId === 'string' ? ctx.loaders.get(datasetById).load(datasetId) : Promise.resolve(null);
  }

  @FieldResolver(() => Experiment, { nullable: true, description: 'The experiment the task created, once it SUCCEEDED.' })
  experiment(@Root() task: BackgroundTask, @Ctx() ctx: GraphQLContext): Promise<Experiment | null> {
    const experimentId = task.result?.experimentId;
    return experimentId ? ctx.loaders.get(experimentById).load(experimentId) : Promise.resolve(null);
  }
}
