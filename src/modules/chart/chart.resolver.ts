import { Arg, Ctx, FieldResolver, ID, Query, Resolver, Root } from 'type-graphql';
import type { GraphQLContext } from '../../graphql/context';
import { decodeId } from '../../graphql/node';
import { JSONScalar } from '../../graphql/scalars';
import { Project } from '../project/project.entity';
import { PromptStrategy } from '../run/run.entity';
import { RankingLevel, StatsOptions } from '../scoring/stats.types';
import { UseCase } from '../use-case/use-case.entity';
import { ChartImageUrl } from './chart.types';

const SPEC = 'A Vega-Lite specification (JSON) with its data inline; the same chart as SVG is at';

@Resolver(() => UseCase)
export class UseCaseChartResolver {
  @FieldResolver(() => JSONScalar, {
    description: `Heatmap of the runs × variables with the macro average, the rank interval and the inter-rater agreement row (extraction paper, Figures C1–C7). ${SPEC} /charts/use-cases/{id}/heatmap.svg?datasetId=…`,
  })
  heatmapChart(
    @Root() useCase: UseCase,
    @Arg('datasetId', () => ID) datasetId: string,
    @Arg('options', () => StatsOptions, { nullable: true }) options: StatsOptions | null,
    @Ctx() ctx: GraphQLContext,
  ) {
    return ctx.services.charts.heatmap(ctx.principal, useCase, decodeId(datasetId, 'Dataset', 'datasetId'), ctx.services.scoring.resolveOptions(options));
  }

  @FieldResolver(() => JSONScalar, {
    description: `Macro averages with their intervals in leaderboard order and the inter-rater agreement as a ceiling (extraction paper, Figure 2). ${SPEC} /charts/use-cases/{id}/leaderboard.svg?datasetId=…`,
  })
  leaderboardChart(
    @Root() useCase: UseCase,
    @Arg('datasetId', () => ID) datasetId: string,
    @Arg('level', () => RankingLevel, { defaultValue: RankingLevel.RUN }) level: RankingLevel,
    @Arg('options', () => StatsOptions, { nullable: true }) options: StatsOptions | null,
    @Ctx() ctx: GraphQLContext,
  ) {
    return ctx.services.charts.leaderboard(ctx.principal, useCase, decodeId(datasetId, 'Dataset', 'datasetId'), level, ctx.services.scoring.resolveOptions(options));
  }
}

@Resolver(() => Project)
export class ProjectChartResolver {
  @FieldResolver(() => JSONScalar, {
    description: `Each model's rank per use case (its best strategy) and the Kemeny–Young consensus rank (extraction paper, Figure 3). ${SPEC} /charts/projects/{id}/ranking.svg?useCaseIds=…`,
  })
  rankingChart(
    @Root() project: Project,
    @Arg('useCaseIds', () => [ID]) useCaseIds: string[],
    @Arg('options', () => StatsOptions, { nullable: true }) options: StatsOptions | null,
    @Ctx() ctx: GraphQLContext,
  ) {
    const ids = useCaseIds.map((id, i) => decodeId(id, 'UseCase', `useCaseIds[${i}]`));
    return ctx.services.charts.ranking(ctx.principal, project.id, ids, ctx.services.scoring.resolveOptions(options));
  }

  @FieldResolver(() => JSONScalar, {
    description: `Mean macro average across use cases against completion tokens/s per GPU, bubble size = parameters (extraction paper, Figure 4). ${SPEC} /charts/projects/{id}/throughput.svg?useCaseIds=…`,
  })
  throughputChart(
    @Root() project: Project,
    @Arg('useCaseIds', () => [ID]) useCaseIds: string[],
    @Arg('strategy', () => PromptStrategy, { nullable: true, defaultValue: PromptStrategy.FEW_SHOT, description: 'Runs of this strategy only (null: every strategy).' })
    strategy: PromptStrategy | null,
    @Arg('options', () => StatsOptions, { nullable: true }) options: StatsOptions | null,
    @Ctx() ctx: GraphQLContext,
  ) {
    const ids = useCaseIds.map((id, i) => decodeId(id, 'UseCase', `useCaseIds[${i}]`));
    return ctx.services.charts.throughput(ctx.principal, project.id, ids, strategy, ctx.services.scoring.resolveOptions(options));
  }

  @FieldResolver(() => JSONScalar, {
    description: `Accuracy (best strategy) and validity against the parameter count, colour = family, shape = reasoning mode (RADS paper, Figure 2). ${SPEC} /charts/projects/{id}/model-size.svg?useCaseIds=…`,
  })
  modelSizeChart(
    @Root() project: Project,
    @Arg('useCaseIds', () => [ID]) useCaseIds: string[],
    @Arg('options', () => StatsOptions, { nullable: true }) options: StatsOptions | null,
    @Ctx() ctx: GraphQLContext,
  ) {
    const ids = useCaseIds.map((id, i) => decodeId(id, 'UseCase', `useCaseIds[${i}]`));
    return ctx.services.charts.modelSize(ctx.principal, project.id, ids, ctx.services.scoring.resolveOptions(options));
  }
}

@Resolver()
export class ChartUrlResolver {
  @Query(() => ChartImageUrl, {
    description:
      'Signs a chart image path (/charts/…/{chart}.svg?…) for the calling key, so that an <img> can load it without an Authorization header. ' +
      'The image is drawn with the access of the key when it is fetched; the URL works for 15 minutes.',
  })
  chartImageUrl(@Arg('path') path: string, @Ctx() ctx: GraphQLContext): ChartImageUrl {
    return ctx.services.chartUrls.sign(ctx.principal.keyId, path);
  }
}
