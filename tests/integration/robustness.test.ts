import { createHash } from 'node:crypto';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { GraphQLError } from 'graphql';
import pino from 'pino';
import { QueryFailedError } from 'typeorm';
import { EmbeddedPostgresError, parentPid, startEmbeddedPostgres, stopOrphan, unreachableByPostgres } from '../../src/db/embedded-postgres';
import { createErrorFormatter } from '../../src/graphql/errors';
import { createLogger } from '../../src/logger';
import { hashSecret } from '../../src/modules/api-key/api-key.service';
import { seedDemo } from '../../src/seeds/demo-seed';
import {
  CREATE_DATASET,
  CREATE_PROMPT,
  CREATE_USE_CASE,
  createDataset,
  createLoadedDataset,
  createProject,
  createUseCase,
  failure,
  IMPORT_ANNOTATIONS,
  IMPORT_PREDICTIONS,
  IMPORT_REPORTS,
  importAnnotations,
  importPredictions,
  jsonl,
  ok,
  predictionFields,
  RUN_PREDICTIONS,
  rowId,
  STANDARD_VARIABLES,
  UPDATE_USE_CASE,
  STANDARD_REFERENCE,
  standardPredictions,
} from '../support/graphql-fixtures';
import { startTestApp, type TestApp } from '../support/test-app';


const codeOf = (result: { errors?: { extensions?: Record<string, any> }[] }) => result.errors?.[0]?.extensions?.code ?? 'OK';

