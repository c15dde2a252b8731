import {
  CREATE_DATASET,
  createDataset,
  createProjectWithKeys,
  createUseCase,
  csv,
  expectAccessErrors,
  failure,
  IMPORT_REPORTS,
  importReports,
  jsonl,
  ok,
  rowId,
  type ProjectKeys,
  type UseCaseFixture,
} from '../support/graphql-fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

const CZECH_DUTCH = 'Česká přítomnost metastáz, één geïnfiltreerd';

const REPORTS_QUERY = /* GraphQL */ `
  query ($id: ID!, $first: Int) {
    node(id: $id) {
      ... on Dataset { reportCount reports(first: $first) { totalCount nodes { id externalId text metadata } } }
    }
  }`;

interface ReportRow {
  id: string;
  externalId: string;
  text: string;
  metadata: Record<string, unknown> | null;
}

describe('datasets and report imports', () => {
  let t: TestApp;
  let a: ProjectKeys;
  let b: ProjectKeys;
  let useCase: UseCaseFixture;

  beforeAll(async () => {
    t = await startTestApp();
    a = await createProjectWithKeys(t, 'Dataset project A');
    b = await createProjectWithKeys(t, 'Dataset project B');
    useCase = await createUseCase(t, a.id, { name: 'Pathology', language: 'nl' });
  });
  afterAll(() => t.close());

  async function reportsOf(datasetId: string): Promise<{ reportCount: number; totalCount: number; nodes: ReportRow[] }> {
    const node = ok(await t.gql(REPORTS_QUERY, { id: datasetId, first: 200 })).node;
    return { reportCount: node.reportCount, totalCount: node.reports.totalCount, nodes: node.reports.nodes };
  }

  async function freshDataset(name: string): Promise<string> {
    return createDataset(t, useCase.id, name);
  }

  describe('createDataset', () => {
    it('an EDITOR creates a dataset; the language defaults to the use case', async () => {
      const data = ok(
        await t.gql(CREATE_DATASET, { input: { useCaseId: useCase.id, name: ' Test set 2024 ', provenance: 'synthetic, CC0' } }, a.editor),
      );
      expect(data.createDataset.dataset).toMatchObject({
        name: 'Test set 2024',
        language: 'nl',
        provenance: 'synthetic, CC0',
        reportCount: 0,
        useCase: { id: useCase.id },
      });
      const other = ok(await t.gql(CREATE_DATASET, { input: { useCaseId: useCase.id, name: 'Czech set', language: 'cs' } }));
      expect(other.createDataset.dataset.language).toBe('cs');
      const listed = ok(await t.gql('query ($id: ID!) { node(id: $id) { ... on UseCase { datasets { totalCount nodes { name } } } } }', { id: useCase.id }));
      expect(listed.node.datasets.nodes.map((d: { name: string }) => d.name)).toEqual(expect.arrayContaining(['Test set 2024', 'Czech set']));
    });

    it('answers CONFLICT for a name used in the use case and BAD_USER_INPUT for an empty name', async () => {
      await freshDataset('Duplicate');
      failure(await t.gql(CREATE_DATASET, { input: { useCaseId: useCase.id, name: 'Duplicate' } }), 'CONFLICT');
      failure(await t.gql(CREATE_DATASET, { input: { useCaseId: useCase.id, name: '  ' } }), 'BAD_USER_INPUT');
      const other = await createUseCase(t, a.id);
      await createDataset(t, other.id, 'Duplicate');
    });

    it('enforces access', async () => {
      const foreign = await createUseCase(t, b.id);
      await expectAccessErrors(
        t,
        CREATE_DATASET,
        { useCaseId: useCase.id, name: 'Guarded dataset' },
        { keys: a, forbiddenKeys: [a.viewer], idField: 'useCaseId', foreignId: foreign.id, unknownType: 'UseCase' },
      );
      const names = ok(await t.gql('query ($id: ID!) { node(id: $id) { ... on UseCase { datasets(first: 200) { nodes { name } } } } }', { id: useCase.id }))
        .node.datasets.nodes.map((d: { name: string }) => d.name);
      expect(names).not.toContain('Guarded dataset');
    });
  });

  describe('importReports', () => {
    it('imports JSON Lines; text and diacritics round-trip exactly; other fields become metadata', async () => {
      const datasetId = await freshDataset('JSONL');
      const texts = [
        CZECH_DUTCH,
        'Conclusie:\n  Melanoom, Breslow 1,4 mm;\tgeen ulceratie.\n\n"Radicaal" verwijderd.  ',
        'Záver: nález odpovídá metastáze — ß, €, µm², “quotes”, 😀',
        'Cafe\u0301 (decomposed accent) and café',
      ];
      const content = jsonl(texts.map((text, i) => ({ id: `N-${i + 1}`, text, year: 2020 + i, region: i % 2 ? 'romp' : null })));
      const payload = ok(await t.gql(IMPORT_REPORTS, { input: { datasetId, format: 'JSONL', content } }, a.editor)).importReports;
      expect(payload).toEqual({ inserted: 4, updated: 0, dataset: { id: datasetId, reportCount: 4 } });
      const { nodes, totalCount } = await reportsOf(datasetId);
      expect(totalCount).toBe(4);
      expect(nodes.map((r) => r.externalId)).toEqual(['N-1', 'N-2', 'N-3', 'N-4']);
      expect(nodes.map((r) => r.text)).toEqual(texts);
      expect(nodes[0]!.metadata).toEqual({ year: 2020, region: null });
      expect(nodes[1]!.metadata).toEqual({ year: 2021, region: 'romp' });
    });

    it('imports CSV: quoted multi-line text, detected delimiter, chosen id/text/metadata fields', async () => {
      const datasetId = await freshDataset('CSV');
      const content =
        'patient;verslag;jaar;afdeling\n' +
        `P1;"${CZECH_DUTCH}";2023;pathologie\n` +
        'P2;"Regel één\nRegel twee; met ""aanhalingstekens""";2024;radiologie\n';
      const payload = ok(
        await t.gql(IMPORT_REPORTS, {
          input: { datasetId, format: 'CSV', content, idField: 'patient', textField: 'verslag', metadataFields: ['jaar'] },
        }),
      ).importReports;
      expect(payload).toMatchObject({ inserted: 2, updated: 0 });
      const { nodes } = await reportsOf(datasetId);
      expect(nodes).toEqual([
        expect.objectContaining({ externalId: 'P1', text: CZECH_DUTCH, metadata: { jaar: '2023' } }),
        expect.objectContaining({ externalId: 'P2', text: 'Regel één\nRegel twee; met "aanhalingstekens"', metadata: { jaar: '2024' } }),
      ]);
    });

    it('imports a JSON array', async () => {
      const datasetId = await freshDataset('JSON');
      const content = JSON.stringify([
        { id: 'J1', text: CZECH_DUTCH, meta: { nested: ['a', 1] } },
        { id: 7, text: 'numeric id' },
      ]);
      expect(ok(await t.gql(IMPORT_REPORTS, { input: { datasetId, format: 'JSON', content } })).importReports).toMatchObject({ inserted: 2 });
      const { nodes } = await reportsOf(datasetId);
      expect(nodes.map((r) => [r.externalId, r.text])).toEqual([
        ['J1', CZECH_DUTCH],
        ['7', 'numeric id'],
      ]);
      expect(nodes[0]!.metadata).toEqual({ meta: { nested: ['a', 1] } });
    });

    it('rejects a file with bad rows, naming the rows, and writes nothing', async () => {
      const datasetId = await freshDataset('Bad rows');
      await importReports(t, datasetId, jsonl([{ id: 'OLD', text: 'already here' }]));
      const content = csv([
        ['id', 'text'],
        ['A1', 'good row'],
        ['A2', ''],
        ['', 'no id'],
        ['A4', 'good again'],
        ['A1', 'repeated id'],
      ]);
      const error = failure(await t.gql(IMPORT_REPORTS, { input: { datasetId, format: 'CSV', content } }), 'BAD_USER_INPUT');
      const rowErrors = error.extensions?.rowErrors as { row: number; field?: string; reason: string; line?: number }[];
      expect(rowErrors.map((e) => e.row)).toEqual([2, 3, 5]);
      expect(rowErrors[0]).toMatchObject({ row: 2, field: 'text', line: 3 });
      expect(rowErrors[1]).toMatchObject({ row: 3, field: 'id' });
      expect(rowErrors[2]!.reason).toContain('A1');
      expect(error.extensions?.totalErrors).toBe(3);
      expect(error.message).toMatch(/3 rows rejected/);
      expect(error.message).toContain('row 2');
      const after = await reportsOf(datasetId);
      expect(after.reportCount).toBe(1);
      expect(after.nodes.map((r) => r.externalId)).toEqual(['OLD']);
    });

    it('rejects unparsable JSON Lines and files without the named columns', async () => {
      const datasetId = await freshDataset('Unparsable');
      const bad = failure(
        await t.gql(IMPORT_REPORTS, { input: { datasetId, format: 'JSONL', content: '{"id":"X1","text":"ok"}\n{"id": "X2", "text": \n' } }),
        'BAD_USER_INPUT',
      );
      expect((bad.extensions?.rowErrors as { row: number }[])[0]?.row).toBe(2);
      const noText = failure(
        await t.gql(IMPORT_REPORTS, { input: { datasetId, format: 'CSV', content: 'id,body\nX1,hello\n' } }),
        'BAD_USER_INPUT',
      );
      expect((noText.extensions?.rowErrors as { row: number; field?: string }[])[0]).toMatchObject({ row: 0, field: 'text' });
      failure(await t.gql(IMPORT_REPORTS, { input: { datasetId, format: 'JSON', content: '[]' } }), 'BAD_USER_INPUT');
      failure(await t.gql(IMPORT_REPORTS, { input: { datasetId, format: 'JSON', content: '{"id": "X", "text": "not an array"}' } }), 'BAD_USER_INPUT');
      failure(await t.gql(IMPORT_REPORTS, { input: { datasetId, format: 'XML', content: '<a/>' } }), 'BAD_USER_INPUT');
      expect((await reportsOf(datasetId)).reportCount).toBe(0);
    });

    it('duplicate external ids: REJECT names them and writes nothing; UPSERT replaces in place', async () => {
      const datasetId = await freshDataset('Duplicates');
      await importReports(
        t,
        datasetId,
        jsonl([
          { id: 'D1', text: 'first version', v: 1 },
          { id: 'D2', text: 'second report', v: 1 },
        ]),
      );
      const again = jsonl([
        { id: 'D3', text: 'new report' },
        { id: 'D1', text: `updated: ${CZECH_DUTCH}`, v: 2 },
      ]);
      const error = failure(await t.gql(IMPORT_REPORTS, { input: { datasetId, format: 'JSONL', content: again } }), 'BAD_USER_INPUT');
      expect(error.extensions?.rowErrors).toEqual([{ row: 2, field: 'id', reason: 'external id "D1" is already in the dataset' }]);
      let state = await reportsOf(datasetId);
      expect(state.reportCount).toBe(2);
      expect(state.nodes.map((r) => [r.externalId, r.text])).toEqual([
        ['D1', 'first version'],
        ['D2', 'second report'],
      ]);
      const idsBefore = state.nodes.map((r) => r.id);

      const upsert = ok(await t.gql(IMPORT_REPORTS, { input: { datasetId, format: 'JSONL', content: again, onDuplicate: 'UPSERT' } })).importReports;
      expect(upsert).toMatchObject({ inserted: 1, updated: 1, dataset: { reportCount: 3 } });
      state = await reportsOf(datasetId);
      // The replaced report keeps its id and its place in import order.
      expect(state.nodes.map((r) => [r.externalId, r.text, r.metadata])).toEqual([
        ['D1', `updated: ${CZECH_DUTCH}`, { v: 2 }],
        ['D2', 'second report', { v: 1 }],
        ['D3', 'new report', {}],
      ]);
      expect(state.nodes.slice(0, 2).map((r) => r.id)).toEqual(idsBefore);
    });

    describe('a file larger than one insert chunk', () => {
      // ~1.6 MB, 5,000 reports: read in several pieces and inserted in several chunks before
      // the last row is reached, so these show that what was written is rolled back.
      const N = 5000;
      const big = (i: number) => ({ id: `S${i}`, text: `${CZECH_DUTCH} ${'x'.repeat(260)} ${i}`, site: i % 3 });
      const rows = Array.from({ length: N }, (_, i) => big(i));

      it('an import failing on its last row writes nothing, and the next import gets dense ordinals', async () => {
        const datasetId = await freshDataset('Last row fails');
        await importReports(t, datasetId, jsonl([{ id: 'OLD', text: 'already here' }]));
        const lastEmpty = [...rows.slice(0, N - 1), { id: `S${N - 1}`, text: '  ' }];
        for (const [format, content] of [
          ['JSONL', jsonl(lastEmpty)],
          ['JSON', JSON.stringify(lastEmpty)],
          ['CSV', csv([['id', 'text', 'site'], ...lastEmpty.map((r) => [r.id, r.text, 'site' in r ? r.site : 0] as const)])],
        ] as const) {
          t.queries.length = 0;
          const error = failure(await t.gql(IMPORT_REPORTS, { input: { datasetId, format, content } }), 'BAD_USER_INPUT');
          // The first chunks were inserted before the last row was read: the rollback undid them.
          expect(t.queries.filter((q) => q.includes('INSERT INTO reports')).length).toBeGreaterThan(0);
          expect(error.extensions?.rowErrors).toEqual([
            { row: N, field: 'text', reason: "empty text in field 'text'", ...(format === 'JSON' ? {} : { line: format === 'CSV' ? N + 1 : N }) },
          ]);
          expect(error.extensions?.totalErrors).toBe(1);
          expect((await reportsOf(datasetId)).reportCount).toBe(1);
        }
        // A syntax error after the last element, and a last row whose id is already in the dataset.
        const unclosed = failure(await t.gql(IMPORT_REPORTS, { input: { datasetId, format: 'JSON', content: JSON.stringify(rows).slice(0, -1) } }), 'BAD_USER_INPUT');
        expect(unclosed.extensions?.rowErrors).toEqual([{ row: 0, line: 1, reason: "unexpected end of file: the array is not closed with ']'" }]);
        const lastKnown = failure(
          await t.gql(IMPORT_REPORTS, { input: { datasetId, format: 'JSONL', content: jsonl([...rows.slice(0, N - 1), { id: 'OLD', text: 'again' }]) } }),
          'BAD_USER_INPUT',
        );
        expect(lastKnown.extensions?.rowErrors).toEqual([{ row: N, field: 'id', reason: 'external id "OLD" is already in the dataset' }]);
        expect((await reportsOf(datasetId)).reportCount).toBe(1);
        const counted = await t.dataSource.query('SELECT count(*)::int AS n, max(ordinal) AS last FROM reports WHERE dataset_id = $1', [rowId(datasetId)]);
        expect(counted).toEqual([{ n: 1, last: 0 }]);

        // The rolled-back imports leave no gap: the whole file lands after the old report, in file order.
        expect(await importReports(t, datasetId, jsonl(rows))).toMatchObject({ inserted: N, updated: 0 });
        const ordinals = (await t.dataSource.query('SELECT external_id, ordinal FROM reports WHERE dataset_id = $1 ORDER BY ordinal', [rowId(datasetId)])) as {
          external_id: string;
          ordinal: number;
        }[];
        expect(ordinals.length).toBe(N + 1);
        expect(ordinals.every((r, i) => r.ordinal === i && r.external_id === (i === 0 ? 'OLD' : `S${i - 1}`))).toBe(true);
      });

      it('lists problems from every chunk, and UPSERT across chunks keeps the replaced reports in place', async () => {
        const datasetId = await freshDataset('Many chunks');
        const broken = rows.map((r, i) => (i % 1500 === 7 ? { ...r, text: 42 } : r));
        const error = failure(await t.gql(IMPORT_REPORTS, { input: { datasetId, format: 'JSONL', content: jsonl(broken) } }), 'BAD_USER_INPUT');
        expect((error.extensions?.rowErrors as { row: number }[]).map((e) => e.row)).toEqual([8, 1508, 3008, 4508]);
        expect((await reportsOf(datasetId)).reportCount).toBe(0);

        await importReports(t, datasetId, jsonl(rows.slice(2500)));
        const upsert = await importReports(t, datasetId, jsonl(rows.map((r) => ({ ...r, text: `v2 ${r.text}` }))), { onDuplicate: 'UPSERT' });
        expect(upsert).toMatchObject({ inserted: 2500, updated: 2500 });
        const byId = new Map(
          ((await t.dataSource.query('SELECT external_id, ordinal, text FROM reports WHERE dataset_id = $1', [rowId(datasetId)])) as { external_id: string; ordinal: number; text: string }[]).map(
            (r) => [r.external_id, r],
          ),
        );
        expect(byId.size).toBe(N);
        expect(byId.get('S2500')).toMatchObject({ ordinal: 0 });
        expect(byId.get('S0')).toMatchObject({ ordinal: 2500 });
        expect(byId.get('S4999')!.text.startsWith('v2 ')).toBe(true);
      });
    });

    it('enforces access', async () => {
      const datasetId = await freshDataset('Guarded reports');
      const foreignUseCase = await createUseCase(t, b.id);
      const foreign = await createDataset(t, foreignUseCase.id);
      await expectAccessErrors(
        t,
        IMPORT_REPORTS,
        { datasetId, format: 'JSONL', content: jsonl([{ id: 'G1', text: 'guarded' }]) },
        { keys: a, forbiddenKeys: [a.viewer], idField: 'datasetId', foreignId: foreign, unknownType: 'Dataset' },
      );
      expect((await reportsOf(datasetId)).reportCount).toBe(0);
      expect(ok(await t.gql(REPORTS_QUERY, { id: foreign }, b.viewer)).node.reportCount).toBe(0);
      // A report of another project is not visible through node(id) either.
      const foreignReports = await createDataset(t, foreignUseCase.id, 'B reports', b.admin);
      await importReports(t, foreignReports, jsonl([{ id: 'B1', text: 'text of B' }]), {}, b.admin);
      const [report] = (await reportsOf(foreignReports)).nodes;
      expect(ok(await t.gql('query ($id: ID!) { node(id: $id) { id } }', { id: report!.id }, a.admin)).node).toBeNull();
      expect(ok(await t.gql('query ($id: ID!) { node(id: $id) { id } }', { id: report!.id }, b.viewer)).node).toEqual({ id: report!.id });
    });
  });
});
