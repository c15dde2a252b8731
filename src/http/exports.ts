import { once } from 'node:events';
import { stringify } from 'csv-stringify/sync';
import type { Express, Request, Response } from 'express';
import { badInput, notFound } from '../domain/errors';
import { decodeId, toGlobalId } from '../domain/global-id';
import { loggableError } from '../logger';
import type { Principal } from '../modules/api-key/principal';
import type { ReadCategory } from '../modules/audit/audit.service';
import type { ExportedPrediction, LeaderboardExport, ScoreRow } from '../modules/export/export.service';
import { PredictionStatus } from '../modules/run/prediction.entity';
import { RankingLevel, type Estimate } from '../modules/scoring/stats.types';
import { INVALID_CATEGORIES } from '../analytics/types';
import { enumParameter, queryParameters, requiredParameter, STATS_PARAMETERS, statsOptionsOf } from './query-params';
import { authenticated, type RouteDependencies } from './route-auth';

type Format = 'csv' | 'json';

/** RFC 4180: CRLF between records; a field with a comma, quote, CR or LF is quoted, quotes doubled. */
const CSV_OPTIONS = { record_delimiter: 'windows', quoted_match: /[\r\n]/ } as const;

/**
 * A CSV record. With `spreadsheet`, a text cell that a spreadsheet program would read as a
 * formula (starting with `=`, `+`, `-`, `@`, a tab or a carriage return) gets a leading `'`,
 * which spreadsheets show as text (OWASP's advice against CSV injection); numbers stay numbers.
 */
export function csvRecord(cells: readonly unknown[], spreadsheet = false): string {
  return stringify([cells.map((value) => (spreadsheet && typeof value === 'string' ? spreadsheetText(value) : csvCell(value)))], CSV_OPTIONS);
}

const FORMULA_START = /^[=+\-@\t\r]/;

function spreadsheetText(value: string): string {
  return FORMULA_START.test(value) ? `'${value}` : value;
}

/** A value as CSV text: strings as they are, numbers in full precision, lists and objects as JSON, null as an empty field. */
function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

function formatOf(file: string, base: string): Format {
  if (file === `${base}.csv`) return 'csv';
  if (file === `${base}.json`) return 'json';
  throw notFound('Export');
}

/** `?spreadsheet=true`: CSV for a spreadsheet program (see {@link csvRecord}); CSV only. */
function spreadsheetOf(params: Map<string, string>, format: Format): boolean {
  const value = enumParameter(params, 'spreadsheet', ['true', 'false'] as const);
  if (value === 'true' && format !== 'csv') throw badInput('spreadsheet applies to CSV exports only', { field: 'spreadsheet' });
  return value === 'true';
}

function startDownload(res: Response, format: Format, name: string): void {
  res.status(200);
  res.setHeader('Content-Type', format === 'csv' ? 'text/csv; charset=utf-8; header=present' : 'application/json; charset=utf-8');
  res.setHeader('Content-Disposition', `attachment; filename="${name}.${format}"`);
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('X-Content-Type-Options', 'nosniff');
}

/** Writes a chunk, waiting while the client's buffer is full; false once the client is gone. */
async function write(res: Response, chunk: string): Promise<boolean> {
  if (res.destroyed) return false;
  if (res.write(chunk)) return true;
  await Promise.race([once(res, 'drain'), once(res, 'close')]);
  return !res.destroyed;
}

const estimateColumns = (prefix: string) => [prefix, `${prefix}_ci_low`, `${prefix}_ci_high`];
const estimateCells = (e: Estimate | null) => [e?.value ?? null, e?.ciLow ?? null, e?.ciHigh ?? null];

const PREDICTION_COLUMNS = ['report_external_id', 'status', 'error_code'];

/**
 * Columns of the predictions CSV: the report, the prediction's status and error code, then per
 * variable its value and its invalid category (empty when valid; both empty: MISSING). A variable
 * whose key is one of the fixed columns is written as `value.<key>`. A run with evidence has, per
 * variable, a last `<key>.evidence` column: the field's spans as a JSON array.
 */
function predictionHeader(variables: string[], evidence: boolean): string[] {
  const column = (key: string) => (PREDICTION_COLUMNS.includes(key) ? `value.${key}` : key);
  const spans = evidence ? variables.map((key) => `${column(key)}.evidence`) : [];
  return [...PREDICTION_COLUMNS, ...variables.map(column), ...variables.map((key) => `${column(key)}.invalid`), ...spans];
}

