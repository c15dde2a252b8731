import {
  createDataset, createLoadedDataset, createProject, createProjectWithKeys, createUseCase, csv, failure, importPredictions,
  isBookkeeping, jsonl, ok, predictionFields, STANDARD_VARIABLES, unknownId, UPDATE_USE_CASE,
} from '../support/graphql-fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

describe('regressions: paging, cursors, renormalisation, nested lists', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  it('connections sorted by creation time page without duplicates', async () => {
    const project = await createProjectWithKeys(t, 'Paging by time');
    const { datasetId } = await createLoadedDataset(t, project.id);
    const run = await importPredictions(t, datasetId, {
      format: 'JSONL', layout: 'JSON_COLUMN', modelName: 'm',
      content: jsonl(['R1', 'R2', 'R3', 'R4', 'R5'].map((id) => ({ id, extracted_data: { grade: 'G1' } }))),
    });
    const query = `query ($id: ID!, $after: String) { node(id: $id) { ... on Run {
      predictions(first: 2, after: $after) { pageInfo { hasNextPage endCursor } nodes { id } } } } }`;
    const seen: string[] = [];
    let after: string | null = null;
    for (let i = 0; i < 5; i++) {
      const page: any = ok(await t.gql(query, { id: run.run.id, after })).node.predictions;
      seen.push(...page.nodes.map((n: { id: string }) => n.id));
      if (!page.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor;
    }
    expect(seen).toHaveLength(5);
    expect(new Set(seen).size).toBe(5);

    // Rows created one by one (distinct timestamps): the last row of a page comes again.
    for (let i = 0; i < 4; i++) await createUseCase(t, project.id);
    const ucQuery = `query ($id: ID!, $after: String) { project(id: $id) { useCases(first: 2, after: $after) { pageInfo { hasNextPage endCursor } nodes { id } } } }`;
    const page1: any = ok(await t.gql(ucQuery, { id: project.id })).project.useCases;
    const page2: any = ok(await t.gql(ucQuery, { id: project.id, after: page1.pageInfo.endCursor })).project.useCases;
    expect(page2.nodes.map((n: { id: string }) => n.id)).not.toContain(page1.nodes[1].id);
  });

  it('a server admin key naming a project that does not exist gets NOT_FOUND, not an internal error', async () => {
    const projectId = unknownId('Project');
    const variables = [{ key: 'a', type: 'FREE_TEXT' }];
    const attempts: [string, Record<string, unknown>][] = [
      ['mutation ($i: CreateUseCaseInput!) { createUseCase(input: $i) { useCase { id } } }', { i: { projectId, name: 'orphan', variables } }],
      [
        'mutation ($i: ImportUseCaseConfigInput!) { importUseCaseConfig(input: $i) { useCase { id } } }',
        { i: { projectId, name: 'orphan', promptYaml: 'field_instructions:\n  - name: a\n    type: string\n' } },
      ],
      ['mutation ($i: RegisterEndpointInput!) { registerEndpoint(input: $i) { endpoint { id } } }', { i: { projectId, name: 'orphan', baseUrl: 'http://127.0.0.1:9/v1', kind: 'VLLM' } }],
    ];
    const before = Number((await t.dataSource.query('SELECT count(*) AS n FROM use_cases'))[0].n);
    for (const [query, vars] of attempts) {
      const error = failure(await t.gql(query, vars), 'NOT_FOUND');
      expect(error.message).toBe('Project not found');
    }
    expect(Number((await t.dataSource.query('SELECT count(*) AS n FROM use_cases'))[0].n)).toBe(before);
  });

  it('a decodable cursor with wrong contents is BAD_USER_INPUT, not an internal error', async () => {
    const project = await createProject(t, 'Cursors');
    const { datasetId } = await createLoadedDataset(t, project.id);
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v), 'utf8').toString('base64url');
    const reports = 'query ($id: ID!, $after: String) { node(id: $id) { ... on Dataset { reports(first: 2, after: $after) { nodes { id } } } } }';
    failure(await t.gql(reports, { id: datasetId, after: b64({ k: 'x', i: 'y' }) }), 'BAD_USER_INPUT');
    const cursor = ok(await t.gql('query ($id: ID!) { node(id: $id) { ... on Dataset { reports(first: 1) { pageInfo { endCursor } } } } }', { id: datasetId }))
      .node.reports.pageInfo.endCursor;
    // A cursor of the reports list (keyed by ordinal) given to the projects list (keyed by time).
    failure(await t.gql('query ($after: String) { projects(first: 2, after: $after) { totalCount } }', { after: cursor }), 'BAD_USER_INPUT');
  });

  it('renormalisation keeps OUT_OF_FORMAT for predictions whose object could not be read', async () => {
    const project = await createProject(t, 'Renormalise');
    const { useCase, datasetId } = await createLoadedDataset(t, project.id);
    const run = await importPredictions(t, datasetId, {
      format: 'CSV', layout: 'JSON_COLUMN', modelName: 'm',
      content: csv([['id', 'extracted_data'], ['R1', "{'grade': 'G1'"], ['R2', "{'grade': 'G2'}"]]),
    });
    expect((await predictionFields(t, run.run.id)).R1!.grade!.invalidCategory).toBe('OUT_OF_FORMAT');
    // An unrelated change (a new alias on another variable) renormalises every prediction.
    const variables = STANDARD_VARIABLES.map((v) => (v.key === 'metastasis' ? { ...v, aliases: { ...v.aliases, positief: 'Yes' } } : v));
    ok(await t.gql(UPDATE_USE_CASE, { input: { id: useCase.id, variables } }));
    const fields = await predictionFields(t, run.run.id);
    expect(fields.R2!.grade!.value).toBe('G2');
    expect(fields.R1!.grade!.invalidCategory).toBe('OUT_OF_FORMAT');
  });

  it('nested connections do not issue queries per parent', async () => {
    const counts: number[] = [];
    for (const n of [2, 6]) {
      const project = await createProject(t, `Nested ${n}`);
      for (let i = 0; i < n; i++) {
        const useCase = await createUseCase(t, project.id);
        await createDataset(t, useCase.id);
      }
      t.queries.length = 0;
      ok(await t.gql('query ($id: ID!) { project(id: $id) { useCases { nodes { datasets { totalCount nodes { name } } } } } }', { id: project.id }));
      counts.push(t.queries.filter((sql) => !isBookkeeping(sql)).length);
    }
    expect(counts[1]).toBe(counts[0]);
  });

  it("lists a run's predictions in report order, whatever the order of the imported file", async () => {
    const project = await createProjectWithKeys(t, 'Report order');
    const { datasetId } = await createLoadedDataset(t, project.id);
    const run = await importPredictions(t, datasetId, {
      format: 'JSONL', layout: 'JSON_COLUMN', modelName: 'm',
      content: jsonl(['R4', 'R2', 'R5', 'R1', 'R3'].map((id) => ({ id, extracted_data: { grade: 'G1' } }))),
    });
    const query = `query ($id: ID!, $after: String) { node(id: $id) { ... on Run {
      predictions(first: 2, after: $after) { pageInfo { hasNextPage endCursor } nodes { report { externalId } } } } } }`;
    const seen: string[] = [];
    let after: string | null = null;
    for (let i = 0; i < 5; i++) {
      const page: any = ok(await t.gql(query, { id: run.run.id, after })).node.predictions;
      seen.push(...page.nodes.map((n: { report: { externalId: string } }) => n.report.externalId));
      if (!page.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor;
    }
    expect(seen).toEqual(['R1', 'R2', 'R3', 'R4', 'R5']);
  });

  it("refuses a cursor of another list of the same kind (another dataset's reports)", async () => {
    const project = await createProject(t, 'Foreign cursors');
    const a = await createLoadedDataset(t, project.id);
    const b = await createLoadedDataset(t, project.id);
    const query = 'query ($id: ID!, $after: String) { node(id: $id) { ... on Dataset { reports(first: 2, after: $after) { pageInfo { endCursor } nodes { externalId } } } } }';
    const cursor = ok(await t.gql(query, { id: a.datasetId })).node.reports.pageInfo.endCursor;
    expect(ok(await t.gql(query, { id: a.datasetId, after: cursor })).node.reports.nodes.length).toBeGreaterThan(0);
    failure(await t.gql(query, { id: b.datasetId, after: cursor }), 'BAD_USER_INPUT');
  });
});
