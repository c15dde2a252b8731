import {
  createDataset,
  createLoadedDataset,
  createProjectWithKeys,
  createUseCase,
  csv,
  expectAccessErrors,
  failure,
  IMPORT_ANNOTATIONS,
  importAnnotations,
  importReports,
  jsonl,
  ok,
  rowId,
  type ProjectKeys,
} from '../support/graphql-fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

const DATASET_ANNOTATIONS = /* GraphQL */ `
  query ($id: ID!) {
    node(id: $id) {
      ... on Dataset {
        annotators { id name kind isReference }
        referenceAnnotator { id name }
        reports(first: 200) {
          nodes { externalId annotations { annotator { name } variable { key } raw value status invalidCategory } }
        }
      }
    }
  }`;

interface AnnotationRow {
  annotator: { name: string };
  variable: { key: string };
  raw: unknown;
  value: unknown;
  status: string;
  invalidCategory: string | null;
}

describe('annotation imports', () => {
  let t: TestApp;
  let a: ProjectKeys;
  let b: ProjectKeys;

  beforeAll(async () => {
    t = await startTestApp();
    a = await createProjectWithKeys(t, 'Annotation project A');
    b = await createProjectWithKeys(t, 'Annotation project B');
  });
  afterAll(() => t.close());

  async function datasetState(datasetId: string) {
    const node = ok(await t.gql(DATASET_ANNOTATIONS, { id: datasetId })).node;
    const byReport: Record<string, Record<string, Record<string, AnnotationRow>>> = {};
    for (const report of node.reports.nodes as { externalId: string; annotations: AnnotationRow[] }[]) {
      const byAnnotator: Record<string, Record<string, AnnotationRow>> = {};
      for (const annotation of report.annotations) {
        (byAnnotator[annotation.annotator.name] ??= {})[annotation.variable.key] = annotation;
      }
      byReport[report.externalId] = byAnnotator;
    }
    return { annotators: node.annotators, reference: node.referenceAnnotator, byReport };
  }

  async function annotationCount(datasetId: string): Promise<number> {
    const [{ n }] = (await t.dataSource.query('SELECT count(*)::int AS n FROM annotations WHERE dataset_id = $1', [rowId(datasetId)])) as [{ n: number }];
    return n;
  }

  it('imports a wide CSV: values normalised, raw kept, empty cells MISSING, absent columns not annotated', async () => {
    const { datasetId } = await createLoadedDataset(t, a.id);
    const content = csv([
      ['id', 'grade', 'metastasis', 'breslow_mm', 'site', 'organs', 'mitoses', 'comment'],
      ['R1', 'graad 2', 'nee', '1,4', ' bovenrug links ', '["long", " lever "]', '2/mm2', 'checked twice'],
      ['R2', 'G3', 'ja', '', 'Not specified', 'long', '  6 /mm2 ', ''],
    ]);
    const payload = ok(
      await t.gql(IMPORT_ANNOTATIONS, { input: { datasetId, annotatorName: 'Dr. Novák', format: 'CSV', content } }, a.editor),
    ).importAnnotations;
    expect(payload).toMatchObject({
      reports: 2,
      values: 12,
      unknownColumns: ['comment'],
      annotator: { name: 'Dr. Novák', kind: 'HUMAN', isReference: false },
    });

    const { byReport } = await datasetState(datasetId);
    const r1 = byReport.R1!['Dr. Novák']!;
    const r2 = byReport.R2!['Dr. Novák']!;
    expect(r1.grade).toMatchObject({ raw: 'graad 2', value: 'G2', status: 'VALUE', invalidCategory: null });
    expect(r1.metastasis).toMatchObject({ raw: 'nee', value: 'No', status: 'VALUE' });
    expect(r1.breslow_mm).toMatchObject({ raw: '1,4', value: 1.4, status: 'VALUE' });
    expect(r1.site).toMatchObject({ value: 'bovenrug links', status: 'VALUE' });
    expect(r1.organs).toMatchObject({ value: ['long', 'lever'], status: 'VALUE' });
    expect(r1.mitoses).toMatchObject({ value: '2/mm2', status: 'VALUE' });
    expect(r2.organs).toMatchObject({ value: ['long'], status: 'VALUE' });
    expect(r2.mitoses).toMatchObject({ value: '6 /mm2', status: 'VALUE' });
    // A present but empty cell, and a missing token, are MISSING: annotated as "not stated".
    expect(r2.breslow_mm).toMatchObject({ raw: '', value: null, status: 'MISSING' });
    expect(r2.site).toMatchObject({ raw: 'Not specified', value: null, status: 'MISSING' });
    // No birads column: that variable is not annotated at all.
    expect(r1.birads).toBeUndefined();
    expect(r2.birads).toBeUndefined();
    expect(Object.keys(r1).sort()).toEqual(['breslow_mm', 'grade', 'metastasis', 'mitoses', 'organs', 'site']);
    expect(byReport.R3).toEqual({});
  });

  it('imports JSON Lines: an absent key is not annotated, null is MISSING', async () => {
    const { datasetId } = await createLoadedDataset(t, a.id);
    const payload = await importAnnotations(
      t,
      datasetId,
      'rater',
      'JSONL',
      jsonl([
        { id: 'R1', grade: 'G1', breslow_mm: 0.6, organs: ['lever'] },
        { id: 'R2', grade: null, birads: '4B' },
        { id: 'R4', metastasis: 'Not specified' },
      ]),
    );
    expect(payload).toMatchObject({ reports: 3, values: 6, unknownColumns: [] });
    const { byReport } = await datasetState(datasetId);
    expect(Object.keys(byReport.R1!.rater!).sort()).toEqual(['breslow_mm', 'grade', 'organs']);
    expect(byReport.R1!.rater!.breslow_mm).toMatchObject({ raw: 0.6, value: 0.6, status: 'VALUE' });
    expect(byReport.R2!.rater!.grade).toMatchObject({ raw: null, value: null, status: 'MISSING' });
    expect(byReport.R2!.rater!.birads).toMatchObject({ value: '4B', status: 'VALUE' });
    expect(Object.keys(byReport.R2!.rater!).sort()).toEqual(['birads', 'grade']);
    expect(byReport.R4!.rater!.metastasis).toMatchObject({ status: 'MISSING' });
  });

  it('imports a JSON array with a column map, an id field and CONSENSUS kind', async () => {
    const { datasetId } = await createLoadedDataset(t, a.id);
    const content = JSON.stringify([
      { report: 'R1', Graad: 'graad 1', 'BI-RADS': '4C' },
      { report: 'R5', Graad: 'G3', 'BI-RADS': 5 },
    ]);
    const payload = await importAnnotations(t, datasetId, 'consensus', 'JSON', content, {
      idField: 'report',
      columnMap: { grade: 'Graad', birads: 'BI-RADS' },
      kind: 'CONSENSUS',
    });
    expect(payload).toMatchObject({ reports: 2, values: 4, annotator: { name: 'consensus' } });
    const state = await datasetState(datasetId);
    expect(state.annotators).toEqual([expect.objectContaining({ name: 'consensus', kind: 'CONSENSUS' })]);
    expect(state.byReport.R1!.consensus!.grade!.value).toBe('G1');
    expect(state.byReport.R5!.consensus!.birads!.value).toBe('5');
  });

  it('moves the reference flag between annotators', async () => {
    const { datasetId } = await createLoadedDataset(t, a.id);
    const file = jsonl([{ id: 'R1', grade: 'G1' }]);
    const first = await importAnnotations(t, datasetId, 'annotator A', 'JSONL', file, { isReference: true });
    expect(first.annotator.isReference).toBe(true);
    let state = await datasetState(datasetId);
    expect(state.reference).toEqual({ id: first.annotator.id, name: 'annotator A' });

    const second = await importAnnotations(t, datasetId, 'annotator B', 'JSONL', file, { isReference: true });
    state = await datasetState(datasetId);
    expect(state.reference).toEqual({ id: second.annotator.id, name: 'annotator B' });
    expect(state.annotators.filter((x: { isReference: boolean }) => x.isReference)).toHaveLength(1);
    expect(state.annotators.find((x: { name: string }) => x.name === 'annotator A').isReference).toBe(false);

    // Re-importing A without the flag leaves the reference where it is.
    await importAnnotations(t, datasetId, 'annotator A', 'JSONL', file);
    expect((await datasetState(datasetId)).reference.name).toBe('annotator B');

    // A third annotator that is not the reference changes nothing; then A takes it back.
    await importAnnotations(t, datasetId, 'annotator C', 'JSONL', file);
    expect((await datasetState(datasetId)).reference.name).toBe('annotator B');
    await importAnnotations(t, datasetId, 'annotator A', 'JSONL', file, { isReference: true });
    state = await datasetState(datasetId);
    expect(state.reference).toEqual({ id: first.annotator.id, name: 'annotator A' });
    expect(state.annotators.map((x: { name: string; isReference: boolean }) => [x.name, x.isReference])).toEqual([
      ['annotator A', true],
      ['annotator B', false],
      ['annotator C', false],
    ]);
  });

  it('a later import of the same annotator updates its values', async () => {
    const { datasetId } = await createLoadedDataset(t, a.id);
    const first = await importAnnotations(t, datasetId, 'rater', 'JSONL', jsonl([{ id: 'R1', grade: 'G1', site: 'arm' }]));
    const second = await importAnnotations(t, datasetId, 'rater', 'JSONL', jsonl([{ id: 'R1', grade: 'G2' }]));
    expect(second.annotator.id).toBe(first.annotator.id);
    const state = await datasetState(datasetId);
    expect(state.annotators).toHaveLength(1);
    expect(state.byReport.R1!.rater!.grade).toMatchObject({ value: 'G2', raw: 'G2' });
    expect(state.byReport.R1!.rater!.site).toMatchObject({ value: 'arm' });
  });

  it('an invalid value rejects the import, naming row and variable, and writes nothing', async () => {
    const { datasetId } = await createLoadedDataset(t, a.id);
    await importAnnotations(t, datasetId, 'existing', 'JSONL', jsonl([{ id: 'R1', grade: 'G1' }]));
    const before = await annotationCount(datasetId);
    const content = csv([
      ['id', 'grade', 'breslow_mm', 'birads'],
      ['R1', 'G2', '1.0', '3'],
      ['R2', 'G5', '2.0', '4A'],
      ['R3', 'G1', '3-4', '4A or 4B'],
    ]);
    const error = failure(await t.gql(IMPORT_ANNOTATIONS, { input: { datasetId, annotatorName: 'new rater', format: 'CSV', content } }), 'BAD_USER_INPUT');
    const rowErrors = error.extensions?.rowErrors as { row: number; field: string; reason: string }[];
    expect(rowErrors.map((e) => [e.row, e.field])).toEqual([
      [2, 'grade'],
      [3, 'breslow_mm'],
      [3, 'birads'],
    ]);
    expect(rowErrors[0]!.reason).toContain('"G5"');
    expect(rowErrors[0]!.reason).toContain('OTHER');
    expect(rowErrors[1]!.reason).toContain('AMBIGUOUS');
    expect(rowErrors[2]!.reason).toContain('MULTI_VALUED');
    expect(error.message).toContain('row 2');
    expect(await annotationCount(datasetId)).toBe(before);
    expect((await datasetState(datasetId)).annotators.map((x: { name: string }) => x.name)).toEqual(['existing']);
  });

  it('rejects rows for reports outside the dataset and files without variable columns', async () => {
    const { datasetId } = await createLoadedDataset(t, a.id);
    const unknown = failure(
      await t.gql(IMPORT_ANNOTATIONS, {
        input: { datasetId, annotatorName: 'x', format: 'JSONL', content: jsonl([{ id: 'R1', grade: 'G1' }, { id: 'NOPE', grade: 'G1' }]) },
      }),
      'BAD_USER_INPUT',
    );
    expect(unknown.extensions?.rowErrors).toEqual([{ row: 2, field: 'id', reason: 'report "NOPE" is not in the dataset' }]);
    const noColumns = failure(
      await t.gql(IMPORT_ANNOTATIONS, { input: { datasetId, annotatorName: 'x', format: 'CSV', content: 'id,foo\nR1,bar\n' } }),
      'BAD_USER_INPUT',
    );
    expect((noColumns.extensions?.rowErrors as { row: number }[])[0]!.row).toBe(0);
    const badMap = failure(
      await t.gql(IMPORT_ANNOTATIONS, {
        input: { datasetId, annotatorName: 'x', format: 'CSV', content: 'id,grade\nR1,G1\n', columnMap: { nonsense: 'grade' } },
      }),
      'BAD_USER_INPUT',
    );
    expect((badMap.extensions?.rowErrors as { field: string }[])[0]!.field).toBe('nonsense');
    failure(
      await t.gql(IMPORT_ANNOTATIONS, { input: { datasetId, annotatorName: '  ', format: 'CSV', content: 'id,grade\nR1,G1\n' } }),
      'BAD_USER_INPUT',
    );
    expect(await annotationCount(datasetId)).toBe(0);
    expect((await datasetState(datasetId)).annotators).toEqual([]);
  });

  it('reads a file of several chunks as it arrives: all values or none, every problem listed in row order', async () => {
    const useCase = await createUseCase(t, a.id);
    const datasetId = await createDataset(t, useCase.id, 'Three chunks');
    const N = 2500;
    await importReports(t, datasetId, jsonl(Array.from({ length: N }, (_, i) => ({ id: `B${i}`, text: `report ${i}` }))));
    const rows = Array.from({ length: N }, (_, i) => ({ id: `B${i}`, grade: `G${1 + (i % 3)}`, ...(i % 5 === 0 ? { metastasis: 'ja' } : {}) }));
    const importFile = (content: string, annotatorName: string) => t.gql(IMPORT_ANNOTATIONS, { input: { datasetId, annotatorName, format: 'JSONL', content } });

    // Problems in the second and third chunk, and in the first chunk after rows were checked clean.
    const broken = rows.map((r) => ({ ...r }));
    broken[1499] = { ...broken[1499]!, id: 'B3' };
    broken[2399] = { ...broken[2399]!, id: 'elsewhere' };
    broken[700] = { ...broken[700]!, grade: 'G7' };
    const rejected = failure(await importFile(jsonl(broken), 'never'), 'BAD_USER_INPUT');
    expect((rejected.extensions?.rowErrors as { row: number; field: string }[]).map((e) => [e.row, e.field])).toEqual([
      [701, 'grade'],
      [1500, 'id'],
      [2400, 'id'],
    ]);
    expect(await annotationCount(datasetId)).toBe(0);
    expect((await datasetState(datasetId)).annotators).toEqual([]);

    const payload = await importAnnotations(t, datasetId, 'chunked', 'JSONL', jsonl(rows), { isReference: true });
    expect(payload).toMatchObject({ reports: N, values: N + N / 5, unknownColumns: [], annotator: { isReference: true } });
    const stored = (await t.dataSource.query(
      `SELECT v.key, a.value #>> '{}' AS value, count(*)::int AS n FROM annotations a JOIN variables v ON v.id = a.variable_id
       WHERE a.dataset_id = $1 GROUP BY 1, 2 ORDER BY 1, 2`,
      [rowId(datasetId)],
    )) as { key: string; value: string; n: number }[];
    expect(stored).toEqual([
      { key: 'grade', value: 'G1', n: 834 },
      { key: 'grade', value: 'G2', n: 833 },
      { key: 'grade', value: 'G3', n: 833 },
      { key: 'metastasis', value: 'Yes', n: N / 5 },
    ]);
  });

  it('enforces access', async () => {
    const { datasetId } = await createLoadedDataset(t, a.id);
    const foreignUseCase = await createUseCase(t, b.id);
    const foreign = await createDataset(t, foreignUseCase.id);
    await expectAccessErrors(
      t,
      IMPORT_ANNOTATIONS,
      { datasetId, annotatorName: 'guarded', format: 'JSONL', content: jsonl([{ id: 'R1', grade: 'G1' }]) },
      { keys: a, forbiddenKeys: [a.viewer], idField: 'datasetId', foreignId: foreign, unknownType: 'Dataset' },
    );
    expect(await annotationCount(datasetId)).toBe(0);
  });
});
