import { bootstrapMultiplicities } from '../../analytics/bootstrap';
import { bootstrapStatistic, cohenKappa, fleissKappa, krippendorffAlpha, type Rating } from '../../analytics/chance-agreement';
import { cellOf } from '../../analytics/normalise';
import { requireRole, type Principal } from '../api-key/principal';
import { Role } from '../api-key/api-key.entity';
import type { ScoringGrids } from './scoring-grids';
import type { ResolvedStatsOptions } from './stats-options';
import type { Dataset } from '../dataset/dataset.entity';
import { agreementAnnotators } from './agreement.service';
import { AlphaLevel, type AnnotatorPairKappa, type ChanceCorrectedAgreement, type VariableChanceAgreement } from './comparison.types';
import { loadAnnotatorRecords, loadFrame } from './scoring-data';
import { pointEstimate, toEstimate } from './estimates';
import type { Estimate } from './stats.types';

/** The MISSING value as a nominal rating (a category of its own, docs/scoring.md §1). */
const MISSING_RATING = '\u2205MISSING';

/** Chance-corrected agreement between annotators (docs/scoring.md §7): Cohen's κ, Fleiss' κ, Krippendorff's α. */
export class ChanceAgreementService {
  constructor(private readonly grids: ScoringGrids) {}

  /** Cohen's κ per pair, Fleiss' κ and Krippendorff's α per variable, bootstrapped over reports. */
  async chanceCorrectedAgreement(principal: Principal, dataset: Dataset, annotatorIds: string[] | null, options: ResolvedStatsOptions): Promise<ChanceCorrectedAgreement> {
    requireRole(principal, dataset.projectId, Role.VIEWER, 'Dataset');
    return this.grids.cached(principal, null, dataset.projectId, 'chanceAgreement', { dataset: dataset.id, annotatorIds, options }, async () => {
      const frame = await loadFrame(this.grids.dataSource, dataset.id);
      const chosen = agreementAnnotators(frame, annotatorIds);
      if (chosen.length < 2 || frame.reportIds.length === 0) return { annotators: chosen, variables: [] };
      const records = await Promise.all(chosen.map((a) => loadAnnotatorRecords(this.grids.dataSource, frame, a.id)));
      const n = frame.reportIds.length;
      const W = options.resamples > 0 ? bootstrapMultiplicities(n, options.resamples, options.seed) : null;
      const estimate = (statistic: (w: ArrayLike<number> | null) => number): Estimate | null =>
        W ? toEstimate(bootstrapStatistic(statistic, W, n, options.confidence), options.resamples) : pointEstimate(statistic(null));
      const variables: VariableChanceAgreement[] = [];
      frame.specs.forEach((spec, vi) => {
        if (spec.type === 'FREE_TEXT' || spec.type === 'LIST') return;
        const interval = spec.type === 'NUMERIC';
        const cellRating = (a: number, i: number, forInterval: boolean): Rating => {
          const cell = cellOf(records[a]![i], spec.key);
          if (!cell || cell.status === 'INVALID') return null;
          if (cell.status === 'MISSING') return forInterval ? null : MISSING_RATING;
          const v = cell.value;
          return typeof v === 'number' || typeof v === 'string' ? v : JSON.stringify(v);
        };
        const nominalRatings = chosen.map((_, a) => Array.from({ length: n }, (_, i) => cellRating(a, i, false)));
        const alphaUnits = Array.from({ length: n }, (_, i) => chosen.map((_, a) => cellRating(a, i, interval)));
        if (!nominalRatings.some((r) => r.some((x) => x !== null))) return;
        const complete = Array.from({ length: n }, (_, i) => i).filter((i) => nominalRatings.every((r) => r[i] !== null));
        const fleissRows = complete.map((i) => nominalRatings.map((r) => r[i]!));
        const pairs: AnnotatorPairKappa[] = [];
        for (let a = 0; a < chosen.length; a++) {
          for (let b = a + 1; b < chosen.length; b++) {
            const shared = nominalRatings[a]!.filter((x, i) => x !== null && nominalRatings[b]![i] !== null).length;
            pairs.push({ a: chosen[a]!, b: chosen[b]!, n: shared, kappa: shared === 0 ? null : estimate((w) => cohenKappa(nominalRatings[a]!, nominalRatings[b]!, w)) });
          }
        }
        variables.push({
          variable: frame.variables[vi]!,
          alphaLevel: interval ? AlphaLevel.INTERVAL : AlphaLevel.NOMINAL,
          krippendorffAlpha: estimate((w) => krippendorffAlpha(alphaUnits, interval ? 'INTERVAL' : 'NOMINAL', w)),
          fleissKappa: fleissRows.length === 0 ? null : estimate((w) => fleissKappa(fleissRows, w ? complete.map((i) => w[i]!) : null)),
          fleissReports: fleissRows.length,
          pairs,
        });
      });
      return { annotators: chosen, variables };
    });
  }
}
