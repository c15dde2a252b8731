import type { DataSource, EntityManager } from 'typeorm';
import { checkpoint, controlledTransaction, type WorkControl } from '../../db/work-control';
import type { NormalisedCell } from '../../analytics/types';
import { parseOutput } from '../../extraction/output-parser';
import { paginate, type PageRequest } from '../../db/pagination';
import { badInput, notFound } from '../../domain/errors';
import { Role } from '../api-key/api-key.entity';
import { requireRole, type Principal } from '../api-key/principal';
import type { DatasetService } from '../dataset/dataset.service';
import { Model } from '../endpoint/model.entity';
import type { RowError } from '../imports/import-errors';
import { importFailure } from '../imports/import.types';
import { PredictionReader, type ParsedPrediction, type ParsePredictionsOptions } from '../imports/parse-predictions';
import { readRecords } from '../imports/parse-records';
import { findValueProblem } from '../../db/storable';
import { withoutNul } from '../imports/text-checks';
import type { InlineFiles } from '../imports/inline-file';
import { reportIdsOf } from '../imports/report-lookup';
import { importSource } from '../imports/upload';
import { lockUnchangedUseCase } from '../imports/use-case-guard';
import { Prompt } from '../prompt/prompt.entity';
import { UseCase } from '../use-case/use-case.entity';
import { normalisePrediction, toSpec, valuesOf } from '../use-case/variable-spec';
import { Variable } from '../use-case/variable.entity';
import { Experiment } from './experiment.entity';
import type { ExperimentProgress } from './run-execution.input';
import { Prediction, PredictionStatus } from './prediction.entity';
import { PredictionLayout, type ImportPredictionsInput, type PredictionFilter, type RunFilter } from './run.input';
import { Run, RunSource, RunStatus } from './run.entity';
import { storeRunColumns } from '../scoring/scoring-data';

/**
 * Predictions read, checked and inserted at a time: at 250 a 33 MB inline file peaked at 4.4–4.8
 * times its size, at 1,000 at 5.5 times (bench/RESULTS.md, prediction imports).
 */
const INSERT_CHUNK = 250;

interface ImportedUsage {
  promptTokens: number | null;
  completionTokens: number | null;
  latencyMs: number | null;
}

interface ImportedRow extends ImportedUsage {
  reportId: string;
  parsed: Record<string, unknown> | null;
  cells: Record<string, NormalisedCell>;
  raw: string | null;
  reasoning: string | null;
  samples: unknown[] | null;
  finishReason: string | null;
}

/**
 * Model output with its NUL characters removed. PostgreSQL cannot store them, and unlike a
 * report or an annotation, a model's output is a measurement: refusing the row would score the
 * run on fewer reports than it answered, and a NUL carries no meaning in an extracted value.
 * What is stored is what is parsed, so renormalising from `raw` later gives the same cells.
 */
function withoutNulOutput(p: ParsedPrediction): ParsedPrediction {
  const out: ParsedPrediction = { ...p, object: withoutNul(p.object), raw: withoutNul(p.raw), reasoning: withoutNul(p.reasoning), parseError: withoutNul(p.parseError) };
  if (p.samples !== undefined) out.samples = withoutNul(p.samples);
  if (p.finishReason !== undefined) out.finishReason = withoutNul(p.finishReason);
  return out;
}

