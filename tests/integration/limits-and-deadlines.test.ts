import { createApp, type App } from '../../src/app';
import { openDatabase } from '../../src/db/data-source';
import { createLogger } from '../../src/logger';
import type { DataSource } from 'typeorm';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { startFakeLlm, type FakeLlm } from '../support/fake-llm/fake-llm-server';
import { createApiKey, createProject, createUseCase, ok } from '../support/graphql-fixtures';
import { startTestApp, TEST_SECRET_KEY, type TestApp } from '../support/test-app';

const VIEWER = '{ viewer { role } }';

async function post(port: number, key: string | null, query: string, variables: Record<string, unknown> = {}) {
  const response = await fetch(`http://127.0.0.1:${port}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as { data?: any; errors?: { message: string; extensions?: Record<string, any> }[] };
  return { status: response.status, retryAfter: response.headers.get('retry-after'), ...body };
}

function ws(port: number, key: string): Client {
  return createClient({ url: `ws://127.0.0.1:${port}/graphql`, webSocketImpl: WebSocket, connectionParams: { Authorization: `Bearer ${key}` }, retryAttempts: 0, lazy: true });
}

function once(client: Client, query: string, variables: Record<string, unknown> = {}): Promise<{ data?: any; errors?: any[] }> {
  return new Promise((resolve, reject) => {
    let result: { data?: any; errors?: any[] } = {};
    client.subscribe({ query, variables }, { next: (value) => (result = value as typeof result), error: (error) => (Array.isArray(error) ? resolve({ errors: error }) : reject(error)), complete: () => resolve(result) });
  });
}

describe('rate limits, shared by every server process on the database', () => {
  let t: TestApp;
  let second: { app: App; dataSource: DataSource; port: number };
  let keys: { a: string; b: string };

  beforeAll(async () => {
    t = await startTestApp({ rateLimits: { perKeyPerMinute: 6, perAddressPerMinute: 1000, authFailuresPerMinute: 3 } });
    const dataSource = await openDatabase({ url: t.databaseUrl });
    const app = await createApp(dataSource, createLogger('silent'), {
      secretKey: TEST_SECRET_KEY,
      rateLimits: { perKeyPerMinute: 6, perAddressPerMinute: 1000, authFailuresPerMinute: 3 },
    });
    second = { app, dataSource, port: await app.listen(0, '127.0.0.1') };
    const project = await createProject(t, 'Limits');
    keys = { a: (await createApiKey(t, project.id, 'VIEWER', project.adminKey)).secret, b: (await createApiKey(t, project.id, 'VIEWER', project.adminKey)).secret };
  });
  afterAll(async () => {
    await second.app.close();
    await second.dataSource.destroy();
    await t.close();
  });

  it('counts a key over both servers and answers RATE_LIMITED with Retry-After; another key is unaffected', async () => {
    for (let i = 0; i < 3; i++) expect((await post(t.port, keys.a, VIEWER)).errors).toBeUndefined();
    for (let i = 0; i < 3; i++) expect((await post(second.port, keys.a, VIEWER)).errors).toBeUndefined();
    const refused = await post(second.port, keys.a, VIEWER);
    expect(refused.status).toBe(429);
    expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'RATE_LIMITED' });
    const seconds = Number(refused.retryAfter);
    expect(seconds).toBeGreaterThanOrEqual(1);
    expect(seconds).toBeLessThanOrEqual(60);
    expect(refused.errors?.[0]?.extensions?.retryAfterSeconds).toBe(seconds);
    expect(refused.data).toBeUndefined();
    expect((await post(t.port, keys.a, VIEWER)).status).toBe(429);
    expect((await post(t.port, keys.b, VIEWER)).errors).toBeUndefined();
  });

  it('limits WebSocket connections and operations with the same counter', async () => {
    // the key in the connection's parameters: the connection is refused with 4429
    const closed = await new Promise<number>((resolve) => {
      const socket = new WebSocket(`ws://127.0.0.1:${t.port}/graphql`, 'graphql-transport-ws');
      socket.on('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload: { Authorization: `Bearer ${keys.a}` } })));
      socket.on('close', (code) => resolve(code));
    });
    expect(closed).toBe(4429);
    // the key with the operation (as GraphiQL sends it): the operation is answered RATE_LIMITED
    const client = createClient({ url: `ws://127.0.0.1:${t.port}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0, lazy: true });
    try {
      const result = await new Promise<{ errors?: any[] }>((resolve, reject) => {
        client.subscribe(
          { query: VIEWER, extensions: { headers: { Authorization: `Bearer ${keys.a}` } } },
          { next: () => reject(new Error('answered')), error: (error) => (Array.isArray(error) ? resolve({ errors: error }) : reject(error)), complete: () => reject(new Error('completed')) },
        );
      });
      expect(result.errors?.[0]?.extensions?.code).toBe('RATE_LIMITED');
      expect(result.errors?.[0]?.extensions?.http).toBeUndefined();
    } finally {
      await client.dispose();
    }
  });

  it('refuses an address that failed to authenticate too often, even with a good key', async () => {
    for (let i = 0; i < 3; i++) expect((await post(t.port, `rql_wrong_${i}_xxxxxxxxxxxxxxxxxxxxxxxx`, VIEWER)).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    const refused = await post(second.port, t.adminKey, VIEWER);
    expect(refused.status).toBe(429);
    expect(refused.errors?.[0]?.extensions?.code).toBe('RATE_LIMITED');
    expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
  });
});

describe('per-address limit', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ rateLimits: { perKeyPerMinute: 0, perAddressPerMinute: 4, authFailuresPerMinute: 0 } });
  });
  afterAll(() => t.close());

  it('counts every request from one address, whatever its key, and unauthenticated ones too', async () => {
    const project = await createProject(t, 'Address');
    const key = (await createApiKey(t, project.id, 'VIEWER', project.adminKey)).secret;
    // createProject and createApiKey were two requests
    expect((await post(t.port, key, VIEWER)).errors).toBeUndefined();
    expect((await post(t.port, null, VIEWER)).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    const refused = await post(t.port, t.adminKey, VIEWER);
    expect(refused.errors?.[0]?.extensions?.code).toBe('RATE_LIMITED');
    expect(refused.status).toBe(429);
  });
});

describe('request deadlines', () => {
  let t: TestApp;
  let fake: FakeLlm;
  let modelId: string;
  let useCaseId: string;
  beforeAll(async () => {
    t = await startTestApp({ requestDeadlineMs: 1500 });
    fake = await startFakeLlm({ models: ['slow-model'] });
    const project = await createProject(t, 'Deadlines');
    useCaseId = (await createUseCase(t, project.id)).id;
    const registered = ok(
      await t.gql(`mutation($i: RegisterEndpointInput!) { registerEndpoint(input: $i) { models { id } } }`, { i: { projectId: project.id, name: 'slow', baseUrl: fake.baseUrl, timeoutMs: 60_000 } }),
    );
    modelId = registered.registerEndpoint.models[0].id;
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });

  const EXTRACT = `mutation($i: ExtractInput!) { extract(input: $i) { status errorCode } }`;

  it('answers an HTTP request that outlives the deadline with DEADLINE_EXCEEDED and stops its upstream call', async () => {
    fake.configure({ latencyMs: 20_000 });
    const result = await post(t.port, t.adminKey, EXTRACT, { i: { modelId, useCaseId, strategy: 'ZERO_SHOT', text: 'Melanoom.', deadlineMs: 60_000 } });
    expect(result.status).toBe(503);
    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', reason: 'DEADLINE_EXCEEDED', deadlineMs: 1500 });
    // the call to the endpoint was aborted, not left to run for its 20 s
    for (let i = 0; i < 100 && fake.stats().inFlight > 0; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(fake.stats().inFlight).toBe(0);
    // the server is answering the next request normally
    fake.configure({ latencyMs: 0 });
    expect((await post(t.port, t.adminKey, VIEWER)).errors).toBeUndefined();
  });

  it('ends a WebSocket mutation at the same deadline', async () => {
    fake.configure({ latencyMs: 20_000 });
    const client = ws(t.port, t.adminKey);
    try {
      const result = await once(client, EXTRACT, { i: { modelId, useCaseId, strategy: 'ZERO_SHOT', text: 'Melanoom.', deadlineMs: 60_000 } });
      expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', reason: 'DEADLINE_EXCEEDED' });
    } finally {
      fake.configure({ latencyMs: 0 });
      await client.dispose();
    }
  });
});

describe('WebSocket connections of a revoked key', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('are closed with 4403 and a reason that says only that', async () => {
    const project = await createProject(t, 'Revocation');
    const issued = await createApiKey(t, project.id, 'VIEWER', project.adminKey);
    const closed = new Promise<{ code: number; reason: string }>((resolve) => {
      const socket = new WebSocket(`ws://127.0.0.1:${t.port}/graphql`, 'graphql-transport-ws');
      socket.on('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload: { Authorization: `Bearer ${issued.secret}` } })));
      socket.on('message', (data) => {
        if (JSON.parse(String(data)).type === 'connection_ack') {
          socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: VIEWER } }));
          void t.gql(`mutation($i: RevokeApiKeyInput!) { revokeApiKey(input: $i) { apiKey { id } } }`, { i: { id: issued.id } }, project.adminKey);
        }
      });
      socket.on('close', (code, reason) => resolve({ code, reason: String(reason) }));
    });
    expect(await closed).toEqual({ code: 4403, reason: 'Forbidden: the API key was revoked' });
  });
});
