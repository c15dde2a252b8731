import { createLoadedDataset, createProjectWithKeys, ENDPOINT_API_KEY, failure, importAnnotations, importPredictions, jsonl, ok, SECOND_ANNOTATOR_ROWS, STANDARD_REFERENCE, csv, rowId, type ProjectKeys } from '../support/graphql-fixtures';
import { startFakeLlm, type FakeLlm } from '../support/fake-llm/fake-llm-server';
import { startTestApp, type TestApp } from '../support/test-app';

const IMPORT = /* GraphQL */ `
  mutation ($input: ImportProjectBundleInput!) {
    importProjectBundle(input: $input) { project { id name } adminKey { secret } warnings tables { name rows } }
  }`;

const TABLES = ['use_cases', 'variables', 'datasets', 'reports', 'annotators', 'annotations', 'prompts', 'endpoints', 'models', 'experiments', 'runs', 'predictions'];

describe('project bundle: a whole project exported as JSON and imported as a new project', () => {
  let t: TestApp;
  let fake: FakeLlm;
  let keys: ProjectKeys;
  let other: ProjectKeys;
  let useCaseId: string;
  let datasetId: string;
  let bundle: string;

  const download = (projectId: string, key: string) => fetch(`http://127.0.0.1:${t.port}/exports/projects/${projectId}/bundle.json`, { headers: { authorization: `Bearer ${key}` } });
  const rowCounts = async () =>
    Object.fromEntries(await Promise.all([...TABLES, 'projects', 'api_keys'].map(async (table) => [table, Number((await t.dataSource.query(`SELECT count(*) AS n FROM ${table}`))[0].n)])));
  const exported = async (path: string, key: string) => {
    const response = await fetch(`http://127.0.0.1:${t.port}${path}`, { headers: { authorization: `Bearer ${key}` } });
    expect(response.status).toBe(200);
    return response.json();
  };

  beforeAll(async () => {
    t = await startTestApp();
    fake = await startFakeLlm({ models: [{ id: 'fake-model', maxModelLen: 32768 }] });
    keys = await createProjectWithKeys(t, 'Bundle source');
    other = await createProjectWithKeys(t, 'Bundle other');
    const loaded = await createLoadedDataset(t, keys.id);
    useCaseId = loaded.useCase.id;
    datasetId = loaded.datasetId;
    await importAnnotations(t, datasetId, 'Consensus', 'CSV', STANDARD_REFERENCE, { isReference: true });
    await importAnnotations(t, datasetId, 'Annotator B', 'CSV', csv(SECOND_ANNOTATOR_ROWS));
    const ids = ['R1', 'R2', 'R3', 'R4', 'R5'];
    for (const [r, grades] of [['G2', 'G3', 'G1', 'G1', 'G2'], ['G1', 'G3', 'G1', 'G3', 'G2'], ['G3', 'G3', 'G2', 'G1', 'G2']].entries()) {
      await importPredictions(t, datasetId, {
        format: 'JSONL',
        layout: 'JSON_COLUMN',
        modelName: `model-${r}`,
        strategy: r === 0 ? 'ZERO_SHOT' : 'FEW_SHOT',
        content: jsonl(ids.map((id, i) => ({ id, extracted_data: { grade: grades[i], metastasis: i % 2 ? 'Yes' : 'No', breslow_mm: '1,4' } }))),
      });
    }
    ok(
      await t.gql(`mutation($i: RegisterEndpointInput!) { registerEndpoint(input: $i) { endpoint { id } } }`, {
        i: { projectId: keys.id, name: 'fake vLLM', baseUrl: fake.baseUrl, kind: 'VLLM', apiKey: ENDPOINT_API_KEY },
      }),
    );
    // A run that was under way where it was exported.
    await t.dataSource.query(`UPDATE runs SET status = 'RUNNING' WHERE id = (SELECT id FROM runs WHERE name LIKE '%model-2%' LIMIT 1)`);
    const response = await download(keys.id, keys.admin);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    bundle = await response.text();
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });

  it('the bundle carries every table with the rows of the project and no endpoint key; exports are audited', async () => {
    const document = JSON.parse(bundle);
    expect(document).toEqual(expect.objectContaining({ format: 'reportql-project-bundle', version: 1 }));
    expect(document.reports).toHaveLength(5);
    expect(document.annotations.length).toBeGreaterThan(0);
    expect(document.runs).toHaveLength(3);
    expect(document.predictions).toHaveLength(15);
    expect(document.endpoints).toHaveLength(1);
    expect(document.endpoints[0].api_key_encrypted).toBeNull();
    expect(bundle).not.toContain(ENDPOINT_API_KEY);
    const [stored] = await t.dataSource.query('SELECT api_key_encrypted FROM endpoints WHERE project_id = $1', [rowId(keys.id)]);
    expect(stored.api_key_encrypted).toBeTruthy();
    expect(bundle).not.toContain(stored.api_key_encrypted);
    const audited = await t.dataSource.query(`SELECT action, sum(objects)::int AS n FROM audit_events WHERE project_id = $1 AND kind = 'READ' AND transport = 'HTTP' GROUP BY action`, [rowId(keys.id)]);
    expect(Object.fromEntries(audited.map((r: any) => [r.action, r.n]))).toEqual(expect.objectContaining({ REPORT_TEXTS: 5, PREDICTIONS: 15 }));
  });

  it('a VIEWER, an EDITOR and another project cannot export', async () => {
    expect((await download(keys.id, keys.viewer)).status).toBe(403);
    expect((await download(keys.id, keys.editor)).status).toBe(403);
    const foreign = await download(keys.id, other.admin);
    expect(foreign.status).toBe(404);
    expect((await foreign.json()).errors[0].extensions.code).toBe('NOT_FOUND');
  });

  it('imported as a new project: the same scores, agreement, leaderboard, texts and predictions, and none of the old ids', async () => {
    const result = ok(await t.gql(IMPORT, { input: { name: 'Bundle copy', content: bundle } })).importProjectBundle;
    expect(result.project.name).toBe('Bundle copy');
    expect(result.warnings.join(' ')).toMatch(/CANCELLED/);
    expect(result.warnings.join(' ')).toMatch(/API keys/);
    expect(result.tables.find((x: any) => x.name === 'predictions').rows).toBe(15);
    const oldProject = rowId(keys.id);
    const newProjectRow = rowId(result.project.id);
    expect(newProjectRow).toBeTruthy();

    // No id of the old project's rows appears anywhere in the new project's rows.
    const oldIds = new Set<string>(JSON.parse(bundle).project ? [JSON.parse(bundle).project.id] : []);
    const document = JSON.parse(bundle);
    for (const key of ['useCases', 'variables', 'datasets', 'reports', 'annotators', 'annotations', 'prompts', 'endpoints', 'models', 'experiments', 'runs', 'predictions']) for (const row of document[key]) oldIds.add(row.id);
    for (const table of TABLES) {
      const rows = await t.dataSource.query(`SELECT to_jsonb(x)::text AS row FROM ${table} x WHERE project_id = $1`, [newProjectRow]);
      for (const { row } of rows) for (const id of oldIds) expect(row.includes(id)).toBe(false);
    }
    const [{ api_key_encrypted: key }] = await t.dataSource.query('SELECT api_key_encrypted FROM endpoints WHERE project_id = $1', [newProjectRow]);
    expect(key).toBeNull();
    const statuses = await t.dataSource.query('SELECT status FROM runs WHERE project_id = $1 ORDER BY status', [newProjectRow]);
    expect(statuses.map((r: any) => r.status)).toEqual(['CANCELLED', 'SUCCEEDED', 'SUCCEEDED']);

    // The same numbers: per-variable scores with agreement, and the leaderboard.
    const admin = result.adminKey.secret;
    const newUseCaseId = ok(await t.gql(`query($p: ID!) { project(id: $p) { useCases(first: 5) { nodes { id datasets(first: 5) { nodes { id } } } } } }`, { p: result.project.id }, admin)).project.useCases.nodes[0];
    const strip = (doc: any) => JSON.parse(JSON.stringify(doc, (k, v) => (['runId', 'modelId', 'referenceAnnotatorId', 'embeddingModelId'].includes(k) ? undefined : v)));
    for (const file of ['scores.json', 'leaderboard.json']) {
      const before = await exported(`/exports/use-cases/${useCaseId}/${file}?datasetId=${encodeURIComponent(datasetId)}&resamples=200`, keys.admin);
      const after = await exported(`/exports/use-cases/${newUseCaseId.id}/${file}?datasetId=${encodeURIComponent(newUseCaseId.datasets.nodes[0].id)}&resamples=200`, admin);
      expect(strip(after)).toEqual(strip(before));
      expect(JSON.stringify(after).length).toBeGreaterThan(100);
    }

    // Report texts and predictions are the same rows under new ids.
    const texts = async (project: string) => (await t.dataSource.query('SELECT external_id, text, ordinal FROM reports WHERE project_id = $1 ORDER BY ordinal', [project])) as unknown[];
    expect(await texts(newProjectRow)).toEqual(await texts(oldProject));
    const predictions = async (project: string) =>
      (await t.dataSource.query(
        `SELECT r.external_id, ru.name, p.status, p."values", p.cells FROM predictions p JOIN reports r ON r.id = p.report_id JOIN runs ru ON ru.id = p.run_id WHERE p.project_id = $1 ORDER BY ru.name, r.ordinal`,
        [project],
      )) as unknown[];
    expect(await predictions(newProjectRow)).toEqual(await predictions(oldProject));
  });

  it('a bad version, a truncated bundle, a dangling reference and a non-admin key are refused and nothing is written', async () => {
    const before = await rowCounts();
    const document = JSON.parse(bundle);
    const cases: [string, string][] = [
      [JSON.stringify({ ...document, version: 2 }), 'version'],
      [bundle.slice(0, Math.floor(bundle.length / 2)), ''],
      [JSON.stringify({ ...document, format: 'something-else' }), 'format'],
      [JSON.stringify({ ...document, predictions: [...document.predictions, { ...document.predictions[0], id: 'extra', report_id: 'nope' }] }), 'predictions[15].report_id'],
      [JSON.stringify({ ...document, reports: [...document.reports, { ...document.reports[0], id: 'twin' }] }), 'reports'],
      [JSON.stringify({ ...document, runs: [{ ...document.runs[0], status: 'NOT_A_STATUS', total_reports: 'many' }, ...document.runs.slice(1)] }), 'runs'],
    ];
    for (const [content, path] of cases) {
      const error = failure(await t.gql(IMPORT, { input: { name: 'Refused', content } }), 'BAD_USER_INPUT');
      expect(error.extensions?.field).toBe('content');
      if (path) expect(error.extensions?.path).toBe(path);
    }
    failure(await t.gql(IMPORT, { input: { name: 'Refused', content: bundle } }, keys.admin), 'FORBIDDEN');
    expect(await rowCounts()).toEqual(before);
  });
});
