import { isObjectType } from 'graphql';
import { buildReportQlSchema } from '../../src/graphql/schema';
import { NODE_TYPES, type NodeType } from '../../src/graphql/node';
import { startFakeLlm, type FakeLlm } from '../support/fake-llm/fake-llm-server';
import {
  CREATE_PROMPT,
  createApiKey,
  createLoadedDataset,
  createProject,
  createUseCase,
  globalId,
  importAnnotations,
  importPredictions,
  ok,
  rowId,
  STANDARD_REFERENCE,
  standardPredictions,
} from '../support/graphql-fixtures';
import { documentCorpus, fileCorpus, RawJson, schemaCorpus, type CaseResponse, type CorpusFixture, type HostileCase } from '../support/hostile-corpus';
import { startTestApp, type TestApp } from '../support/test-app';

/** Every code a refused input may carry (DESIGN.md "API conventions"), INTERNAL_SERVER_ERROR excluded. */
const CODED = new Set(['BAD_USER_INPUT', 'UNAUTHENTICATED', 'FORBIDDEN', 'NOT_FOUND', 'CONFLICT', 'RATE_LIMITED']);

/**
 * Tables that change without anyone writing data (the worker registry, the embedding cache, the
 * runs' cell columns stored after a read), and tables written by refused requests too (the audit
 * trail records them, rate limits count them).
 */
const UNCHECKED_TABLES = new Set(['migrations', 'job_workers', 'embeddings', 'run_cell_columns', 'audit_events', 'rate_limits']);

/** Columns written by reads, by table: when an API key was last used. */
const VOLATILE_COLUMNS: Record<string, string[]> = { api_keys: ['last_used_at'] };

