import { Arg, Args, Ctx, FieldResolver, ID, Mutation, Resolver, Root, Subscription } from 'type-graphql';
import type { GraphQLContext } from '../../graphql/context';
import { PageArgs } from '../../graphql/connection';
import { decodeId } from '../../graphql/node';
import { datasetById, useCaseById } from '../../graphql/node-loaders';
import { feedSubscription } from '../../graphql/pubsub';
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
import { RunConnection } from './run.types';

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
    }, ctx.deadline);
    return { run };
  }

  @Mutation(() => StartExperimentPayload, { description: 'Queues one run per cell of the grid over one dataset, in one transaction.' })
  startExperiment(@Arg('input') input: StartExperimentInput, @Ctx() ctx: GraphQLContext): Promise<StartExperimentPayload> {
    return ctx.services.execution.startExperiment(ctx.principal, input, {
      datasetId: decodeId(input.datasetId, 'Dataset', 'datasetId'),
      modelIds: input.modelIds.map((id) => decodeId(id, 'Model', 'modelIds')),
      promptIds: (input.promptIds ?? []).map((id) => decodeId(id, 'Prompt', 'promptIds')),
    }, ctx.deadline);
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
      return feedSubscription(ctx.services.bus, await ctx.services.runProgress.runFeed(ctx.principal, decodeId((args as RunIdArgs).runId, 'Run', 'runId')));
    },
  })
  runProgress(@Root() event: RunProgressEvent, @Arg('runId', () => ID) _runId: string): RunProgressEvent {
    return event;
  }

  @Subscription(() => Prediction, {
    description: 'Predictions of a run as they are committed, until the run is over.',
    subscribe: async ({ args, context }) => {
      const ctx = context as GraphQLContext;
      return feedSubscription(ctx.services.bus, await ctx.services.runProgress.predictionFeed(ctx.principal, decodeId((args as RunIdArgs).runId, 'Run', 'runId')));
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
      return feedSubscription(ctx.services.bus, await ctx.services.runProgress.experimentFeed(ctx.principal, experimentId));
    },
  })
  experimentProgress(@Root() event: ExperimentProgressEvent, @Arg('experimentId', () => ID) _experimentId: string): ExperimentProgressEvent {
    return event;
  }
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