function predictionRecord(p: ExportedPrediction, variables: string[], evidence: boolean): unknown[] {
  const spans = evidence ? variables.map((k) => JSON.stringify(p.fields[k]!.evidence ?? [])) : [];
  return [p.reportExternalId, p.status, p.errorCode, ...variables.map((k) => p.fields[k]!.value), ...variables.map((k) => p.fields[k]!.invalidCategory), ...spans];
}

function predictionJson(p: ExportedPrediction, variables: string[]): string {
  return JSON.stringify({
    reportExternalId: p.reportExternalId,
    status: p.status,
    errorCode: p.errorCode,
    values: Object.fromEntries(variables.map((k) => [k, p.fields[k]!.value])),
    fields: p.fields,
  });
}

const SCORE_HEADER = [
  'run_id',
  'run_name',
  'model',
  'strategy',
  'variable',
  'metric',
  'n',
  ...estimateColumns('estimate'),
  'confidence',
  'resamples',
  'conditional',
  'collapsed',
  'validity',
  ...INVALID_CATEGORIES.map((c) => `invalid_${c.toLowerCase()}`),
  ...estimateColumns('inter_rater_agreement'),
];

function scoreRecord(r: ScoreRow): unknown[] {
  return [
    r.runId,
    r.runName,
    r.model,
    r.strategy,
    r.variable,
    r.metric,
    r.n,
    ...estimateCells(r.estimate),
    r.estimate.confidence,
    r.estimate.resamples,
    r.conditional?.value ?? null,
    r.collapsed?.value ?? null,
    r.validity,
    ...INVALID_CATEGORIES.map((c) => r.invalid[c] ?? 0),
    ...estimateCells(r.interRaterAgreement),
  ];
}

const LEADERBOARD_HEADER = ['rank', 'rank_ci_low', 'rank_ci_high', 'run_id', 'run_name', 'model_id', 'model', 'strategy', ...estimateColumns('macro_average'), 'confidence', 'resamples'];

function leaderboardRecords(board: LeaderboardExport): unknown[][] {
  return board.entries.map((e) => [
    e.rank,
    e.rankCiLow,
    e.rankCiHigh,
    e.runId,
    e.runName,
    e.modelId,
    e.model,
    e.strategy,
    ...estimateCells(e.macroAverage),
    e.macroAverage?.confidence ?? null,
    e.macroAverage?.resamples ?? null,
  ]);
}

/**
 * GET /exports/…: a run's predictions, a use case's per-variable scores and its leaderboard as
 * CSV (RFC 4180, UTF-8, a header row) or JSON, for the same keys and roles as GraphQL (VIEWER
 * may read). Predictions are streamed page by page and each one sent counts as a read of
 * patient data in the audit log, as `Prediction.values` does in GraphQL.
 */
