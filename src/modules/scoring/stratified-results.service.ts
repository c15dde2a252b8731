import { pooledRatio, type PooledPart } from '../../analytics/pooled';
import { requireRole, type Principal } from '../api-key/principal';
import { Role } from '../api-key/api-key.entity';
import type { ScoringGrids } from './scoring-grids';
import type { ResolvedStatsOptions } from './stats-options';
import type { RunGroupingInput, StratifiedResult, StratumInput } from './comparison.types';
import { checkSizeBinEdges, checkStratum, groupLabel, stratumLabeller, unitObservations } from './observations';
import { loadModelsOf, loadReportMetadata, loadUseCases } from './scoring-data';
import { invalidCounts, pointEstimate, toEstimate } from './estimates';
import { RankingLevel, ScoringMode } from './stats.types';

/** Validity, effective and conditional scores pooled by run group and stratum (docs/scoring.md §8). */
export class StratifiedResultsService {
  constructor(private readonly grids: ScoringGrids) {}

  /** Pooled validity, effective and conditional item scores by run group and stratum, with report-bootstrap intervals. */
  async stratifiedResults(
    principal: Principal,
    projectId: string,
    useCaseIds: string[],
    groupBy: RunGroupingInput,
    stratifyBy: StratumInput | null,
    variableKeys: string[] | null,
    options: ResolvedStatsOptions,
  ): Promise<StratifiedResult[]> {
    requireRole(principal, projectId, Role.VIEWER, 'Project');
    const useCases = await loadUseCases(this.grids.dataSource, projectId, useCaseIds);
    const stratum = checkStratum(stratifyBy);
    const edges = checkSizeBinEdges(groupBy.by, groupBy.sizeBinEdges);
    return this.grids.cached(principal, options, projectId, 'strata', { useCaseIds, groupBy, stratifyBy, variableKeys, options }, async () => {
      const units = await this.grids.useCaseGrids(principal, useCases, RankingLevel.RUN, { ...options, scoring: ScoringMode.EFFECTIVE });
      const models = await loadModelsOf(this.grids.dataSource, units.flatMap((u) => u.g.runs));
      interface Cell {
        group: string;
        stratum: string | null;
        runs: Set<string>;
        parts: Map<number, { n: Float64Array; valid: Float64Array; sum: Float64Array }>;
        invalid: Record<string, number>;
      }
      const cells = new Map<string, Cell>();
      const cellOf = (group: string, s: string | null): Cell => {
        const key = JSON.stringify([group, s]);
        let cell = cells.get(key);
        if (!cell) cells.set(key, (cell = { group, stratum: s, runs: new Set(), parts: new Map(), invalid: {} }));
        return cell;
      };
      for (const [u, { g }] of units.entries()) {
        const obs = unitObservations(g);
        const label = stratum ? stratumLabeller(stratum, g, await loadReportMetadata(this.grids.dataSource, g.frame)) : null;
        const n = g.frame.reportIds.length;
        const columns = g.variableIndex.map((vi, c) => ({ c, key: g.frame.specs[vi]!.key })).filter((x) => !variableKeys || variableKeys.includes(x.key));
        g.runs.forEach((run, r) => {
          const group = groupLabel(groupBy.by, edges, run, run.modelId ? models.get(run.modelId) : undefined);
          for (const { c } of columns) {
            const items = obs.items[r]![c]!;
            for (let i = 0; i < n; i++) {
              if (Number.isNaN(items[i]!)) continue;
              for (const s of label ? [null, label(c, i)] : [null]) {
                const cell = cellOf(group, s);
                cell.runs.add(run.id);
                let part = cell.parts.get(u);
                if (!part) cell.parts.set(u, (part = { n: new Float64Array(n), valid: new Float64Array(n), sum: new Float64Array(n) }));
                part.n[i]! += 1;
                part.valid[i]! += obs.valid[r]![c]![i]!;
                part.sum[i]! += items[i]!;
                const category = obs.category[r]![c]![i];
                if (category) cell.invalid[category] = (cell.invalid[category] ?? 0) + 1;
              }
            }
          }
        });
      }
      const B = options.resamples;
      const estimate = (parts: PooledPart[]) => {
        const result = pooledRatio(parts, options.confidence);
        return B === 0 ? pointEstimate(result.estimate.value) : toEstimate(result.estimate, B);
      };
      return [...cells.values()]
        .sort((a, b) => (a.group < b.group ? -1 : a.group > b.group ? 1 : a.stratum === null ? -1 : b.stratum === null ? 1 : a.stratum < b.stratum ? -1 : 1))
        .map((cell) => {
          const parts = [...cell.parts.entries()].map(([u, p]) => ({ u, p, W: units[u]!.g.grid!.multiplicities }));
          const predictions = parts.reduce((s, x) => s + x.p.n.reduce((a, b) => a + b, 0), 0);
          const valid = parts.reduce((s, x) => s + x.p.valid.reduce((a, b) => a + b, 0), 0);
          return {
            group: cell.group,
            stratum: cell.stratum,
            runCount: cell.runs.size,
            predictions,
            valid,
            validity: estimate(parts.map((x) => ({ numerator: x.p.valid, denominator: x.p.n, multiplicities: x.W })))!,
            effective: estimate(parts.map((x) => ({ numerator: x.p.sum, denominator: x.p.n, multiplicities: x.W })))!,
            conditional: valid === 0 ? null : estimate(parts.map((x) => ({ numerator: x.p.sum, denominator: x.p.valid, multiplicities: x.W }))),
            invalid: invalidCounts(cell.invalid),
          };
        });
    });
  }
}
