import { BUNDLE_FORMAT, BUNDLE_TABLES, BUNDLE_VERSION } from '../../src/modules/bundle/bundle.tables';
import { startFakeLlm, type FakeLlm } from '../support/fake-llm/fake-llm-server';
import { createProjectWithKeys, createUseCase, failure, globalId, ok, rowId, type ProjectKeys } from '../support/graphql-fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

const REGISTER = `mutation($i: RegisterEndpointInput!) { registerEndpoint(input: $i) { endpoint { id health { status } } } }`;
const HEALTH = `query($id: ID!) { node(id: $id) { ... on Endpoint { capabilities health { status latencyMs lastError checkedAt } } } }`;
const REFRESH = `mutation($i: RefreshEndpointInput!) { refreshEndpoint(input: $i) { endpoint { id } } }`;
const EXTRACT = `mutation($i: ExtractInput!) { extract(input: $i) { status error errorCode } }`;
const IMPORT_BUNDLE = `mutation($input: ImportProjectBundleInput!) { importProjectBundle(input: $input) { project { id } } }`;

describe('where endpoints may point without ENDPOINT_ALLOW', () => {
  let t: TestApp;
  let fake: FakeLlm;
  let keys: ProjectKeys;
  let serial = 0;
  const register = (baseUrl: string, key = keys.editor) => t.gql(REGISTER, { i: { projectId: keys.id, name: `endpoint ${++serial}`, baseUrl, kind: 'VLLM', timeoutMs: 2000 } }, key);

  beforeAll(async () => {
    t = await startTestApp();
    fake = await startFakeLlm({ models: ['m'] });
    keys = await createProjectWithKeys(t, 'default egress');
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });

  const databasePort = () => Number(new URL((t.dataSource.options as { url: string }).url).port || 5432);

  it('refuses metadata services, link-local addresses and its own HTTP and database ports, with a code and without connecting', async () => {
    const refused: [string, string][] = [
      ['http://169.254.169.254/latest/v1', 'CLOUD_METADATA'],
      ['http://[fd00:ec2::254]/v1', 'CLOUD_METADATA'],
      ['http://metadata.google.internal/computeMetadata/v1', 'CLOUD_METADATA'],
      ['http://169.254.10.20:8000/v1', 'LINK_LOCAL'],
      ['http://[fe80::1]:8000/v1', 'LINK_LOCAL'],
      [`http://127.0.0.1:${t.port}/v1`, 'OWN_PORT'],
      [`http://localhost:${t.port}/graphql`, 'OWN_PORT'],
      [`http://[::1]:${t.port}/v1`, 'OWN_PORT'],
      [`http://0.0.0.0:${t.port}/v1`, 'OWN_PORT'],
      [`http://127.0.0.1:${databasePort()}/v1`, 'OWN_PORT'],
    ];
    for (const [baseUrl, refusal] of refused) {
      const error = failure(await register(baseUrl), 'BAD_USER_INPUT');
      expect([baseUrl, error.extensions]).toEqual([baseUrl, expect.objectContaining({ field: 'baseUrl', reason: 'EGRESS_DENIED', refusal })]);
      expect(error.message).not.toContain(baseUrl);
    }
    expect(await t.dataSource.query('SELECT id FROM endpoints')).toEqual([]);
  });

  it('allows loopback and private addresses on other ports: GPU servers live there', async () => {
    const registered = ok(await register(fake.baseUrl)).registerEndpoint;
    expect(registered.endpoint.health.status).toBe('UP');
    // Nothing listens on 10.255.255.1 here: registered all the same, and DOWN.
    const unreachable = ok(await register('http://10.255.255.1:8000/v1')).registerEndpoint;
    expect(unreachable.endpoint.health.status).toBe('DOWN');
  });

  it("shows a VIEWER the endpoint's status only; latency, error and capabilities need EDITOR", async () => {
    const down = ok(await register(`http://127.0.0.1:${fake.port + 1}/v1`)).registerEndpoint.endpoint;
    const up = ok(await register(fake.baseUrl)).registerEndpoint.endpoint;
    const asEditor = ok(await t.gql(HEALTH, { id: down.id }, keys.editor)).node;
    expect(asEditor.health).toMatchObject({ status: 'DOWN', lastError: expect.stringMatching(/ECONNREFUSED/), checkedAt: expect.any(String) });
    const asViewer = ok(await t.gql(HEALTH, { id: down.id }, keys.viewer)).node;
    expect(asViewer).toEqual({ capabilities: {}, health: { status: 'DOWN', latencyMs: null, lastError: null, checkedAt: asEditor.health.checkedAt } });

    const upAsEditor = ok(await t.gql(HEALTH, { id: up.id }, keys.editor)).node;
    expect(upAsEditor.health.latencyMs).toEqual(expect.any(Number));
    expect(Object.keys(upAsEditor.capabilities).length).toBeGreaterThan(0);
    const upAsViewer = ok(await t.gql(HEALTH, { id: up.id }, keys.viewer)).node;
    expect(upAsViewer).toMatchObject({ capabilities: {}, health: { status: 'UP', latencyMs: null, lastError: null } });
    const upAsAdmin = ok(await t.gql(HEALTH, { id: up.id }, keys.admin)).node;
    expect(upAsAdmin.health.latencyMs).toEqual(upAsEditor.health.latencyMs);
  });

  it('holds at connect time for an endpoint stored before: a refresh is refused and an extraction fails with EGRESS_DENIED, without a connection', async () => {
    const projectRow = rowId(keys.id);
    const [endpoint] = (await t.dataSource.query(`INSERT INTO endpoints (project_id, name, base_url, kind) VALUES ($1, 'stored before', $2, 'VLLM') RETURNING id`, [
      projectRow,
      `http://127.0.0.1:${databasePort()}/v1`,
    ])) as { id: string }[];
    const [model] = (await t.dataSource.query(`INSERT INTO models (project_id, endpoint_id, served_name) VALUES ($1, $2, 'm') RETURNING id`, [projectRow, endpoint!.id])) as { id: string }[];
    const refused = failure(await t.gql(REFRESH, { i: { id: globalId('Endpoint', endpoint!.id) } }, keys.editor), 'BAD_USER_INPUT');
    expect(refused.extensions).toMatchObject({ field: 'baseUrl', reason: 'EGRESS_DENIED', refusal: 'OWN_PORT' });
    const useCase = await createUseCase(t, keys.id, { variables: [{ key: 'site', type: 'FREE_TEXT' }] }, keys.admin);
    const extracted = ok(await t.gql(EXTRACT, { i: { modelId: globalId('Model', model!.id), useCaseId: useCase.id, text: 'Melanoom.' } }, keys.editor)).extract;
    expect(extracted).toMatchObject({ status: 'FAILED', errorCode: 'EGRESS_DENIED', error: "the endpoint's address is refused: this server's own HTTP or database port (after 1 attempt)" });
  });

  it('refuses a bundle whose endpoints point where a registered one may not', async () => {
    const bundleWith = (baseUrl: string) =>
      JSON.stringify({
        format: BUNDLE_FORMAT,
        version: BUNDLE_VERSION,
        project: { id: 'p' },
        ...Object.fromEntries(BUNDLE_TABLES.map((table) => [table.key, []])),
        endpoints: [{ id: 'e1', name: 'from a bundle', base_url: baseUrl, kind: 'VLLM' }],
      });
    for (const baseUrl of ['http://169.254.169.254/v1', `http://127.0.0.1:${t.port}/v1`, 'file:///etc/passwd']) {
      const error = failure(await t.gql(IMPORT_BUNDLE, { input: { name: `bundle ${++serial}`, content: bundleWith(baseUrl) } }), 'BAD_USER_INPUT');
      expect([baseUrl, error.extensions]).toEqual([baseUrl, expect.objectContaining({ field: 'content', path: 'endpoints[0].base_url' })]);
    }
    const accepted = ok(await t.gql(IMPORT_BUNDLE, { input: { name: `bundle ${++serial}`, content: bundleWith(fake.baseUrl) } })).importProjectBundle;
    expect(accepted.project.id).toEqual(expect.any(String));
  });
});