describe('the hostile-input corpus', () => {
  let t: TestApp;
  let fake: FakeLlm;
  let fixture: CorpusFixture;
  let checksumSql: string;

  beforeAll(async () => {
    t = await startTestApp();
    fake = await startFakeLlm({ models: ['fake-model'] });
    fixture = await buildFixture(t, fake);
    const tables = ((await t.dataSource.query(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`)) as {
      table_name: string;
    }[])
      .map((r) => r.table_name)
      .filter((name) => !UNCHECKED_TABLES.has(name));
    // A row written, updated or deleted changes its (ctid, xmin): cheap to read, and blind to
    // nothing a commit does. Columns written by reads are left out of the rows they are in.
    const part = (name: string) => {
      const volatile = VOLATILE_COLUMNS[name];
      const row = volatile ? `(to_jsonb(x) - ARRAY[${volatile.map((c) => `'${c}'`).join(', ')}])::text` : `x.ctid::text || ':' || x.xmin::text`;
      return `coalesce((SELECT md5(string_agg(${row}, ',' ORDER BY ${row})) FROM "${name}" x), '-')`;
    };
    checksumSql = `SELECT md5(${tables.map(part).join(' || ')}) AS sum`;
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  const checksum = async () => ((await t.dataSource.query(checksumSql)) as { sum: string }[])[0]!.sum;

  async function send(c: HostileCase): Promise<CaseResponse> {
    const headers: Record<string, string> = { authorization: `Bearer ${t.adminKey}` };
    let response: Response;
    if (c.method === 'GET') {
      const url = `${t.url}?query=${encodeURIComponent(c.query ?? '')}`;
      response = await fetch(url, { headers: { ...headers, 'apollo-require-preflight': 'true' } });
    } else {
      response = await fetch(t.url, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: (c.body as BodyInit | undefined) ?? serialise({ query: c.query, variables: c.variables }) });
    }
    const text = await response.text();
    try {
      return { status: response.status, ...(JSON.parse(text) as object) };
    } catch {
      return { status: response.status, errors: [{ message: `not JSON: ${text.slice(0, 100)}`, extensions: { code: 'NOT_JSON' } }] };
    }
  }

  it('answers every hostile input with a coded error and leaves the database as it was, and accepts what it must, unaltered', async () => {
    const schema = await buildReportQlSchema();
    const cases = [...schemaCorpus(schema, fixture), ...fileCorpus(fixture), ...documentCorpus(fixture)];
    expect(cases.length).toBeGreaterThanOrEqual(300);
    expect(new Set(cases.map((c) => c.name)).size).toBe(cases.length);

    const problems: string[] = [];
    let before = await checksum();
    const outcomes = { refused: 0, accepted: 0, acceptedWrites: 0 };
    for (const c of cases) {
      const response = await send(c);
      const after = await checksum();
      const codes = (response.errors ?? []).map((e) => String(e.extensions?.code));
      if (response.status >= 500 || codes.some((code) => !CODED.has(code))) {
        problems.push(`${c.name}: HTTP ${response.status}, ${codes.join(', ')}: ${response.errors?.[0]?.message.slice(0, 160)}`);
      } else if (codes.length > 0 && Object.values(response.data ?? {}).some((value) => value !== null)) {
        // Part of the document ran (an alias beside a refused one): what ran may write.
        outcomes.accepted++;
        if (c.expect === 'refuse') problems.push(`${c.name}: partly accepted but must be refused`);
      } else if (codes.length > 0) {
        outcomes.refused++;
        if (after !== before && !c.mayWrite) problems.push(`${c.name}: refused (${codes.join(', ')}) but the database changed`);
        if (c.expect === 'accept') problems.push(`${c.name}: refused (${codes[0]}: ${response.errors![0]!.message.slice(0, 160)}) but must be accepted`);
      } else {
        outcomes.accepted++;
        if (after !== before) outcomes.acceptedWrites++;
        if (c.expect === 'refuse') problems.push(`${c.name}: accepted but must be refused`);
        else if (c.verify) await Promise.resolve().then(() => c.verify!(response)).catch((error: unknown) => problems.push(`${c.name}: ${(error as Error).message}`));
      }
      before = after;
    }
    expect(problems).toEqual([]);
    expect(outcomes.refused).toBeGreaterThan(300);
    expect(outcomes.accepted).toBeGreaterThan(20);
    // The checksum sees writes: accepted mutations changed it.
    expect(outcomes.acceptedWrites).toBeGreaterThan(20);
  }, 300_000);

  it('covers every mutation and every argument of every query field of the live schema', async () => {
    const schema = await buildReportQlSchema();
    const targets = new Set(schemaCorpus(schema, fixture).map((c) => c.target));
    const expected: string[] = Object.keys(schema.getMutationType()!.getFields()).map((name) => `Mutation.${name}`);
    for (const owner of [schema.getQueryType()!, ...NODE_TYPES.map((name) => schema.getType(name))]) {
      if (!isObjectType(owner)) continue;
      for (const field of Object.values(owner.getFields())) for (const arg of field.args) expected.push(`${owner.name}.${field.name}(${arg.name})`);
    }
    expect(expected.length).toBeGreaterThan(40);
    expect(expected.filter((target) => !targets.has(target))).toEqual([]);
  });
});

/** JSON with RawJson values written as their text (1e400, nesting deeper than JSON.stringify goes). */
function serialise(body: unknown): string {
  const raws: string[] = [];
  const json = JSON.stringify(body, (_key, value: unknown) => {
    if (value instanceof RawJson) {
      raws.push(value.text);
      return `@@RAW${raws.length - 1}@@`;
    }
    return value;
  });
  return json.replace(/"@@RAW(\d+)@@"/g, (_m, i: string) => raws[Number(i)]!);
}

/** A project holding one object of every node type, reachable by the corpus's baselines. */
async function buildFixture(t: TestApp, fake: FakeLlm): Promise<CorpusFixture> {
  const project = await createProject(t, 'Hostile corpus');
  const spareKey = await createApiKey(t, project.id, 'VIEWER');
  const { useCase, datasetId } = await createLoadedDataset(t, project.id);
  const spare = await createUseCase(t, project.id);
  const reference = await importAnnotations(t, datasetId, 'Reference', 'CSV', STANDARD_REFERENCE, { isReference: true });
  const prompt = ok(
    await t.gql(CREATE_PROMPT, { input: { useCaseId: useCase.id, name: 'corpus', task: 'Extract {{json_template}}', examples: [{ name: 'example-1', input: 'Graad 2.', output: { grade: 'G2' } }] } }),
  ).createPrompt.prompt;
  const imported = await importPredictions(t, datasetId, { format: 'JSONL', layout: 'JSON_COLUMN', modelName: 'imported-model', content: standardPredictions(['G2', 'G3', 'G1', 'G1', 'G2']) });
  const registered = ok(
    await t.gql(`mutation ($i: RegisterEndpointInput!) { registerEndpoint(input: $i) { endpoint { id } models { id } } }`, {
      i: { projectId: project.id, name: 'fake', baseUrl: fake.baseUrl, kind: 'VLLM', timeoutMs: 5000 },
    }),
  ).registerEndpoint;
  const endpointModelId = registered.models[0].id as string;
  const experiment = ok(
    await t.gql(`mutation ($i: StartExperimentInput!) { startExperiment(input: $i) { experiment { id } } }`, {
      i: { datasetId, name: 'corpus grid', modelIds: [endpointModelId], strategies: ['ZERO_SHOT'] },
    }),
  ).startExperiment.experiment;
  const task = ok(
    await t.gql(`mutation ($i: StartExperimentTaskInput!) { startExperimentTask(input: $i) { task { id } } }`, {
      i: { datasetId, name: 'corpus task', modelIds: [endpointModelId], strategies: ['ZERO_SHOT'] },
    }),
  ).startExperimentTask.task;
  const one = async (sql: string, params: unknown[]) => ((await t.dataSource.query(sql, params)) as { id: string }[])[0]!.id;
  const ids: Record<NodeType, string> = {
    Project: project.id,
    ApiKey: project.adminKeyId,
    UseCase: useCase.id,
    Variable: useCase.variables[0]!.id,
    Dataset: datasetId,
    Report: globalId('Report', await one('SELECT id FROM reports WHERE dataset_id = $1 ORDER BY ordinal LIMIT 1', [rowId(datasetId)])),
    Annotator: reference.annotator.id,
    Annotation: globalId('Annotation', await one('SELECT id FROM annotations WHERE annotator_id = $1 LIMIT 1', [rowId(reference.annotator.id)])),
    Endpoint: registered.endpoint.id,
    Model: imported.run.model.id,
    Prompt: prompt.id,
    Experiment: experiment.id,
    Run: imported.run.id,
    Prediction: globalId('Prediction', await one('SELECT id FROM predictions WHERE run_id = $1 LIMIT 1', [rowId(imported.run.id)])),
    BackgroundTask: task.id,
  };
  for (const type of NODE_TYPES) expect([type, ids[type]]).toEqual([type, expect.any(String)]);
  return {
    ids,
    spareUseCaseId: spare.id,
    spareApiKeyId: spareKey.id,
    endpointModelId,
    fakeBaseUrl: fake.baseUrl,
    async readReport(externalId) {
      const rows = (await t.dataSource.query('SELECT text, metadata FROM reports WHERE dataset_id = $1 AND external_id = $2', [rowId(datasetId), externalId])) as {
        text: string;
        metadata: unknown;
      }[];
      return rows[0] ?? null;
    },
    takeChatMessages() {
      const messages = fake.chatRequests().flatMap((body) => ((body.messages ?? []) as { content: unknown }[]).map((m) => String(m.content)));
      fake.clearRequests();
      return messages;
    },
  };
}
