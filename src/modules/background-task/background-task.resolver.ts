import { Arg, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root, Subscription } from 'type-graphql';
import type { GraphQLContext } from '../../graphql/context';
import { decodeId, fromGlobalId } from '../../graphql/node';
import { backgroundTaskById, datasetById, experimentById } from '../../graphql/node-loaders';
import { subscription, type BusEvent } from '../../graphql/pubsub';
import { JSONScalar } from '../../graphql/scalars';
import { Dataset } from '../dataset/dataset.entity';
import { Experiment } from '../run/experiment.entity';
import { BackgroundTask, BackgroundTaskError, BackgroundTaskStatus } from './background-task.entity';
import { StartBackgroundTaskPayload, StartExperimentTaskInput, StartReportImportInput } from './background-task.input';

const OVER = new Set([BackgroundTaskStatus.SUCCEEDED, BackgroundTaskStatus.FAILED]);
/** Subscriptions reload this often without events: a missed notification is noticed. */
const REFRESH_MS = 5000;

@Resolver(() => BackgroundTask)
export class BackgroundTaskResolver {
  @Mutation(() => StartBackgroundTaskPayload, {
    description: 'importReports as a background task: the file is stored and a worker imports it, all or nothing. Follow the task with backgroundTaskProgress.',
  })
  startReportImport(@Arg('input') input: StartReportImportInput, @Ctx() ctx: GraphQLContext): Promise<StartBackgroundTaskPayload> {
    return ctx.services.tasks.startReportImport(ctx.principal, decodeId(input.datasetId, 'Dataset', 'datasetId'), input, ctx.inlineFiles, ctx.deadline);
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
      const taskId = decodeId((args as { taskId: string }).taskId, 'BackgroundTask', 'taskId');
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
  backgroundTaskProgress(@Root() task: BackgroundTask, @Arg('taskId', () => ID) _taskId: string): BackgroundTask {
    return task;
  }

  @FieldResolver(() => BackgroundTaskError, { nullable: true, description: 'Set when the task FAILED.' })
  error(@Root() task: BackgroundTask): BackgroundTaskError | null {
    if (task.errorCode === null) return null;
    return { code: task.errorCode, message: task.errorMessage ?? '', details: task.errorDetails };
  }

  @FieldResolver(() => JSONScalar, {
    nullable: true,
    description: 'When the task SUCCEEDED: what the synchronous mutation would have counted ({inserted, updated} of an import, {runs} of an experiment).',
  })
  result(@Root() task: BackgroundTask): Record<string, number> | null {
    if (!task.result) return null;
    const { datasetId: _d, experimentId: _e, ...counts } = task.result;
    return counts as Record<string, number>;
  }

  @FieldResolver(() => Dataset, { nullable: true, description: 'The dataset an import writes into, or the dataset of an experiment.' })
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