export class RunService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly datasets: DatasetService,
  ) {}

  async get(principal: Principal, id: string, minimum: Role = Role.VIEWER): Promise<Run> {
    const run = await this.dataSource.getRepository(Run).findOneBy({ id });
    if (!run) throw notFound('Run');
    requireRole(principal, run.projectId, minimum, 'Run');
    return run;
  }

  list(useCaseId: string, args: PageRequest, filter: { datasetId?: string; modelId?: string } & Omit<RunFilter, 'datasetId' | 'modelId'>) {
    const query = this.dataSource.getRepository(Run).createQueryBuilder('e').where('e.use_case_id = :useCaseId', { useCaseId });
    if (filter.datasetId) query.andWhere('e.dataset_id = :datasetId', { datasetId: filter.datasetId });
    if (filter.modelId) query.andWhere('e.model_id = :modelId', { modelId: filter.modelId });
    if (filter.strategy) query.andWhere('e.strategy = :strategy', { strategy: filter.strategy });
    if (filter.status) query.andWhere('e.status = :status', { status: filter.status });
    if (filter.source) query.andWhere('e.source = :source', { source: filter.source });
    return paginate(query, args, { column: 'e.created_at', scope: useCaseId, value: (r) => r.createdAt });
  }

  listExperiments(projectId: string, args: PageRequest) {
    const query = this.dataSource.getRepository(Experiment).createQueryBuilder('e').where('e.project_id = :projectId', { projectId });
    return paginate(query, args, { column: 'e.created_at', scope: projectId, value: (x) => x.createdAt });
  }

  predictions(runId: string, args: PageRequest, filter: PredictionFilter | null | undefined) {
    const query = this.dataSource
      .getRepository(Prediction)
      .createQueryBuilder('e')
      .where('e.run_id = :runId', { runId });
    if (filter?.status) query.andWhere('e.status = :status', { status: filter.status });
    if (filter?.hasInvalid !== undefined && filter.hasInvalid !== null) {
      const invalid = `EXISTS (SELECT 1 FROM jsonb_each(e.cells) c WHERE c.value->>'status' = 'INVALID')`;
      query.andWhere(filter.hasInvalid ? invalid : `NOT ${invalid}`);
    }
    return paginate(query, args, { column: 'e.report_ordinal', kind: 'integer', scope: runId, value: (p) => p.reportOrdinal });
  }

  listByExperiment(experimentId: string, args: PageRequest) {
    const query = this.dataSource.getRepository(Run).createQueryBuilder('e').where('e.experiment_id = :experimentId', { experimentId });
    return paginate(query, args, { column: 'e.created_at', scope: experimentId, value: (r) => r.createdAt });
  }

  /** Predictions of a run by id, in report order (ids of other runs are ignored). */
  predictionsByIds(runId: string, ids: string[]): Promise<Prediction[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.dataSource
      .getRepository(Prediction)
      .createQueryBuilder('p')
      .where('p.run_id = :runId AND p.id = ANY(:ids)', { runId, ids })
      .orderBy('p.report_ordinal', 'ASC')
      .getMany();
  }

  /** Predictions of a run committed in the last `seconds`. */
  async recentPredictions(runId: string, seconds: number): Promise<number> {
    const [row] = (await this.dataSource.query(
      'SELECT count(*)::int AS n FROM predictions WHERE run_id = $1 AND created_at > now() - make_interval(secs => $2)',
      [runId, seconds],
    )) as { n: number }[];
    return row?.n ?? 0;
  }

  /** The newest failure message of a run. */
  async lastError(runId: string): Promise<string | null> {
    const [row] = (await this.dataSource.query(
      `SELECT error FROM predictions WHERE run_id = $1 AND status = 'FAILED' ORDER BY created_at DESC LIMIT 1`,
      [runId],
    )) as { error: string | null }[];
    return row?.error ?? null;
  }

  /** Mean and percentiles (type-7 linear interpolation) of the latencies of each run's succeeded predictions that have one. */
  async latencyPercentiles(runIds: readonly string[]): Promise<Map<string, { mean: number; p50: number; p95: number }>> {
    const rows = (await this.dataSource.query(
      `SELECT run_id, avg(latency_ms) AS mean, percentile_cont(0.5) WITHIN GROUP (ORDER BY latency_ms) AS p50, percentile_cont(0.95) WITHIN GROUP (ORDER BY latency_ms) AS p95
       FROM predictions WHERE run_id = ANY($1::uuid[]) AND status = 'SUCCEEDED' AND latency_ms IS NOT NULL GROUP BY run_id`,
      [runIds],
    )) as { run_id: string; mean: number; p50: number; p95: number }[];
    return new Map(rows.map((r) => [r.run_id, { mean: Number(r.mean), p50: Number(r.p50), p95: Number(r.p95) }]));
  }

  async experimentProgress(experimentId: string): Promise<ExperimentProgress> {
    const [row] = (await this.dataSource.query(
      `SELECT count(*)::int AS runs,
              count(*) FILTER (WHERE status = 'QUEUED')::int AS queued, count(*) FILTER (WHERE status = 'RUNNING')::int AS running,
              count(*) FILTER (WHERE status = 'SUCCEEDED')::int AS succeeded, count(*) FILTER (WHERE status = 'PARTIAL')::int AS partial,
              count(*) FILTER (WHERE status = 'FAILED')::int AS failed, count(*) FILTER (WHERE status = 'CANCELLED')::int AS cancelled,
              coalesce(sum(total_reports), 0)::int AS total, coalesce(sum(succeeded_count), 0)::int AS ok, coalesce(sum(failed_count), 0)::int AS bad
       FROM runs WHERE experiment_id = $1`,
      [experimentId],
    )) as Record<string, number>[];
    const r = row!;
    const done = r['ok']! + r['bad']!;
    return {
      runs: r['runs']!,
      queued: r['queued']!,
      running: r['running']!,
      succeeded: r['succeeded']!,
      partial: r['partial']!,
      failed: r['failed']!,
      cancelled: r['cancelled']!,
      total: r['total']!,
      predictionsSucceeded: r['ok']!,
      predictionsFailed: r['bad']!,
      pending: Math.max(0, r['total']! - done),
      fraction: r['total']! > 0 ? done / r['total']! : 0,
      finished: r['queued']! + r['running']! === 0,
    };
  }

  /**
   * Imports a run made elsewhere as a Run with source IMPORTED, in one transaction. Each row is
   * normalised like an executed prediction, so the run scores like any other. Rows for reports
   * outside the dataset reject the file; dataset reports without a row stay without prediction
   * and score as INVALID (MISSING). NUL characters in the model output are removed (see
   * withoutNulOutput). The use case is locked unchanged for the transaction (CONFLICT when it
   * changed since it was read; see lockUnchangedUseCase).
   *
   * The file is read piece by piece: its records are checked, normalised and inserted a chunk at
   * a time inside the transaction, so neither the file nor its predictions are ever held whole.
   * After the first problem nothing more is written, the rest is still read to list every
   * problem (in row order), and the transaction is rolled back.
   */
  async importPredictions(principal: Principal, datasetId: string, promptId: string | null, input: ImportPredictionsInput, inline?: InlineFiles, control?: WorkControl) {
    const dataset = await this.datasets.get(principal, datasetId, Role.EDITOR);
    const modelName = input.modelName.trim();
    if (!modelName) throw badInput('modelName must not be empty', { field: 'modelName' });
    const useCase = await this.dataSource.getRepository(UseCase).findOneByOrFail({ id: dataset.useCaseId });
    if (promptId) {
      const prompt = await this.dataSource.getRepository(Prompt).findOneBy({ id: promptId });
      if (!prompt || prompt.useCaseId !== useCase.id) throw notFound('Prompt');
    }
    const variables = await this.dataSource.getRepository(Variable).find({ where: { useCaseId: useCase.id }, order: { order: 'ASC' } });
    const specs = variables.map((v) => toSpec(v, useCase));
    const source = await importSource(input, inline);

    return controlledTransaction(this.dataSource, control, async (manager) => {
      await lockUnchangedUseCase(manager, { useCaseId: useCase.id, updatedAt: useCase.updatedAt, variableIds: variables.map((v) => v.id) });
      const model = await this.importedModel(manager, dataset.projectId, modelName);
      const [{ count: totalReports }] = (await manager.query('SELECT count(*)::int AS count FROM reports WHERE dataset_id = $1', [dataset.id])) as [
        { count: number },
      ];
      const now = new Date();
      // Written with its totals once every row is in (the transaction shows none of it before).
      const run = await manager.getRepository(Run).save(
        manager.getRepository(Run).create({
          projectId: dataset.projectId,
          useCaseId: useCase.id,
          datasetId: dataset.id,
          modelId: model.id,
          promptId,
          experimentId: null,
          name: input.name?.trim() || `${modelName} · ${input.strategy} (imported)`,
          strategy: input.strategy,
          config: { ...(input.config ?? {}) },
          status: RunStatus.SUCCEEDED,
          source: RunSource.IMPORTED,
          totalReports,
          succeededCount: 0,
          failedCount: 0,
          promptTokens: 0,
          completionTokens: 0,
          latencyMsSum: 0,
          startedAt: now,
          finishedAt: now,
          error: null,
        }),
      );
      const reader = new PredictionReader(this.predictionOptions(input, variables.map((v) => v.key)));
      const usageOf = this.usageReader(input);
      const errors: RowError[] = [];
      const totals = { rows: 0, promptTokens: 0, completionTokens: 0, latencyMs: 0 };
      const read = await readRecords(source, input.format, input.delimiter ? { delimiter: input.delimiter } : {}, INSERT_CHUNK, async (records, clean, pause) => {
        checkpoint(control);
        const predictions: { p: ParsedPrediction; record: Record<string, unknown> }[] = [];
        for (const rec of records) {
          const p = reader.add(rec);
          if (p) predictions.push({ p, record: rec.record });
        }
        if (predictions.length === 0) return;
        const reportIds = await reportIdsOf(manager, dataset.id, predictions.map(({ p }) => p.externalId));
        const rows: ImportedRow[] = [];
        for (const { p, record } of predictions) {
          const reportId = reportIds.get(p.externalId);
          if (!reportId) {
            errors.push({ row: p.row, reason: `report "${p.externalId}" is not in the dataset` });
            continue;
          }
          const output = this.normalise(withoutNulOutput(p), specs);
          // Parsing the raw output decodes its JSON escapes: a "\u0000" there is a NUL only now.
          output.parsed = withoutNul(output.parsed);
          output.cells = withoutNul(output.cells);
          const problem = findValueProblem(output, { nul: false });
          if (problem) {
            errors.push({ row: p.row, reason: `the model output ${problem.reason}` });
            continue;
          }
          rows.push({ reportId, ...output, ...usageOf(p.row, record, errors) });
          // Normalising a chunk's outputs takes a while: other requests get a turn in between.
          await pause();
        }
        // After a problem nothing more is written; the rest is still checked.
        if (!clean || reader.failed || errors.length > 0 || rows.length === 0) return;
        await this.insertPredictions(manager, dataset.projectId, run.id, rows);
        totals.rows += rows.length;
        for (const r of rows) {
          totals.promptTokens += r.promptTokens ?? 0;
          totals.completionTokens += r.completionTokens ?? 0;
          totals.latencyMs += r.latencyMs ?? 0;
        }
        control?.progress?.(totals.rows);
      });
      // Throwing rolls the transaction back: whatever was inserted is gone.
      const found = read.rejected ? { errors: [], fileLevel: false } : reader.finish();
      const all: RowError[] = [...read.errors, ...found.errors, ...(read.rejected || found.fileLevel ? [] : errors)];
      if (!read.showLines) for (const error of all) delete error.line;
      if (all.length > 0) throw importFailure(all.sort((a, b) => a.row - b.row));
      if (totals.rows === 0) throw importFailure([{ row: 0, reason: 'the file holds no predictions' }]);
      await manager.getRepository(Run).update(run.id, {
        config: { ...(input.config ?? {}), imported: { layout: input.layout, format: input.format, rows: totals.rows } },
        status: totals.rows === totalReports ? RunStatus.SUCCEEDED : RunStatus.PARTIAL,
        succeededCount: totals.rows,
        promptTokens: totals.promptTokens,
        completionTokens: totals.completionTokens,
        latencyMsSum: totals.latencyMs,
      });
      // Stored with the predictions, so that the first leaderboard over the run need not group them.
      await storeRunColumns(manager, [run.id]);
      const saved = await manager.getRepository(Run).findOneByOrFail({ id: run.id });
      return { run: saved, imported: totals.rows, missingReports: totalReports - totals.rows };
    });
  }

  /** One chunk of an import's predictions, through unnest(). */
  private async insertPredictions(manager: EntityManager, projectId: string, runId: string, chunk: ImportedRow[]): Promise<void> {
    await manager.query(
      `INSERT INTO predictions (project_id, run_id, report_id, report_ordinal, status, "values", cells, parsed, raw, reasoning, samples, finish_reason, attempts,
                                prompt_tokens, completion_tokens, latency_ms)
       SELECT $1, $2, u.report_id, r.ordinal, $3, u.values::jsonb, u.cells::jsonb, u.parsed::jsonb, u.raw, u.reasoning, u.samples::jsonb, u.finish_reason, 1,
              u.prompt_tokens, u.completion_tokens, u.latency_ms
       FROM unnest($4::uuid[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::int[], $13::int[], $14::int[])
         AS u(report_id, values, cells, parsed, raw, reasoning, samples, finish_reason, prompt_tokens, completion_tokens, latency_ms)
       JOIN reports r ON r.id = u.report_id`,
      [
        projectId,
        runId,
        PredictionStatus.SUCCEEDED,
        chunk.map((r) => r.reportId),
        chunk.map((r) => JSON.stringify(valuesOf(r.cells))),
        chunk.map((r) => JSON.stringify(r.cells)),
        chunk.map((r) => (r.parsed ? JSON.stringify(r.parsed) : null)),
        chunk.map((r) => r.raw),
        chunk.map((r) => r.reasoning),
        chunk.map((r) => (r.samples ? JSON.stringify(r.samples) : null)),
        chunk.map((r) => r.finishReason),
        chunk.map((r) => r.promptTokens),
        chunk.map((r) => r.completionTokens),
        chunk.map((r) => r.latencyMs),
      ],
    );
  }

  /**
   * The model a run made elsewhere is attributed to: the project's model of that served name
   * (the one an endpoint serves, when one does, so imported and executed runs of a model are
   * compared as one model), else a new model without endpoint. Concurrent imports may both meet
   * a new name: insert-if-absent, then read (under READ COMMITTED the read sees whichever
   * import's row committed).
   */
  private async importedModel(manager: EntityManager, projectId: string, servedName: string): Promise<Model> {
    const query = () =>
      manager
        .getRepository(Model)
        .createQueryBuilder('m')
        .where('m.project_id = :p AND m.served_name = :n', { p: projectId, n: servedName })
        .orderBy('m.endpoint_id IS NULL', 'ASC')
        .addOrderBy('m.created_at', 'ASC');
    const existing = await query().getOne();
    if (existing) return existing;
    await manager.query(
      `INSERT INTO models (project_id, endpoint_id, served_name) VALUES ($1, NULL, $2)
       ON CONFLICT (project_id, served_name) WHERE endpoint_id IS NULL DO NOTHING`,
      [projectId, servedName],
    );
    return query().getOneOrFail();
  }

  /**
   * The usage columns of an import (tokens, latency), read per row; a value that is not a
   * number in range is a row error. Absent fields give nulls.
   */
  private usageReader(input: ImportPredictionsInput): (row: number, record: Record<string, unknown>, errors: RowError[]) => ImportedUsage {
    const fields = [
      ['promptTokens', input.promptTokensField, true],
      ['completionTokens', input.completionTokensField, true],
      ['latencyMs', input.latencyMsField, false],
    ] as const;
    return (row, record, errors) => {
      const usage: ImportedUsage = { promptTokens: null, completionTokens: null, latencyMs: null };
      for (const [key, field, whole] of fields) {
        if (!field) continue;
        const raw = record[field];
        if (raw === undefined || raw === null || raw === '') continue;
        const value = typeof raw === 'number' ? raw : typeof raw === 'string' && raw.trim() !== '' ? Number(raw.trim()) : Number.NaN;
        if (!Number.isFinite(value) || value < 0 || value > 2_147_483_647 || (whole && !Number.isInteger(value))) {
          errors.push({ row, field, reason: `${field} must be ${whole ? 'a whole number' : 'a number'} from 0 to 2147483647` });
          continue;
        }
        usage[key] = Math.round(value);
      }
      return usage;
    };
  }

  /** The layout options of an import's records. */
  private predictionOptions(input: ImportPredictionsInput, keys: string[]): ParsePredictionsOptions {
    const optional = {
      ...(input.rawField ? { rawField: input.rawField } : {}),
      ...(input.reasoningField ? { reasoningField: input.reasoningField } : {}),
    };
    let options: ParsePredictionsOptions;
    switch (input.layout) {
      case PredictionLayout.RAW_OUTPUT:
        options = {
          layout: 'RAW_OUTPUT',
          idField: input.idField ?? 'id',
          rawField: input.rawField ?? 'raw_output',
          finishReasonField: input.finishReasonField ?? 'finish_reason',
          ...(input.reasoningField ? { reasoningField: input.reasoningField } : {}),
        };
        break;
      case PredictionLayout.MEDICAL_RECORD_LLM_CSV:
        options = { layout: 'MEDICAL_RECORD_LLM_CSV', ...(input.idField ? { idField: input.idField } : {}) };
        break;
      case PredictionLayout.WIDE:
        options = { layout: 'WIDE', idField: input.idField ?? 'id', variableKeys: keys, ...(input.columnMap ? { columnMap: input.columnMap } : {}), ...optional };
        break;
      case PredictionLayout.JSON_COLUMN:
        options = { layout: 'JSON_COLUMN', idField: input.idField ?? 'id', objectField: input.objectField ?? 'extracted_data', ...optional };
        break;
    }
    return options;
  }

  private normalise(p: ParsedPrediction, specs: ReturnType<typeof toSpec>[]): Omit<ImportedRow, 'reportId' | keyof ImportedUsage> {
    if (p.object === null && p.parseError === null && p.raw !== null) {
      const output = parseOutput({ content: p.raw, reasoning: p.reasoning, finishReason: p.finishReason ?? null }, specs);
      return {
        parsed: output.json,
        cells: output.cells,
        raw: p.raw,
        reasoning: output.reasoning,
        samples: p.samples ?? null,
        finishReason: p.finishReason ?? null,
      };
    }
    const cells: Record<string, NormalisedCell> =
      p.parseError !== null
        ? Object.fromEntries(specs.map((s) => [s.key, { status: 'INVALID', category: 'OUT_OF_FORMAT', detail: p.parseError ?? undefined } as NormalisedCell]))
        : normalisePrediction(specs, p.object);
    return { parsed: p.object, cells, raw: p.raw, reasoning: p.reasoning, samples: p.samples ?? null, finishReason: null };
  }
}