export function registerExportRoutes(app: Express, deps: RouteDependencies): void {
  const { services, logger } = deps;

  app.get(
    '/exports/runs/:runId/:file',
    authenticated(deps, async (req: Request, res: Response, principal: Principal) => {
      const format = formatOf(String(req.params['file']), 'predictions');
      const params = queryParameters(req, ['status', 'hasInvalid', 'spreadsheet']);
      const spreadsheet = spreadsheetOf(params, format);
      const runId = decodeId(String(req.params['runId']), 'Run', 'runId');
      const status = enumParameter(params, 'status', Object.values(PredictionStatus));
      const hasInvalid = enumParameter(params, 'hasInvalid', ['true', 'false'] as const);
      const data = await services.exports.predictions(principal, runId, {
        ...(status ? { status } : {}),
        ...(hasInvalid ? { hasInvalid: hasInvalid === 'true' } : {}),
      });
      const audit = services.audit.recorder(principal, 'HTTP');
      const gone = new AbortController();
      res.on('close', () => gone.abort());
      startDownload(res, format, `predictions-${data.run.id}`);
      try {
        let first = true;
        const head =
          format === 'csv'
            ? csvRecord(predictionHeader(data.variables, data.run.evidence), spreadsheet)
            : `{"run":${JSON.stringify({ id: data.run.id, name: data.run.name, strategy: data.run.strategy })},"variables":${JSON.stringify(data.variables)},"predictions":[`;
        if (!(await write(res, head))) return;
        for await (const page of data.pages(gone.signal)) {
          let chunk = '';
          for (const p of page) {
            chunk += format === 'csv' ? csvRecord(predictionRecord(p, data.variables, data.run.evidence), spreadsheet) : `${first ? '' : ','}\n${predictionJson(p, data.variables)}`;
            first = false;
            audit.read('PREDICTIONS', data.run.projectId);
          }
          if (!(await write(res, chunk))) return;
        }
        if (format === 'json') await write(res, '\n]}\n');
        res.end();
      } finally {
        await audit.flush().catch((error: unknown) => logger.error({ err: loggableError(error) }, 'writing the audit log failed'));
      }
    }),
  );

  const useCaseExport = (base: 'scores' | 'leaderboard') =>
    authenticated(deps, async (req: Request, res: Response, principal: Principal) => {
      const format = formatOf(String(req.params['file']), base);
      const params = queryParameters(req, ['datasetId', ...(base === 'leaderboard' ? ['level'] : []), 'spreadsheet', ...STATS_PARAMETERS]);
      const spreadsheet = spreadsheetOf(params, format);
      const csv = (cells: readonly unknown[]) => csvRecord(cells, spreadsheet);
      const useCaseId = decodeId(String(req.params['useCaseId']), 'UseCase', 'useCaseId');
      const datasetId = decodeId(requiredParameter(params, 'datasetId'), 'Dataset', 'datasetId');
      const options = services.scoring.resolveOptions(statsOptionsOf(params));
      if (base === 'scores') {
        const { rows } = await services.exports.scores(principal, useCaseId, datasetId, options);
        startDownload(res, format, `scores-${toGlobalId('UseCase', useCaseId)}`);
        if (format === 'csv') res.end(csv(SCORE_HEADER) + rows.map(scoreRecord).map(csv).join(''));
        else res.end(`${JSON.stringify({ options: publicOptions(options), scores: rows })}\n`);
        return;
      }
      const level = enumParameter(params, 'level', Object.values(RankingLevel)) ?? RankingLevel.RUN;
      const board = await services.exports.leaderboard(principal, useCaseId, datasetId, level, options);
      startDownload(res, format, `leaderboard-${toGlobalId('UseCase', useCaseId)}`);
      if (format === 'csv') res.end(csv(LEADERBOARD_HEADER) + leaderboardRecords(board).map(csv).join(''));
      else res.end(`${JSON.stringify({ level, options: publicOptions(options), ...board })}\n`);
    });
  const bundleAudit: Record<string, ReadCategory> = { reports: 'REPORT_TEXTS', annotations: 'ANNOTATIONS', predictions: 'PREDICTIONS', prompts: 'CONFIG_EXPORTS' };
  app.get(
    '/exports/projects/:projectId/bundle.json',
    authenticated(deps, async (req: Request, res: Response, principal: Principal) => {
      queryParameters(req, []);
      const projectId = decodeId(String(req.params['projectId']), 'Project', 'projectId');
      await services.bundles.checkExport(principal, projectId);
      const audit = services.audit.recorder(principal, 'HTTP');
      const gone = new AbortController();
      res.on('close', () => gone.abort());
      const chunks = services.bundles.export(principal, projectId, gone.signal);
      try {
        // The first piece is read before the headers go out, so a refusal still answers in the error shape.
        let next = await chunks.next();
        startDownload(res, 'json', `project-${toGlobalId('Project', projectId)}`);
        while (!next.done) {
          const category = next.value.table ? bundleAudit[next.value.table] : undefined;
          if (category) for (let i = 0; i < next.value.rows; i++) audit.read(category, projectId);
          if (!(await write(res, next.value.text))) {
            await chunks.return(undefined);
            return;
          }
          next = await chunks.next();
        }
        res.end();
      } finally {
        await audit.flush().catch((error: unknown) => logger.error({ err: loggableError(error) }, 'writing the audit log failed'));
      }
    }),
  );

  const scores = useCaseExport('scores');
  const leaderboard = useCaseExport('leaderboard');
  app.get('/exports/use-cases/:useCaseId/:file', (req, res, next) => (String(req.params['file']).startsWith('scores.') ? scores : leaderboard)(req, res, next));
}

/** The options an export used, as the caller would write them (global IDs, not row ids). */
function publicOptions(options: { resamples: number; seed: number; confidence: number; scoring: string; collapsed: boolean; referenceAnnotatorId: string | null; embeddingModelId: string | null }) {
  return {
    resamples: options.resamples,
    seed: options.seed,
    confidence: options.confidence,
    scoring: options.scoring,
    collapsed: options.collapsed,
    referenceAnnotatorId: options.referenceAnnotatorId ? toGlobalId('Annotator', options.referenceAnnotatorId) : null,
    embeddingModelId: options.embeddingModelId ? toGlobalId('Model', options.embeddingModelId) : null,
  };
}
