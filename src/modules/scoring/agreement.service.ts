import { interRaterAgreement } from '../../analytics/agreement';
import { bootstrapMultiplicities } from '../../analytics/bootstrap';
import { badInput, notFound } from '../../domain/errors';
import { requireRole, type Principal } from '../api-key/principal';
import { Role } from '../api-key/api-key.entity';
import type { ScoringGrids } from './scoring-grids';
import type { ResolvedStatsOptions } from './stats-options';
import { MAX_ANNOTATORS_PER_DATASET } from '../annotation/annotation.service';
import { AnnotatorKind, type Annotator } from '../annotation/annotator.entity';
import type { Dataset } from '../dataset/dataset.entity';
import { loadAnnotatorRecords, loadFrame, type DatasetFrame } from './scoring-data';
import { toEstimate } from './estimates';
import type { AgreementSummary, Estimate, Metric } from './stats.types';

/**
 * The annotators compared for agreement: those named (a set of the dataset's annotators), or by
 * default the human ones (the human ceiling: people against people; a consensus is derived from
 * them), or all when fewer than two are human.
 */
export function agreementAnnotators(frame: DatasetFrame, annotatorIds: string[] | null): Annotator[] {
  if (annotatorIds) {
    // Each pair of annotators is compared on every resample: the list is a set of the dataset's annotators.
    if (annotatorIds.length > MAX_ANNOTATORS_PER_DATASET) {
      throw badInput(`annotatorIds: at most ${MAX_ANNOTATORS_PER_DATASET} annotators, as many as a dataset can have`, { field: 'annotatorIds' });
    }
    if (new Set(annotatorIds).size !== annotatorIds.length) throw badInput('annotatorIds: an annotator is named twice', { field: 'annotatorIds' });
    const chosen = annotatorIds.map((id) => frame.annotators.find((a) => a.id === id));
    if (chosen.some((a) => !a)) throw notFound('Annotator');
    return chosen as Annotator[];
  }
  // The human ceiling: people against people; a consensus is derived from them.
  const humans = frame.annotators.filter((a) => a.kind === AnnotatorKind.HUMAN);
  return humans.length >= 2 ? humans : frame.annotators;
}

/** Inter-rater agreement, the human ceiling (docs/scoring.md §7): annotators scored against each other. */
export class AgreementService {
  constructor(private readonly grids: ScoringGrids) {}

  async interRaterAgreement(principal: Principal, dataset: Dataset, annotatorIds: string[] | null, options: ResolvedStatsOptions): Promise<AgreementSummary> {
    requireRole(principal, dataset.projectId, Role.VIEWER, 'Dataset');
    return this.grids.cached(principal, options, dataset.projectId, 'agreement', { dataset: dataset.id, annotatorIds, options }, async () => {
      const frame = await loadFrame(this.grids.dataSource, dataset.id);
      const chosen = agreementAnnotators(frame, annotatorIds);
      if (chosen.length < 2) return { annotators: chosen, macroAverage: null, variables: [] };
      const result = await this.computeAgreement(principal, frame, chosen, options);
      const byId = new Map(chosen.map((a) => [a.id, a]));
      return {
        annotators: chosen,
        macroAverage: toEstimate(result.macro, options.resamples),
        variables: result.perVariable.flatMap((v, i) => {
          const estimate = toEstimate(v.estimate, options.resamples);
          if (!estimate) return [];
          return [
            {
              variable: frame.variables[i]!,
              metric: v.metric as Metric,
              estimate,
              pairs: v.pairs.filter((p) => p.n > 0).map((p) => ({ a: byId.get(p.a)!, b: byId.get(p.b)!, n: p.n, value: p.value })),
            },
          ];
        }),
      };
    });
  }

  private async computeAgreement(principal: Principal, frame: DatasetFrame, annotators: Annotator[], options: ResolvedStatsOptions) {
    const records = await Promise.all(annotators.map(async (a) => ({ id: a.id, records: await loadAnnotatorRecords(this.grids.dataSource, frame, a.id) })));
    const { similarity, embedder } = await this.grids.embeddings.similarityFor(principal, frame, records.map((r) => r.records), options);
    return interRaterAgreement({
      specs: frame.specs,
      annotators: records,
      similarity,
      embedder,
      ...(options.resamples > 0 ? { multiplicities: bootstrapMultiplicities(frame.reportIds.length, options.resamples, options.seed) } : { resamples: 1 }),
      confidence: options.confidence,
    });
  }

  /** Agreement of the dataset's human annotators per variable key (Run.scores shows it beside each variable). */
  async agreementByVariable(principal: Principal, frame: DatasetFrame, options: ResolvedStatsOptions): Promise<Map<string, Estimate>> {
    const chosen = agreementAnnotators(frame, null).filter((a) => a.kind === AnnotatorKind.HUMAN);
    if (chosen.length < 2 || frame.reportIds.length === 0) return new Map();
    const result = await this.computeAgreement(principal, frame, chosen, options);
    const out = new Map<string, Estimate>();
    result.perVariable.forEach((v, i) => {
      const e = toEstimate(v.estimate, options.resamples);
      if (e) out.set(frame.specs[i]!.key, e);
    });
    return out;
  }
}
