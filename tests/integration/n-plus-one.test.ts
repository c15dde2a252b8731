import {
  CREATE_PROMPT,
  createDataset,
  createProject,
  createUseCase,
  importAnnotations,
  importPredictions,
  importReports,
  isBookkeeping,
  jsonl,
  ok,
  rowId,
} from '../support/graphql-fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * The number of SQL statements a query needs must not grow with the number of parents: every
 * per-parent field goes through a per-request DataLoader (DESIGN.md "API conventions").
 */
describe('query counts do not grow with the number of parents', () => {
  let t: TestApp;
  /** Projects with 2 and 6 use cases. */
  const projects: Record<number, string> = {};
  /** Use cases with 2 and 6 imported runs (each a model served by an endpoint), and their datasets. */
  const useCases: Record<number, { id: string; datasetId: string; runIds: string[] }> = {};

  const VARIABLES = [
    { key: 'grade', type: 'CATEGORICAL', options: ['G1', 'G2', 'G3'] },
    { key: 'breslow_mm', type: 'NUMERIC' },
    { key: 'site', type: 'FREE_TEXT' },
  ];

  beforeAll(async () => {
    // Answers built without pauses: pacing (execution-pacer.ts) splits DataLoader batches by
    // time on a busy machine, which is not what this counts.
    t = await startTestApp({ http: { executionSliceMs: 60_000 } });
    for (const n of [2, 6]) {
      const project = await createProject(t, `N+1 project ${n}`);
      projects[n] = project.id;
      for (let i = 0; i < n; i++) await createUseCase(t, project.id, { name: `use case ${i}`, variables: VARIABLES });

      const useCase = await createUseCase(t, project.id, { name: 'with runs', variables: VARIABLES });
      const datasetId = await createDataset(t, useCase.id);
      const reportIds = Array.from({ length: n }, (_, i) => `R${i + 1}`);
      await importReports(t, datasetId, jsonl(reportIds.map((id) => ({ id, text: `report ${id}` }))));
      await importAnnotations(t, datasetId, 'first rater', 'JSONL', jsonl(reportIds.map((id) => ({ id, grade: 'G1', site: 'arm' }))), { isReference: true });
      await importAnnotations(t, datasetId, 'second rater', 'JSONL', jsonl(reportIds.map((id) => ({ id, grade: 'G2' }))));
      const prompt = ok(await t.gql(CREATE_PROMPT, { input: { useCaseId: useCase.id, name: 'p' } })).createPrompt.prompt;
      const runIds: string[] = [];
      for (let i = 0; i < n; i++) {
        const payload = await importPredictions(t, datasetId, {
          format: 'JSONL',
          layout: 'JSON_COLUMN',
          modelName: `model-${n}-${i}`,
          promptId: prompt.id,
          content: jsonl(reportIds.map((id) => ({ id, extracted_data: { grade: 'G1', breslow_mm: '1,5', site: 'arm' } }))),
        });
        runIds.push(payload.run.id);
        // registerEndpoint is not there yet: give the imported model an endpoint directly.
        const [endpoint] = (await t.dataSource.query(
          `INSERT INTO endpoints (project_id, name, base_url, kind, gpu_count) VALUES ($1, $2, $3, 'VLLM', 2) RETURNING id`,
          [rowId(project.id), `endpoint ${n}-${i}`, `http://10.0.0.${i + 1}:8000/v1`],
        )) as [{ id: string }];
        await t.dataSource.query('UPDATE models SET endpoint_id = $1 WHERE id = $2', [endpoint.id, rowId(payload.run.model.id)]);
      }
      useCases[n] = { id: useCase.id, datasetId, runIds };
    }
  });
  afterAll(() => t.close());

  /** Runs a query and returns its data and the statements it issued (without key checks and transaction control). */
  async function counted(query: string, variables: Record<string, unknown>): Promise<{ data: Record<string, any>; statements: string[] }> {
    t.queries.length = 0;
    const data = ok(await t.gql(query, variables));
    const statements = t.queries.filter((sql) => !isBookkeeping(sql));
    return { data, statements };
  }

  async function compare(query: string, variablesOf: (n: number) => Record<string, unknown>, check: (data: Record<string, any>, n: number) => void) {
    const few = await counted(query, variablesOf(2));
    check(few.data, 2);
    const many = await counted(query, variablesOf(6));
    check(many.data, 6);
    expect({ statements: many.statements.length }).toEqual({ statements: few.statements.length });
    return few.statements.length;
  }

  it('project { useCases { nodes { variables } } }', async () => {
    const statements = await compare(
      'query ($id: ID!) { project(id: $id) { useCases(first: 50) { nodes { name variables { key type options } } } } }',
      (n) => ({ id: projects[n] }),
      (data, n) => {
        const nodes = data.project.useCases.nodes as { name: string; variables: { key: string }[] }[];
        expect(nodes).toHaveLength(n + 1);
        for (const node of nodes) expect(node.variables.map((v) => v.key)).toEqual(['grade', 'breslow_mm', 'site']);
      },
    );
    expect(statements).toBeLessThanOrEqual(3);
  });

  it('useCase { runs { nodes { model { servedName endpoint { name } } } } }', async () => {
    const statements = await compare(
      'query ($id: ID!) { node(id: $id) { ... on UseCase { runs(first: 50) { nodes { model { servedName endpoint { name gpuCount } } } } } } }',
      (n) => ({ id: useCases[n]!.id }),
      (data, n) => {
        const models = (data.node.runs.nodes as { model: { servedName: string; endpoint: { name: string; gpuCount: number } } }[]).map((r) => r.model);
        expect(models).toHaveLength(n);
        expect(models.map((m) => m.servedName).sort()).toEqual(Array.from({ length: n }, (_, i) => `model-${n}-${i}`).sort());
        for (const model of models) {
          expect(model.endpoint).toEqual({ name: `endpoint ${model.servedName.slice('model-'.length)}`, gpuCount: 2 });
        }
      },
    );
    expect(statements).toBeLessThanOrEqual(4);
  });

  it('runs with their use case, dataset, prompt, usage and progress', async () => {
    await compare(
      `query ($id: ID!) { node(id: $id) { ... on UseCase { runs(first: 50) { totalCount nodes {
         name status useCase { name variables { key } } prompt { name version }
         dataset { name reportCount annotators { name } referenceAnnotator { name } }
         usage { promptTokens tokensPerSecondPerGpu } progress { total succeeded }
         model { servedName endpoint { name models { servedName } } } } } } } }`,
      (n) => ({ id: useCases[n]!.id }),
      (data, n) => {
        const runs = data.node.runs.nodes as Record<string, any>[];
        expect(runs).toHaveLength(n);
        for (const run of runs) {
          expect(run.dataset).toEqual({ name: 'test set', reportCount: n, annotators: [{ name: 'first rater' }, { name: 'second rater' }], referenceAnnotator: { name: 'first rater' } });
          expect(run.progress).toEqual({ total: n, succeeded: n });
          expect(run.prompt).toEqual({ name: 'p', version: 1 });
          expect(run.model.endpoint.models).toEqual([{ servedName: run.model.servedName }]);
        }
      },
    );
  });

  it('predictions with their report and fields', async () => {
    await compare(
      `query ($id: ID!) { node(id: $id) { ... on Run { predictions(first: 50) { nodes {
         report { externalId text } fields { key value valid invalidCategory } } } } } }`,
      (n) => ({ id: useCases[n]!.runIds[0] }),
      (data, n) => {
        const predictions = data.node.predictions.nodes as { report: { externalId: string }; fields: { key: string; value: unknown }[] }[];
        expect(predictions).toHaveLength(n);
        for (const p of predictions) {
          expect(p.fields.map((f) => [f.key, f.value])).toEqual([
            ['grade', 'G1'],
            ['breslow_mm', 1.5],
            ['site', 'arm'],
          ]);
        }
      },
    );
  });

  it('reports with their annotations, annotators and variables', async () => {
    await compare(
      `query ($id: ID!) { node(id: $id) { ... on Dataset { reports(first: 50) { nodes {
         externalId annotations { value status annotator { name isReference } variable { key } } } } } } }`,
      (n) => ({ id: useCases[n]!.datasetId }),
      (data, n) => {
        const reports = data.node.reports.nodes as { annotations: unknown[] }[];
        expect(reports).toHaveLength(n);
        for (const report of reports) expect(report.annotations).toHaveLength(3);
      },
    );
  });
});
