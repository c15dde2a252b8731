import type { DataSource } from 'typeorm';
import { In } from 'typeorm';
import type { TopLevelSpec } from 'vega-lite';
import { sizeClass } from '../../analytics/groups';
import {
  barsSpec,
  heatmapSpec,
  modelSizeSpec,
  rankingSpec,
  throughputSpec,
  uniqueLabels,
  type ChartRun,
  type HeatmapData,
  type Interval,
  type ModelSizeData,
  type RankingData,
  type ThroughputData,
} from '../../charts/specs';
import { badInput, DomainException, notFound } from '../../domain/errors';
import { Role } from '../api-key/api-key.entity';
import { requireRole, type Principal } from '../api-key/principal';
import type { DatasetService } from '../dataset/dataset.service';
import { Endpoint } from '../endpoint/endpoint.entity';
import { Model } from '../endpoint/model.entity';
import { elapsedMs } from '../run/run-progress';
import { Run, type PromptStrategy } from '../run/run.entity';
import type { ScoringServices } from '../scoring/scoring-services';
import type { ResolvedStatsOptions } from '../scoring/stats-options';
import { RankingLevel, VoterScheme, type Estimate, type Ranking, type RankingEntry, type RunScores } from '../scoring/stats.types';
import type { UseCaseService } from '../use-case/use-case.service';
import type { UseCase } from '../use-case/use-case.entity';

/** Use cases one chart across use cases takes at most. */
export const MAX_CHART_USE_CASES = 50;

const interval = (e: Estimate | null | undefined): Interval | null => (e ? { value: e.value, ciLow: e.ciLow, ciHigh: e.ciHigh } : null);
const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;

/** The name a chart shows for a leaderboard entry: the run's name, or at MODEL level the model and its best strategy. */
function entryLabel(entry: RankingEntry, level: RankingLevel): string {
  if (level === RankingLevel.MODEL && entry.model) return `${entry.model.servedName} · ${entry.strategy ?? entry.run?.strategy ?? ''}`.trim();
  return entry.run?.name ?? entry.model?.servedName ?? `rank ${entry.rank}`;
}

/**
 * The data of each chart, gathered through the statistics services (so with their access rules
 * and cache), and its Vega-Lite specification.
 */
