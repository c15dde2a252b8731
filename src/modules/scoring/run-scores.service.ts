import { scoreVariable } from '../../analytics/metrics';
import type { NormalisedCell } from '../../analytics/types';
import { badInput } from '../../domain/errors';
import { requireRole, type Principal } from '../api-key/principal';
import { Role } from '../api-key/api-key.entity';
import type { ResolvedStatsOptions } from './stats-options';
import type { Run } from '../run/run.entity';
import type { AgreementService } from './agreement.service';
import type { DatasetGrid, ScoringGrids } from './scoring-grids';
import { invalidCounts, pointEstimate, toEstimate } from './estimates';
import { ScoringMode, type Estimate, type Metric, type RunScores, type VariableScore } from './stats.types';

/** A run's scores against the reference standard: per variable and macro average, with bootstrap intervals (docs/scoring.md §2–§5). */
export class RunScoresService {
  constructor(
    private readonly grids: ScoringGrids,
    private readonly agreement: AgreementService,
  ) {}

  /**
   * Scores of several runs, one computation per dataset: the dataset, its reference and
   * agreement are loaded once and the runs bootstrapped together (each run's numbers are the
   * same as alone: the resamples are shared). A run that cannot be scored gets its error.
   */
  async runScoresMany(principal: Principal, runs: readonly Run[], options: ResolvedStatsOptions): Promise<(RunScores | Error)[]> {
    await this.grids.embeddings.authorise(principal, options);
    const byDataset = new Map<string, Run[]>();
    const out = new Map<string, RunScores | Error>();
    for (const run of runs) {
      try {
        requireRole(principal, run.projectId, Role.VIEWER, 'Run');
        if (!run.datasetId) throw badInput('This run has no dataset, so there is nothing to score it against');
        byDataset.set(run.datasetId, [...(byDataset.get(run.datasetId) ?? []), run]);
      } catch (error) {
        out.set(run.id, error as Error);
      }
    }
    for (const [datasetId, group] of byDataset) {
      const ids = [...new Set(group.map((r) => r.id))].sort();
      const unique = ids.map((id) => group.find((r) => r.id === id)!);
      try {
        const results = await this.grids.cached(principal, null, unique[0]!.projectId, 'runScores', { runs: ids, options }, async () => {
          const g = await this.grids.datasetGrid(principal, datasetId, unique, options);
          const ira = await this.agreement.agreementByVariable(principal, g.frame, options);
          return unique.map((_, r) => this.scoresOf(g, r, ira, options));
        });
        unique.forEach((run, r) => out.set(run.id, results[r]!));
      } catch (error) {
        for (const run of unique) out.set(run.id, error as Error);
      }
    }
    return runs.map((run) => out.get(run.id)!);
  }

  private scoresOf(g: DatasetGrid, r: number, ira: Map<string, Estimate>, options: ResolvedStatsOptions): RunScores | Error {
    const cells = g.cells[r]!;
    const variables: VariableScore[] = [];
    const invalidTotals: Record<string, number> = {};
    let validTotal = 0;
    let nTotal = 0;
    g.variableIndex.forEach((vi, column) => {
      const spec = g.frame.specs[vi]!;
      const refs = g.referenceCells[column]!;
      const preds = cells.get(spec.key)! as readonly (NormalisedCell | undefined)[];
      const detail = scoreVariable(spec, refs, preds, { similarity: g.similarity, embedder: g.embedder });
      for (const [category, count] of Object.entries(detail.invalid)) invalidTotals[category] = (invalidTotals[category] ?? 0) + count;
      validTotal += detail.valid;
      nTotal += detail.n;
      const fromGrid = g.grid ? g.grid.perVariable[r]![column]! : null;
      const conditionalValue = options.collapsed && detail.collapsed ? detail.collapsed.primary.conditional : detail.primary.conditional;
      const effective = options.scoring === ScoringMode.EFFECTIVE ? toEstimate(fromGrid, options.resamples) : null;
      const conditional = options.scoring === ScoringMode.CONDITIONAL ? toEstimate(fromGrid, options.resamples) : pointEstimate(conditionalValue);
      const effectivePoint = options.collapsed && detail.collapsed ? detail.collapsed.primary.effective : detail.primary.effective;
      variables.push({
        variable: g.frame.variables[vi]!,
        metric: detail.metric as Metric,
        n: detail.n,
        estimate: effective ?? pointEstimate(effectivePoint)!,
        conditional,
        collapsed: detail.collapsed ? pointEstimate(detail.collapsed.primary.effective) : null,
        validity: detail.validity,
        invalid: invalidCounts(detail.invalid),
        interRaterAgreement: ira.get(spec.key) ?? null,
        embedder: detail.embedder ? { ...detail.embedder } : null,
      });
    });
    const macro = g.grid ? toEstimate(g.grid.macro[r]!, options.resamples) : null;
    if (!macro) return badInput('No variable of this run has a reference value in the dataset, so it has no score');
    return {
      macroAverage: macro,
      validity: nTotal === 0 ? 0 : validTotal / nTotal,
      invalid: invalidCounts(invalidTotals),
      variables,
      reference: g.reference,
      embedder: { ...g.embedder },
    };
  }
}
