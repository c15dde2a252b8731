import { In } from 'typeorm';
import { accuracyContrast, type ContrastEstimate as AnalyticsContrastEstimate } from '../../analytics/contrasts';
import { badInput, notFound } from '../../domain/errors';
import { decodeId } from '../../domain/global-id';
import { requireRole, type Principal } from '../api-key/principal';
import { Role } from '../api-key/api-key.entity';
import type { ScoringGrids } from './scoring-grids';
import type { ResolvedStatsOptions } from './stats-options';
import { Model } from '../endpoint/model.entity';
import type { Run } from '../run/run.entity';
import type { ContrastEstimate as ContrastEstimateType, ContrastTable, RunSelector, StratumInput } from './comparison.types';
import { checkStratum, selects, stratumLabeller, unitObservations } from './observations';
import { loadModelsOf, loadReportMetadata, loadUseCases } from './scoring-data';
import { finiteOrNull } from './estimates';
import { RankingLevel, ScoringMode } from './stats.types';

function contrastEstimate(c: AnalyticsContrastEstimate, estimable: boolean, qValue: number | null): ContrastEstimateType {
  return {
    difference: c.difference,
    standardError: estimable ? finiteOrNull(c.standardError) : null,
    ciLow: estimable ? finiteOrNull(c.ciLower) : null,
    ciHigh: estimable ? finiteOrNull(c.ciUpper) : null,
    pValue: estimable ? finiteOrNull(c.pValue) : null,
    qValue: qValue === null ? null : finiteOrNull(qValue),
    meanA: finiteOrNull(c.meanA),
    meanB: finiteOrNull(c.meanB),
    nA: c.nA,
    nB: c.nB,
    clusters: c.clusters,
    estimable,
  };
}

function emptyContrast(): ContrastEstimateType {
  return { difference: Number.NaN, standardError: null, ciLow: null, ciHigh: null, pValue: null, qValue: null, meanA: null, meanB: null, nA: 0, nB: 0, clusters: 0, estimable: false };
}

/** Group contrasts of effective score and validity, overall and per stratum (docs/scoring.md §8, RADS paper). */
export class ContrastService {
  constructor(private readonly grids: ScoringGrids) {}

  /**
   * Group contrast (docs/scoring.md §8, RADS paper §2.12): linear probability models of the effective
   * item score and of validity on a group indicator, cluster-robust by report, overall (with
   * stratum fixed effects when stratified) and per stratum (each stratum its own model on its own
   * observations, its reports the clusters), BH across strata.
   */
  async contrast(
    principal: Principal,
    projectId: string,
    useCaseIds: string[],
    groupA: RunSelector,
    groupB: RunSelector | null,
    stratifyBy: StratumInput | null,
    variableKeys: string[] | null,
    options: ResolvedStatsOptions,
  ): Promise<ContrastTable> {
    requireRole(principal, projectId, Role.VIEWER, 'Project');
    const useCases = await loadUseCases(this.grids.dataSource, projectId, useCaseIds);
    const stratum = checkStratum(stratifyBy);
    const idsA = await this.selectorModelIds(projectId, groupA, 'groupA');
    const idsB = groupB ? await this.selectorModelIds(projectId, groupB, 'groupB') : null;
    return this.grids.cached(principal, options, projectId, 'contrast', { useCaseIds, groupA, groupB, stratifyBy, variableKeys, options }, async () => {
      const units = await this.grids.useCaseGrids(principal, useCases, RankingLevel.RUN, { ...options, resamples: 0 });
      const models = await loadModelsOf(this.grids.dataSource, units.flatMap((u) => u.g.runs));
      const inA: Run[] = [];
      const inB: Run[] = [];
      const group: number[] = [];
      const effective: number[] = [];
      const effGroup: number[] = [];
      const effCluster: string[] = [];
      const effStratum: string[] = [];
      const validity: number[] = [];
      const cluster: string[] = [];
      const strata: string[] = [];
      for (const { g } of units) {
        const obs = unitObservations(g);
        const label = stratum ? stratumLabeller(stratum, g, await loadReportMetadata(this.grids.dataSource, g.frame)) : null;
        const columns = g.variableIndex.map((vi, c) => ({ c, key: g.frame.specs[vi]!.key })).filter((x) => !variableKeys || variableKeys.includes(x.key));
        g.runs.forEach((run, r) => {
          const model = run.modelId ? models.get(run.modelId) : undefined;
          const a = selects(groupA, run, model, idsA);
          const b = groupB ? selects(groupB, run, model, idsB) : !a;
          if (a && b) throw badInput(`Run "${run.name}" is in both groups`, { field: 'groupB' });
          if (!a && !b) return;
          (a ? inA : inB).push(run);
          for (const { c } of columns) {
            const items = obs.items[r]![c]!;
            const valid = obs.valid[r]![c]!;
            for (let i = 0; i < items.length; i++) {
              if (Number.isNaN(items[i]!)) continue;
              const s = label ? label(c, i) : '';
              const reportId = g.frame.reportIds[i]!;
              group.push(a ? 1 : 0);
              validity.push(valid[i]!);
              cluster.push(reportId);
              strata.push(s);
              if (options.scoring === ScoringMode.CONDITIONAL && valid[i] === 0) continue;
              effGroup.push(a ? 1 : 0);
              effective.push(items[i]!);
              effCluster.push(reportId);
              effStratum.push(s);
            }
          }
        });
      }
      if (inA.length === 0) throw badInput('No scored run matches groupA', { field: 'groupA' });
      if (inB.length === 0) throw badInput('No scored run matches groupB', { field: 'groupB' });
      const fit = (g: number[], y: number[], c: string[], s: string[]) =>
        // A stratum's standard error must be the one an analyst gets by fitting that stratum alone
        // (docs/scoring.md §8): one model over all strata would count every stratum's reports as its clusters.
        accuracyContrast({ group: g, outcome: y, cluster: c, stratum: stratum ? s : null }, { level: options.confidence, perStratum: 'separate' });
      const eff = fit(effGroup, effective, effCluster, effStratum);
      const val = fit(group, validity, cluster, strata);
      const labels = [...new Set([...eff.strata.map((s) => String(s.stratum)), ...val.strata.map((s) => String(s.stratum))])];
      const byLabel = (list: typeof eff.strata, l: string) => list.find((s) => String(s.stratum) === l);
      return {
        groupA: inA,
        groupB: inB,
        overall: { stratum: null, effective: contrastEstimate(eff.overall, true, null), validity: contrastEstimate(val.overall, true, null) },
        strata: labels.map((l) => {
          const e = byLabel(eff.strata, l);
          const v = byLabel(val.strata, l);
          return {
            stratum: l,
            effective: e ? contrastEstimate(e, e.estimable, e.qValue) : emptyContrast(),
            validity: v ? contrastEstimate(v, v.estimable, v.qValue) : emptyContrast(),
          };
        }),
      };
    });
  }

  /** The models a selector names, each one of the project's (another project's answers like an unknown id). */
  private async selectorModelIds(projectId: string, selector: RunSelector, field: string): Promise<Set<string> | null> {
    if (!selector.modelIds) return null;
    const ids = new Set(selector.modelIds.map((id, i) => decodeId(id, 'Model', `${field}.modelIds[${i}]`)));
    const known = await this.grids.dataSource.getRepository(Model).countBy({ id: In([...ids]), projectId });
    if (known !== ids.size) throw notFound('Model');
    return ids;
  }
}
