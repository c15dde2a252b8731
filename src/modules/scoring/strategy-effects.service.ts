import { requireRole, type Principal } from '../api-key/principal';
import { Role } from '../api-key/api-key.entity';
import type { ScoringGrids } from './scoring-grids';
import type { ResolvedStatsOptions } from './stats-options';
import { PromptStrategy } from '../run/run.entity';
import type { StrategyEffectTable } from './comparison.types';
import { loadModelsOf, loadUseCases } from './scoring-data';
import { pointEstimate, toDifference, toEstimate } from './estimates';
import { replicatedEstimate, strategyEffectRows, type EffectUnit } from './strategy-effects';
import { RankingLevel } from './stats.types';

/** Strategies against a baseline strategy, per model and use case and pooled (extraction paper §3.2). */
export class StrategyEffectsService {
  constructor(private readonly grids: ScoringGrids) {}

  /** The extraction paper's §3.2 table: strategies against a baseline strategy, per model and pooled. */
  async strategyEffects(principal: Principal, projectId: string, useCaseIds: string[], baseline: PromptStrategy, options: ResolvedStatsOptions): Promise<StrategyEffectTable> {
    requireRole(principal, projectId, Role.VIEWER, 'Project');
    const useCases = await loadUseCases(this.grids.dataSource, projectId, useCaseIds);
    return this.grids.cached(principal, options, projectId, 'strategyEffects', { useCaseIds, baseline, options }, async () => {
      const units = await this.grids.useCaseGrids(principal, useCases, RankingLevel.RUN, options);
      const effectUnits: EffectUnit[] = [];
      for (const { g } of units) effectUnits.push({ useCase: g.frame.useCase, runs: g.runs, grid: g.grid!, order: await this.grids.runOrder(g) });
      const models = await loadModelsOf(this.grids.dataSource, units.flatMap((u) => u.g.runs));
      const nameOf = (key: string) => models.get(key)?.servedName ?? key;
      const { rows, topRanked } = strategyEffectRows(effectUnits, baseline, (a, b) => (nameOf(a) < nameOf(b) ? -1 : nameOf(a) > nameOf(b) ? 1 : a < b ? -1 : 1));
      const B = options.resamples;
      const estimate = (x: { value: number; replicates: Float64Array }) =>
        B === 0 ? pointEstimate(x.value) : toEstimate(replicatedEstimate(x, options.confidence), B);
      return {
        baseline,
        comparisons: rows.filter((r) => Number.isFinite(r.qValue)).length,
        topRanked: Object.values(PromptStrategy).map((strategy) => ({ strategy, count: topRanked.get(strategy) ?? 0 })),
        rows: rows
          .filter((r) => Number.isFinite(r.difference.value))
          .map((r) => ({
            model: r.modelKey ? (models.get(r.modelKey) ?? null) : null,
            useCase: r.useCase,
            strategy: r.strategy,
            best: r.best,
            bestStrategies: r.bestStrategies,
            run: r.run,
            baselineRun: r.baselineRun,
            memberCount: r.memberCount,
            value: estimate(r.value)!,
            baselineValue: estimate(r.baseline)!,
            difference: toDifference(replicatedEstimate(r.difference, options.confidence), r.pValue, r.qValue, B),
          })),
      };
    });
  }
}
