import { Arg, Args, Ctx, FieldResolver, Mutation, Resolver, Root } from 'type-graphql';
import type { GraphQLContext } from '../../graphql/context';
import { PageArgs } from '../../graphql/connection';
import { decodeId } from '../../graphql/node';
import { nestedConnection } from '../../graphql/child-connections';
import { predictionsPageByRun, datasetById, endpointById, modelById, promptById, reportById, runById, useCaseById, variablesByUseCase } from '../../graphql/node-loaders';
import { Dataset } from '../dataset/dataset.entity';
import { Report } from '../dataset/report.entity';
import { Model } from '../endpoint/model.entity';
import { Prompt } from '../prompt/prompt.entity';
import { UseCase } from '../use-case/use-case.entity';
import { PredictedField, Prediction } from './prediction.entity';
import { predictedFields } from './predicted-fields';
import { ImportPredictionsInput, ImportPredictionsPayload, PredictionFilter } from './run.input';
import { Run, RunProgress, RunUsage } from './run.entity';
import { RunTelemetry } from './run-execution.input';
import { latencyPercentilesByRun, recentPredictionsByRun, telemetryByRun } from './run-loaders';
import { telemetryOf } from './run-progress';
import { PredictionConnection } from './run.types';

@Resolver(() => Run)
export class RunResolver {
  @Mutation(() => ImportPredictionsPayload, { description: 'A run made elsewhere, scored like any run; all or nothing.' })
  importPredictions(@Arg('input') input: ImportPredictionsInput, @Ctx() ctx: GraphQLContext): Promise<ImportPredictionsPayload> {
    return ctx.services.runs.importPredictions(
      ctx.principal,
      decodeId(input.datasetId, 'Dataset', 'datasetId'),
      input.promptId ? decodeId(input.promptId, 'Prompt', 'promptId') : null,
      input,
      ctx.inlineFiles,
      ctx.deadline,
    );
  }

  @FieldResolver(() => UseCase)
  useCase(@Root() run: Run, @Ctx() ctx: GraphQLContext) {
    return ctx.loaders.get(useCaseById).load(run.useCaseId);
  }

  @FieldResolver(() => Dataset, { nullable: true })
  dataset(@Root() run: Run, @Ctx() ctx: GraphQLContext) {
    return run.datasetId ? ctx.loaders.get(datasetById).load(run.datasetId) : null;
  }

  @FieldResolver(() => Model, { nullable: true })
  model(@Root() run: Run, @Ctx() ctx: GraphQLContext) {
    return run.modelId ? ctx.loaders.get(modelById).load(run.modelId) : null;
  }

  @FieldResolver(() => Prompt, { nullable: true })
  prompt(@Root() run: Run, @Ctx() ctx: GraphQLContext) {
    return run.promptId ? ctx.loaders.get(promptById).load(run.promptId) : null;
  }

  @FieldResolver(() => RunProgress)
  progress(@Root() run: Run, @Ctx() ctx: GraphQLContext): Promise<RunProgress> {
    return ctx.services.runProgress.progress(run, (runId) => ctx.loaders.get(recentPredictionsByRun).load(runId));
  }

  @FieldResolver(() => RunUsage)
  usage(@Root() run: Run, @Ctx() ctx: GraphQLContext): Promise<RunUsage> {
    return ctx.services.runProgress.usage(run, {
      latency: (runId) => ctx.loaders.get(latencyPercentilesByRun).load(runId),
      gpus: async (modelId) => {
        const model = await ctx.loaders.get(modelById).load(modelId);
        const endpoint = model?.endpointId ? await ctx.loaders.get(endpointById).load(model.endpointId) : null;
        return endpoint?.gpuCount ?? null;
      },
    });
  }

  @FieldResolver(() => RunTelemetry, { description: "The endpoint's metrics while the run executed (KV cache, queue, prefix cache)." })
  async telemetry(@Root() run: Run, @Ctx() ctx: GraphQLContext): Promise<RunTelemetry> {
    return telemetryOf(run, await ctx.loaders.get(telemetryByRun).load(run.id));
  }

  @FieldResolver(() => PredictionConnection)
  predictions(
    @Root() run: Run,
    @Args() page: PageArgs,
    @Arg('filter', () => PredictionFilter, { nullable: true }) filter: PredictionFilter | null,
    @Ctx() ctx: GraphQLContext,
  ) {
    const unfiltered = !filter || Object.values(filter).every((v) => v === null || v === undefined);
    if (unfiltered) return nestedConnection(ctx.loaders, predictionsPageByRun, run.id, page, () => ctx.services.runs.predictions(run.id, page, filter));
    return ctx.services.runs.predictions(run.id, page, filter);
  }
}

@Resolver(() => Prediction)
export class PredictionResolver {
  @FieldResolver(() => Report)
  report(@Root() prediction: Prediction, @Ctx() ctx: GraphQLContext) {
    return ctx.loaders.get(reportById).load(prediction.reportId);
  }

  @FieldResolver(() => [PredictedField], { description: 'One entry per variable, in variable order.' })
  async fields(@Root() prediction: Prediction, @Ctx() ctx: GraphQLContext): Promise<PredictedField[]> {
    const run = await ctx.loaders.get(runById).load(prediction.runId);
    if (!run) return [];
    const variables = await ctx.loaders.get(variablesByUseCase).load(run.useCaseId);
    return predictedFields(variables.map((v) => v.key), prediction.cells, prediction.evidence);
  }
}
