import { groupSummary, sizeClass } from '../../analytics/groups';
import { requireRole, type Principal } from '../api-key/principal';
import { Role } from '../api-key/api-key.entity';
import type { ScoringGrids } from './scoring-grids';
import type { ResolvedStatsOptions } from './stats-options';
import type { Model } from '../endpoint/model.entity';
import type { Run } from '../run/run.entity';
import { loadModelsOf, loadUseCases } from './scoring-data';
import { pointEstimate, toEstimate } from './estimates';
import { ModelGrouping, RankingLevel, type GroupSummary } from './stats.types';

/** Groups of models (size class, specialisation, …) by their best-strategy macro average (docs/scoring.md §8). */
export class GroupSummaryService {
  constructor(private readonly grids: ScoringGrids) {}

  async groupSummary(principal: Principal, projectId: string, useCaseIds: string[], groupBy: ModelGrouping, options: ResolvedStatsOptions): Promise<GroupSummary[]> {
    requireRole(principal, projectId, Role.VIEWER, 'Project');
    const useCases = await loadUseCases(this.grids.dataSource, projectId, useCaseIds);
    return this.grids.cached(principal, options, projectId, 'groups', { useCaseIds, groupBy, options }, async () => {
      const units = await this.grids.useCaseGrids(principal, useCases, RankingLevel.MODEL, options);
      const runs = units.flatMap((u) => u.selected.map((r) => u.g.runs[r]!));
      const models = await loadModelsOf(this.grids.dataSource, runs);
      const groups = new Map<string, { members: { model: string; value: number; replicates: Float64Array }[]; models: Set<string> }>();
      for (const unit of units) {
        const grid = unit.g.grid!; // unitsOf keeps only datasets with a grid
        const B = grid.resamples;
        for (const r of unit.selected) {
          const run = unit.g.runs[r]!;
          const model = run.modelId ? models.get(run.modelId) : undefined;
          const group = this.groupOf(groupBy, run, model);
          if (group === null || !model) continue;
          const entry = groups.get(group) ?? { members: [], models: new Set<string>() };
          entry.members.push({
            model: `${model.id}@${unit.g.frame.useCase.id}`,
            value: grid.macroPoints[r]!,
            replicates: grid.macroReplicates.slice(r * B, (r + 1) * B),
          });
          entry.models.add(model.id);
          groups.set(group, entry);
        }
      }
      return [...groups.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([group, entry]) => ({
          group,
          models: [...entry.models].map((id) => models.get(id)!).sort((a, b) => a.servedName.localeCompare(b.servedName)),
          memberCount: entry.members.length,
          estimate:
            options.resamples === 0
              ? pointEstimate(entry.members.reduce((s, m) => s + m.value, 0) / entry.members.length)!
              : toEstimate(groupSummary(group, entry.members, options.confidence).estimate, options.resamples)!,
        }))
        .filter((g) => g.estimate !== null);
    });
  }

  private groupOf(groupBy: ModelGrouping, run: Run, model: Model | undefined): string | null {
    if (!model) return null;
    switch (groupBy) {
      case ModelGrouping.SIZE_CLASS:
        return model.sizeClass ?? (model.parameterCountB !== null ? sizeClass(model.parameterCountB) : 'UNKNOWN');
      case ModelGrouping.SPECIALISATION:
        return model.specialisation ?? 'UNKNOWN';
      case ModelGrouping.FAMILY:
        return model.family ?? 'UNKNOWN';
      case ModelGrouping.REASONING_MODE: {
        const thinking = (run.config as { thinking?: unknown }).thinking;
        return thinking === true ? 'THINKING' : thinking === false ? 'NON_THINKING' : model.supportsThinking ? 'THINKING' : 'NON_THINKING';
      }
      case ModelGrouping.QUANTISATION:
        return model.quantisation ?? 'NONE';
    }
  }
}
