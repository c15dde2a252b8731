import { Arg, Ctx, FieldResolver, ID, Resolver, Root } from 'type-graphql';
import DataLoader from 'dataloader';
import type { GraphQLContext } from '../../graphql/context';
import type { LoaderFactory } from '../../graphql/loader-registry';
import { decodeId } from '../../graphql/node';
import { Dataset } from '../dataset/dataset.entity';
import { Project } from '../project/project.entity';
import { Run } from '../run/run.entity';
import { UseCase } from '../use-case/use-case.entity';
import type { ResolvedStatsOptions } from './scoring.service';
import {
  AgreementSummary,
  GroupSummary,
  ModelGrouping,
  Ranking,
  RankingLevel,
  RunScores,
  StatsOptions,
  VarianceDecomposition,
  VoterScheme,
} from './stats.types';

/** Run.scores of every run in a response, computed together per dataset and options. */
const runScoresLoader: LoaderFactory<{ run: Run; options: ResolvedStatsOptions }, RunScores> = (_dataSource, principal, services) =>
  new DataLoader(
    async (keys) => {
      const byOptions = new Map<string, { options: ResolvedStatsOptions; indices: number[] }>();
      keys.forEach((key, i) => {
        const id = JSON.stringify(key.options);
        const entry = byOptions.get(id) ?? { options: key.options, indices: [] };
        entry.indices.push(i);
        byOptions.set(id, entry);
      });
      const results: (RunScores | Error)[] = new Array(keys.length);
      for (const { options, indices } of byOptions.values()) {
        const scores = await services.scoring.runScoresMany(principal, indices.map((i) => keys[i]!.run), options);
        indices.forEach((i, k) => (results[i] = scores[k]!));
      }
      return results;
    },
    { cacheKeyFn: (key) => `${key.run.id}:${JSON.stringify(key.options)}` },
  );

@Resolver(() => Run)
export class RunScoresResolver {
  @FieldResolver(() => RunScores, { description: 'Per-variable scores with bootstrap intervals against the reference standard (METRICS.md §2–§5).' })
  scores(@Root() run: Run, @Arg('options', () => StatsOptions, { nullable: true }) options: StatsOptions | null, @Ctx() ctx: GraphQLContext) {
    const resolved = ctx.services.scoring.resolveOptions(options);
    return ctx.loaders.get(runScoresLoader).load({ run, options: resolved });
  }
}

@Resolver(() => UseCase)
export class UseCaseStatsResolver {
  @FieldResolver(() => Ranking, { description: 'Kemeny–Young ranking of the runs on a dataset, voters = variables, with rank intervals.' })
  leaderboard(
    @Root() useCase: UseCase,
    @Arg('datasetId', () => ID) datasetId: string,
    @Arg('level', () => RankingLevel, { defaultValue: RankingLevel.RUN }) level: RankingLevel,
    @Arg('options', () => StatsOptions, { nullable: true }) options: StatsOptions | null,
    @Ctx() ctx: GraphQLContext,
  ) {
    return ctx.services.scoring.leaderboard(ctx.principal, useCase, decodeId(datasetId, 'Dataset', 'datasetId'), level, ctx.services.scoring.resolveOptions(options));
  }

  @FieldResolver(() => VarianceDecomposition, { description: 'Share of per-report score variance due to model and strategy (REML).' })
  varianceDecomposition(@Root() useCase: UseCase, @Arg('datasetId', () => ID) datasetId: string, @Ctx() ctx: GraphQLContext) {
    return ctx.services.scoring.varianceDecomposition(ctx.principal, useCase, decodeId(datasetId, 'Dataset', 'datasetId'));
  }
}

@Resolver(() => Project)
export class ProjectStatsResolver {
  @FieldResolver(() => Ranking, { description: 'Kemeny–Young across use cases (METRICS.md §6).' })
  consensusRanking(
    @Root() project: Project,
    @Arg('useCaseIds', () => [ID]) useCaseIds: string[],
    @Arg('level', () => RankingLevel, { defaultValue: RankingLevel.MODEL }) level: RankingLevel,
    @Arg('voters', () => VoterScheme, { defaultValue: VoterScheme.USE_CASES }) voters: VoterScheme,
    @Arg('options', () => StatsOptions, { nullable: true }) options: StatsOptions | null,
    @Ctx() ctx: GraphQLContext,
  ) {
    const ids = useCaseIds.map((id, i) => decodeId(id, 'UseCase', `useCaseIds[${i}]`));
    return ctx.services.scoring.consensusRanking(ctx.principal, project.id, ids, level, voters, ctx.services.scoring.resolveOptions(options));
  }

  @FieldResolver(() => [GroupSummary], { description: "Groups of models by their best-strategy macro average (METRICS.md §8)." })
  groupSummary(
    @Root() project: Project,
    @Arg('useCaseIds', () => [ID]) useCaseIds: string[],
    @Arg('groupBy', () => ModelGrouping) groupBy: ModelGrouping,
    @Arg('options', () => StatsOptions, { nullable: true }) options: StatsOptions | null,
    @Ctx() ctx: GraphQLContext,
  ) {
    const ids = useCaseIds.map((id, i) => decodeId(id, 'UseCase', `useCaseIds[${i}]`));
    return ctx.services.scoring.groupSummary(ctx.principal, project.id, ids, groupBy, ctx.services.scoring.resolveOptions(options));
  }
}

@Resolver(() => Dataset)
export class DatasetStatsResolver {
  @FieldResolver(() => AgreementSummary, { description: 'Inter-rater agreement; default annotators: the human ones.' })
  interRaterAgreement(
    @Root() dataset: Dataset,
    @Arg('annotatorIds', () => [ID], { nullable: true }) annotatorIds: string[] | null,
    @Arg('options', () => StatsOptions, { nullable: true }) options: StatsOptions | null,
    @Ctx() ctx: GraphQLContext,
  ) {
    const ids = annotatorIds ? annotatorIds.map((id, i) => decodeId(id, 'Annotator', `annotatorIds[${i}]`)) : null;
    return ctx.services.scoring.interRaterAgreement(ctx.principal, dataset, ids, ctx.services.scoring.resolveOptions(options));
  }
}
