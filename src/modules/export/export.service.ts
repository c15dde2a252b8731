import type { DataSource } from 'typeorm';
import { In } from 'typeorm';
import { notFound } from '../../domain/errors';
import { toGlobalId } from '../../domain/global-id';
import type { AlignedQuote } from '../../extraction/evidence-alignment';
import { Role } from '../api-key/api-key.entity';
import type { Principal } from '../api-key/principal';
import type { DatasetService } from '../dataset/dataset.service';
import { Model } from '../endpoint/model.entity';
import type { StoredCell } from '../run/prediction.entity';
import type { PredictionFilter } from '../run/run.input';
import type { RunService } from '../run/run.service';
import type { ScoringServices } from '../scoring/scoring-services';
import type { ResolvedStatsOptions } from '../scoring/stats-options';
import { RankingLevel, type Estimate, type RunScores } from '../scoring/stats.types';
import type { UseCaseService } from '../use-case/use-case.service';
import { Variable } from '../use-case/variable.entity';
import { INVALID_CATEGORIES } from '../../analytics/types';

/** Rows read from the database per page of a predictions export. */
export const PREDICTION_PAGE_SIZE = 500;

export interface RunHeader {
  id: string;
  name: string;
  strategy: string;
  projectId: string;
  /** The run asked for quotes (evidence QUOTES): its fields carry their spans. */
  evidence: boolean;
}

/** One variable of one exported prediction, as `Prediction.fields` has it. */
export interface ExportedField {
  value: unknown;
  valid: boolean;
  missing: boolean;
  invalidCategory: string | null;
  skipped: boolean;
  /** The field's quotes aligned to the report, as `PredictedField.evidence`; only for runs with evidence. */
  evidence?: AlignedQuote[];
}

export interface ExportedPrediction {
  reportExternalId: string;
  status: string;
  errorCode: string | null;
  fields: Record<string, ExportedField>;
}

export interface PredictionsExport {
  run: RunHeader;
  /** Variable keys in variable order. */
  variables: string[];
  /** The predictions in report order, one database page at a time. */
  pages(signal?: AbortSignal): AsyncGenerator<ExportedPrediction[]>;
}

/** One row of a per-variable scores export: a run on one variable. */
export interface ScoreRow {
  runId: string;
  runName: string;
  model: string | null;
  strategy: string;
  variable: string;
  metric: string;
  n: number;
  estimate: Estimate;
  conditional: Estimate | null;
  collapsed: Estimate | null;
  validity: number;
  invalid: Record<string, number>;
  interRaterAgreement: Estimate | null;
}

export interface LeaderboardRow {
  rank: number;
  rankCiLow: number | null;
  rankCiHigh: number | null;
  runId: string | null;
  runName: string | null;
  modelId: string | null;
  model: string | null;
  strategy: string | null;
  macroAverage: Estimate | null;
}

export interface LeaderboardExport {
  method: string;
  exact: boolean;
  score: number;
  lowerBound: number;
  voterCount: number;
  entries: LeaderboardRow[];
}

/** The field of a cell as Prediction.fields gives it (a variable without a cell is INVALID, MISSING). */
function fieldOf(cell: StoredCell | undefined): ExportedField {
  if (!cell) return { value: null, valid: false, missing: false, invalidCategory: 'MISSING', skipped: false };
  return {
    value: cell.status === 'VALUE' ? cell.value : null,
    valid: cell.status !== 'INVALID',
    missing: cell.status === 'MISSING',
    invalidCategory: cell.status === 'INVALID' ? cell.category : null,
    skipped: cell.skipped === true,
  };
}

/**
 * Data for people who continue in R or Python: a run's predictions (paged from the database,
 * never held whole), per-variable scores and leaderboards. The same services and access rules
 * as the GraphQL fields that show them; the numbers are those fields' numbers.
 */
