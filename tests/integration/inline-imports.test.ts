import { request } from 'node:http';
import { INLINE_FILE_MIN_BYTES, MAX_REQUEST_BYTES } from '../../src/app';
import { InlineFile } from '../../src/modules/imports/inline-file';
import {
  createDataset,
  createProjectWithKeys,
  createUseCase,
  csv,
  IMPORT_ANNOTATIONS,
  IMPORT_PREDICTIONS,
  IMPORT_REPORTS,
  importReports,
  jsonl,
  ok,
  rowId,
  type ProjectKeys,
  type UseCaseFixture,
} from '../support/graphql-fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * Files sent inline (`content`) in a body of at least INLINE_FILE_MIN_BYTES are kept as bytes of
 * the body and decoded piece by piece by the import (src/http/json-body.ts): these go through
 * HTTP with such bodies and check that the imports behave exactly as with a small body.
 */

/**
 * A report text dense with what a piece boundary must not break wherever it falls: escapes
 * (\n \t \" \\ and, in the body, \uXXXX and \/), two-, three- and four-byte characters, and
 * surrogate pairs written raw or as two escapes.
 */
function trickyText(i: number): string {
  const line = (k: number) => `Česká zpráva ${i}.${k}: "přítomnost" metastáz 😀 \\ tab\there/there € ${'é'.repeat((i + k) % 7)}\nřádek 🩺 Ž ${'x'.repeat((i + k) % 11)} ǅ 𝔘 end`;
  return [0, 1, 2].map(line).join('\r\n');
}

/**
 * The JSON body of `query` with `variables`, with some characters of its strings written as
 * JSON escapes instead of raw (every other emoji as an escaped surrogate pair, Č as \u010C, /
 * as \/), as another client's serializer might: JSON.parse reads the same values.
 */
