import type { DataSource } from 'typeorm';
import { normaliseValue } from '../../analytics/normalise';
import { badInput } from '../../graphql/errors';
import { Role } from '../api-key/api-key.entity';
import type { Principal } from '../api-key/principal';
import type { DatasetService } from '../dataset/dataset.service';
import type { RowError } from '../imports/import-errors';
import { importFailure } from '../imports/import.types';
import { parseAnnotations } from '../imports/parse-annotations';
import { parseRecords } from '../imports/parse-records';
import { containsNul, NUL_REASON } from '../imports/text-checks';
import type { InlineFiles } from '../imports/inline-file';
import { importSource, importText } from '../imports/upload';
import { lockUnchangedUseCase } from '../imports/use-case-guard';
import { UseCase } from '../use-case/use-case.entity';
import { toSpec } from '../use-case/variable-spec';
import { Variable } from '../use-case/variable.entity';
import type { ImportAnnotationsInput } from './annotation.input';
import { Annotator, AnnotatorKind } from './annotator.entity';

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
   */
  async importAnnotations(principal: Principal, datasetId: string, input: ImportAnnotationsInput, inline?: InlineFiles) {
    const dataset = await this.datasets.get(principal, datasetId, Role.EDITOR);
    const name = input.annotatorName.trim();
    if (!name) throw badInput('annotatorName must not be empty', { field: 'annotatorName' });
    const useCase = await this.dataSource.getRepository(UseCase).findOneByOrFail({ id: dataset.useCaseId });
    const variables = await this.dataSource.getRepository(Variable).find({ where: { useCaseId: useCase.id }, order: { order: 'ASC' } });

    const content = await importText(await importSource(input, inline));
    const parsed = parseRecords(content, input.format, input.delimiter ? { delimiter: input.delimiter } : {});
    const annotations = parseAnnotations(parsed.rows, {
      idField: input.idField,
      variableKeys: variables.map((v) => v.key),
      ...(input.columnMap ? { columnMap: input.columnMap } : {}),
    });
    const errors: RowError[] = [...parsed.errors, ...annotations.errors];

    const reportIds = new Map<string, string>(
      ((await this.dataSource.query('SELECT id, external_id FROM reports WHERE dataset_id = $1', [dataset.id])) as { id: string; external_id: string }[]).map(
        (r) => [r.external_id, r.id],
      ),
    );
    const specs = variables.map((v) => [v, toSpec(v, useCase)] as const);
    const rows = { report: [] as string[], variable: [] as string[], raw: [] as string[], value: [] as (string | null)[], status: [] as string[] };
    const annotatedReports = new Set<string>();
    for (const annotation of annotations.annotations) {
      const reportId = reportIds.get(annotation.externalId);
      if (!reportId) {
        errors.push({ row: annotation.row, field: input.idField, reason: `report "${annotation.externalId}" is not in the dataset` });
        continue;
      }
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
        annotatedReports.add(reportId);
        rows.report.push(reportId);
        rows.variable.push(variable.id);
        rows.raw.push(JSON.stringify(raw ?? null));
        rows.value.push(cell.status === 'VALUE' ? JSON.stringify(cell.value) : null);
        rows.status.push(cell.status);
      }
    }
    if (errors.length > 0) throw importFailure(errors.sort((a, b) => a.row - b.row));
    if (rows.report.length === 0) throw importFailure([{ row: 0, reason: 'the file holds no annotation values' }]);

    const annotator = await this.dataSource.transaction(async (manager) => {
      await manager.query('SELECT id FROM datasets WHERE id = $1 FOR UPDATE', [dataset.id]);
      await lockUnchangedUseCase(manager, { useCaseId: useCase.id, updatedAt: useCase.updatedAt, variableIds: variables.map((v) => v.id) });
      const repo = manager.getRepository(Annotator);
      let annotator = await repo.findOneBy({ datasetId: dataset.id, name });
      if (input.isReference) {
        await manager.query('UPDATE annotators SET is_reference = false WHERE dataset_id = $1 AND is_reference', [dataset.id]);
      }
      if (!annotator) {
        // The dataset row is locked: no concurrent import adds an annotator meanwhile.
        const count = await repo.countBy({ datasetId: dataset.id });
        if (count >= MAX_ANNOTATORS_PER_DATASET) {
          throw badInput(`annotatorName: the dataset already has ${MAX_ANNOTATORS_PER_DATASET} annotators, the most it can have`, { field: 'annotatorName' });
        }
        annotator = await repo.save(
          repo.create({ projectId: dataset.projectId, datasetId: dataset.id, name, kind: input.kind ?? AnnotatorKind.HUMAN, isReference: input.isReference }),
        );
      } else {
        // A correction import usually leaves kind out: the annotator keeps the kind it has.
        annotator.kind = input.kind ?? annotator.kind;
        annotator.isReference = input.isReference || annotator.isReference;
        await repo.update({ id: annotator.id }, { kind: annotator.kind, isReference: annotator.isReference });
      }
      for (let i = 0; i < rows.report.length; i += INSERT_CHUNK) {
        const slice = (values: (string | null)[]) => values.slice(i, i + INSERT_CHUNK);
        await manager.query(
          `INSERT INTO annotations (project_id, dataset_id, annotator_id, report_id, variable_id, raw, value, status)
           SELECT $1, $2, $3, u.report_id, u.variable_id, u.raw::jsonb, u.value::jsonb, u.status
           FROM unnest($4::uuid[], $5::uuid[], $6::text[], $7::text[], $8::text[]) AS u(report_id, variable_id, raw, value, status)
           ON CONFLICT (annotator_id, report_id, variable_id)
           DO UPDATE SET raw = EXCLUDED.raw, value = EXCLUDED.value, status = EXCLUDED.status, invalid_category = NULL`,
          [dataset.projectId, dataset.id, annotator.id, slice(rows.report), slice(rows.variable), slice(rows.raw), slice(rows.value), slice(rows.status)],
        );
      }
      return annotator;
    });
    return { annotator, reports: annotatedReports.size, values: rows.report.length, unknownColumns: annotations.unknownColumns };
  }
}