export class ChartService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly useCases: UseCaseService,
    private readonly datasets: DatasetService,
    private readonly scoring: Pick<ScoringServices, 'leaderboards' | 'runScores' | 'agreement' | 'consensusRankings'>,
  ) {}

  private async useCaseAndDataset(principal: Principal, useCase: UseCase | string, datasetId: string) {
    const uc = typeof useCase === 'string' ? await this.useCases.get(principal, useCase) : useCase;
    requireRole(principal, uc.projectId, Role.VIEWER, 'Use case');
    const dataset = await this.datasets.get(principal, datasetId);
    if (dataset.useCaseId !== uc.id) throw notFound('Dataset');
    return { useCase: uc, dataset };
  }

  async heatmapData(principal: Principal, useCase: UseCase | string, datasetId: string, options: ResolvedStatsOptions): Promise<HeatmapData> {
    const { useCase: uc, dataset } = await this.useCaseAndDataset(principal, useCase, datasetId);
    const ranking = await this.scoring.leaderboards.leaderboard(principal, uc, dataset.id, RankingLevel.RUN, options);
    const runs = ranking.entries.map((e) => e.run).filter((r): r is Run => r !== null);
    const scores = (await this.scoring.runScores.runScoresMany(principal, runs, options)).map((s) => (s instanceof Error ? null : s));
    const scored = scores.filter((s): s is RunScores => s !== null);
    const variables = scored[0]?.variables.map((v) => v.variable.key) ?? [];
    const agreementByVariable = Object.fromEntries(variables.map((key) => [key, interval(scored[0]!.variables.find((v) => v.variable.key === key)!.interRaterAgreement)]));
    const agreement = await this.scoring.agreement.interRaterAgreement(principal, dataset, null, options);
    const hasAgreement = agreement.macroAverage !== null || Object.values(agreementByVariable).some((e) => e !== null);
    return {
      title: `${uc.name} — ${dataset.name}`,
      variables,
      runs: ranking.entries.map((entry, i) => ({
        label: entryLabel(entry, RankingLevel.RUN),
        model: entry.model?.servedName ?? null,
        strategy: entry.strategy ?? entry.run?.strategy ?? null,
        rank: entry.rank,
        rankCiLow: entry.rankCiLow,
        rankCiHigh: entry.rankCiHigh,
        macroAverage: interval(entry.macroAverage),
        scores: Object.fromEntries((scores[i]?.variables ?? []).map((v) => [v.variable.key, interval(v.estimate)])),
      })),
      agreement: hasAgreement ? { macroAverage: interval(agreement.macroAverage), variables: agreementByVariable } : null,
    };
  }

  async heatmap(principal: Principal, useCase: UseCase | string, datasetId: string, options: ResolvedStatsOptions): Promise<TopLevelSpec> {
    return heatmapSpec(await this.heatmapData(principal, useCase, datasetId, options));
  }

  async leaderboard(principal: Principal, useCase: UseCase | string, datasetId: string, level: RankingLevel, options: ResolvedStatsOptions): Promise<TopLevelSpec> {
    const { useCase: uc, dataset } = await this.useCaseAndDataset(principal, useCase, datasetId);
    const ranking = await this.scoring.leaderboards.leaderboard(principal, uc, dataset.id, level, options);
    const agreement = await this.scoring.agreement.interRaterAgreement(principal, dataset, null, options);
    return barsSpec({ title: `${uc.name} — ${dataset.name}`, runs: this.chartRuns(ranking, level), agreement: interval(agreement.macroAverage) });
  }

  private chartRuns(ranking: Ranking, level: RankingLevel): ChartRun[] {
    return ranking.entries.map((entry) => ({
      label: entryLabel(entry, level),
      model: entry.model?.servedName ?? null,
      strategy: entry.strategy ?? entry.run?.strategy ?? null,
      rank: entry.rank,
      rankCiLow: entry.rankCiLow,
      rankCiHigh: entry.rankCiHigh,
      macroAverage: interval(entry.macroAverage),
      scores: {},
    }));
  }

  private async projectUseCases(principal: Principal, projectId: string, useCaseIds: string[]): Promise<UseCase[]> {
    requireRole(principal, projectId, Role.VIEWER, 'Project');
    if (useCaseIds.length === 0) throw badInput('useCaseIds must name at least one use case', { field: 'useCaseIds' });
    if (useCaseIds.length > MAX_CHART_USE_CASES) throw badInput(`useCaseIds takes at most ${MAX_CHART_USE_CASES} use cases`, { field: 'useCaseIds' });
    const ids = [...new Set(useCaseIds)];
    const found = await Promise.all(ids.map((id) => this.useCases.get(principal, id)));
    for (const uc of found) if (uc.projectId !== projectId) throw notFound('Use case');
    return found;
  }

  async rankingData(principal: Principal, projectId: string, useCaseIds: string[], options: ResolvedStatsOptions): Promise<RankingData> {
    const useCases = await this.projectUseCases(principal, projectId, useCaseIds);
    const consensus = await this.scoring.consensusRankings.consensusRanking(principal, projectId, useCases.map((u) => u.id), RankingLevel.MODEL, VoterScheme.USE_CASES, options);
    // A use case's own ranks are point ranks (variables as voters); they need no resamples.
    // A reference annotator of another use case stands aside for that use case's own, as in the consensus.
    const perUseCase = await Promise.all(
      useCases.map((u) =>
        this.scoring.consensusRankings.consensusRanking(principal, projectId, [u.id], RankingLevel.MODEL, VoterScheme.VARIABLES, { ...options, resamples: 0 }).catch((error: unknown) => {
          if (!(error instanceof DomainException && error.code === 'NOT_FOUND' && options.referenceAnnotatorId !== null)) throw error;
          return this.scoring.consensusRankings.consensusRanking(principal, projectId, [u.id], RankingLevel.MODEL, VoterScheme.VARIABLES, { ...options, resamples: 0, referenceAnnotatorId: null });
        }),
      ),
    );
    const columns = uniqueLabels(useCases.map((u) => u.name));
    const keyOf = (e: RankingEntry) => e.model?.id ?? e.run?.id ?? `rank:${e.rank}`;
    return {
      title: 'Ranking across use cases (best strategy per model)',
      useCases: columns,
      models: consensus.entries.map((entry) => ({
        model: entry.model?.servedName ?? entry.run?.name ?? `rank ${entry.rank}`,
        consensusRank: entry.rank,
        consensusCiLow: entry.rankCiLow,
        consensusCiHigh: entry.rankCiHigh,
        ranks: Object.fromEntries(columns.map((column, u) => [column, perUseCase[u]!.entries.find((e) => keyOf(e) === keyOf(entry))?.rank ?? null])),
      })),
    };
  }

  async ranking(principal: Principal, projectId: string, useCaseIds: string[], options: ResolvedStatsOptions): Promise<TopLevelSpec> {
    return rankingSpec(await this.rankingData(principal, projectId, useCaseIds, options));
  }

  /** Scored runs of the use cases (with a dataset and predictions), optionally of one strategy, with their point scores. */
  private async scoredRuns(principal: Principal, useCases: UseCase[], strategy: PromptStrategy | null, options: ResolvedStatsOptions) {
    const query = this.dataSource
      .getRepository(Run)
      .createQueryBuilder('r')
      .where('r.use_case_id IN (:...ids)', { ids: useCases.map((u) => u.id) })
      .andWhere('r.dataset_id IS NOT NULL')
      .andWhere('EXISTS (SELECT 1 FROM predictions p WHERE p.run_id = r.id)')
      .orderBy('r.created_at', 'ASC')
      .addOrderBy('r.id', 'ASC');
    if (strategy) query.andWhere('r.strategy = :strategy', { strategy });
    const runs = await query.getMany();
    const scores = await this.scoring.runScores.runScoresMany(principal, runs, { ...options, resamples: 0 });
    const modelIds = [...new Set(runs.map((r) => r.modelId).filter((id): id is string => id !== null))];
    const models = modelIds.length ? await this.dataSource.getRepository(Model).findBy({ id: In(modelIds) }) : [];
    return { runs: runs.map((run, i) => ({ run, scores: scores[i] instanceof Error ? null : (scores[i] as RunScores) })), models: new Map(models.map((m) => [m.id, m])) };
  }

  async throughputData(principal: Principal, projectId: string, useCaseIds: string[], strategy: PromptStrategy | null, options: ResolvedStatsOptions): Promise<ThroughputData> {
    const useCases = await this.projectUseCases(principal, projectId, useCaseIds);
    const { runs, models } = await this.scoredRuns(principal, useCases, strategy, options);
    const endpointIds = [...new Set([...models.values()].map((m) => m.endpointId).filter((id): id is string => id !== null))];
    const endpoints = new Map((endpointIds.length ? await this.dataSource.getRepository(Endpoint).findBy({ id: In(endpointIds) }) : []).map((e) => [e.id, e]));
    const byModel = new Map<string, { macro: Map<string, number[]>; throughput: number[] }>();
    for (const { run, scores } of runs) {
      const model = run.modelId ? models.get(run.modelId) : undefined;
      if (!model || !scores) continue;
      const tps = tokensPerSecondPerGpu(run, model.endpointId ? (endpoints.get(model.endpointId)?.gpuCount ?? null) : null);
      const entry = byModel.get(model.id) ?? { macro: new Map<string, number[]>(), throughput: [] };
      entry.macro.set(run.useCaseId, [...(entry.macro.get(run.useCaseId) ?? []), scores.macroAverage.value]);
      if (tps !== null) entry.throughput.push(tps);
      byModel.set(model.id, entry);
    }
    const points: ThroughputData['models'] = [];
    for (const [modelId, entry] of byModel) {
      if (entry.throughput.length === 0) continue;
      const model = models.get(modelId)!;
      points.push({
        model: model.servedName,
        sizeClass: model.specialisation && model.specialisation !== 'GENERAL' ? model.specialisation : (model.sizeClass ?? (model.parameterCountB !== null ? sizeClass(model.parameterCountB) : 'UNKNOWN')),
        parameterCountB: model.parameterCountB,
        meanMacroAverage: mean([...entry.macro.values()].map(mean)),
        tokensPerSecondPerGpu: mean(entry.throughput),
        useCases: entry.macro.size,
      });
    }
    points.sort((a, b) => b.meanMacroAverage - a.meanMacroAverage || a.model.localeCompare(b.model));
    return { title: 'Performance against throughput per GPU', strategy, models: points };
  }

  async throughput(principal: Principal, projectId: string, useCaseIds: string[], strategy: PromptStrategy | null, options: ResolvedStatsOptions): Promise<TopLevelSpec> {
    return throughputSpec(await this.throughputData(principal, projectId, useCaseIds, strategy, options));
  }

  async modelSizeData(principal: Principal, projectId: string, useCaseIds: string[], options: ResolvedStatsOptions): Promise<ModelSizeData> {
    const useCases = await this.projectUseCases(principal, projectId, useCaseIds);
    const { runs, models } = await this.scoredRuns(principal, useCases, null, options);
    const byModel = new Map<string, { best: Map<string, number>; validity: number[] }>();
    for (const { run, scores } of runs) {
      const model = run.modelId ? models.get(run.modelId) : undefined;
      if (!model || !scores) continue;
      const entry = byModel.get(model.id) ?? { best: new Map<string, number>(), validity: [] };
      entry.best.set(run.useCaseId, Math.max(entry.best.get(run.useCaseId) ?? -Infinity, scores.macroAverage.value));
      entry.validity.push(scores.validity);
      byModel.set(model.id, entry);
    }
    const points: ModelSizeData['models'] = [];
    for (const [modelId, entry] of byModel) {
      const model = models.get(modelId)!;
      if (model.parameterCountB === null || !(model.parameterCountB > 0)) continue;
      points.push({
        model: model.servedName,
        family: model.family ?? 'unknown',
        reasoning: model.supportsThinking ? 'THINKING' : 'NON_THINKING',
        parameterCountB: model.parameterCountB,
        accuracy: mean([...entry.best.values()]),
        validity: mean(entry.validity),
      });
    }
    points.sort((a, b) => a.parameterCountB - b.parameterCountB || a.model.localeCompare(b.model));
    return { title: 'Accuracy and validity against model size', models: points };
  }

  async modelSize(principal: Principal, projectId: string, useCaseIds: string[], options: ResolvedStatsOptions): Promise<TopLevelSpec> {
    return modelSizeSpec(await this.modelSizeData(principal, projectId, useCaseIds, options));
  }
}

