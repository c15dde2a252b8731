import pino from 'pino';
import type { RunExecutor } from '../../src/jobs/executor';
import { startFakeLlm, type FakeLlm } from '../support/fake-llm/fake-llm-server';
import { ok } from '../support/graphql-fixtures';
import { answerFromReport, setUpRuns, startExecutor, waitForStatus } from '../support/run-fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

/** The value of one sample of a Prometheus text exposition, or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const present = Object.fromEntries([...(match[3] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => present[k] === v)) return Number(match[4]);
  }
  return undefined;
}

describe('liveness and readiness', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  const get = async (path: string) => {
    const response = await fetch(`http://127.0.0.1:${t.port}${path}`);
    return { status: response.status, body: (await response.json()) as Record<string, string> };
  };

  it('answers /livez, /readyz and /healthz without a key while everything is up', async () => {
    expect(await get('/livez')).toEqual({ status: 200, body: { status: 'ok' } });
    expect(await get('/readyz')).toEqual({ status: 200, body: { status: 'ready', database: 'up', queue: 'up', events: 'up' } });
    expect(await get('/healthz')).toEqual({ status: 200, body: { status: 'ok', database: 'up' } });
  });

  it('is not ready when the connection carrying events between processes is down', async () => {
    await t.services.bus.close();
    expect(await get('/readyz')).toEqual({ status: 503, body: { status: 'unavailable', database: 'up', queue: 'up', events: 'down' } });
  });
});

describe('readiness without a database', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.dataSource.initialize();
    await t.close();
  });

  it('is not ready (503) when the database is unreachable, while still live', async () => {
    await t.dataSource.destroy();
    const ready = await fetch(`http://127.0.0.1:${t.port}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ status: 'unavailable', database: 'down', queue: 'down', events: 'up' });
    expect((await fetch(`http://127.0.0.1:${t.port}/livez`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${t.port}/healthz`)).status).toBe(503);
  });
});

describe('/metrics', () => {
  let t: TestApp;
  let fake: FakeLlm;
  let executor: RunExecutor;
  beforeAll(async () => {
    t = await startTestApp();
    fake = await startFakeLlm({ models: ['fake-model'] });
    fake.setHandler(answerFromReport());
    executor = await startExecutor(t, { observer: t.app.metrics.executorObserver });
  });
  afterAll(async () => {
    await executor.stop();
    await fake.close();
    await t.close();
  });

  const scrape = async () => {
    const response = await fetch(`http://127.0.0.1:${t.port}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/plain');
    return response.text();
  };

  it('counts HTTP requests and GraphQL operations by type and outcome, and errors by code', async () => {
    const before = await scrape();
    ok(await t.gql('{ viewer { serverAdmin } }'));
    ok(await t.gql('mutation { createProject(input: { name: "metrics" }) { project { id } } }'));
    const refused = await t.gql('{ projects(first: 100000) { totalCount } }');
    expect(refused.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const after = await scrape();
    const delta = (name: string, labels: Record<string, string>) => (sample(after, name, labels) ?? 0) - (sample(before, name, labels) ?? 0);
    expect(delta('reportql_graphql_operations_total', { operation: 'query', outcome: 'ok' })).toBe(1);
    expect(delta('reportql_graphql_operations_total', { operation: 'mutation', outcome: 'ok' })).toBe(1);
    expect(delta('reportql_graphql_operations_total', { operation: 'query', outcome: 'error' })).toBe(1);
    expect(delta('reportql_graphql_errors_total', { operation: 'query', code: 'BAD_USER_INPUT' })).toBe(1);
    expect(delta('reportql_http_requests_total', { route: '/graphql', method: 'POST', status: '200' })).toBe(3);
    expect(delta('reportql_http_requests_total', { route: '/metrics', method: 'GET', status: '200' })).toBe(1);
    // route families are labelled by their prefix, never by the ids in their paths
    const exportsBefore = await scrape();
    expect((await fetch(`http://127.0.0.1:${t.port}/exports/runs/x/predictions.csv`)).status).toBe(401);
    expect((await fetch(`http://127.0.0.1:${t.port}/charts/use-cases/x/heatmap.svg`)).status).toBe(401);
    const exportsAfter = await scrape();
    const routeDelta = (route: string) =>
      (sample(exportsAfter, 'reportql_http_requests_total', { route, method: 'GET', status: '401' }) ?? 0) - (sample(exportsBefore, 'reportql_http_requests_total', { route, method: 'GET', status: '401' }) ?? 0);
    expect(routeDelta('/exports')).toBe(1);
    expect(routeDelta('/charts')).toBe(1);
    expect(exportsAfter).not.toContain('route="/exports/runs');
    expect(sample(after, 'reportql_process_resident_memory_bytes')).toBeGreaterThan(0);
  });

  it('shows run progress, queue depth, predictions and endpoint latency of an executed run', async () => {
    const setup = await setUpRuns(t, fake.baseUrl, { reports: 6 });
    const run = ok(await t.gql('mutation($i: StartRunInput!) { startRun(input: $i) { run { id } } }', { i: { datasetId: setup.datasetId, modelId: setup.modelId } })).startRun.run;
    await waitForStatus(t, run.id, ['SUCCEEDED']);
    const text = await scrape();
    expect(sample(text, 'reportql_predictions_total', { status: 'SUCCEEDED' })).toBe(6);
    expect(sample(text, 'reportql_endpoint_latency_seconds_count', { status: 'SUCCEEDED' })).toBe(6);
    expect(sample(text, 'reportql_runs', { status: 'SUCCEEDED' })).toBe(1);
    expect(sample(text, 'reportql_runs', { status: 'RUNNING' })).toBe(0);
    expect(sample(text, 'reportql_active_run_reports', { state: 'pending' })).toBe(0);
    expect(sample(text, 'reportql_queue_items', { state: 'waiting' })).toBe(0);
    expect(sample(text, 'reportql_metrics_database_up')).toBe(1);
  });
});

describe('/metrics with METRICS_TOKEN', () => {
  let t: TestApp;
  const token = 'metrics-token-0123456789';
  beforeAll(async () => {
    t = await startTestApp({ http: { metricsToken: token } });
  });
  afterAll(() => t.close());

  it('answers only the token, even on this machine', async () => {
    const url = `http://127.0.0.1:${t.port}/metrics`;
    expect((await fetch(url)).status).toBe(401);
    expect((await fetch(url, { headers: { authorization: 'Bearer wrong-token-0123456789' } })).status).toBe(401);
    expect((await fetch(url, { headers: { authorization: `Bearer ${t.adminKey}` } })).status).toBe(401);
    const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('reportql_http_requests_total');
  });
});

describe('access log', () => {
  let t: TestApp;
  const lines: Record<string, unknown>[] = [];
  const raw: string[] = [];
  beforeAll(async () => {
    const logger = pino({ level: 'info' }, { write: (line: string) => void (raw.push(line), lines.push(JSON.parse(line) as Record<string, unknown>)) });
    t = await startTestApp({ logger });
  });
  afterAll(() => t.close());

  it('logs each request once with method, path, status and key id, and no body, variables, query text or key', async () => {
    const marker = 'REPORT-TEXT-MARKER-7f3a';
    const created = ok(await t.gql('mutation Make($name: String!) { createProject(input: { name: $name }) { project { id } } }', { name: marker }));
    expect(created.createProject.project.id).toBeTruthy();
    await fetch(`${t.url}?query=${encodeURIComponent(`{ __typename # ${marker}`)}`, { headers: { accept: 'application/json' } });
    await fetch(t.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${t.adminKey}` },
      body: JSON.stringify({ query: `query Named { viewer { serverAdmin } } # ${marker}`, operationName: 'Named' }),
    });
    await fetch(`http://127.0.0.1:${t.port}/livez`);
    await new Promise((resolve) => setImmediate(resolve));
    const requests = lines.filter((l) => l['msg'] === 'request completed');
    const graphql = requests.filter((l) => (l['req'] as { path: string }).path === '/graphql');
    expect(graphql).toHaveLength(3);
    expect(graphql[0]).toMatchObject({ level: 30, req: { method: 'POST', path: '/graphql' }, res: { statusCode: 200 } });
    expect(typeof graphql[0]!['responseTime']).toBe('number');
    expect(graphql[0]!['keyId']).toEqual(expect.any(String));
    expect(graphql[2]).toMatchObject({ operationName: 'Named' });
    expect(requests.some((l) => (l['req'] as { path: string }).path === '/livez')).toBe(false);
    const all = raw.join('');
    expect(all).not.toContain(marker);
    expect(all).not.toContain(t.adminKey);
    expect(all.toLowerCase()).not.toContain('authorization');
  });
});
