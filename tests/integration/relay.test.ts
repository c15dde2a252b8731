import {
  CREATE_DATASET,
  CREATE_PROMPT,
  createDataset,
  createLoadedDataset,
  createProjectWithKeys,
  createUseCase,
  failure,
  globalId,
  importAnnotations,
  importPredictions,
  importReports,
  jsonl,
  MALFORMED_ID,
  ok,
  RUN_PREDICTIONS,
  rowId,
  unknownId,
  type ProjectKeys,
} from '../support/graphql-fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

const NODE = 'query ($id: ID!) { node(id: $id) { __typename id } }';

interface Page {
  totalCount: number;
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
  edges: { cursor: string; node: { id: string } }[];
  nodes: { id: string }[];
}

const PAGE_FIELDS = 'totalCount pageInfo { hasNextPage hasPreviousPage startCursor endCursor } edges { cursor node { id } } nodes { id }';

describe('Relay nodes and connections', () => {
  let t: TestApp;
  let a: ProjectKeys;
  let b: ProjectKeys;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    t = await startTestApp();
    a = await createProjectWithKeys(t, 'Relay project A');
    b = await createProjectWithKeys(t, 'Relay project B');

    const { useCase, datasetId } = await createLoadedDataset(t, a.id, { name: 'Relay use case' });
    const annotator = await importAnnotations(t, datasetId, 'rater', 'JSONL', jsonl([{ id: 'R1', grade: 'G1' }]), { isReference: true });
    const prompt = ok(await t.gql(CREATE_PROMPT, { input: { useCaseId: useCase.id, name: 'p' } })).createPrompt.prompt;
    const run = await importPredictions(t, datasetId, {
      format: 'JSONL',
      layout: 'JSON_COLUMN',
      modelName: 'relay-model',
      content: jsonl([{ id: 'R1', extracted_data: { grade: 'G1' } }]),
    });
    const prediction = ok(await t.gql(RUN_PREDICTIONS, { id: run.run.id })).node.predictions.nodes[0];
    const report = ok(
      await t.gql('query ($id: ID!) { node(id: $id) { ... on Dataset { reports(first: 1) { nodes { id annotations { id } } } } } }', { id: datasetId }),
    ).node.reports.nodes[0];
    const [endpoint] = (await t.dataSource.query(
      `INSERT INTO endpoints (project_id, name, base_url, kind) VALUES ($1, 'local vLLM', 'http://127.0.0.1:9/v1', 'VLLM') RETURNING id`,
      [rowId(a.id)],
    )) as [{ id: string }];
    const [experiment] = (await t.dataSource.query(
      `INSERT INTO experiments (project_id, use_case_id, dataset_id, name) VALUES ($1, $2, $3, 'grid') RETURNING id`,
      [rowId(a.id), rowId(useCase.id), rowId(datasetId)],
    )) as [{ id: string }];

    Object.assign(ids, {
      Project: a.id,
      ApiKey: a.adminKeyId,
      UseCase: useCase.id,
      Variable: useCase.variables[0]!.id,
      Dataset: datasetId,
      Report: report.id,
      Annotator: annotator.annotator.id,
      Annotation: report.annotations[0].id,
      Endpoint: globalId('Endpoint', endpoint.id),
      Model: run.run.model.id,
      Prompt: prompt.id,
      Experiment: globalId('Experiment', experiment.id),
      Run: run.run.id,
      Prediction: prediction.id,
    });
  });
  afterAll(() => t.close());

  describe('node(id)', () => {
    it('returns every kind of object of the own project, for every role', async () => {
      for (const key of [a.admin, a.editor, a.viewer, t.adminKey]) {
        for (const [type, id] of Object.entries(ids)) {
          expect({ type, node: ok(await t.gql(NODE, { id }, key)).node }).toEqual({ type, node: { __typename: type, id } });
        }
      }
    });

    it("answers null for another project's objects", async () => {
      for (const [type, id] of Object.entries(ids)) {
        expect({ type, node: ok(await t.gql(NODE, { id }, b.admin)).node }).toEqual({ type, node: null });
      }
    });

    it('answers null for unknown and malformed IDs', async () => {
      for (const id of [unknownId('Run'), unknownId('Report'), MALFORMED_ID, '', globalId('Run', 'not-a-uuid'), globalId('Nothing', rowId(ids.Run!)), 'x'.repeat(300)]) {
        expect(ok(await t.gql(NODE, { id })).node).toBeNull();
      }
    });

    it('an ID of the wrong type is NOT_FOUND where a specific type is expected', async () => {
      failure(await t.gql(CREATE_DATASET, { input: { useCaseId: ids.Dataset, name: 'x' } }), 'NOT_FOUND');
      expect(ok(await t.gql('query ($id: ID!) { project(id: $id) { id } }', { id: ids.UseCase })).project).toBeNull();
    });
  });

  describe('connections', () => {
    let datasetId: string;

    beforeAll(async () => {
      const useCase = await createUseCase(t, a.id, { name: 'Paged' });
      datasetId = await createDataset(t, useCase.id);
      await importReports(t, datasetId, jsonl(Array.from({ length: 60 }, (_, i) => ({ id: `P${String(i + 1).padStart(2, '0')}`, text: `report ${i + 1}` }))));
    });

    async function reportsPage(args: { first?: number; after?: string | null }, key: string = t.adminKey) {
      return t.gql(
        `query ($id: ID!, $first: Int, $after: String) { node(id: $id) { ... on Dataset { reports(first: $first, after: $after) { ${PAGE_FIELDS} } } } }`,
        { id: datasetId, ...args },
        key,
      );
    }

    async function allPages(fetchPage: (after: string | null) => Promise<Page>, limit = 20): Promise<Page[]> {
      const pages: Page[] = [];
      let after: string | null = null;
      for (let i = 0; i < limit; i++) {
        const page = await fetchPage(after);
        pages.push(page);
        if (!page.pageInfo.hasNextPage) return pages;
        after = page.pageInfo.endCursor;
      }
      throw new Error(`no last page after ${limit} pages`);
    }

    it('pages through reports with first/after: no duplicates, no gaps, totalCount on every page', async () => {
      const everything = ok(await reportsPage({ first: 200 })).node.reports as Page;
      expect(everything.totalCount).toBe(60);
      expect(everything.nodes).toHaveLength(60);
      const pages = await allPages(async (after) => ok(await reportsPage({ first: 25, after }, a.viewer)).node.reports);
      expect(pages.map((p) => p.nodes.length)).toEqual([25, 25, 10]);
      expect(pages.map((p) => p.totalCount)).toEqual([60, 60, 60]);
      expect(pages.map((p) => p.pageInfo.hasPreviousPage)).toEqual([false, true, true]);
      expect(pages.flatMap((p) => p.nodes.map((n) => n.id))).toEqual(everything.nodes.map((n) => n.id));
      for (const page of pages) {
        expect(page.edges.map((e) => e.node.id)).toEqual(page.nodes.map((n) => n.id));
        expect(page.pageInfo.startCursor).toBe(page.edges[0]!.cursor);
        expect(page.pageInfo.endCursor).toBe(page.edges.at(-1)!.cursor);
      }
      // The cursor of any edge continues right after that edge.
      const rest = ok(await reportsPage({ first: 5, after: everything.edges[36]!.cursor })).node.reports as Page;
      expect(rest.nodes.map((n) => n.id)).toEqual(everything.nodes.slice(37, 42).map((n) => n.id));
    });

    it('uses 50 as the default page size and at most 200', async () => {
      const page = ok(await reportsPage({})).node.reports as Page;
      expect(page.nodes).toHaveLength(50);
      expect(page.pageInfo.hasNextPage).toBe(true);
      ok(await reportsPage({ first: 200 }));
      expect(failure(await reportsPage({ first: 201 }), 'BAD_USER_INPUT').extensions?.field).toBe('first');
      failure(await reportsPage({ first: -1 }), 'BAD_USER_INPUT');
      failure(await t.gql(`{ projects(first: 1000) { totalCount } }`), 'BAD_USER_INPUT');
    });

    it('refuses cursors that are not cursors', async () => {
      const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64url');
      for (const after of ['garbage!!', 'bm90IGpzb24', b64('not json'), b64('{"k": 1}'), b64('[1, 2]'), b64('null')]) {
        const error = failure(await reportsPage({ first: 5, after }), 'BAD_USER_INPUT');
        expect({ after, field: error.extensions?.field }).toEqual({ after, field: 'after' });
      }
    });

    it('breaks ties of the sort key by id', async () => {
      const project = await createProjectWithKeys(t, 'Ties');
      for (let i = 0; i < 7; i++) await createUseCase(t, project.id, { name: `tie ${i}` });
      // Equal creation times, at whole milliseconds: the order is decided by the id alone.
      await t.dataSource.query(`UPDATE use_cases SET created_at = date_trunc('milliseconds', now()) WHERE project_id = $1`, [rowId(project.id)]);
      const query = `query ($id: ID!, $first: Int, $after: String) { project(id: $id) { useCases(first: $first, after: $after) { ${PAGE_FIELDS} } } }`;
      const everything = ok(await t.gql(query, { id: project.id, first: 50 })).project.useCases as Page;
      const expected = [...everything.nodes.map((n) => n.id)].sort((x, y) => (rowId(x) < rowId(y) ? -1 : 1));
      expect(everything.nodes.map((n) => n.id)).toEqual(expected);
      const pages = await allPages(async (after) => ok(await t.gql(query, { id: project.id, first: 3, after }, project.viewer)).project.useCases);
      expect(pages.map((p) => p.nodes.length)).toEqual([3, 3, 1]);
      expect(pages.flatMap((p) => p.nodes.map((n) => n.id))).toEqual(expected);
    });

    it('first: 0 returns no nodes but the total', async () => {
      const page = ok(await reportsPage({ first: 0 })).node.reports as Page;
      expect(page.nodes).toEqual([]);
      expect(page.totalCount).toBe(60);
    });
  });

  describe('errors', () => {
    it('masks unexpected errors behind a correlation id, keeping the rest of the response', async () => {
      await t.dataSource.query('ALTER TABLE experiments RENAME TO experiments_unavailable');
      try {
        const result = await t.gql('query ($id: ID!) { viewer { serverAdmin } project(id: $id) { name experiments { totalCount } } }', { id: a.id });
        expect(result.data?.viewer).toEqual({ serverAdmin: true });
        const error = failure(result, 'INTERNAL_SERVER_ERROR');
        // Exactly this message and these extensions: no SQL, table name or stack reaches the client.
        expect(error.message).toMatch(/^Internal server error \(correlation id [0-9a-f-]{36}\)$/);
        expect(error.extensions).toEqual({ code: 'INTERNAL_SERVER_ERROR', correlationId: expect.stringMatching(/^[0-9a-f-]{36}$/) });
        expect(error.message).toContain(error.extensions?.correlationId);
      } finally {
        await t.dataSource.query('ALTER TABLE experiments_unavailable RENAME TO experiments');
      }
      expect(ok(await t.gql('query ($id: ID!) { project(id: $id) { experiments { totalCount } } }', { id: a.id })).project.experiments.totalCount).toBe(1);
    });

    it('reports malformed requests as BAD_USER_INPUT with the GraphQL code as reason', async () => {
      expect(failure(await t.gql('{ viewer { serverAdmin '), 'BAD_USER_INPUT').extensions?.reason).toBe('GRAPHQL_PARSE_FAILED');
      expect(failure(await t.gql('{ viewer { noSuchField } }'), 'BAD_USER_INPUT').extensions?.reason).toBe('GRAPHQL_VALIDATION_FAILED');
      failure(await t.gql('query ($id: ID!) { node(id: $id) { id } }', {}), 'BAD_USER_INPUT');
      failure(await t.gql(CREATE_DATASET, { input: { name: 'missing use case id' } }), 'BAD_USER_INPUT');
    });
  });
});
