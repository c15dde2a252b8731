import {
  createDataset,
  createLoadedDataset,
  createProjectWithKeys,
  createUseCase,
  csv,
  IMPORT_ANNOTATIONS,
  IMPORT_PREDICTIONS,
  IMPORT_REPORTS,
  jsonl,
  ok,
  rowId,
  type ProjectKeys,
} from '../support/graphql-fixtures';
import { startTestApp, type GraphQLResponse, type TestApp } from '../support/test-app';

const CZECH_DUTCH = 'Česká přítomnost metastáz, één geïnfiltreerd';

describe('imports as multipart uploads', () => {
  let t: TestApp;
  let a: ProjectKeys;

  beforeAll(async () => {
    t = await startTestApp();
    a = await createProjectWithKeys(t, 'Upload project');
  });
  afterAll(() => t.close());

  /** A GraphQL multipart request (operations, map, one file part) with `file` set to the bytes. */
  async function upload(query: string, input: Record<string, unknown>, bytes: Uint8Array<ArrayBuffer> | string, key: string = t.adminKey): Promise<GraphQLResponse> {
    const form = new FormData();
    form.append('operations', JSON.stringify({ query, variables: { input: { ...input, file: null } } }));
    form.append('map', JSON.stringify({ 0: ['variables.input.file'] }));
    form.append('0', new Blob([bytes]), 'file');
    const response = await fetch(t.url, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'apollo-require-preflight': 'true' },
      body: form,
    });
    return { status: response.status, ...((await response.json()) as object) };
  }

  async function reportCount(datasetId: string): Promise<number> {
    const [{ n }] = (await t.dataSource.query('SELECT count(*)::int AS n FROM reports WHERE dataset_id = $1', [rowId(datasetId)])) as [{ n: number }];
    return n;
  }

  it('imports reports from an uploaded file in each format, text and diacritics exact', async () => {
    const useCase = await createUseCase(t, a.id);
    const rows = Array.from({ length: 3000 }, (_, i) => ({ id: `U${i}`, text: `${CZECH_DUTCH} ${'y'.repeat(300)} ${i}\r\nnext line`, site: `s${i % 4}` }));
    const files = {
      CSV: `\uFEFF${csv([['id', 'text', 'site'], ...rows.map((r) => [r.id, r.text, r.site])])}`,
      JSON: JSON.stringify(rows),
      JSONL: jsonl(rows),
    };
    for (const [format, content] of Object.entries(files)) {
      const datasetId = await createDataset(t, useCase.id, `upload ${format}`);
      const result = ok(await upload(IMPORT_REPORTS, { datasetId, format }, content)).importReports;
      expect(result).toMatchObject({ inserted: rows.length, updated: 0, dataset: { reportCount: rows.length } });
      const stored = (await t.dataSource.query('SELECT external_id, text, metadata FROM reports WHERE dataset_id = $1 ORDER BY ordinal', [rowId(datasetId)])) as {
        external_id: string;
        text: string;
        metadata: Record<string, unknown>;
      }[];
      expect(stored.length).toBe(rows.length);
      // Multi-byte characters split across the upload's chunks arrive whole.
      expect(stored.every((r, i) => r.external_id === rows[i]!.id && r.text === rows[i]!.text && r.metadata['site'] === rows[i]!.site)).toBe(true);
    }
  });

  it('rejects a bad upload naming the row, writing nothing; and bytes that are not UTF-8', async () => {
    const useCase = await createUseCase(t, a.id);
    const datasetId = await createDataset(t, useCase.id, 'bad upload');
    const rows = Array.from({ length: 4000 }, (_, i) => ({ id: `B${i}`, text: `report ${i} ${'z'.repeat(400)}` }));
    rows.push({ id: 'B7', text: 'repeated id on the last row' });
    const duplicate = await upload(IMPORT_REPORTS, { datasetId, format: 'JSONL' }, jsonl(rows));
    expect(duplicate.errors?.[0]?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      rowErrors: [{ row: 4001, line: 4001, field: 'id', reason: "duplicate external id 'B7' (also in row 8)" }],
    });
    expect(await reportCount(datasetId)).toBe(0);

    const good = new TextEncoder().encode('id,text\nX1,één\n');
    const broken = new Uint8Array([...good, 0x58, 0x32, 0x2c, 0xc3, 0x28, 0x0a]);
    const invalid = await upload(IMPORT_REPORTS, { datasetId, format: 'CSV' }, broken);
    expect(invalid.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', rowErrors: [{ row: 0, reason: 'the file is not valid UTF-8' }] });
    expect(await reportCount(datasetId)).toBe(0);

    // content and file together, or neither, name the field.
    const both = await upload(IMPORT_REPORTS, { datasetId, format: 'CSV', content: 'id,text\nX,y\n' }, good);
    expect(both.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'file' });
    const neither = await t.gql(IMPORT_REPORTS, { input: { datasetId, format: 'CSV' } });
    expect(neither.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'content' });

    // After errors that left the upload unread, the server still answers (the body was drained).
    const viewerRefused = await upload(IMPORT_REPORTS, { datasetId, format: 'CSV' }, jsonl(rows), a.viewer);
    expect(viewerRefused.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    // Without the preflight header a multipart request is refused (a cross-site form post otherwise).
    const form = new FormData();
    form.append('operations', JSON.stringify({ query: IMPORT_REPORTS, variables: { input: { datasetId, format: 'CSV', file: null } } }));
    form.append('map', JSON.stringify({ 0: ['variables.input.file'] }));
    form.append('0', new Blob([jsonl(rows)]), 'file');
    const csrf = await fetch(t.url, { method: 'POST', headers: { authorization: `Bearer ${t.adminKey}` }, body: form });
    expect(csrf.status).toBe(400);
    // An operation naming a file the request does not hold.
    const missing = new FormData();
    missing.append('operations', JSON.stringify({ query: IMPORT_REPORTS, variables: { input: { datasetId, format: 'CSV', file: null } } }));
    missing.append('map', JSON.stringify({ 0: ['variables.input.file'] }));
    const noFile = (await (
      await fetch(t.url, { method: 'POST', headers: { authorization: `Bearer ${t.adminKey}`, 'apollo-require-preflight': 'true' }, body: missing })
    ).json()) as GraphQLResponse;
    expect(noFile.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'file' });
    expect(await reportCount(datasetId)).toBe(0);
    expect(ok(await upload(IMPORT_REPORTS, { datasetId, format: 'CSV' }, good)).importReports).toMatchObject({ inserted: 1 });
  });

  it('imports annotations and predictions from uploaded files', async () => {
    const { datasetId } = await createLoadedDataset(t, a.id);
    const annotations = ok(
      await upload(IMPORT_ANNOTATIONS, { datasetId, annotatorName: 'Dr. Upload', format: 'CSV' }, csv([['id', 'grade'], ['R1', 'G2'], ['R2', 'graad 3']])),
    ).importAnnotations;
    expect(annotations).toMatchObject({ reports: 2, values: 2 });
    const predictions = ok(
      await upload(
        IMPORT_PREDICTIONS,
        { datasetId, format: 'JSONL', layout: 'WIDE', modelName: 'org/upload-8b' },
        jsonl([
          { id: 'R1', grade: 'G2' },
          { id: 'R2', grade: 'G1' },
        ]),
      ),
    ).importPredictions;
    expect(predictions).toMatchObject({ imported: 2 });
  });

  it('a file rejected as a whole after a first chunk with problems answers with that one error, for annotations and predictions', async () => {
    const { datasetId } = await createLoadedDataset(t, a.id);
    // 1,200 records (~400 KB, several pieces of the upload): an unknown report in the first
    // chunk, bytes that are not UTF-8 after the first chunks were checked.
    const note = 'x'.repeat(300);
    const head = Buffer.from(jsonl([{ id: 'NOPE', grade: 'G1', note }, ...Array.from({ length: 1199 }, () => ({ id: 'R1', grade: 'G2', note }))]) + '\n');
    const bytes = new Uint8Array(Buffer.concat([head, Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d, 0x0a])]));
    const alone = [{ row: 0, reason: 'the file is not valid UTF-8' }];
    const annotations = await upload(IMPORT_ANNOTATIONS, { datasetId, annotatorName: 'never', format: 'JSONL' }, bytes);
    expect(annotations.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', rowErrors: alone });
    const predictions = await upload(IMPORT_PREDICTIONS, { datasetId, format: 'JSONL', layout: 'WIDE', modelName: 'org/never' }, bytes);
    expect(predictions.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', rowErrors: alone });
    const [{ n }] = (await t.dataSource.query('SELECT (SELECT count(*) FROM annotations WHERE dataset_id = $1) + (SELECT count(*) FROM runs WHERE dataset_id = $1) AS n', [
      rowId(datasetId),
    ])) as [{ n: string }];
    expect(Number(n)).toBe(0);
  });
});
