import { Arg, Ctx, FieldResolver, ID, Resolver, Root } from 'type-graphql';
import DataLoader from 'dataloader';
import type { GraphQLContext } from '../../graphql/context';
import type { LoaderFactory } from '../../graphql/loader-registry';
import { decodeId } from '../../graphql/node';
import { Dataset } from '../dataset/dataset.entity';
import { Project } from '../project/project.entity';
import { PromptStrategy, Run } from '../run/run.entity';
import { ChanceCorrectedAgreement, ContrastTable, RunComparison, RunGroupingInput, RunSelector, StrategyEffectTable, StratifiedResult, StratumInput } from './comparison.types';
import { UseCase } from '../use-case/use-case.entity';
import type { ResolvedStatsOptions } from './stats-options';
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
        const scores = await services.runScores.runScoresMany(principal, indices.map((i) => keys[i]!.run), options);
        indices.forEach((i, k) => (results[i] = scores[k]!));
      }
      return results;
    },
    { cacheKeyFn: (key) => `${key.run.id}:${JSON.stringify(key.options)}` },
  );

@Resolver(() => Run)
export class RunScoresResolver {
  @FieldResolver(() => RunScores, { description: 'Per-variable scores with bootstrap intervals against the reference standard (docs/scoring.md §2–§5).' })
  scores(@Root() run: Run, @Arg('options', () => StatsOptions, { nullable: true }) options: StatsOptions | null, @Ctx() ctx: GraphQLContext) {
    const resolved = ctx.services.scoring.resolveOptions(options);
    return ctx.loaders.get(runScoresLoader).load({ run, options: resolved });
  }

  @FieldResolver(() => RunComparison, {
    description: 'This run minus a baseline run over the same dataset, per variable and macro average, paired on the same resamples (docs/scoring.md §5).',
  })
  comparison(
    @Root() run: Run,
    @Arg('baselineRunId', () => ID) baselineRunId: string,
    @Arg('options', () => StatsOptions, { nullable: true }) options: StatsOptions | null,
    @Ctx() ctx: GraphQLContext,
  ) {
    return ctx.services.runComparisons.runComparison(ctx.principal, run, decodeId(baselineRunId, 'Run', 'baselineRunId'), ctx.services.scoring.resolveOptions(options));
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
    return ctx.services.leaderboards.leaderboard(ctx.principal, useCase, decodeId(datasetId, 'Dataset', 'datasetId'), level, ctx.services.scoring.resolveOptions(options));
  }

  @FieldResolver(() => VarianceDecomposition, { description: 'Share of per-report score variance due to model and strategy (REML).' })
  varianceDecomposition(@Root() useCase: UseCase, @Arg('datasetId', () => ID) datasetId: string, @Ctx() ctx: GraphQLContext) {
    return ctx.services.variance.varianceDecomposition(ctx.principal, useCase, decodeId(datasetId, 'Dataset', 'datasetId'));
  }
}

@Resolver(() => Project)
export class ProjectStatsResolver {
  @FieldResolver(() => Ranking, { description: 'Kemeny–Young across use cases (docs/scoring.md §6).' })
  consensusRanking(
    @Root() project: Project,
    @Arg('useCaseIds', () => [ID]) useCaseIds: string[],
    @Arg('level', () => RankingLevel, { defaultValue: RankingLevel.MODEL }) level: RankingLevel,
    @Arg('voters', () => VoterScheme, { defaultValue: VoterScheme.USE_CASES }) voters: VoterScheme,
    @Arg('options', () => StatsOptions, { nullable: true }) options: StatsOptions | null,
    @Ctx() ctx: GraphQLContext,
  ) {
    const ids = useCaseIds.map((id, i) => decodeId(id, 'UseCase', `useCaseIds[${i}]`));
    return ctx.services.consensusRankings.consensusRanking(ctx.principal, project.id, ids, level, voters, ctx.services.scoring.resolveOptions(options));
  }

  @FieldResolver(() => [GroupSummary], { description: "Groups of models by their best-strategy macro average (docs/scoring.md §8)." })
  groupSummary(
    @Root() project: Project,
    @Arg('useCaseIds', () => [ID]) useCaseIds: string[],
    @Arg('groupBy', () => ModelGrouping) groupBy: ModelGrouping,
    @Arg('options', () => StatsOptions, { nullable: true }) options: StatsOptions | null,
    @Ctx() ctx: GraphQLContext,
  ) {
    const ids = useCaseIds.map((id, i) => decodeId(id, 'UseCase', `useCaseIds[${i}]`));
    return ctx.services.groupSummaries.groupSummary(ctx.principal, project.id, ids, groupBy, ctx.services.scoring.resolveOptions(options));
  }
}

