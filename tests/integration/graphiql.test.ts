import { createHash } from 'node:crypto';
import { buildClientSchema, getIntrospectionQuery, parse, printSchema, validate, type IntrospectionQuery } from 'graphql';
import { buildReportQlSchema } from '../../src/graphql/schema';
import { SCHEMA_HASH_HEADER } from '../../src/graphql/graphiql';
import { EXAMPLE_IDS_QUERY, exampleVariables, GRAPHIQL_EXAMPLES, pickExampleIds, type ExampleIds } from '../../src/graphql/graphiql-examples';
import type { RunExecutor } from '../../src/jobs/executor';
import { createLogger } from '../../src/logger';
import { seedDemo } from '../../src/seeds/demo-seed';
import { startFakeLlm, type FakeLlm } from '../support/fake-llm/fake-llm-server';
import { ok } from '../support/graphql-fixtures';
import { collect, startExecutor, wsClient } from '../support/run-fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

const NAVIGATION_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

describe('GraphiQL', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('serves GraphiQL for a browser reload of /graphql?query=…, and runs GET queries asked for as JSON', async () => {
    const query = encodeURIComponent('{ viewer { serverAdmin } }');
    const page = await fetch(`http://127.0.0.1:${t.port}/graphql?query=${query}`, { headers: { accept: NAVIGATION_ACCEPT } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    const html = await page.text();
    expect(html).toContain('reportqlGraphiQL.start(');
    expect(html).not.toMatch(/<script[^>]+src="https?:\/\//);

    const json = await fetch(`http://127.0.0.1:${t.port}/graphql?query=${query}`, {
      headers: { accept: 'application/json', authorization: `Bearer ${t.adminKey}`, 'apollo-require-preflight': 'true' },
    });
    expect(json.status).toBe(200);
    expect(await json.json()).toEqual({ data: { viewer: { serverAdmin: true } } });
  });

  it('lets the browser keep the 9 MB page: gzip, a strong ETag per encoding, revalidated with 304 and no body', async () => {
    // A browser's reload sends max-age=0; fetch() would add no-cache with If-None-Match (an end-to-end reload).
    const get = (headers: Record<string, string>) => fetch(t.url, { headers: { accept: NAVIGATION_ACCEPT, 'cache-control': 'max-age=0', ...headers } });
    const first = await get({ 'accept-encoding': 'gzip, deflate, br' });
    expect(first.status).toBe(200);
    expect(first.headers.get('content-encoding')).toBe('gzip');
    expect(first.headers.get('cache-control')).toBe('no-cache');
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{16,}-gzip"$/);
    expect((await first.text()).length).toBeGreaterThan(1_000_000);
    expect((await get({ 'accept-encoding': 'gzip' })).headers.get('etag')).toBe(etag);

    const revalidated = await get({ 'accept-encoding': 'gzip', 'if-none-match': etag! });
    expect(revalidated.status).toBe(304);
    expect(revalidated.headers.get('etag')).toBe(etag);
    expect(await revalidated.text()).toBe('');

    const plain = await get({ 'accept-encoding': 'identity' });
    expect(plain.headers.get('content-encoding')).toBeNull();
    const plainTag = plain.headers.get('etag');
    expect(plainTag).toMatch(/^"[A-Za-z0-9_-]{16,}"$/);
    expect(plainTag).not.toBe(etag);
    await plain.arrayBuffer();
    // Another encoding's tag, or another version's, is not this representation: the page is sent.
    const other = await get({ 'accept-encoding': 'identity', 'if-none-match': etag! });
    expect(other.status).toBe(200);
    expect((await other.text()).length).toBeGreaterThan(1_000_000);
    expect((await get({ 'accept-encoding': 'identity', 'if-none-match': plainTag! })).status).toBe(304);
  });

  it('keeps Apollo\'s CSRF check for a GET query that does not ask for HTML', async () => {
    const response = await fetch(`http://127.0.0.1:${t.port}/graphql?query=${encodeURIComponent('{ __typename }')}`, { headers: { accept: '*/*' } });
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toContain('application/json');
  });

  it('sends the schema hash with every /graphql answer: the hash of the schema it serves', async () => {
    const expected = createHash('sha256').update(printSchema(await buildReportQlSchema())).digest('hex').slice(0, 16);
    const answered = await fetch(t.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${t.adminKey}` },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(answered.headers.get(SCHEMA_HASH_HEADER)).toBe(expected);
    const page = await fetch(t.url, { headers: { accept: NAVIGATION_ACCEPT } });
    expect(page.headers.get(SCHEMA_HASH_HEADER)).toBe(expected);
    const refused = await fetch(t.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"{ __typename }"}' });
    expect(refused.status).toBe(401);
    expect(refused.headers.get(SCHEMA_HASH_HEADER)).toBe(expected);
  });

  it('names every example once, and each validates against the live schema', async () => {
    const names = GRAPHIQL_EXAMPLES.map((e) => e.name);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toEqual(expect.arrayContaining(['leaderboard', 'model-vs-humans', 'heatmap', 'strategy-effects', 'rads-validity', 'start-experiment', 'watch-experiment']));
    const schema = buildClientSchema(ok(await t.gql<IntrospectionQuery>(getIntrospectionQuery())));
    for (const example of [...GRAPHIQL_EXAMPLES, { name: 'ids', query: EXAMPLE_IDS_QUERY }]) {
      const errors = validate(schema, parse(example.query));
      expect({ example: example.name, errors: errors.map((e) => e.message) }).toEqual({ example: example.name, errors: [] });
    }
  });
});

describe('GraphiQL examples on the seeded demo', () => {
  let t: TestApp;
  let fake: FakeLlm;
  let executor: RunExecutor;
  const example = (name: string) => GRAPHIQL_EXAMPLES.find((e) => e.name === name)!;
  const ids = async (): Promise<ExampleIds> => pickExampleIds(ok(await t.gql(EXAMPLE_IDS_QUERY)));

  beforeAll(async () => {
    t = await startTestApp();
    await seedDemo(t.dataSource, t.services, createLogger('silent'));
    fake = await startFakeLlm({ models: ['demo-model-a', 'demo-model-b'] });
    executor = await startExecutor(t);
  });
  afterAll(async () => {
    await executor.stop();
    await fake.close();
    await t.close();
  });

  it('finds the demo ids the examples need', async () => {
    const found = await ids();
    for (const slot of ['projectId', 'useCaseId', 'datasetId', 'runId'] as const) expect(typeof found[slot]).toBe('string');
    expect((found.useCaseIds as string[]).length).toBeGreaterThanOrEqual(2);
    expect((found.radsUseCaseIds as string[]).length).toBe(10);
    expect(found.modelIds).toBeUndefined();
  });

  it('runs every query example without errors, with its variables filled in', async () => {
    const found = await ids();
    const queries = GRAPHIQL_EXAMPLES.filter((e) => /^(#.*\n)*query\b/.test(e.query));
    expect(queries.length).toBeGreaterThanOrEqual(9);
    for (const e of queries) {
      const variables = exampleVariables(e, found);
      expect(JSON.stringify(variables)).not.toContain('<');
      const result = await t.gql(e.query, variables);
      expect({ example: e.name, errors: result.errors }).toEqual({ example: e.name, errors: undefined });
      expect(Object.values(result.data!).every((v) => v !== null)).toBe(true);
    }
    const leaderboard = ok(await t.gql(example('leaderboard').query, exampleVariables(example('leaderboard'), found)));
    const entries = leaderboard.useCase.leaderboard.entries as { rankCiLow: number; rankCiHigh: number; macroAverage: { ciLow: number; ciHigh: number } }[];
    expect(entries.length).toBeGreaterThanOrEqual(2);
    expect(entries.every((e) => e.macroAverage.ciLow <= e.macroAverage.ciHigh && e.rankCiLow <= e.rankCiHigh)).toBe(true);
    const humans = ok(await t.gql(example('model-vs-humans').query, exampleVariables(example('model-vs-humans'), found)));
    expect(humans.run.scores.variables.some((v: { interRaterAgreement: unknown }) => v.interRaterAgreement !== null)).toBe(true);
    const effects = ok(await t.gql(example('strategy-effects').query, exampleVariables(example('strategy-effects'), found)));
    expect(effects.project.strategyEffects.topRanked.length).toBeGreaterThanOrEqual(2);
    const sizes = ok(await t.gql(example('size-classes').query, exampleVariables(example('size-classes'), found)));
    expect(sizes.project.groupSummary.map((g: { group: string }) => g.group)).toEqual(expect.arrayContaining(['LARGE', 'MEDIUM', 'SMALL', 'TINY']));
    const rads = ok(await t.gql(example('rads-validity').query, exampleVariables(example('rads-validity'), found)));
    expect(rads.project.byPrompting.map((g: { group: string }) => g.group).sort()).toEqual(['GUIDED', 'ZERO_SHOT']);
    const variance = ok(await t.gql(example('variance').query, exampleVariables(example('variance'), found)));
    expect(variance.useCase.varianceDecomposition.warnings).toEqual([]);
  });

  it('registers an endpoint, starts an experiment and watches it to the end, as the examples do', async () => {
    const register = example('register-endpoint');
    const registerVariables = exampleVariables(register, await ids()) as { input: Record<string, unknown> };
    registerVariables.input.baseUrl = fake.baseUrl;
    const registered = ok(await t.gql(register.query, registerVariables));
    expect(registered.registerEndpoint.models.map((m: { servedName: string }) => m.servedName).sort()).toEqual(['demo-model-a', 'demo-model-b']);

    const start = example('start-experiment');
    const found = await ids();
    expect(found.modelIds).toHaveLength(2);
    const started = ok(await t.gql(start.query, exampleVariables(start, found)));
    expect(started.startExperiment.runs).toHaveLength(4);

    const watch = example('watch-experiment');
    const variables = exampleVariables(watch, await ids());
    expect(variables.experimentId).toBe(started.startExperiment.experiment.id);
    const client = wsClient(t);
    try {
      const events = await collect(client, watch.query, variables).done;
      const last = events[events.length - 1]!.experimentProgress.progress;
      expect(last.finished).toBe(true);
      expect(last.runs).toBe(4);
    } finally {
      await client.dispose();
    }
  });
});
