import { Arg, Args, Ctx, FieldResolver, ID, Mutation, Resolver, Root, Subscription } from 'type-graphql';
import type { GraphQLContext } from '../../graphql/context';
import { PageArgs } from '../../graphql/connection';
import { decodeId } from '../../graphql/node';
import { datasetById, useCaseById } from '../../graphql/node-loaders';
import { subscription, type BusEvent } from '../../graphql/pubsub';
import { Role } from '../api-key/api-key.entity';
import { Dataset } from '../dataset/dataset.entity';
import { UseCase } from '../use-case/use-case.entity';
import { Experiment } from './experiment.entity';
import { Prediction } from './prediction.entity';
import {
  CancelExperimentInput,
  CancelRunInput,
  CancelRunPayload,
  ExperimentPayload,
  ExperimentProgress,
  ExperimentProgressEvent,
  ResumeExperimentInput,
  ResumeRunInput,
  ResumeRunPayload,
  RunProgressEvent,
  StartExperimentInput,
  StartExperimentPayload,
  StartRunInput,
  StartRunPayload,
} from './run-execution.input';
import { runProgress } from './run-progress';
import { Run, RunStatus } from './run.entity';
import { RunConnection } from './run.types';

const TERMINAL = new Set([RunStatus.SUCCEEDED, RunStatus.PARTIAL, RunStatus.FAILED, RunStatus.CANCELLED]);

interface RunIdArgs {
  runId: string;
}

@Resolver()
export class RunExecutionResolver {
  @Mutation(() => StartRunPayload, { description: 'Queues a run over a dataset (or over ad-hoc texts); the workers execute it.' })
  async startRun(@Arg('input') input: StartRunInput, @Ctx() ctx: GraphQLContext): Promise<StartRunPayload> {
    const run = await ctx.services.execution.startRun(ctx.principal, input, {
      modelId: decodeId(input.modelId, 'Model', 'modelId'),
      datasetId: input.datasetId ? decodeId(input.datasetId, 'Dataset', 'datasetId') : null,
      useCaseId: input.useCaseId ? decodeId(input.useCaseId, 'UseCase', 'useCaseId') : null,
      promptId: input.promptId ? decodeId(input.promptId, 'Prompt', 'promptId') : null,
    });
    return { run };
  }

  @Mutation(() => StartExperimentPayload, { description: 'Queues one run per cell of the grid over one dataset, in one transaction.' })
  startExperiment(@Arg('input') input: StartExperimentInput, @Ctx() ctx: GraphQLContext): Promise<StartExperimentPayload> {
    return ctx.services.execution.startExperiment(ctx.principal, input, {
      datasetId: decodeId(input.datasetId, 'Dataset', 'datasetId'),
      modelIds: input.modelIds.map((id) => decodeId(id, 'Model', 'modelIds')),
      promptIds: (input.promptIds ?? []).map((id) => decodeId(id, 'Prompt', 'promptIds')),
    });
  }

  @Mutation(() => CancelRunPayload, { description: 'Stops a queued or running run; calls in flight are aborted and what finished is kept.' })
  async cancelRun(@Arg('input') input: CancelRunInput, @Ctx() ctx: GraphQLContext): Promise<CancelRunPayload> {
    return { run: await ctx.services.execution.cancelRun(ctx.principal, decodeId(input.runId, 'Run', 'runId')) };
  }

  @Mutation(() => ResumeRunPayload, { description: 'Continues a cancelled, partial or failed run: pending reports and failed predictions are queued again.' })
  resumeRun(@Arg('input') input: ResumeRunInput, @Ctx() ctx: GraphQLContext): Promise<ResumeRunPayload> {
    return ctx.services.execution.resumeRun(ctx.principal, decodeId(input.runId, 'Run', 'runId'));
  }

  @Mutation(() => ExperimentPayload, { description: 'Cancels every queued or running run of the experiment.' })
  cancelExperiment(@Arg('input') input: CancelExperimentInput, @Ctx() ctx: GraphQLContext): Promise<ExperimentPayload> {
    return ctx.services.execution.cancelExperiment(ctx.principal, decodeId(input.experimentId, 'Experiment', 'experimentId'));
  }

  @Mutation(() => ExperimentPayload, { description: 'Resumes every run of the experiment that is over (pending and failed reports are queued again).' })
  resumeExperiment(@Arg('input') input: ResumeExperimentInput, @Ctx() ctx: GraphQLContext): Promise<ExperimentPayload> {
    return ctx.services.execution.resumeExperiment(ctx.principal, decodeId(input.experimentId, 'Experiment', 'experimentId'));
  }