function bodyOf(query: string, variables: Record<string, unknown>): string {
  let n = 0;
  return JSON.stringify({ query, variables })
    .replace(/😀/g, (m) => (n++ % 2 === 0 ? '\\ud83d\\ude00' : m))
    .replace(/Č/g, (m) => (n++ % 3 === 0 ? '\\u010C' : m))
    .replace(/\//g, '\\/')
    .replace(/^\{/, '{"extensions":{},');
}

interface Answer {
  status: number;
  json: { data?: Record<string, any>; errors?: { message: string; extensions?: Record<string, any> }[] };
}

describe('large request bodies: files sent inline as content', () => {
  let t: TestApp;
  let a: ProjectKeys;
  let useCase: UseCaseFixture;
  const N = 3500;
  const rows = Array.from({ length: N }, (_, i) => ({ id: `R${i}`, text: trickyText(i), site: i % 5 === 0 ? 'Brno' : 'Utrecht' }));
  const files: Record<'CSV' | 'JSON' | 'JSONL', string> = {
    CSV: `\uFEFF${csv([['id', 'text', 'site'], ...rows.map((r) => [r.id, r.text, r.site] as const)])}`,
    JSON: `\uFEFF${JSON.stringify(rows)}`,
    JSONL: `\uFEFF${jsonl(rows)}`,
  };

  async function post(body: string | Buffer, key: string = t.adminKey): Promise<Answer> {
    const response = await fetch(t.url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: body as unknown as string });
    return { status: response.status, json: (await response.json()) as Answer['json'] };
  }

  /**
   * Sends `head`, then `size - head.length` bytes of padding, as one body of `size` bytes; the
   * server may answer and close before it has all of it, so writing stops at its answer.
   */
  function postOversized(head: Buffer, size: number): Promise<Answer> {
    return new Promise((resolve, reject) => {
      let answered = false;
      const req = request(t.url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(size), authorization: `Bearer ${t.adminKey}` } }, (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Answer['json'] }));
      });
      req.on('error', (error) => {
        if (!answered) reject(error);
      });
      const block = Buffer.alloc(1 << 20, 'x');
      let left = size - head.length;
      req.write(head);
      const more = (): void => {
        while (left > 0 && !answered && !req.destroyed) {
          const piece = block.subarray(0, Math.min(block.length, left));
          left -= piece.length;
          if (!req.write(piece)) return void req.once('drain', more);
        }
        if (left === 0) req.end();
      };
      more();
    });
  }

  async function storedTexts(datasetId: string): Promise<{ external_id: string; text: string; metadata: Record<string, unknown> }[]> {
    return t.dataSource.query('SELECT external_id, text, metadata FROM reports WHERE dataset_id = $1 ORDER BY ordinal', [rowId(datasetId)]);
  }

  beforeAll(async () => {
    t = await startTestApp();
    a = await createProjectWithKeys(t, 'Inline files');
    useCase = await createUseCase(t, a.id, { name: 'Inline', language: 'cs' });
  });
  afterAll(() => t.close());
  afterEach(() => jest.restoreAllMocks());

  it.each(['CSV', 'JSON', 'JSONL'] as const)('a %s file in a large body is imported piece by piece, every text stored exactly as sent', async (format) => {
    const datasetId = await createDataset(t, useCase.id, `inline ${format}`);
    const pieces = jest.spyOn(InlineFile.prototype, 'pieces');
    const body = bodyOf(IMPORT_REPORTS, { input: { datasetId, format, content: files[format] } });
    expect(Buffer.byteLength(body)).toBeGreaterThan(INLINE_FILE_MIN_BYTES);
    expect(body).toContain('\\ud83d\\ude00');
    const answer = await post(body);
    expect(answer.status).toBe(200);
    expect(answer.json.errors).toBeUndefined();
    expect(answer.json.data?.['importReports']).toMatchObject({ inserted: N, updated: 0, dataset: { reportCount: N } });
    // read from the body's bytes, not from a string made by JSON.parse
    expect(pieces).toHaveBeenCalled();
    const stored = await storedTexts(datasetId);
    expect(stored.map((r) => r.external_id)).toEqual(rows.map((r) => r.id));
    const mismatched = stored.filter((r, i) => r.text !== rows[i]!.text || r.metadata['site'] !== rows[i]!.site);
    expect(mismatched).toEqual([]);
  });

  it('a bad row in a later chunk rejects the whole file: the chunks inserted before are rolled back', async () => {
    const datasetId = await createDataset(t, useCase.id, 'inline all or nothing');
    const bad = rows.map((r, i) => (i === N - 1 ? { ...r, text: ' ' } : i === 2500 ? { ...r, text: `${r.text}\u0000` } : r));
    t.queries.length = 0;
    const answer = await post(bodyOf(IMPORT_REPORTS, { input: { datasetId, format: 'JSONL', content: jsonl(bad) } }));
    expect(answer.status).toBe(200);
    expect(t.queries.filter((q) => q.includes('INSERT INTO reports')).length).toBeGreaterThan(0);
    const error = answer.json.errors?.[0];
    expect(error?.extensions?.['code']).toBe('BAD_USER_INPUT');
    expect(error?.extensions?.['rowErrors']).toEqual([
      expect.objectContaining({ row: 2501, line: 2501, reason: expect.stringContaining('NUL') }),
      { row: N, line: N, field: 'text', reason: "empty text in field 'text'" },
    ]);
    // the message names rows, never the text sent
    expect(JSON.stringify(answer.json)).not.toContain('přítomnost');
    expect(await storedTexts(datasetId)).toEqual([]);
    expect(await importReports(t, datasetId, files.JSONL)).toMatchObject({ inserted: N });
  });

  it('a large body that is not JSON, inside the file or around it, is answered 400 as before, and nothing is stored', async () => {
    const datasetId = await createDataset(t, useCase.id, 'inline malformed');
    const good = bodyOf(IMPORT_REPORTS, { input: { datasetId, format: 'CSV', content: files.CSV } });
    const notJson = { errors: [{ message: 'The request body is not valid JSON', extensions: { code: 'BAD_USER_INPUT' } }] };
    const broken = [
      good.slice(0, -1),
      good.replace('metastáz', 'meta\\xstáz'),
      good.replace('metastáz', 'meta\tstáz'),
      good.replace('\\ud83d\\ude00', '\\ud83d\\ude0'),
      good.replace(/^\{/, '{,'),
      `"${'x'.repeat(INLINE_FILE_MIN_BYTES)}"`,
    ];
    for (const body of broken) {
      expect(Buffer.byteLength(body)).toBeGreaterThan(INLINE_FILE_MIN_BYTES);
      expect(await post(body)).toEqual({ status: 400, json: notJson });
    }
    const at = good.indexOf('metastáz');
    const latin1 = Buffer.concat([Buffer.from(good.slice(0, at)), Buffer.from('metastáz', 'latin1'), Buffer.from(good.slice(at + 'metastáz'.length))]);
    expect(await post(latin1)).toEqual({ status: 400, json: { errors: [{ message: 'The request body is not valid UTF-8', extensions: { code: 'BAD_USER_INPUT' } }] } });
    expect(await storedTexts(datasetId)).toEqual([]);
    // a BOM before the body is skipped, as express.json does
    expect((await post(`\uFEFF${good}`)).json.data?.['importReports']).toMatchObject({ inserted: N });
  });

  it('a body over the limit is refused with 413 before it is parsed', async () => {
    const datasetId = await createDataset(t, useCase.id, 'inline too large');
    const prefix = bodyOf(IMPORT_REPORTS, { input: { datasetId, format: 'CSV', content: 'id,text\n' } }).replace('"id,text\\n"', '"id,text\\n');
    expect(await postOversized(Buffer.from(prefix), MAX_REQUEST_BYTES + 1)).toEqual({ status: 413, json: { errors: [{ message: 'The request body is larger than 64 MB', extensions: { code: 'BAD_USER_INPUT' } }] } });
    expect(await storedTexts(datasetId)).toEqual([]);
  });

  it('importAnnotations and importPredictions take a large inline file as well', async () => {
    const datasetId = await createDataset(t, useCase.id, 'inline annotations');
    await importReports(t, datasetId, jsonl([{ id: 'A1', text: 'one' }, { id: 'A2', text: 'two' }]));
    const site = (i: number) => Array.from({ length: 2500 }, (_, k) => trickyText(i + k)).join(' ').replace(/\n|\t/g, ' ');
    const text = jest.spyOn(InlineFile.prototype, 'text');
    const pieces = jest.spyOn(InlineFile.prototype, 'pieces');
    const annotations = csv([['id', 'site'], ['A1', site(1)], ['A2', site(2)]]);
    const annotationBody = bodyOf(IMPORT_ANNOTATIONS, { input: { datasetId, annotatorName: 'Dr. Novák', format: 'CSV', content: annotations } });
    expect(Buffer.byteLength(annotationBody)).toBeGreaterThan(INLINE_FILE_MIN_BYTES);
    const annotated = await post(annotationBody);
    expect(annotated.json.errors).toBeUndefined();
    expect(annotated.json.data?.['importAnnotations']).toMatchObject({ reports: 2, values: 2 });
    const raws = await t.dataSource.query(`SELECT raw FROM annotations WHERE dataset_id = $1 ORDER BY raw::text`, [rowId(datasetId)]);
    expect(raws.map((r: { raw: unknown }) => r.raw).sort()).toEqual([site(1), site(2)].sort());

    const predictions = jsonl([
      { id: 'A1', raw_output: JSON.stringify({ site: site(3) }) },
      { id: 'A2', raw_output: JSON.stringify({ site: site(4) }) },
    ]);
    const predicted = await post(bodyOf(IMPORT_PREDICTIONS, { input: { datasetId, format: 'JSONL', layout: 'RAW_OUTPUT', modelName: 'inline/model', content: predictions } }));
    expect(predicted.json.errors).toBeUndefined();
    expect(predicted.json.data?.['importPredictions']).toMatchObject({ imported: 2, missingReports: 0 });
    const outputs = await t.dataSource.query(`SELECT raw FROM predictions p JOIN runs r ON r.id = p.run_id WHERE r.dataset_id = $1`, [rowId(datasetId)]);
    expect(outputs.map((r: { raw: string }) => JSON.parse(r.raw).site).sort()).toEqual([site(3), site(4)].sort());
    // Both files are read piece by piece, as they are inserted, never as one text.
    expect(text).not.toHaveBeenCalled();
    expect(pieces).toHaveBeenCalledTimes(2);
  });

  it('a long string anywhere else arrives as a string, also when the same variable is an import file too', async () => {
    const datasetId = await createDataset(t, useCase.id, 'inline elsewhere');
    const pieces = jest.spyOn(InlineFile.prototype, 'pieces');
    const provenance = files.CSV;
    const created = await post(
      bodyOf('mutation ($u: ID!, $p: String) { createDataset(input: { useCaseId: $u, name: "long provenance", provenance: $p }) { dataset { provenance } } }', {
        u: useCase.id,
        p: provenance,
      }),
    );
    expect(created.json.data?.['createDataset'].dataset.provenance).toBe(provenance.trim());
    const both = await post(
      bodyOf(
        `mutation ($d: ID!, $u: ID!, $c: String!) {
          importReports(input: { datasetId: $d, format: CSV, content: $c }) { inserted }
          createDataset(input: { useCaseId: $u, name: "same variable", provenance: $c }) { dataset { provenance } }
        }`,
        { d: datasetId, u: useCase.id, c: files.CSV },
      ),
    );
    expect(both.json.errors).toBeUndefined();
    expect(both.json.data).toEqual({ importReports: { inserted: N }, createDataset: { dataset: { provenance: files.CSV.trim() } } });
    expect(pieces).not.toHaveBeenCalled();
    expect((await storedTexts(datasetId)).map((r) => r.text)).toEqual(rows.map((r) => r.text));
  });

  it('a string written to look like a token is the file itself', async () => {
    const datasetId = await createDataset(t, useCase.id, 'inline forged');
    const forged = await t.gql(IMPORT_REPORTS, { input: { datasetId, format: 'CSV', content: '\u0000inline-file:AAAAAAAAAAAAAAAAAAAAAA:0' } });
    expect(forged.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', rowErrors: [expect.objectContaining({ row: 0 })] });
    expect(ok(await t.gql(IMPORT_REPORTS, { input: { datasetId, format: 'CSV', content: 'id,text\nF1,fine\n' } })).importReports.inserted).toBe(1);
  });
});