/** Waits until a statement matching `like` waits on a lock in this database (at most 5 s). */
async function waitForLockWait(t: TestApp, like: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const rows = (await t.dataSource.query(
      `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE $1`,
      [like],
    )) as unknown[];
    if (rows.length > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no statement like ${like} waited on a lock`);
}

describe('robustness of writes and inputs', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  describe('concurrent imports and use case updates', () => {
    it('two concurrent imports of runs of a new model both succeed, with one model', async () => {
      const project = await createProject(t, 'Concurrent model creation');
      const { datasetId } = await createLoadedDataset(t, project.id);
      const input = (name: string) => ({
        input: { datasetId, format: 'JSONL', layout: 'JSON_COLUMN', modelName: 'brand-new-model', name, content: standardPredictions(['G2', 'G3', 'G1', 'G1', 'G2']) },
      });
      const results = await Promise.all([1, 2, 3, 4].map((i) => t.gql(IMPORT_PREDICTIONS, input(`run ${i}`))));
      expect(results.map(codeOf)).toEqual(['OK', 'OK', 'OK', 'OK']);
      expect(new Set(results.map((r) => r.data!.importPredictions.run.model.id)).size).toBe(1);
    });

    it('importAnnotations racing updateUseCase is refused with CONFLICT, not a 500', async () => {
      const project = await createProject(t, 'Annotations vs update');
      const { useCase, datasetId } = await createLoadedDataset(t, project.id);
      // Holds the dataset row the way a concurrent importReports into the same dataset does.
      const runner = t.dataSource.createQueryRunner();
      await runner.connect();
      await runner.startTransaction();
      await runner.query('SELECT id FROM datasets WHERE id = $1 FOR UPDATE', [rowId(datasetId)]);
      const pending = t.gql(IMPORT_ANNOTATIONS, { input: { datasetId, annotatorName: 'Consensus', isReference: true, format: 'CSV', content: STANDARD_REFERENCE } });
      await waitForLockWait(t, '%FROM datasets WHERE id = $1 FOR UPDATE%');
      // Meanwhile the variable "mitoses" is dropped (its annotations would cascade away).
      ok(await t.gql(UPDATE_USE_CASE, { input: { id: useCase.id, variables: STANDARD_VARIABLES.filter((v) => v.key !== 'mitoses') } }));
      await runner.commitTransaction();
      await runner.release();
      const error = failure(await pending, 'CONFLICT');
      expect(error.message).toMatch(/changed during the import; import again/);
      expect(Number((await t.dataSource.query('SELECT count(*) AS n FROM annotations WHERE dataset_id = $1', [rowId(datasetId)]))[0].n)).toBe(0);
      // Imported again, under the new variables, it goes through.
      ok(await t.gql(IMPORT_ANNOTATIONS, { input: { datasetId, annotatorName: 'Consensus', format: 'CSV', content: STANDARD_REFERENCE.replace(/,[^,\n]*\n/g, '\n') } }));
    });

    it('importPredictions normalised before a use case change is refused with CONFLICT', async () => {
      const project = await createProject(t, 'Predictions vs update');
      const { useCase, datasetId } = await createLoadedDataset(t, project.id);
      // Plays updateUseCase: holds the use case row, changes the rules, commits.
      const runner = t.dataSource.createQueryRunner();
      await runner.connect();
      await runner.startTransaction();
      await runner.query('SELECT id FROM use_cases WHERE id = $1 FOR UPDATE', [rowId(useCase.id)]);
      const pending = t.gql(IMPORT_PREDICTIONS, {
        input: { datasetId, format: 'JSONL', layout: 'JSON_COLUMN', modelName: 'm1', content: standardPredictions(['G2', 'G3', 'G1', 'G1', 'G2']) },
      });
      await waitForLockWait(t, '%FROM use_cases WHERE id = $1 FOR SHARE%');
      await runner.query(`UPDATE variables SET options = '["G1","G2","G3","G4","Not specified"]' WHERE use_case_id = $1 AND key = 'grade'`, [rowId(useCase.id)]);
      await runner.query('UPDATE use_cases SET updated_at = now() WHERE id = $1', [rowId(useCase.id)]);
      await runner.commitTransaction();
      await runner.release();
      failure(await pending, 'CONFLICT');
      expect(Number((await t.dataSource.query('SELECT count(*) AS n FROM runs WHERE dataset_id = $1', [rowId(datasetId)]))[0].n)).toBe(0);
    });

    it('updateUseCase waits for an import that holds the use case, then renormalises its values', async () => {
      const project = await createProject(t, 'Update waits for import');
      const { useCase, datasetId } = await createLoadedDataset(t, project.id);
      // Plays an import inside its transaction: share lock on the use case, values written.
      const annotator = await importAnnotations(t, datasetId, 'A', 'CSV', 'id,grade\nR1,graad 1\n');
      const runner = t.dataSource.createQueryRunner();
      await runner.connect();
      await runner.startTransaction();
      await runner.query('SELECT id FROM use_cases WHERE id = $1 FOR SHARE', [rowId(useCase.id)]);
      await runner.query(`UPDATE annotations SET raw = '"graad 3"', value = '"G3"' WHERE annotator_id = $1`, [rowId(annotator.annotator.id)]);
      const variables = STANDARD_VARIABLES.map((v) => (v.key === 'grade' ? { ...v, aliases: { 'graad 1': 'G1', 'graad 2': 'G2', 'graad 3': 'G2' } } : v));
      const pending = t.gql(UPDATE_USE_CASE, { input: { id: useCase.id, variables } });
      await waitForLockWait(t, '%FROM use_cases WHERE id = $1 FOR UPDATE%');
      await runner.commitTransaction();
      await runner.release();
      ok(await pending);
      // The update saw the import's value and normalised it under the new aliases.
      const [row] = (await t.dataSource.query('SELECT value FROM annotations WHERE annotator_id = $1', [rowId(annotator.annotator.id)])) as { value: unknown }[];
      expect(row!.value).toBe('G2');
    });
  });

  it('importReports into a large dataset (130 000 reports) works and continues the ordinals', async () => {
    const project = await createProject(t, 'Large dataset');
    const useCase = await createUseCase(t, project.id);
    const datasetId = await createDataset(t, useCase.id);
    await t.dataSource.query(
      `INSERT INTO reports (project_id, dataset_id, ordinal, external_id, text)
       SELECT $1, $2, g, 'X' || g, 'report' FROM generate_series(0, 129999) g`,
      [rowId(project.id), rowId(datasetId)],
    );
    const result = ok(await t.gql(IMPORT_REPORTS, { input: { datasetId, format: 'JSONL', content: jsonl([{ id: 'new', text: 'one more' }]) } }));
    expect(result.importReports.inserted).toBe(1);
    const [row] = (await t.dataSource.query(`SELECT ordinal FROM reports WHERE dataset_id = $1 AND external_id = 'new'`, [rowId(datasetId)])) as { ordinal: number }[];
    expect(row!.ordinal).toBe(130000);
    // A duplicate among the existing ids is still found.
    const duplicate = failure(await t.gql(IMPORT_REPORTS, { input: { datasetId, format: 'JSONL', content: jsonl([{ id: 'X129999', text: 'again' }]) } }), 'BAD_USER_INPUT');
    expect(duplicate.extensions?.rowErrors[0].reason).toMatch(/already in the dataset/);
  });

  it('re-importing an annotator without kind keeps its kind; a new one without kind is HUMAN', async () => {
    const project = await createProject(t, 'Annotator kind');
    const { datasetId } = await createLoadedDataset(t, project.id);
    await importAnnotations(t, datasetId, 'Consensus', 'CSV', STANDARD_REFERENCE, { isReference: true, kind: 'CONSENSUS' });
    const fixed = await t.gql(IMPORT_ANNOTATIONS, { input: { datasetId, annotatorName: 'Consensus', format: 'CSV', content: 'id,grade\nR1,G3\n' } });
    expect(ok(fixed).importAnnotations.annotator.kind).toBe('CONSENSUS');
    const human = await t.gql(IMPORT_ANNOTATIONS, { input: { datasetId, annotatorName: 'Reader 1', format: 'CSV', content: 'id,grade\nR1,G3\n' } });
    expect(ok(human).importAnnotations.annotator.kind).toBe('HUMAN');
    // Given explicitly, the kind changes.
    const changed = await t.gql(IMPORT_ANNOTATIONS, { input: { datasetId, annotatorName: 'Reader 1', kind: 'CONSENSUS', format: 'CSV', content: 'id,grade\nR1,G3\n' } });
    expect(ok(changed).importAnnotations.annotator.kind).toBe('CONSENSUS');
  });

  describe('NUL characters and overlong names', () => {
    it('a NUL character in an imported report text, metadata or id is a row error', async () => {
      const project = await createProject(t, 'NUL reports');
      const useCase = await createUseCase(t, project.id);
      const datasetId = await createDataset(t, useCase.id);
      const content = jsonl([
        { id: 'R1', text: 'Breslow 1,4 mm\u0000' },
        { id: 'R2', text: 'ok', note: 'a\u0000b' },
        { id: 'R3\u0000', text: 'ok' },
        { id: 'R4', text: 'ok', nested: { 'k\u0000': 1 } },
        { id: 'R5', text: 'fine' },
      ]);
      const error = failure(await t.gql(IMPORT_REPORTS, { input: { datasetId, format: 'JSONL', content } }), 'BAD_USER_INPUT');
      const rows = error.extensions?.rowErrors as { row: number; reason: string }[];
      expect(rows.map((r) => r.row)).toEqual([1, 2, 3, 4]);
      for (const r of rows) expect(r.reason).toMatch(/contains a NUL character/);
      // CSV content with a literal NUL byte in a cell.
      const csvError = failure(await t.gql(IMPORT_REPORTS, { input: { datasetId, format: 'CSV', content: 'id,text\nR1,"a\u0000b"\n' } }), 'BAD_USER_INPUT');
      expect(csvError.extensions?.rowErrors[0].reason).toMatch(/contains a NUL character/);
    });

    it('a NUL character in an annotation value is a row error; in an annotator name BAD_USER_INPUT', async () => {
      const project = await createProject(t, 'NUL annotations');
      const { datasetId } = await createLoadedDataset(t, project.id);
      const value = failure(
        await t.gql(IMPORT_ANNOTATIONS, { input: { datasetId, annotatorName: 'x', format: 'JSONL', content: '{"id":"R1","site":"a\\u0000b"}\n{"id":"R2","organs":["lung\\u0000"]}' } }),
        'BAD_USER_INPUT',
      );
      expect(value.extensions?.rowErrors).toEqual([
        { row: 1, field: 'site', reason: 'site: contains a NUL character' },
        { row: 2, field: 'organs', reason: 'organs: contains a NUL character' },
      ]);
      const name = failure(
        await t.gql(IMPORT_ANNOTATIONS, { input: { datasetId, annotatorName: 'x\u0000', format: 'JSONL', content: '{"id":"R1","grade":"G1"}' } }),
        'BAD_USER_INPUT',
      );
      expect(name.message).toBe('annotatorName contains a NUL character');
      expect(name.extensions?.field).toBe('annotatorName');
    });

    it('NUL characters in imported model output are removed, and the output is parsed without them', async () => {
      const project = await createProject(t, 'NUL predictions');
      const { datasetId } = await createLoadedDataset(t, project.id);
      const raw = await importPredictions(t, datasetId, {
        format: 'JSONL',
        layout: 'RAW_OUTPUT',
        modelName: 'm',
        content: jsonl([{ id: 'R1', raw_output: '{"grade":"G1\u0000","site":"arm"}\u0000', finish_reason: 'stop\u0000' }]),
      });
      const column = await importPredictions(t, datasetId, {
        format: 'JSONL',
        layout: 'JSON_COLUMN',
        modelName: 'm',
        reasoningField: 'why',
        content: jsonl([{ id: 'R1', extracted_data: { grade: 'G2\u0000', 'site\u0000': 'leg' }, why: 'because\u0000' }]),
      });
      const rawRun = ok(await t.gql(RUN_PREDICTIONS, { id: raw.run.id })).node.predictions.nodes[0];
      expect(rawRun.raw).toBe('{"grade":"G1","site":"arm"}');
      expect(rawRun.finishReason).toBe('stop');
      expect((await predictionFields(t, raw.run.id)).R1!.grade!.value).toBe('G1');
      const columnRun = ok(await t.gql(RUN_PREDICTIONS, { id: column.run.id })).node.predictions.nodes[0];
      expect(columnRun.parsed).toEqual({ grade: 'G2', site: 'leg' });
      expect(columnRun.reasoning).toBe('because');
      const fields = (await predictionFields(t, column.run.id)).R1!;
      expect([fields.grade!.value, fields.site!.value]).toEqual(['G2', 'leg']);
    });

    it('a NUL character in any argument (names, JSON values, search strings) is BAD_USER_INPUT', async () => {
      const project = await createProject(t, 'NUL arguments');
      const { useCase, datasetId } = await createLoadedDataset(t, project.id);
      const cases: [string, string, Record<string, unknown>, string][] = [
        [
          'predictions model name',
          IMPORT_PREDICTIONS,
          { input: { datasetId, format: 'JSONL', layout: 'JSON_COLUMN', modelName: 'm\u0000', content: '{"id":"R1","extracted_data":{}}' } },
          'modelName',
        ],
        [
          'predictions config',
          IMPORT_PREDICTIONS,
          { input: { datasetId, format: 'JSONL', layout: 'JSON_COLUMN', modelName: 'm', config: { a: ['x\u0000'] }, content: '{"id":"R1","extracted_data":{}}' } },
          'config.a[0]',
        ],
        [
          'variable default',
          CREATE_USE_CASE,
          { input: { projectId: project.id, name: 'nul default', variables: [{ key: 'a', type: 'FREE_TEXT', default: 'x\u0000' }] } },
          'variables[0].default',
        ],
        ['use case name', CREATE_USE_CASE, { input: { projectId: project.id, name: 'a\u0000', variables: STANDARD_VARIABLES } }, 'name'],
        ['dataset name', CREATE_DATASET, { input: { useCaseId: useCase.id, name: 'd\u0000' } }, 'name'],
        ['report metadata field list', IMPORT_REPORTS, { input: { datasetId, format: 'JSONL', content: '{"id":"Z","text":"t"}', metadataFields: ['a\u0000'] } }, 'metadataFields[0]'],
      ];
      for (const [what, document, variables, field] of cases) {
        const error = failure(await t.gql(document, variables), 'BAD_USER_INPUT');
        expect([what, error.extensions?.field]).toEqual([what, field]);
        expect(error.message).toMatch(/contains a NUL character/);
      }
      const search = await t.gql(`query ($p: ID!, $s: String) { project(id: $p) { useCases(search: $s) { totalCount } } }`, { p: project.id, s: 'mel\u0000' });
      expect(codeOf(search)).toBe('BAD_USER_INPUT');
    });

    it('names, keys and external ids over 500 characters are BAD_USER_INPUT (500 is accepted)', async () => {
      const project = await createProject(t, 'Long names');
      const { useCase, datasetId } = await createLoadedDataset(t, project.id);
      const long = 'n'.repeat(501);
      const cases: [string, string, Record<string, unknown>, string][] = [
        ['use case name', CREATE_USE_CASE, { input: { projectId: project.id, name: long, variables: STANDARD_VARIABLES } }, 'name'],
        ['variable key', CREATE_USE_CASE, { input: { projectId: project.id, name: 'long key', variables: [{ key: long, type: 'FREE_TEXT' }] } }, 'variables[0].key'],
        ['use case rename', UPDATE_USE_CASE, { input: { id: useCase.id, name: long } }, 'name'],
        ['dataset name', CREATE_DATASET, { input: { useCaseId: useCase.id, name: long } }, 'name'],
        ['annotator name', IMPORT_ANNOTATIONS, { input: { datasetId, annotatorName: long, format: 'CSV', content: 'id,grade\nR1,G1\n' } }, 'annotatorName'],
        ['prompt name', CREATE_PROMPT, { input: { useCaseId: useCase.id, name: long } }, 'name'],
        [
          'imported model name',
          IMPORT_PREDICTIONS,
          { input: { datasetId, format: 'JSONL', layout: 'JSON_COLUMN', modelName: long, content: '{"id":"R1","extracted_data":{}}' } },
          'modelName',
        ],
        [
          'endpoint name',
          `mutation ($input: RegisterEndpointInput!) { registerEndpoint(input: $input) { endpoint { id } } }`,
          { input: { projectId: project.id, name: long, baseUrl: 'http://127.0.0.1:9/v1' } },
          'name',
        ],
      ];
      for (const [what, document, variables, field] of cases) {
        const error = failure(await t.gql(document, variables), 'BAD_USER_INPUT');
        expect([what, error.extensions?.field]).toEqual([what, field]);
        expect(error.message).toMatch(/longer than 500 characters/);
      }
      const huge = failure(
        await t.gql(IMPORT_REPORTS, { input: { datasetId, format: 'JSONL', content: JSON.stringify({ id: 'x'.repeat(3_000_000), text: 't' }) } }),
        'BAD_USER_INPUT',
      );
      expect(huge.extensions?.rowErrors[0]).toMatchObject({ row: 1, field: 'id', reason: "id in field 'id' is longer than 500 characters" });
      // At the limit, names and ids are stored.
      ok(await t.gql(CREATE_DATASET, { input: { useCaseId: useCase.id, name: 'd'.repeat(500) } }));
      ok(await t.gql(IMPORT_REPORTS, { input: { datasetId, format: 'JSONL', content: JSON.stringify({ id: 'x'.repeat(500), text: 't' }) } }));
    });

    it('updateModel(supportsThinking: null) is BAD_USER_INPUT, not an internal error', async () => {
      const project = await createProject(t, 'Model update null');
      const { datasetId } = await createLoadedDataset(t, project.id);
      const run = await importPredictions(t, datasetId, { format: 'JSONL', layout: 'JSON_COLUMN', modelName: 'm1', content: standardPredictions(['G2', 'G3', 'G1', 'G1', 'G2']) });
      const update = `mutation ($i: UpdateModelInput!) { updateModel(input: $i) { model { supportsThinking family } } }`;
      const error = failure(await t.gql(update, { i: { id: run.run.model.id, supportsThinking: null } }), 'BAD_USER_INPUT');
      expect(error.extensions?.field).toBe('supportsThinking');
      // Left out, it stays as it is.
      expect(ok(await t.gql(update, { i: { id: run.run.model.id, family: 'llama' } })).updateModel.model).toEqual({ supportsThinking: false, family: 'llama' });
    });

    it('odd inputs to imports and creates never give INTERNAL_SERVER_ERROR', async () => {
      const project = await createProject(t, 'Fuzz');
      const { datasetId } = await createLoadedDataset(t, project.id);
      const cases: [string, string, Record<string, unknown>][] = [
        ['reports empty delimiter', IMPORT_REPORTS, { datasetId, format: 'CSV', content: 'id,text\na,b\n', delimiter: '' }],
        ['reports newline delimiter', IMPORT_REPORTS, { datasetId, format: 'CSV', content: 'id,text\na,b\n', delimiter: '\n' }],
        ['reports long delimiter', IMPORT_REPORTS, { datasetId, format: 'CSV', content: 'id,text\na,b\n', delimiter: 'abc' }],
        ['reports quote delimiter', IMPORT_REPORTS, { datasetId, format: 'CSV', content: 'id,text\na,b\n', delimiter: '"' }],
        ['reports empty id field', IMPORT_REPORTS, { datasetId, format: 'JSONL', content: '{"":"x","text":"t"}', idField: '' }],
        ['reports JSON object', IMPORT_REPORTS, { datasetId, format: 'JSON', content: '{"id":"x","text":"t"}' }],
        ['reports __proto__ metadata', IMPORT_REPORTS, { datasetId, format: 'JSONL', content: '{"id":"p1","text":"t","__proto__":{"a":1}}' }],
        ['reports huge id', IMPORT_REPORTS, { datasetId, format: 'JSONL', content: JSON.stringify({ id: 'x'.repeat(3_000_000), text: 't' }) }],
        ['reports number id 1e400', IMPORT_REPORTS, { datasetId, format: 'JSON', content: '[{"id": 1e400, "text":"t"}]' }],
        ['annotations column map not object', IMPORT_ANNOTATIONS, { datasetId, annotatorName: 'x', format: 'CSV', content: 'id,grade\nR1,G1\n', columnMap: 'grade' }],
        ['annotations column map number', IMPORT_ANNOTATIONS, { datasetId, annotatorName: 'x', format: 'CSV', content: 'id,grade\nR1,G1\n', columnMap: { grade: 5 } }],
        ['annotations NUL', IMPORT_ANNOTATIONS, { datasetId, annotatorName: 'x', format: 'JSONL', content: '{"id":"R1","site":"a\\u0000b"}' }],
        ['annotations name NUL', IMPORT_ANNOTATIONS, { datasetId, annotatorName: 'x\u0000', format: 'JSONL', content: '{"id":"R1","grade":"G1"}' }],
        ['predictions column map array', IMPORT_PREDICTIONS, { datasetId, format: 'CSV', layout: 'WIDE', modelName: 'm', content: 'id,grade\nR1,G1\n', columnMap: ['grade'] }],
        ['predictions config string', IMPORT_PREDICTIONS, { datasetId, format: 'JSONL', layout: 'JSON_COLUMN', modelName: 'm', content: '{"id":"R1","extracted_data":{}}', config: 'abc' }],
        ['predictions deep python', IMPORT_PREDICTIONS, { datasetId, format: 'JSONL', layout: 'JSON_COLUMN', modelName: 'm', content: JSON.stringify({ id: 'R1', extracted_data: '['.repeat(100000) }) }],
        ['predictions deep json', IMPORT_PREDICTIONS, { datasetId, format: 'JSONL', layout: 'RAW_OUTPUT', modelName: 'm', content: JSON.stringify({ id: 'R1', raw_output: '{"a":'.repeat(50000) }) }],
        ['predictions raw NUL', IMPORT_PREDICTIONS, { datasetId, format: 'JSONL', layout: 'RAW_OUTPUT', modelName: 'm', content: JSON.stringify({ id: 'R1', raw_output: '{"grade":"G1"}\u0000' }) }],
        ['predictions model NUL', IMPORT_PREDICTIONS, { datasetId, format: 'JSONL', layout: 'JSON_COLUMN', modelName: 'm\u0000', content: '{"id":"R1","extracted_data":{}}' }],
        ['use case default NUL', CREATE_USE_CASE, { projectId: project.id, name: 'nul default', variables: [{ key: 'a', type: 'FREE_TEXT', default: 'x\u0000' }] }],
        ['use case key __proto__', CREATE_USE_CASE, { projectId: project.id, name: 'proto', variables: [{ key: '__proto__', type: 'FREE_TEXT' }] }],
        ['use case aliases deep', CREATE_USE_CASE, { projectId: project.id, name: 'deep', variables: [{ ...STANDARD_VARIABLES[0], aliases: { x: 'G1', y: { z: 1 } } }] }],
      ];
      const internal: string[] = [];
      for (const [name, document, input] of cases) {
        const result = await t.gql(document, { input });
        if (codeOf(result) === 'INTERNAL_SERVER_ERROR' || result.status >= 500) internal.push(name);
      }
      expect(internal).toEqual([]);
    });
  });
});

describe('masked errors in the log', () => {
  it('log the name, message, SQLSTATE and stack of a failed query, never its parameters', () => {
    const lines: string[] = [];
    const logger = pino(
      { level: 'error' },
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          lines.push(chunk.toString());
          done();
        },
      }),
    );
    const format = createErrorFormatter((correlationId, error) => logger.error({ correlationId, err: error }, 'unexpected error'));
    const driverError = Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), { code: '22021', detail: 'Patient J. Jansen' });
    const failed = new QueryFailedError('INSERT INTO reports (text) SELECT unnest($1::text[])', [['Patient J. Jansen, melanoma']], driverError);
    const graphqlError = new GraphQLError(failed.message, { originalError: failed });
    const formatted = format({ message: failed.message }, graphqlError);
    expect(formatted.extensions?.code).toBe('INTERNAL_SERVER_ERROR');
    expect(lines).toHaveLength(1);
    const logged = JSON.parse(lines[0]!) as { err: Record<string, unknown>; correlationId: string };
    expect(logged.correlationId).toBe(formatted.extensions?.correlationId);
    expect(logged.err).toMatchObject({ name: 'QueryFailedError', message: 'invalid byte sequence for encoding "UTF8": 0x00', code: '22021' });
    expect(logged.err.stack).toEqual(expect.stringContaining('QueryFailedError'));
    expect(lines[0]).not.toContain('Jansen');
    expect(lines[0]).not.toContain('parameters');
  });
});

describe('start-up races', () => {
  it('two servers seeding one empty database at the same time make one demo project', async () => {
    const t = await startTestApp();
    try {
      const logger = createLogger('silent');
      const seeded = await Promise.all([seedDemo(t.dataSource, t.services, logger), seedDemo(t.dataSource, t.services, logger)]);
      expect(seeded.filter((p) => p !== null)).toHaveLength(1);
      expect(Number((await t.dataSource.query('SELECT count(*) AS n FROM projects'))[0].n)).toBe(1);
    } finally {
      await t.close();
    }
  });

  it('ensureServerAdmin tolerates another process inserting the same ADMIN_API_KEY first', async () => {
    const t = await startTestApp();
    try {
      const secret = 'rql_shared_admin_key_of_two_servers_0123456789';
      // The other process: its insert of the same key, not yet committed.
      const runner = t.dataSource.createQueryRunner();
      await runner.connect();
      await runner.startTransaction();
      await runner.query(`INSERT INTO api_keys (server_admin, name, prefix, secret_hash) VALUES (true, 'other', $1, $2)`, [secret.slice(0, 12), hashSecret(secret)]);
      const pending = t.services.apiKeys.ensureServerAdmin(secret);
      await waitForLockWait(t, '%INSERT INTO "api_keys"%');
      await runner.commitTransaction();
      await runner.release();
      await expect(pending).resolves.toBeNull();
      expect(Number((await t.dataSource.query('SELECT count(*) AS n FROM api_keys WHERE secret_hash = $1', [hashSecret(secret)]))[0].n)).toBe(1);
    } finally {
      await t.close();
    }
  });

  describe('the embedded database of a DATA_DIR', () => {
    let dir: string;
    let fakePostgres: string;
    const children: ChildProcess[] = [];
    const orphans: number[] = [];
    beforeAll(() => {
      dir = mkdtempSync(path.join(os.tmpdir(), 'reportql-orphan-'));
      // A process whose command name starts with "postgres", as the pid check expects.
      fakePostgres = path.join(dir, 'postgres');
      copyFileSync('/bin/sleep', fakePostgres);
    });
    afterAll(() => {
      for (const child of children) child.kill('SIGKILL');
      for (const pid of orphans) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      rmSync(dir, { recursive: true, force: true });
    });
    /** Running: not gone and not a zombie waiting for PID 1 to reap it. */
    const alive = (pid: number) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
      } catch {
        return false;
      }
    };

    it('keeps the cluster under DATA_DIR: as root, a DATA_DIR the postgres user cannot reach is refused with what to do', async () => {
      const locked = path.join(dir, 'locked');
      await mkdir(locked, { mode: 0o700 });
      const dataDir = path.join(locked, 'data');
      if (process.getuid?.() === 0) {
        expect(await unreachableByPostgres(dataDir)).toBe(locked);
        const attempt = startEmbeddedPostgres({ dir: dataDir, database: 'x' });
        await expect(attempt).rejects.toThrow(EmbeddedPostgresError);
        await expect(startEmbeddedPostgres({ dir: dataDir, database: 'x' })).rejects.toThrow(/cannot enter .*locked.*Choose a DATA_DIR/);
        // nothing was created in the temporary folder instead (where earlier versions moved it)
        const moved = path.join(os.tmpdir(), `reportql-pg-${createHash('sha256').update(path.resolve(dataDir)).digest('hex').slice(0, 16)}`);
        expect(existsSync(moved)).toBe(false);
        expect(existsSync(path.join(dataDir, 'pg'))).toBe(false);
      } else {
        // not root: postgres runs as this user, which owns the folder
        expect(await unreachableByPostgres(dataDir)).toBeNull();
      }
    });

    /**
     * Runs `script` (with `dir` as its argument) in a child process and collects its standard
     * output; `react(output, child)` is called with all of it so far after every chunk and may
     * append to it. embedded-postgres is an ES module: it runs in a child process, outside
     * jest's module system. Resolves with the exit code and the output.
     */
    const runScript = async (script: string, react: (output: string, child: ChildProcess) => string): Promise<{ code: number | null; output: string }> => {
      // mkdtemp makes a folder only its owner may enter: open it for the postgres user
      chmodSync(dir, 0o755);
      const child = spawn(process.execPath, ['-r', './tests/support/ts-register.js', '-e', script, dir], { cwd: path.resolve(__dirname, '../..'), stdio: ['ignore', 'pipe', 'inherit'] });
      children.push(child);
      let output = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        output = react(output + String(chunk), child);
      });
      const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
      return { code, output };
    };

    it('tells its owner when postgres dies under it, and not when it was stopped', async () => {
      const script = `
        const { startEmbeddedPostgres } = require('./src/db/embedded-postgres.ts');
        const fs = require('node:fs');
        (async () => {
          const calm = await startEmbeddedPostgres({ dir: process.argv[1] + '/stops', database: 'x', onUnexpectedExit: () => console.log('unexpected exit after stop') });
          await calm.stop();
          const db = await startEmbeddedPostgres({ dir: process.argv[1] + '/dies', database: 'x', onUnexpectedExit: (code, signal) => { console.log('exit ' + signal); process.exit(0); } });
          console.log('pid ' + fs.readFileSync(db.clusterDirectory + '/postmaster.pid', 'utf8').split('\\n')[0]);
        })();`;
      const { code, output } = await runScript(script, (output) => {
        const pid = /pid (\d+)/.exec(output)?.[1];
        if (!pid || output.includes('killed')) return output;
        process.kill(Number(pid), 'SIGKILL');
        return output + 'killed\n';
      });
      expect(code).toBe(0);
      expect(output).toContain('exit SIGKILL');
      expect(output).not.toContain('unexpected exit after stop');
    });

    it('leaves SIGTERM to its owner when asked, who can still use the database before stopping it', async () => {
      // The owner's SIGTERM handler queries the database after a pause, then stops it. With the
      // library's listeners kept, they stop the cluster at once and exit the process (143); on a
      // loaded machine their stop outlasts the pause and the owner's query is refused first
      // ("the database system is shutting down", exit 1). Either way the owner never gets it.
      const run = async (handlesSignals: boolean) => {
        const script = `
          const { startEmbeddedPostgres } = require('./src/db/embedded-postgres.ts');
          const { Client } = require('pg');
          (async () => {
            const db = await startEmbeddedPostgres({ dir: process.argv[1] + '/signals-${handlesSignals}', database: 'x', handlesSignals: ${handlesSignals} });
            process.on('SIGTERM', async () => {
              await new Promise((resolve) => setTimeout(resolve, 500));
              const client = new Client({ connectionString: db.url });
              await client.connect();
              console.log('query ' + (await client.query('SELECT 1 AS one')).rows[0].one);
              await client.end();
              await db.stop();
              console.log('stopped');
              process.exit(0);
            });
            console.log('ready');
          })();`;
        return runScript(script, (output, child) => {
          if (!output.includes('ready') || output.includes('sent')) return output;
          child.kill('SIGTERM');
          return output + 'sent\n';
        });
      };
      const owned = await run(true);
      expect(owned).toEqual({ code: 0, output: 'ready\nsent\nquery 1\nstopped\n' });
      const library = await run(false);
      expect([1, 143]).toContain(library.code);
      expect(library.output).not.toContain('query 1');
    });

    it('refuses to stop a postgres whose parent process is alive', async () => {
      const child = spawn(fakePostgres, ['60'], { stdio: 'ignore' });
      children.push(child);
      const dataDir = path.join(dir, 'live');
      await mkdir(dataDir);
      writeFileSync(path.join(dataDir, 'postmaster.pid'), `${child.pid}\n${dataDir}\n`);
      expect(await parentPid(child.pid!)).toBe(process.pid);
      const attempt = stopOrphan(dataDir);
      await expect(attempt).rejects.toThrow(EmbeddedPostgresError);
      await expect(stopOrphan(dataDir)).rejects.toThrow(`another process (pid ${process.pid}) is using the embedded database in DATA_DIR`);
      expect(alive(child.pid!)).toBe(true);
    });

    it('stops a postgres whose parent is gone (adopted by PID 1)', async () => {
      // An intermediate process starts it and exits: it is orphaned.
      const starter = `const c = require('node:child_process').spawn(${JSON.stringify(fakePostgres)}, ['60'], { detached: true, stdio: 'ignore' }); c.unref(); console.log(c.pid);`;
      const pid = Number.parseInt(execFileSync(process.execPath, ['-e', starter], { encoding: 'utf8' }), 10);
      orphans.push(pid);
      for (let i = 0; i < 100 && (await parentPid(pid)) !== 1; i++) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await parentPid(pid)).toBe(1);
      const dataDir = path.join(dir, 'orphan');
      await mkdir(dataDir);
      writeFileSync(path.join(dataDir, 'postmaster.pid'), `${pid}\n${dataDir}\n`);
      await stopOrphan(dataDir);
      expect(alive(pid)).toBe(false);
    });
  });
});