  @Subscription(() => RunProgressEvent, {
    description: "A run's counters, status and ETA: the current state first, then after every change, until the run is over.",
    subscribe: async ({ args, context }) => {
      const ctx = context as GraphQLContext;
      const runId = decodeId((args as RunIdArgs).runId, 'Run', 'runId');
      await ctx.services.runs.get(ctx.principal, runId);
      let over = false;
      const load = async (): Promise<RunProgressEvent[]> => {
        if (over) return [];
        const run = await ctx.services.runs.get(ctx.principal, runId);
        over = TERMINAL.has(run.status);
        return [await runProgress(ctx.services, run)];
      };
      return untilOver(
        subscription(ctx.services.bus, (e) => e.kind === 'run' && e.runId === runId, load, load),
        (event) => TERMINAL.has(event.status),
      );
    },
  })
  runProgress(@Root() event: RunProgressEvent, @Arg('runId', () => ID) _runId: string): RunProgressEvent {
    return event;
  }

  @Subscription(() => Prediction, {
    description: 'Predictions of a run as they are committed.',
    subscribe: async ({ args, context }) => {
      const ctx = context as GraphQLContext;
      const runId = decodeId((args as RunIdArgs).runId, 'Run', 'runId');
      await ctx.services.runs.get(ctx.principal, runId);
      const load = async (events: BusEvent[]): Promise<Prediction[]> => {
        const ids = events.flatMap((e) => (e.kind === 'predictions' ? e.ids : []));
        return ctx.services.runs.predictionsByIds(runId, ids);
      };
      return subscription(ctx.services.bus, (e) => e.kind === 'predictions' && e.runId === runId, load, async () => []);
    },
  })
  predictionAdded(@Root() prediction: Prediction, @Arg('runId', () => ID) _runId: string): Prediction {
    return prediction;
  }

  @Subscription(() => ExperimentProgressEvent, {
    description: "An experiment's progress over its runs: the current state first, then after every change, until every run is over.",
    subscribe: async ({ args, context }) => {
      const ctx = context as GraphQLContext;
      const experimentId = decodeId((args as { experimentId: string }).experimentId, 'Experiment', 'experimentId');
      const experiment = await ctx.services.execution.experiment(ctx.principal, experimentId, Role.VIEWER);
      const load = async (): Promise<ExperimentProgressEvent[]> => [{ experiment, progress: await ctx.services.runs.experimentProgress(experiment.id) }];
      return untilOver(
        subscription(ctx.services.bus, (e) => e.kind === 'run' && e.experimentId === experimentId, load, load),
        (event) => event.progress.finished,
      );
    },
  })
  experimentProgress(@Root() event: ExperimentProgressEvent, @Arg('experimentId', () => ID) _experimentId: string): ExperimentProgressEvent {
    return event;
  }
}

/** Ends the iteration after the first value for which `last` holds (that value included). */
function untilOver<T>(source: AsyncIterableIterator<T>, last: (value: T) => boolean): AsyncIterableIterator<T> {
  let ended = false;
  const iterator: AsyncIterableIterator<T> = {
    async next() {
      if (ended) {
        await source.return?.();
        return { value: undefined, done: true };
      }
      const result = await source.next();
      if (!result.done && last(result.value)) ended = true;
      return result;
    },
    async return() {
      ended = true;
      await source.return?.();
      return { value: undefined, done: true };
    },
    [Symbol.asyncIterator]: () => iterator,
  };
  return iterator;
}

@Resolver(() => Experiment)
export class ExperimentResolver {
  @FieldResolver(() => UseCase)
  useCase(@Root() experiment: Experiment, @Ctx() ctx: GraphQLContext) {
    return ctx.loaders.get(useCaseById).load(experiment.useCaseId);
  }

  @FieldResolver(() => Dataset, { nullable: true })
  dataset(@Root() experiment: Experiment, @Ctx() ctx: GraphQLContext) {
    return ctx.loaders.get(datasetById).load(experiment.datasetId);
  }

  @FieldResolver(() => RunConnection)
  runs(@Root() experiment: Experiment, @Args() page: PageArgs, @Ctx() ctx: GraphQLContext) {
    return ctx.services.runs.listByExperiment(experiment.id, page);
  }

  @FieldResolver(() => ExperimentProgress)
  progress(@Root() experiment: Experiment, @Ctx() ctx: GraphQLContext): Promise<ExperimentProgress> {
    return ctx.services.runs.experimentProgress(experiment.id);
  }
}

export type { Run };
