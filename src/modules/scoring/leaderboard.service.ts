import type { BootstrapGridResult } from '../../analytics/bootstrap';
import { bestRunPerModel } from '../../analytics/rank-intervals';
import { badInput } from '../../domain/errors';
import { requireRole, type Principal } from '../api-key/principal';
import { Role } from '../api-key/api-key.entity';
import type { ResolvedStatsOptions } from './stats-options';
import type { UseCase } from '../use-case/use-case.entity';
import { loadModelsOf } from './scoring-data';
import type { DatasetGrid, ScoringGrids } from './scoring-grids';
import { emptyRanking, rankingOf, toEstimate } from './estimates';
import { RankingLevel, type Ranking, type RankingEntry } from './stats.types';

/** The Kemeny–Young leaderboard of a dataset's runs (or of each model's best run), with rank intervals (docs/scoring.md §6). */
export class LeaderboardService {
  constructor(private readonly grids: ScoringGrids) {}

  async leaderboard(principal: Principal, useCase: UseCase, datasetId: string, level: RankingLevel, options: ResolvedStatsOptions): Promise<Ranking> {
    requireRole(principal, useCase.projectId, Role.VIEWER, 'Use case');
    await this.grids.datasetOf(useCase, datasetId);
    return this.grids.cached(principal, options, useCase.projectId, 'leaderboard', { dataset: datasetId, level, options }, async () => {
      const runs = await this.grids.scoredRuns(datasetId);
      if (runs.length === 0) return emptyRanking();
      const g = await this.grids.rankingGrid(principal, datasetId, runs, options);
      if (!g.grid) throw badInput('No variable has a reference value in this dataset, so there is nothing to rank by');
      return this.rankDatasetGrid(g, level, options);
    });
  }

  private async rankDatasetGrid(g: Pick<DatasetGrid, 'grid' | 'runs' | 'variableIndex'>, level: RankingLevel, options: ResolvedStatsOptions): Promise<Ranking> {
    const grid = g.grid!;
    const R = g.runs.length;
    const V = g.variableIndex.length;
    const voterScores = Array.from({ length: V }, (_, v) => Float64Array.from({ length: R }, (_, r) => grid.points[r * V + v]!));
    const names = g.runs.map((r) => `${r.name}\u0000${r.id}`);
    const runRanking = await this.grids.statistics.kemeny(voterScores, { macro: grid.macroPoints, names });
    let candidates = g.runs.map((_, r) => r);
    let ranking = runRanking;
    if (level === RankingLevel.MODEL) {
      const best = bestRunPerModel(runRanking.order, g.runs.map((r) => r.modelId ?? `run:${r.id}`));
      candidates = best.map((b) => b.run);
      ranking = await this.grids.statistics.kemeny(
        voterScores.map((s) => Float64Array.from(candidates, (r) => s[r]!)),
        { macro: Float64Array.from(candidates, (r) => grid.macroPoints[r]!), names: candidates.map((r) => names[r]!) },
      );
    }
    const intervals = await this.rankIntervals(grid, candidates, V, ranking.order, names, options);
    const models = await loadModelsOf(this.grids.dataSource, g.runs);
    const entries: RankingEntry[] = ranking.order.map((c, position) => {
      const run = g.runs[candidates[c]!]!;
      return {
        rank: position + 1,
        rankCiLow: intervals?.[c]?.lower ?? null,
        rankCiHigh: intervals?.[c]?.upper ?? null,
        run,
        model: run.modelId ? (models.get(run.modelId) ?? null) : null,
        strategy: run.strategy,
        macroAverage: toEstimate(grid.macro[candidates[c]!]!, options.resamples),
      };
    });
    return rankingOf(ranking, entries);
  }

  private async rankIntervals(grid: BootstrapGridResult, candidates: number[], V: number, order: number[], names: string[], options: ResolvedStatsOptions) {
    if (options.resamples === 0 || candidates.length < 2) return null;
    const B = grid.resamples;
    const K = candidates.length;
    let data = grid.replicates;
    let macro = grid.macroReplicates;
    if (candidates.some((r, k) => r !== k) || candidates.length !== grid.runIds.length) {
      data = this.grids.statistics.float64(K * V * B);
      macro = this.grids.statistics.float64(K * B);
      candidates.forEach((r, k) => {
        data.set(grid.replicates.subarray(r * V * B, (r + 1) * V * B), k * V * B);
        macro.set(grid.macroReplicates.subarray(r * B, (r + 1) * B), k * B);
      });
    }
    const intervals = await this.grids.statistics.rankIntervals(
      { data, macro, candidates: K, voters: V, replicates: B },
      { level: options.confidence, names: candidates.map((r) => names[r]!), pointOrder: order },
    );
    return Object.fromEntries(intervals.map((i) => [i.candidate, { lower: i.lower, upper: i.upper }])) as Record<number, { lower: number; upper: number }>;
  }
}
