import { itemScores, perReportScores } from '../../analytics/metrics';
import { partitionVariance } from '../../analytics/mixed-model';
import type { NormalisedCell } from '../../analytics/types';
import { badInput } from '../../domain/errors';
import { requireRole, type Principal } from '../api-key/principal';
import { Role } from '../api-key/api-key.entity';
import type { UseCase } from '../use-case/use-case.entity';
import type { ScoringGrids } from './scoring-grids';
import { resolveStatsOptions } from './stats-options';
import type { StatsOptions, VarianceDecomposition } from './stats.types';

/** Variance partitioning (docs/scoring.md §8, paper Table C2): REML shares of model, strategy and residual in per-report scores. */
export class VarianceService {
  constructor(private readonly grids: ScoringGrids) {}

  async varianceDecomposition(principal: Principal, useCase: UseCase, datasetId: string): Promise<VarianceDecomposition> {
    requireRole(principal, useCase.projectId, Role.VIEWER, 'Use case');
    await this.grids.datasetOf(useCase, datasetId);
    return this.grids.cached(principal, null, useCase.projectId, 'variance', { dataset: datasetId }, async () => {
      const runs = await this.grids.scoredRuns(datasetId);
      const options = resolveStatsOptions({ resamples: 0 } as StatsOptions);
      const g = await this.grids.datasetGrid(principal, datasetId, runs, options, false);
      const y: number[] = [];
      const model: string[] = [];
      const strategy: string[] = [];
      g.runs.forEach((run, r) => {
        const items = g.variableIndex.map((vi, column) => {
          const spec = g.frame.specs[vi]!;
          return itemScores(
            spec,
            g.referenceCells[column]!,
            g.cells[r]!.get(spec.key)! as readonly (NormalisedCell | undefined)[],
            { similarity: g.similarity },
          );
        });
        const scores = perReportScores(items, g.variableIndex.map((vi) => g.frame.specs[vi]!.weight ?? 1));
        scores.forEach((s) => {
          if (!Number.isFinite(s)) return;
          y.push(s);
          model.push(run.modelId ?? `run:${run.id}`);
          strategy.push(run.strategy);
        });
      });
      // Crossed random intercepts for model and for strategy (docs/scoring.md §8): each needs two levels.
      const models = new Set(model).size;
      const strategies = new Set(strategy).size;
      if (models < 2 || strategies < 2) {
        throw badInput(
          `Variance partitioning needs scored runs of at least two models and at least two prompting strategies on this dataset; it has ${models} model${models === 1 ? '' : 's'} and ${strategies} strateg${strategies === 1 ? 'y' : 'ies'}`,
        );
      }
      if (y.length < 3) throw badInput(`Variance partitioning needs at least three per-report scores on this dataset; it has ${y.length}`);
      if (y.every((value) => value === y[0])) throw badInput('Every per-report score on this dataset is the same, so there is no variance to partition');
      const warnings: string[] = [];
      const strategiesOf = new Map<string, Set<string>>();
      const modelsOf = new Map<string, Set<string>>();
      model.forEach((m, i) => {
        strategiesOf.set(m, (strategiesOf.get(m) ?? new Set()).add(strategy[i]!));
        modelsOf.set(strategy[i]!, (modelsOf.get(strategy[i]!) ?? new Set()).add(m));
      });
      if ([...strategiesOf.values()].every((s) => s.size === 1) || [...modelsOf.values()].every((m) => m.size === 1)) {
        warnings.push('Model and strategy are not crossed on this dataset (no model was run with two strategies, or no strategy with two models): their shares cannot be told apart.');
      }
      const fit = partitionVariance(Float64Array.from(y), [
        { name: 'model', levels: model },
        { name: 'strategy', levels: strategy },
      ]);
      return {
        observations: fit.n,
        intercept: fit.intercept,
        components: fit.components.map((c) => ({ name: c.name, levelCount: c.levelCount, variance: c.variance, share: c.share })),
        residualVariance: fit.residualVariance,
        residualShare: fit.residualShare,
        converged: fit.converged,
        warnings,
      };
    });
  }
}
