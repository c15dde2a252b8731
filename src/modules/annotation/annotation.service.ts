import type { DataSource, EntityManager } from 'typeorm';
import { checkpoint, controlledTransaction, type WorkControl } from '../../db/work-control';
import { normaliseValue } from '../../analytics/normalise';
import { badInput } from '../../domain/errors';
import { Role } from '../api-key/api-key.entity';
import type { Principal } from '../api-key/principal';
import type { Dataset } from '../dataset/dataset.entity';
import type { DatasetService } from '../dataset/dataset.service';
import type { RowError } from '../imports/import-errors';
import { importFailure } from '../imports/import.types';
import { AnnotationReader, type ParsedAnnotation } from '../imports/parse-annotations';
import { readRecords } from '../imports/parse-records';
import { containsNul, NUL_REASON } from '../imports/text-checks';
import type { InlineFiles } from '../imports/inline-file';
import { reportIdsOf } from '../imports/report-lookup';
import { importSource } from '../imports/upload';
import { lockUnchangedUseCase } from '../imports/use-case-guard';
import { UseCase } from '../use-case/use-case.entity';
import { toSpec } from '../use-case/variable-spec';
import { Variable } from '../use-case/variable.entity';
import type { ImportAnnotationsInput } from './annotation.input';
import { Annotator, AnnotatorKind } from './annotator.entity';

/** Records read, checked and written at a time. */
const RECORD_CHUNK = 1000;
/** Annotation values per INSERT statement. */
const INSERT_CHUNK = 5000;

/** Annotators of one dataset (request pricing assumes at most this many, and pairs grow with its square). */
export const MAX_ANNOTATORS_PER_DATASET = 50;

