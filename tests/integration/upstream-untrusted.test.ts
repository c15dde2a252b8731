import { parseEgressPolicy } from '../../src/llm/egress';
import { startFakeLlm, type FakeLlm } from '../support/fake-llm/fake-llm-server';
import { createProjectWithKeys, createUseCase, failure, globalId, ok, type ProjectKeys } from '../support/graphql-fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

const KEY = 'sk-endpoint-secret-7f3a9c';
/** An internal service's error page, with the caller's Authorization header echoed back. */
const page = (authorization: string | undefined) =>
  `<html><head><title>403 Forbidden</title></head><body><h1>Forbidden</h1><p>intranet-admin.corp.local: ${authorization ?? ''}</p></body></html>`;
const UPSTREAM_TEXT = /Forbidden|intranet|corp\.local|<html|sk-endpoint-secret/;

const REGISTER = `mutation($i: RegisterEndpointInput!) { registerEndpoint(input: $i) {
  endpoint { id capabilities health { status lastError } } models { id servedName maxModelLen available } warnings } }`;
const REFRESH = `mutation($i: RefreshEndpointInput!) { refreshEndpoint(input: $i) {
  endpoint { id capabilities health { status lastError } } models { id servedName maxModelLen } warnings } }`;
const HEALTH = `query($id: ID!) { node(id: $id) { ... on Endpoint { capabilities health { status lastError } } } }`;
const EXTRACT = `mutation($i: ExtractInput!) { extract(input: $i) {
  status error errorCode samples prediction { status error errorCode samples } } }`;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('what registered endpoints answer is untrusted; how endpoints are registered is checked', () => {
  let t: TestApp;
  let fake: FakeLlm;
  let elsewhere: FakeLlm;
  let keys: ProjectKeys;
  let serial = 0;
  const name = () => `endpoint ${++serial}`;
  const register = (extra: Record<string, unknown> = {}, key?: string) =>
    t.gql(REGISTER, { i: { projectId: keys.id, name: name(), baseUrl: fake.baseUrl, kind: 'VLLM', apiKey: KEY, ...extra } }, key ?? keys.editor);

  beforeAll(async () => {
    t = await startTestApp();
    fake = await startFakeLlm({ models: ['m'], apiKey: KEY });
    elsewhere = await startFakeLlm({ models: ['m'] });
    keys = await createProjectWithKeys(t, 'upstream');
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
    await elsewhere.close();
  });
  beforeEach(() => {
    fake.reset();
    elsewhere.reset();
  });

  /** Every stored text of the project's endpoints and models, as one string. */
  async function storedText(): Promise<string> {
    const rows = await t.dataSource.query(
      `SELECT name, base_url, capabilities, health_last_error FROM endpoints WHERE project_id = $1
       UNION ALL SELECT served_name, hf_repo, to_jsonb(max_model_len), NULL FROM models WHERE project_id = $1`,
      [Buffer.from(keys.id, 'base64url').toString().split(':')[1]],
    );
    return JSON.stringify(rows);
  }

  it("keeps a 403 page of an internal service and the key it echoes out of health.lastError and the database; a VIEWER sees the status only", async () => {
    fake.scriptRoutes((r) => (r.path === '/v1/models' ? { status: 403, contentType: 'text/html', body: page(r.headers['authorization']) } : undefined));
    const registered = ok(await register()).registerEndpoint;
    expect(registered.endpoint.health).toEqual({ status: 'DOWN', lastError: 'HTTP 403 from the endpoint' });
    const seen = ok(await t.gql(HEALTH, { id: registered.endpoint.id }, keys.editor)).node;
    expect(seen.health.lastError).toBe('HTTP 403 from the endpoint');
    expect(JSON.stringify(seen)).not.toMatch(UPSTREAM_TEXT);
    // A VIEWER sees the status only (what the probe found out needs EDITOR).
    expect(ok(await t.gql(HEALTH, { id: registered.endpoint.id }, keys.viewer)).node.health).toEqual({ status: 'DOWN', lastError: null });
    expect(await storedText()).not.toMatch(UPSTREAM_TEXT);
    // The page did come with the key: the endpoint saw it.
    expect(fake.requests[0]?.headers['authorization']).toBe(`Bearer ${KEY}`);
  });

  it('records capability probes answered by error pages as a status and our reason', async () => {
    fake.scriptRoutes((r) => (r.path === '/v1/chat/completions' ? { status: 400, contentType: 'text/html', body: page(r.headers['authorization']) } : undefined));
    const registered = ok(await register()).registerEndpoint;
    expect(registered.endpoint.health.status).toBe('UP');
    expect(registered.endpoint.capabilities).toEqual({
      jsonSchema: false,
      thinkingToggle: false,
      probedWith: 'm',
      jsonSchemaDetail: 'HTTP 400 from the endpoint: the request was refused',
      thinkingToggleDetail: 'HTTP 400 from the endpoint: the request was refused',
    });
    // A 200 whose content is not JSON is described, not quoted.
    fake.scriptRoutes(null);
    fake.setHandler((_body, ctx) => ({ content: page(ctx.request.headers['authorization']) }));
    const refreshed = ok(await t.gql(REFRESH, { i: { id: registered.endpoint.id } }, keys.editor)).refreshEndpoint;
    expect(refreshed.endpoint.capabilities).toMatchObject({ jsonSchema: false, jsonSchemaDetail: 'the answer to a json_schema request is not JSON' });
    expect(JSON.stringify(ok(await t.gql(HEALTH, { id: registered.endpoint.id }, keys.viewer)))).not.toMatch(UPSTREAM_TEXT);
    expect(await storedText()).not.toMatch(UPSTREAM_TEXT);
  });

  it('gives extract failures, returned and stored, a status and our words: samples included', async () => {
    const registered = ok(await register()).registerEndpoint;
    const modelId = registered.models[0].id;
    const useCase = await createUseCase(t, keys.id, { variables: [{ key: 'site', type: 'FREE_TEXT' }] }, keys.admin);
    const dataset = ok(await t.gql(`mutation($u: ID!) { createDataset(input: { useCaseId: $u, name: "d" }) { dataset { id } } }`, { u: useCase.id }, keys.admin))
      .createDataset.dataset.id;
    // The first self-consistency sample is answered by the page; the other two answer.
    fake.reset();
    fake.setHandler((_body, ctx) =>
      ctx.index === 0 ? { status: 403, error: page(ctx.request.headers['authorization']) } : { content: '{"site": "back"}' },
    );
    const partly = ok(
      await t.gql(
        EXTRACT,
        { i: { modelId, useCaseId: useCase.id, strategy: 'SELF_CONSISTENCY', samples: 3, text: 'Melanoom rug.', store: { datasetId: dataset, externalId: 'R1' } } },
        keys.editor,
      ),
    ).extract;
    expect(partly.status).toBe('SUCCEEDED');
    const failedSample = (partly.samples as { error: string | null }[]).find((s) => s.error !== null);
    expect(failedSample?.error).toBe('HTTP_ERROR: HTTP 403 from the endpoint');
    expect(JSON.stringify(partly)).not.toMatch(UPSTREAM_TEXT);

    fake.setHandler((_body, ctx) => ({ status: 403, error: page(ctx.request.headers['authorization']) }));
    const failed = ok(
      await t.gql(EXTRACT, { i: { modelId, useCaseId: useCase.id, text: 'Melanoom been.', store: { datasetId: dataset, externalId: 'R2' } } }, keys.editor),
    ).extract;
    expect(failed).toMatchObject({ status: 'FAILED', errorCode: 'HTTP_403', error: 'the endpoint answered HTTP 403 (after 1 attempt)' });
    expect(failed.prediction).toMatchObject({ status: 'FAILED', errorCode: 'HTTP_403', error: 'the endpoint answered HTTP 403 (after 1 attempt)' });
    const stored = JSON.stringify(await t.dataSource.query('SELECT error, samples FROM predictions'));
    expect(stored).toContain('HTTP 403');
    expect(stored).not.toMatch(UPSTREAM_TEXT);
  });

  it.each([
    ['a line break', 'sk-abc\r\nX-Injected: yes'],
    ['a tab', 'sk-abc\tdef'],
    ['a space', 'sk-abc def'],
    ['a NUL', 'sk-abc\u0000def'],
    ['a non-ASCII letter', 'sk-ключ'],
  ])('refuses a key with %s at registration and at refresh, naming the field, not the key', async (_what, apiKey) => {
    const refused = failure(await register({ apiKey }), 'BAD_USER_INPUT');
    expect(refused.extensions?.field).toBe('apiKey');
    expect(JSON.stringify(refused)).not.toContain('sk-abc');
    expect(fake.requests).toHaveLength(0);
    const registered = ok(await register()).registerEndpoint;
    fake.reset();
    const onRefresh = failure(await t.gql(REFRESH, { i: { id: registered.endpoint.id, apiKey } }, keys.editor), 'BAD_USER_INPUT');
    expect(onRefresh.extensions?.field).toBe('apiKey');
    expect(fake.requests).toHaveLength(0);
  });

  it('caps the endpoint timeout at 600 s', async () => {
    for (const timeoutMs of [600_001, 3_600_000]) {
      const refused = failure(await register({ timeoutMs }), 'BAD_USER_INPUT');
      expect(refused).toMatchObject({ message: 'timeoutMs must be between 1000 and 600000', extensions: { field: 'timeoutMs' } });
    }
    expect(ok(await register({ timeoutMs: 600_000 })).registerEndpoint.endpoint.health.status).toBe('UP');
  });

  it('does not follow a redirect to another host', async () => {
    fake.scriptRoutes(() => ({ status: 302, headers: { location: `${elsewhere.baseUrl}/models` }, body: '' }));
    const registered = ok(await register()).registerEndpoint;
    expect(registered.endpoint.health).toEqual({ status: 'DOWN', lastError: 'HTTP 302 from the endpoint (redirects are not followed)' });
    expect(elsewhere.requests).toHaveLength(0);
  });

  it('keeps the first 1,000 models of a longer list, with a warning, on every refresh', async () => {
    const data = Array.from({ length: 5000 }, (_, i) => ({ id: `model-${String(i).padStart(4, '0')}`, object: 'model', max_model_len: 8192 }));
    fake.scriptRoutes((r) => (r.path === '/v1/models' ? { body: JSON.stringify({ object: 'list', data }) } : undefined));
    const registered = ok(await register()).registerEndpoint;
    expect(registered.models).toHaveLength(1000);
    expect(registered.warnings).toEqual(['the endpoint lists 5000 entries; the first 1000 models are kept, the other 4000 entries are ignored']);
    const again = ok(await t.gql(REFRESH, { i: { id: registered.endpoint.id } }, keys.editor)).refreshEndpoint;
    expect(again.models).toHaveLength(1000);
    expect(again.warnings).toHaveLength(1);
    const [count] = await t.dataSource.query('SELECT count(*)::int AS n FROM models WHERE endpoint_id = $1', [Buffer.from(registered.endpoint.id, 'base64url').toString().split(':')[1]]);
    expect(count.n).toBe(1000);
  });

  it('refuses a 300,000-model listing larger than 4 MiB: DOWN with the reason, nothing stored', async () => {
    const data = Array.from({ length: 300_000 }, (_, i) => ({ id: `m-${i}`, object: 'model' }));
    fake.scriptRoutes((r) => (r.path === '/v1/models' ? { body: JSON.stringify({ object: 'list', data }), chunked: true } : undefined));
    const registered = ok(await register()).registerEndpoint;
    expect(registered.endpoint.health).toEqual({ status: 'DOWN', lastError: 'the answer is larger than 4194304 bytes' });
    expect(registered.models).toEqual([]);
  });

  it('stores sane numbers only: absurd context lengths are left unknown, repeated names kept once', async () => {
    const data = [
      { id: 'huge', max_model_len: 1e20 },
      { id: 'negative', max_model_len: -4096 },
      { id: 'fraction', max_model_len: 4096.5 },
      { id: 'fine', max_model_len: 8192 },
      { id: 'fine', max_model_len: 16384 },
      { id: `echo-${KEY}` },
    ];
    fake.scriptRoutes((r) => (r.path === '/v1/models' ? { body: JSON.stringify({ object: 'list', data }) } : undefined));
    const registered = ok(await register()).registerEndpoint;
    expect(registered.models.map((m: { servedName: string; maxModelLen: number | null }) => [m.servedName, m.maxModelLen])).toEqual([
      ['fine', 8192],
      ['fraction', null],
      ['huge', null],
      ['negative', null],
    ]);
    expect(registered.warnings).toEqual([
      '2 listed entries were skipped: no id of 1 to 1024 printable characters, a repeated id, or an id containing a configured secret',
      '3 models report a context length that is not a whole number from 1 to 100000000; it is left unknown',
    ]);
    expect(await storedText()).not.toContain(KEY);
  });

  it.each(['/v1/models', '/v1/chat/completions'])('writes nothing when the client goes away while %s is asked', async (path) => {
    fake.scriptRoutes((r) =>
      r.path === path ? { body: path === '/v1/models' ? '{"object":"list","data":[{"id":"late"}]}' : '{}', delayMs: 1500 } : r.path === '/v1/models' ? { body: '{"data":[{"id":"late"}]}' } : undefined,
    );
    const controller = new AbortController();
    const endpointName = name();
    const sent = fetch(t.url, {
      method: 'POST',
      signal: controller.signal,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${keys.editor}` },
      body: JSON.stringify({ query: REGISTER, variables: { i: { projectId: keys.id, name: endpointName, baseUrl: fake.baseUrl, kind: 'VLLM' } } }),
    }).catch((error: unknown) => error);
    for (let i = 0; i < 300 && !fake.requests.some((r) => r.path === path); i += 1) await sleep(10);
    expect(fake.requests.some((r) => r.path === path)).toBe(true);
    controller.abort();
    expect(await sent).toMatchObject({ name: 'AbortError' });
    await sleep(2000);
    expect(await t.dataSource.query('SELECT id FROM endpoints WHERE name = $1', [endpointName])).toEqual([]);
    expect(await t.dataSource.query("SELECT id FROM models WHERE served_name = 'late'")).toEqual([]);
  });
});

describe('the egress policy (ENDPOINT_ALLOW)', () => {
  let t: TestApp;
  let fake: FakeLlm;
  let keys: ProjectKeys;

  beforeAll(async () => {
    // The fake listens on 127.0.0.1, outside this policy; `localhost` is a listed name.
    t = await startTestApp({ egress: parseEgressPolicy('10.0.0.0/8, localhost, *.gpu.example.org') });
    fake = await startFakeLlm({ models: ['m'] });
    keys = await createProjectWithKeys(t, 'egress');
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });
  beforeEach(() => fake.reset());

  it('refuses to register an endpoint whose host is outside it', async () => {
    for (const baseUrl of [fake.baseUrl, 'http://169.254.169.254/latest/v1', 'http://[::1]:8000/v1', 'http://gpu.example.org/v1']) {
      const refused = failure(await t.gql(REGISTER, { i: { projectId: keys.id, name: `outside ${baseUrl}`, baseUrl } }, keys.editor), 'BAD_USER_INPUT');
      expect(refused.extensions).toMatchObject({ field: 'baseUrl', reason: 'EGRESS_DENIED' });
    }
    expect(fake.requests).toHaveLength(0);
    expect(await t.dataSource.query('SELECT id FROM endpoints')).toEqual([]);
  });

  it('refuses at connect time a listed name that resolves to an internal address', async () => {
    const baseUrl = `http://localhost:${fake.port}/v1`;
    const registered = ok(await t.gql(REGISTER, { i: { projectId: keys.id, name: 'rebinding', baseUrl } }, keys.editor)).registerEndpoint;
    expect(registered.endpoint.health).toEqual({ status: 'DOWN', lastError: "the endpoint's address is outside the egress policy (ENDPOINT_ALLOW)" });
    expect(fake.requests).toHaveLength(0);
  });

  it('holds for endpoints registered before it: refresh is refused, extract fails with EGRESS_DENIED', async () => {
    const projectRow = Buffer.from(keys.id, 'base64url').toString().split(':')[1];
    const [endpoint] = await t.dataSource.query(
      `INSERT INTO endpoints (project_id, name, base_url, kind) VALUES ($1, 'from before', $2, 'VLLM') RETURNING id`,
      [projectRow, fake.baseUrl],
    );
    const [model] = await t.dataSource.query(`INSERT INTO models (project_id, endpoint_id, served_name) VALUES ($1, $2, 'm') RETURNING id`, [projectRow, endpoint.id]);
    const refused = failure(await t.gql(REFRESH, { i: { id: globalId('Endpoint', endpoint.id) } }, keys.editor), 'BAD_USER_INPUT');
    expect(refused.extensions).toMatchObject({ field: 'baseUrl', reason: 'EGRESS_DENIED' });
    const useCase = await createUseCase(t, keys.id, { variables: [{ key: 'site', type: 'FREE_TEXT' }] }, keys.admin);
    const extracted = ok(await t.gql(EXTRACT, { i: { modelId: globalId('Model', model.id), useCaseId: useCase.id, text: 'Melanoom.' } }, keys.editor)).extract;
    expect(extracted).toMatchObject({
      status: 'FAILED',
      errorCode: 'EGRESS_DENIED',
      error: "the endpoint's address is outside the egress policy (ENDPOINT_ALLOW) (after 1 attempt)",
    });
    expect(fake.requests).toHaveLength(0);
  });
});