export class ExportService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly runs: RunService,
    private readonly useCases: UseCaseService,
    private readonly datasets: DatasetService,
    private readonly scoring: Pick<ScoringServices, 'leaderboards' | 'runScores'>,
  ) {}

  /** A run's predictions, optionally only those of a status or with (or without) an invalid field, as Run.predictions(filter:) selects them. */
  async predictions(principal: Principal, runId: string, filter: PredictionFilter = {}): Promise<PredictionsExport> {
    const run = await this.runs.get(principal, runId, Role.VIEWER);
    const variables = await this.dataSource.getRepository(Variable).find({ where: { useCaseId: run.useCaseId }, order: { order: 'ASC' } });
    const keys = variables.map((v) => v.key);
    const evidence = run.config?.['evidence'] === 'QUOTES';
    const dataSource = this.dataSource;
    return {
      run: { id: toGlobalId('Run', run.id), name: run.name, strategy: run.strategy, projectId: run.projectId, evidence },
      variables: keys,
      async *pages(signal) {
        let after = -1;
        for (;;) {
          if (signal?.aborted) return;
          const rows = (await dataSource.query(
            `SELECT p.report_ordinal, r.external_id, p.status, p.error_code, p.cells, p.evidence
               FROM predictions p JOIN reports r ON r.id = p.report_id
              WHERE p.run_id = $1 AND p.report_ordinal > $2
                AND ($4::text IS NULL OR p.status = $4)
                AND ($5::boolean IS NULL OR EXISTS (SELECT 1 FROM jsonb_each(p.cells) c WHERE c.value->>'status' = 'INVALID') = $5)
              ORDER BY p.report_ordinal LIMIT $3`,
            [run.id, after, PREDICTION_PAGE_SIZE, filter.status ?? null, filter.hasInvalid ?? null],
          )) as { report_ordinal: number; external_id: string; status: string; error_code: string | null; cells: Record<string, StoredCell>; evidence: Record<string, AlignedQuote[]> | null }[];
          if (rows.length === 0) return;
          after = rows[rows.length - 1]!.report_ordinal;
          yield rows.map((row) => ({
            reportExternalId: row.external_id,
            status: row.status,
            errorCode: row.error_code,
            fields: Object.fromEntries(keys.map((key) => [key, evidence ? { ...fieldOf(row.cells[key]), evidence: row.evidence?.[key] ?? [] } : fieldOf(row.cells[key])])),
          }));
          if (rows.length < PREDICTION_PAGE_SIZE) return;
        }
      },
    };
  }

  /** Every scored run of the dataset on every variable with a reference value, runs in leaderboard order. */
  async scores(principal: Principal, useCaseId: string, datasetId: string, options: ResolvedStatsOptions): Promise<{ runs: { runId: string; scores: RunScores }[]; rows: ScoreRow[] }> {
    const useCase = await this.useCases.get(principal, useCaseId);
    const dataset = await this.datasets.get(principal, datasetId);
    if (dataset.useCaseId !== useCase.id) throw notFound('Dataset');
    // Only the order is needed here: the point ranking, which no resample changes.
    const ranking = await this.scoring.leaderboards.leaderboard(principal, useCase, dataset.id, RankingLevel.RUN, { ...options, resamples: 0 });
    const runs = ranking.entries.map((e) => e.run!).filter(Boolean);
    const scores = await this.scoring.runScores.runScoresMany(principal, runs, options);
    const models = await this.modelNames(runs.map((r) => r.modelId));
    const rows: ScoreRow[] = [];
    const out: { runId: string; scores: RunScores }[] = [];
    runs.forEach((run, i) => {
      const result = scores[i]!;
      if (result instanceof Error) throw result;
      out.push({ runId: toGlobalId('Run', run.id), scores: result });
      for (const v of result.variables) {
        rows.push({
          runId: toGlobalId('Run', run.id),
          runName: run.name,
          model: run.modelId ? (models.get(run.modelId) ?? null) : null,
          strategy: run.strategy,
          variable: v.variable.key,
          metric: v.metric,
          n: v.n,
          estimate: v.estimate,
          conditional: v.conditional,
          collapsed: v.collapsed,
          validity: v.validity,
          invalid: Object.fromEntries(INVALID_CATEGORIES.map((c) => [c, v.invalid.find((x) => x.category === c)?.count ?? 0])),
          interRaterAgreement: v.interRaterAgreement,
        });
      }
    });
    return { runs: out, rows };
  }

  async leaderboard(principal: Principal, useCaseId: string, datasetId: string, level: RankingLevel, options: ResolvedStatsOptions): Promise<LeaderboardExport> {
    const useCase = await this.useCases.get(principal, useCaseId);
    const ranking = await this.scoring.leaderboards.leaderboard(principal, useCase, datasetId, level, options);
    return {
      method: ranking.method,
      exact: ranking.exact,
      score: ranking.score,
      lowerBound: ranking.lowerBound,
      voterCount: ranking.voterCount,
      entries: ranking.entries.map((e) => ({
        rank: e.rank,
        rankCiLow: e.rankCiLow,
        rankCiHigh: e.rankCiHigh,
        runId: e.run ? toGlobalId('Run', e.run.id) : null,
        runName: e.run?.name ?? null,
        modelId: e.model ? toGlobalId('Model', e.model.id) : null,
        model: e.model?.servedName ?? null,
        strategy: e.strategy ?? null,
        macroAverage: e.macroAverage,
      })),
    };
  }

  private async modelNames(ids: (string | null)[]): Promise<Map<string, string>> {
    const wanted = [...new Set(ids.filter((id): id is string => id !== null))];
    if (wanted.length === 0) return new Map();
    const models = await this.dataSource.getRepository(Model).findBy({ id: In(wanted) });
    return new Map(models.map((m) => [m.id, m.servedName]));
  }
}
