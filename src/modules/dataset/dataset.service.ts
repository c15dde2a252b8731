import type { DataSource } from 'typeorm';
import { checkpoint, controlledTransaction, type WorkControl } from '../../db/work-control';
import { paginate, type PageRequest } from '../../db/pagination';
import { badInput, conflict, notFound } from '../../domain/errors';
import { Role } from '../api-key/api-key.entity';
import { requireRole, type Principal } from '../api-key/principal';
import type { RowError } from '../imports/import-errors';
import { DuplicatePolicy, importFailure } from '../imports/import.types';
import { readRecords } from '../imports/parse-records';
import type { InlineFiles } from '../imports/inline-file';
import { importSource } from '../imports/upload';
import { ReportReader, type ParsedReport, type ParseReportsOptions } from '../imports/parse-reports';
import { UseCase } from '../use-case/use-case.entity';
import type { CreateDatasetInput, ImportReportsInput } from './dataset.input';
import { Dataset } from './dataset.entity';
import { Report } from './report.entity';

const INSERT_CHUNK = 1000;

export class DatasetService {
  constructor(private readonly dataSource: DataSource) {}

  async get(principal: Principal, id: string, minimum: Role = Role.VIEWER): Promise<Dataset> {
    const dataset = await this.dataSource.getRepository(Dataset).findOneBy({ id });
    if (!dataset) throw notFound('Dataset');
    requireRole(principal, dataset.projectId, minimum, 'Dataset');
    return dataset;
  }

  list(useCaseId: string, args: PageRequest) {
    const query = this.dataSource.getRepository(Dataset).createQueryBuilder('e').where('e.use_case_id = :useCaseId', { useCaseId });
    return paginate(query, args, { column: 'e.created_at', scope: useCaseId, value: (d) => d.createdAt });
  }

  reports(datasetId: string, args: PageRequest) {
    const query = this.dataSource.getRepository(Report).createQueryBuilder('e').where('e.dataset_id = :datasetId', { datasetId });
    return paginate(query, args, { column: 'e.ordinal', kind: 'integer', scope: datasetId, value: (r) => r.ordinal });
  }

  async create(principal: Principal, useCaseId: string, input: CreateDatasetInput): Promise<Dataset> {
    const useCase = await this.dataSource.getRepository(UseCase).findOneBy({ id: useCaseId });
    if (!useCase) throw notFound('Use case');
    requireRole(principal, useCase.projectId, Role.EDITOR, 'Use case');
    const name = input.name.trim();
    if (!name) throw badInput('name must not be empty', { field: 'name' });
    try {
      return await this.dataSource.getRepository(Dataset).save(
        this.dataSource.getRepository(Dataset).create({
          projectId: useCase.projectId,
          useCaseId: useCase.id,
          name,
          language: input.language?.trim() || useCase.language,
          provenance: input.provenance?.trim() || null,
        }),
      );
    } catch (error) {
      if ((error as { code?: string }).code === '23505') throw conflict(`The use case already has a dataset named "${name}"`);
      throw error;
    }
  }