/**
 * Completion tokens per second per GPU of a run. Executed here: over its wall-clock time, on its
 * endpoint's GPUs. Imported: over the wall time its config records (`wallTimeMs`), else over the
 * summed latencies of its predictions, on the GPUs its config records (`hardware.gpuCount`).
 * GPUs nobody recorded count as one.
 */
export function tokensPerSecondPerGpu(run: Run, endpointGpus: number | null): number | null {
  if (run.completionTokens <= 0) return null;
  const config = run.config as { wallTimeMs?: unknown; hardware?: { gpuCount?: unknown } };
  const recordedGpus = typeof config.hardware?.gpuCount === 'number' && Number.isInteger(config.hardware.gpuCount) && config.hardware.gpuCount > 0 ? config.hardware.gpuCount : null;
  let seconds: number | null = null;
  if (run.source === 'EXECUTED') {
    const elapsed = elapsedMs(run);
    if (elapsed !== null && elapsed > 0) seconds = elapsed / 1000;
  } else if (typeof config.wallTimeMs === 'number' && config.wallTimeMs > 0) {
    seconds = config.wallTimeMs / 1000;
  } else if (run.latencyMsSum > 0) {
    seconds = run.latencyMsSum / 1000;
  }
  if (seconds === null) return null;
  const gpus = (run.source === 'EXECUTED' ? endpointGpus : (recordedGpus ?? endpointGpus)) ?? 1;
  return run.completionTokens / seconds / gpus;
}