export class AnnotationService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly datasets: DatasetService,
  ) {}

  /**
   * Imports one annotator's values in one transaction. Values are stored raw and normalised
   * (docs/scoring.md §1); a value that does not normalise (e.g. not an option) rejects its row, since
   * a reference that cannot be scored against is a data error. Absent columns leave a report
   * unannotated for that variable; empty cells are MISSING. A value holding a NUL character
   * rejects its row (PostgreSQL cannot store it). The use case must not change between
   * normalisation and commit (CONFLICT otherwise; see lockUnchangedUseCase).
   *
   * The file is read, checked and written a chunk of records at a time inside the transaction,
   * so that only one chunk is held at once; after the first problem nothing more is written and
   * the rest is still checked, and any problem rolls every chunk back.
   */
  async importAnnotations(principal: Principal, datasetId: string, input: ImportAnnotationsInput, inline?: InlineFiles, control?: WorkControl) {
    const dataset = await this.datasets.get(principal, datasetId, Role.EDITOR);
    const name = input.annotatorName.trim();
    if (!name) throw badInput('annotatorName must not be empty', { field: 'annotatorName' });
    const useCase = await this.dataSource.getRepository(UseCase).findOneByOrFail({ id: dataset.useCaseId });
    const variables = await this.dataSource.getRepository(Variable).find({ where: { useCaseId: useCase.id }, order: { order: 'ASC' } });
    const specs = variables.map((v) => [v, toSpec(v, useCase)] as const);
    const source = await importSource(input, inline);

    return controlledTransaction(this.dataSource, control, async (manager) => {
      await manager.query('SELECT id FROM datasets WHERE id = $1 FOR UPDATE', [dataset.id]);
      await lockUnchangedUseCase(manager, { useCaseId: useCase.id, updatedAt: useCase.updatedAt, variableIds: variables.map((v) => v.id) });
      const annotator = await this.annotatorFor(manager, dataset, name, input);
      const reader = new AnnotationReader({
        idField: input.idField,
        variableKeys: variables.map((v) => v.key),
        ...(input.columnMap ? { columnMap: input.columnMap } : {}),
      });
      const errors: RowError[] = [];
      const totals = { reports: 0, values: 0 };
      const read = await readRecords(source, input.format, input.delimiter ? { delimiter: input.delimiter } : {}, RECORD_CHUNK, async (records, clean, pause) => {
        checkpoint(control);
        const annotations: ParsedAnnotation[] = [];
        for (const rec of records) {
          const annotation = reader.add(rec);
          if (annotation) annotations.push(annotation);
        }
        if (annotations.length === 0) return;
        const reportIds = await reportIdsOf(manager, dataset.id, annotations.map((a) => a.externalId));
        const rows: AnnotationRows = { report: [], variable: [], raw: [], value: [], status: [] };
        let reports = 0;
        for (const annotation of annotations) {
          const reportId = reportIds.get(annotation.externalId);
          if (!reportId) {
            errors.push({ row: annotation.row, field: input.idField, reason: `report "${annotation.externalId}" is not in the dataset` });
            continue;
          }
          const before = rows.report.length;
          for (const [variable, spec] of specs) {
            if (!Object.prototype.hasOwnProperty.call(annotation.values, variable.key)) continue;
            const raw = annotation.values[variable.key];
            if (containsNul(raw)) {
              errors.push({ row: annotation.row, field: variable.key, reason: `${variable.key}: ${NUL_REASON}` });
              continue;
            }
            const cell = normaliseValue(spec, raw);
            if (cell.status === 'INVALID') {
              errors.push({
                row: annotation.row,
                field: variable.key,
                reason: `${variable.key}: ${JSON.stringify(raw)} is not a valid ${variable.type} value (${cell.category}${cell.detail ? `: ${cell.detail}` : ''})`,
              });
              continue;
            }
            rows.report.push(reportId);
            rows.variable.push(variable.id);
            rows.raw.push(JSON.stringify(raw ?? null));
            rows.value.push(cell.status === 'VALUE' ? JSON.stringify(cell.value) : null);
            rows.status.push(cell.status);
          }
          if (rows.report.length > before) reports += 1;
          // Normalising a chunk's values takes a while: other requests get a turn in between.
          await pause();
        }
        // After a problem nothing more is written; the rest is still checked.
        if (!clean || reader.failed || errors.length > 0 || rows.report.length === 0) return;
        await insertAnnotations(manager, dataset, annotator.id, rows);
        totals.reports += reports;
        totals.values += rows.report.length;
        control?.progress?.(totals.reports);
      });
      // Throwing rolls the transaction back: whatever was inserted is gone.
      const found = read.rejected ? { errors: [], unknownColumns: [], fileLevel: false } : reader.finish();
      const all: RowError[] = [...read.errors, ...found.errors, ...(read.rejected || found.fileLevel ? [] : errors)];
      if (!read.showLines) for (const error of all) delete error.line;
      if (all.length > 0) throw importFailure(all.sort((a, b) => a.row - b.row));
      if (totals.values === 0) throw importFailure([{ row: 0, reason: 'the file holds no annotation values' }]);
      return { annotator, reports: totals.reports, values: totals.values, unknownColumns: found.unknownColumns };
    });
  }

  /**
   * The dataset's annotator of this name, made or updated as the import asks (the caller holds
   * the dataset row locked, so no concurrent import adds an annotator meanwhile).
   */
  private async annotatorFor(manager: EntityManager, dataset: Dataset, name: string, input: ImportAnnotationsInput): Promise<Annotator> {
    const repo = manager.getRepository(Annotator);
    const annotator = await repo.findOneBy({ datasetId: dataset.id, name });
    if (input.isReference) {
      await manager.query('UPDATE annotators SET is_reference = false WHERE dataset_id = $1 AND is_reference', [dataset.id]);
    }
    if (!annotator) {
      const count = await repo.countBy({ datasetId: dataset.id });
      if (count >= MAX_ANNOTATORS_PER_DATASET) {
        throw badInput(`annotatorName: the dataset already has ${MAX_ANNOTATORS_PER_DATASET} annotators, the most it can have`, { field: 'annotatorName' });
      }
      return repo.save(
        repo.create({ projectId: dataset.projectId, datasetId: dataset.id, name, kind: input.kind ?? AnnotatorKind.HUMAN, isReference: input.isReference }),
      );
    }
    // A correction import usually leaves kind out: the annotator keeps the kind it has.
    annotator.kind = input.kind ?? annotator.kind;
    annotator.isReference = input.isReference || annotator.isReference;
    await repo.update({ id: annotator.id }, { kind: annotator.kind, isReference: annotator.isReference });
    return annotator;
  }
}

/** One chunk's annotation values, column by column, as insertAnnotations sends them. */
interface AnnotationRows {
  report: string[];
  variable: string[];
  raw: string[];
  value: (string | null)[];
  status: string[];
}

/** Writes (or, for a correction import, overwrites) annotation values, INSERT_CHUNK rows per statement. */
async function insertAnnotations(manager: EntityManager, dataset: Dataset, annotatorId: string, rows: AnnotationRows): Promise<void> {
  for (let i = 0; i < rows.report.length; i += INSERT_CHUNK) {
    const slice = (values: (string | null)[]) => values.slice(i, i + INSERT_CHUNK);
    await manager.query(
      `INSERT INTO annotations (project_id, dataset_id, annotator_id, report_id, variable_id, raw, value, status)
       SELECT $1, $2, $3, u.report_id, u.variable_id, u.raw::jsonb, u.value::jsonb, u.status
       FROM unnest($4::uuid[], $5::uuid[], $6::text[], $7::text[], $8::text[]) AS u(report_id, variable_id, raw, value, status)
       ON CONFLICT (annotator_id, report_id, variable_id)
       DO UPDATE SET raw = EXCLUDED.raw, value = EXCLUDED.value, status = EXCLUDED.status, invalid_category = NULL`,
      [dataset.projectId, dataset.id, annotatorId, slice(rows.report), slice(rows.variable), slice(rows.raw), slice(rows.value), slice(rows.status)],
    );
  }
}