  /**
   * Imports reports in one transaction: any bad row rejects the file (first 50 reasons
   * returned) and nothing is written. The file is read piece by piece and its reports are
   * inserted in chunks through unnest() as they are read, inside the transaction; after the
   * first problem nothing more is written, the rest is still read to list every problem, and
   * the transaction is rolled back. So is it when `control` gives up (a request's deadline, a
   * background task's lost lease): between chunks and before the commit.
   */
  async importReports(
    principal: Principal,
    datasetId: string,
    input: ImportReportsInput,
    inline?: InlineFiles,
    control?: WorkControl,
  ): Promise<{ dataset: Dataset; inserted: number; updated: number }> {
    const dataset = await this.get(principal, datasetId, Role.EDITOR);
    const options: ParseReportsOptions = {
      idField: input.idField,
      textField: input.textField,
      ...(input.metadataFields ? { metadataFields: input.metadataFields } : {}),
    };
    const source = await importSource(input, inline);
    return controlledTransaction(this.dataSource, control, async (manager) => {
      // Serialises imports into one dataset so ordinals stay dense and unique.
      await manager.query('SELECT id FROM datasets WHERE id = $1 FOR UPDATE', [dataset.id]);
      // max() in SQL: spreading the ordinals of a large dataset into Math.max overflows the stack.
      const [{ next: first }] = (await manager.query('SELECT coalesce(max(ordinal) + 1, 0)::int AS next FROM reports WHERE dataset_id = $1', [
        dataset.id,
      ])) as [{ next: number }];
      let next = first;
      let inserted = 0;
      let updated = 0;
      const reader = new ReportReader(options);
      const duplicates: RowError[] = [];
      let recordsRead = 0;
      const read = await readRecords(source, input.format, input.delimiter ? { delimiter: input.delimiter } : {}, INSERT_CHUNK, async (records, clean) => {
        checkpoint(control);
        recordsRead += records.length;
        const waited = control?.waitedLimits?.importRecords;
        if (waited !== undefined && recordsRead > waited) {
          throw badInput(`The file holds more than ${waited} records; importReports reads at most that many while you wait: use startReportImport`, {
            field: 'content',
            reason: 'USE_BACKGROUND_TASK',
          });
        }
        const chunk: ParsedReport[] = [];
        for (const rec of records) {
          const report = reader.add(rec);
          if (report) chunk.push(report);
        }
        // After a problem nothing more is written; the rest is still checked.
        if (!clean || reader.failed || chunk.length === 0) return;
        // Only the chunk's ids are looked up: a dataset may hold far more reports than the file.
        const existing = new Map<string, number>(
          (
            (await manager.query('SELECT external_id, ordinal FROM reports WHERE dataset_id = $1 AND external_id = ANY($2::text[])', [
              dataset.id,
              chunk.map((r) => r.externalId),
            ])) as { external_id: string; ordinal: number }[]
          ).map((r) => [r.external_id, r.ordinal]),
        );
        if (input.onDuplicate === DuplicatePolicy.REJECT) {
          for (const r of chunk) {
            if (existing.has(r.externalId)) duplicates.push({ row: r.row, field: input.idField, reason: `external id "${r.externalId}" is already in the dataset` });
          }
        }
        if (duplicates.length > 0) return;
        const ordinals = chunk.map((r) => existing.get(r.externalId) ?? next++);
        const result = (await manager.query(
          `INSERT INTO reports (project_id, dataset_id, ordinal, external_id, text, metadata)
           SELECT $1, $2, u.ordinal, u.external_id, u.text, u.metadata::jsonb
           FROM unnest($3::int[], $4::text[], $5::text[], $6::text[]) AS u(ordinal, external_id, text, metadata)
           ON CONFLICT (dataset_id, external_id) DO UPDATE SET text = EXCLUDED.text, metadata = EXCLUDED.metadata
           RETURNING (xmax = 0) AS inserted`,
          [
            dataset.projectId,
            dataset.id,
            ordinals,
            chunk.map((r) => r.externalId),
            chunk.map((r) => r.text),
            chunk.map((r) => JSON.stringify(r.metadata)),
          ],
        )) as { inserted: boolean }[];
        for (const row of result) {
          if (row.inserted) inserted++;
          else updated++;
        }
        control?.progress?.(inserted + updated);
      });
      // Throwing rolls the transaction back: whatever was inserted is gone.
      const errors: RowError[] = [...read.errors, ...(read.rejected ? new ReportReader(options).finish() : reader.finish())];
      if (!read.showLines) for (const error of errors) delete error.line;
      if (errors.length > 0) throw importFailure(errors.sort((a, b) => a.row - b.row));
      if (duplicates.length > 0) throw importFailure(duplicates);
      if (inserted + updated === 0) throw importFailure([{ row: 0, reason: 'the file holds no reports' }]);
      return { dataset, inserted, updated };
    });
  }
}
