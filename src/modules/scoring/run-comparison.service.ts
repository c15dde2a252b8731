import { gridPairedDifference } from '../../analytics/bootstrap';
import { primaryMetric as primaryMetricOf } from '../../analytics/metrics';
import { benjaminiHochberg } from '../../analytics/multiple-testing';
import { badInput, notFound } from '../../domain/errors';
import { requireRole, type Principal } from '../api-key/principal';
import { Role } from '../api-key/api-key.entity';
import type { ScoringGrids } from './scoring-grids';
import type { ResolvedStatsOptions } from './stats-options';
import { Run } from '../run/run.entity';
import type { RunComparison } from './comparison.types';
import { toDifference, toEstimate } from './estimates';
import type { Metric } from './stats.types';

/** Paired comparison of two runs on one dataset's shared resamples (docs/scoring.md §5). */
export class RunComparisonService {
  constructor(private readonly grids: ScoringGrids) {}

  /** Run minus baseline on the dataset's shared resamples (docs/scoring.md §5 paired difference). */
  async runComparison(principal: Principal, run: Run, baselineRunId: string, options: ResolvedStatsOptions): Promise<RunComparison> {
    requireRole(principal, run.projectId, Role.VIEWER, 'Run');
    const baseline = await this.grids.dataSource.getRepository(Run).findOneBy({ id: baselineRunId });
    if (!baseline || baseline.projectId !== run.projectId) throw notFound('Run');
    if (!run.datasetId || run.datasetId !== baseline.datasetId) {
      throw badInput('A paired comparison needs two runs over the same dataset', { field: 'baselineRunId' });
    }
    return this.grids.cached(principal, options, run.projectId, 'comparison', { run: run.id, baseline: baseline.id, options }, async () => {
      const g = await this.grids.datasetGrid(principal, run.datasetId!, [run, baseline], options);
      if (!g.grid) throw badInput('No variable has a reference value in this dataset, so there is nothing to compare');
      const grid = g.grid;
      const perVariable = g.variableIndex.map((vi, v) => ({ vi, v, d: gridPairedDifference(grid, 0, 1, v) }));
      const q = benjaminiHochberg(perVariable.map((x) => (options.resamples > 0 ? x.d.pValue : Number.NaN)));
      const macroA = toEstimate(grid.macro[0]!, options.resamples);
      const macroB = toEstimate(grid.macro[1]!, options.resamples);
      if (!macroA || !macroB) throw badInput('One of the runs has no score on this dataset');
      const macro = gridPairedDifference(grid, 0, 1);
      return {
        run,
        baseline,
        runMacroAverage: macroA,
        baselineMacroAverage: macroB,
        macroAverage: toDifference(macro.estimate, macro.pValue, Number.NaN, options.resamples),
        variables: perVariable
          .filter((x) => Number.isFinite(x.d.estimate.value))
          .map((x) => ({
            variable: g.frame.variables[x.vi]!,
            metric: primaryMetricOf(g.frame.specs[x.vi]!.type) as Metric,
            difference: toDifference(x.d.estimate, x.d.pValue, q[x.v]!, options.resamples),
          })),
      };
    });
  }
}