@Resolver(() => Project)
export class ProjectComparisonResolver {
  @FieldResolver(() => StrategyEffectTable, {
    description: 'Each strategy and each model’s best strategy against a baseline strategy, per model and use case, pooled across use cases and across models (extraction paper §3.2).',
  })
  strategyEffects(
    @Root() project: Project,
    @Arg('useCaseIds', () => [ID]) useCaseIds: string[],
    @Arg('baseline', () => PromptStrategy, { defaultValue: PromptStrategy.ZERO_SHOT }) baseline: PromptStrategy,
    @Arg('options', () => StatsOptions, { nullable: true }) options: StatsOptions | null,
    @Ctx() ctx: GraphQLContext,
  ) {
    const ids = useCaseIds.map((id, i) => decodeId(id, 'UseCase', `useCaseIds[${i}]`));
    return ctx.services.strategyEffects.strategyEffects(ctx.principal, project.id, ids, baseline, ctx.services.scoring.resolveOptions(options));
  }

  @FieldResolver(() => ContrastTable, {
    description: 'Difference in effective score and validity between two groups of runs, overall and per stratum, cluster-robust by report, BH q-values (docs/scoring.md §8).',
  })
  contrast(
    @Root() project: Project,
    @Arg('useCaseIds', () => [ID]) useCaseIds: string[],
    @Arg('groupA', () => RunSelector) groupA: RunSelector,
    @Arg('groupB', () => RunSelector, { nullable: true, description: 'Default: every other scored run (e.g. one model against the pooled rest).' })
    groupB: RunSelector | null,
    @Arg('stratifyBy', () => StratumInput, { nullable: true }) stratifyBy: StratumInput | null,
    @Arg('variableKeys', () => [String], { nullable: true, description: 'Only these variables; default every annotated variable.' }) variableKeys: string[] | null,
    @Arg('options', () => StatsOptions, { nullable: true }) options: StatsOptions | null,
    @Ctx() ctx: GraphQLContext,
  ) {
    const ids = useCaseIds.map((id, i) => decodeId(id, 'UseCase', `useCaseIds[${i}]`));
    return ctx.services.contrasts.contrast(ctx.principal, project.id, ids, groupA, groupB, stratifyBy, variableKeys, ctx.services.scoring.resolveOptions(options));
  }

  @FieldResolver(() => [StratifiedResult], {
    description: 'Validity, effective and conditional scores and invalid outputs pooled by run group (model attribute) and stratum, with report-bootstrap intervals.',
  })
  stratifiedResults(
    @Root() project: Project,
    @Arg('useCaseIds', () => [ID]) useCaseIds: string[],
    @Arg('groupBy', () => RunGroupingInput) groupBy: RunGroupingInput,
    @Arg('stratifyBy', () => StratumInput, { nullable: true }) stratifyBy: StratumInput | null,
    @Arg('variableKeys', () => [String], { nullable: true }) variableKeys: string[] | null,
    @Arg('options', () => StatsOptions, { nullable: true }) options: StatsOptions | null,
    @Ctx() ctx: GraphQLContext,
  ) {
    const ids = useCaseIds.map((id, i) => decodeId(id, 'UseCase', `useCaseIds[${i}]`));
    return ctx.services.stratifiedResults.stratifiedResults(ctx.principal, project.id, ids, groupBy, stratifyBy, variableKeys, ctx.services.scoring.resolveOptions(options));
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
    return ctx.services.agreement.interRaterAgreement(ctx.principal, dataset, ids, ctx.services.scoring.resolveOptions(options));
  }

  @FieldResolver(() => ChanceCorrectedAgreement, {
    description: "Cohen's κ per annotator pair, Fleiss' κ and Krippendorff's α per variable, with bootstrap intervals; default annotators: the human ones.",
  })
  chanceCorrectedAgreement(
    @Root() dataset: Dataset,
    @Arg('annotatorIds', () => [ID], { nullable: true }) annotatorIds: string[] | null,
    @Arg('options', () => StatsOptions, { nullable: true }) options: StatsOptions | null,
    @Ctx() ctx: GraphQLContext,
  ) {
    const ids = annotatorIds ? annotatorIds.map((id, i) => decodeId(id, 'Annotator', `annotatorIds[${i}]`)) : null;
    return ctx.services.chanceAgreement.chanceCorrectedAgreement(ctx.principal, dataset, ids, ctx.services.scoring.resolveOptions(options));
  }
}
