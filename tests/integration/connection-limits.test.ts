/**
 * Bounds on what one process takes on at once: operations per WebSocket connection and per key,
 * open connections, HTTP requests in flight and per connection. Everything here counts: the
 * N+1th is refused with a code, the health checks still answer.
 */
import { connect, type Socket } from 'node:net';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { startFakeLlm, type FakeLlm } from '../support/fake-llm/fake-llm-server';
import { ok } from '../support/graphql-fixtures';
import { setUpRuns, wsClient, type RunSetup } from '../support/run-fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

const PROGRESS = 'subscription($id: ID!) { runProgress(runId: $id) { status } }';

interface Watched {
  values: unknown[];
  errors: { message: string; extensions?: Record<string, any> }[];
  closeCode?: number;
  completed: boolean;
  stop: () => void;
}

function watch(client: Client, runId: string): Watched {
  const watched: Watched = { values: [], errors: [], completed: false, stop: () => undefined };
  watched.stop = client.subscribe(
    { query: PROGRESS, variables: { id: runId } },
    {
      next: (value) => void watched.values.push(value.data),
      error: (error) => {
        if (Array.isArray(error)) watched.errors.push(...error);
        else watched.closeCode = (error as { code?: number }).code;
      },
      complete: () => void (watched.completed = true),
    },
  );
  return watched;
}

/** Polls a condition of the test's own state; the bound only ends a hung test. */
async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`still waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function startRun(t: TestApp, setup: RunSetup): Promise<string> {
  return ok(await t.gql('mutation($i: StartRunInput!) { startRun(input: $i) { run { id } } }', { i: { modelId: setup.modelId, datasetId: setup.datasetId, strategy: 'ZERO_SHOT' } })).startRun.run.id;
}

describe('WebSocket operations per connection and per key', () => {
  let t: TestApp;
  let fake: FakeLlm;
  let runId: string;
  const clients: Client[] = [];
  const client = () => {
    const made = wsClient(t);
    clients.push(made);
    return made;
  };
  beforeAll(async () => {
    t = await startTestApp({ http: { webSocketLimits: { perConnection: 3, perKey: 5 } } });
    fake = await startFakeLlm({ models: [{ id: 'fake-model', maxModelLen: 32768 }] });
    runId = await startRun(t, await setUpRuns(t, fake.baseUrl, { reports: 2 }));
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.dispose()));
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });

  it('refuses the operation past the bound of its connection with RATE_LIMITED, then closes a connection that goes on with 4429', async () => {
    const one = client();
    const live = [watch(one, runId), watch(one, runId), watch(one, runId)];
    await until(() => live.every((w) => w.values.length === 1), 'three live subscriptions');
    const refused = watch(one, runId);
    await until(() => refused.errors.length > 0, 'the fourth to be refused');
    expect(refused.errors[0]!.extensions).toMatchObject({ code: 'RATE_LIMITED', reason: 'TOO_MANY_OPERATIONS', limit: 3 });
    expect(refused.values).toEqual([]);
    // The three admitted ones are untouched by the refusal.
    expect(live.map((w) => [w.errors.length, w.closeCode, w.completed])).toEqual([
      [0, undefined, false],
      [0, undefined, false],
      [0, undefined, false],
    ]);

    const more = [watch(one, runId), watch(one, runId)];
    await until(() => live.every((w) => w.closeCode !== undefined), 'the connection to close');
    expect(live.map((w) => w.closeCode)).toEqual([4429, 4429, 4429]);
    expect(more.flatMap((w) => w.errors.map((e) => e.extensions?.code))).toEqual(['RATE_LIMITED', 'RATE_LIMITED']);

    // A connection that completes what it holds may start as many again.
    const two = client();
    const first = watch(two, runId);
    await until(() => first.values.length === 1, 'a subscription on a new connection');
    first.stop();
    const again = [watch(two, runId), watch(two, runId), watch(two, runId)];
    await until(() => again.every((w) => w.values.length === 1), 'three subscriptions after one completed');
    expect(again.flatMap((w) => w.errors)).toEqual([]);
  });

  it("refuses a key's operations past its bound over all its connections, and counts completed ones out", async () => {
    const [a, b] = [client(), client()];
    const live = [watch(a, runId), watch(a, runId), watch(a, runId), watch(b, runId), watch(b, runId)];
    await until(() => live.every((w) => w.values.length === 1), 'five live subscriptions');
    const refused = watch(b, runId);
    await until(() => refused.errors.length > 0, 'the sixth to be refused');
    expect(refused.errors[0]!.extensions).toMatchObject({ code: 'RATE_LIMITED', reason: 'TOO_MANY_OPERATIONS_PER_KEY', limit: 5 });

    live[0]!.stop();
    const admitted = watch(b, runId);
    await until(() => admitted.values.length === 1 || admitted.errors.length > 0, 'a subscription after one completed');
    expect(admitted.errors).toEqual([]);

    // Closed connections give their operations back.
    await a.dispose();
    const c = client();
    const afterClose = [watch(c, runId), watch(c, runId)];
    await until(() => afterClose.every((w) => w.values.length === 1 || w.errors.length > 0), 'subscriptions after a connection closed');
    expect(afterClose.flatMap((w) => w.errors)).toEqual([]);
  });
});

describe("a key over its rate limit on an open connection", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ rateLimits: { perKeyPerMinute: 4, perAddressPerMinute: 0, authFailuresPerMinute: 0 } });
  });
  afterAll(() => t.close());

  it('has its operation answered RATE_LIMITED and the connection closed with 4429, as documented', async () => {
    // Not lazy: the connection stays open between operations, so that only the server closes it.
    const client = createClient({ url: `ws://127.0.0.1:${t.port}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0, lazy: false });
    let closeCode: number | undefined;
    client.on('closed', (event) => void (closeCode = (event as { code: number }).code));
    const ask = () =>
      new Promise<{ data?: any; errors?: readonly any[] }>((resolve, reject) => {
        let result: { data?: any; errors?: readonly any[] } = {};
        client.subscribe(
          { query: '{ viewer { serverAdmin } }', extensions: { headers: { Authorization: `Bearer ${t.adminKey}` } } },
          { next: (value) => void (result = value), error: (error) => (Array.isArray(error) ? resolve({ errors: error }) : reject(error)), complete: () => resolve(result) },
        );
      });
    try {
      const answers: { data?: any; errors?: readonly any[] }[] = [];
      for (let i = 0; i < 5; i++) answers.push(await ask());
      expect(answers.slice(0, 4).map((a) => a.data)).toEqual(Array(4).fill({ viewer: { serverAdmin: true } }));
      expect(answers[4]!.errors?.[0]?.extensions?.code).toBe('RATE_LIMITED');
      await until(() => closeCode !== undefined, 'the connection to close');
      expect(closeCode).toBe(4429);
    } finally {
      await client.dispose();
    }
  });
});

/** A request that stays in flight: its headers promise a body that never comes. */
function heldRequest(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write('POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"query":');
      resolve(socket);
    });
    socket.on('error', reject);
  });
}

function idleConnection(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket));
    socket.on('error', reject);
  });
}

async function closeAll(sockets: Socket[]): Promise<void> {
  await Promise.all(sockets.map((s) => new Promise((resolve) => (s.destroyed ? resolve(undefined) : s.once('close', resolve).destroy()))));
}

/** A query asked until it is no longer shed: the server counts closed connections out as their close reaches it. */
async function answerOnceFreed(t: TestApp): Promise<{ status: number; data?: unknown }> {
  let answer: { status: number; data?: unknown } = { status: 0 };
  for (let i = 0; i < 100 && answer.status !== 200; i++) {
    answer = await t.gql('{ viewer { serverAdmin } }');
    if (answer.status !== 200) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return answer;
}

const VIEWER = JSON.stringify({ query: '{ viewer { serverAdmin } }' });

describe('HTTP requests in flight', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ http: { connectionLimits: { maxConnections: 0, maxRequestsInFlight: 2, maxRequestsPerConnection: 0 } } });
  });
  afterAll(() => t.close());

  it('sheds the request past the bound with a 503 and Retry-After before reading it; /livez and /healthz still answer', async () => {
    const held = [await heldRequest(t.port), await heldRequest(t.port)];
    try {
      let shed: Response | undefined;
      // The held requests are counted once the server has read their headers.
      for (let i = 0; i < 100 && !shed; i++) {
        const response = await fetch(t.url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${t.adminKey}` }, body: VIEWER });
        if (response.status === 503) shed = response;
        else await response.arrayBuffer();
      }
      expect(shed!.headers.get('retry-after')).toBe('1');
      expect(((await shed!.json()) as any).errors[0].extensions).toMatchObject({ code: 'SERVICE_UNAVAILABLE', reason: 'OVERLOADED' });
      expect((await fetch(`http://127.0.0.1:${t.port}/livez`)).status).toBe(200);
      const health = await fetch(`http://127.0.0.1:${t.port}/healthz`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: 'ok', database: 'up' });
      // Health checks ask on one connection of their own, however many come at once.
      const checks = await Promise.all(Array.from({ length: 20 }, () => fetch(`http://127.0.0.1:${t.port}/healthz`).then((r) => r.status)));
      expect(checks).toEqual(Array(20).fill(200));
      const [probes] = (await t.dataSource.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'reportql-health' AND datname = current_database()`)) as { n: number }[];
      expect(probes!.n).toBe(1);
    } finally {
      await closeAll(held);
    }
    expect(await answerOnceFreed(t)).toMatchObject({ status: 200, data: { viewer: { serverAdmin: true } } });
  });
});

describe('open connections', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ http: { connectionLimits: { maxConnections: 4, maxRequestsInFlight: 0, maxRequestsPerConnection: 0 } } });
  });
  afterAll(() => t.close());

  it('past the bound, answers requests and WebSocket handshakes with 503 and health checks with 200', async () => {
    const idle = await Promise.all(Array.from({ length: 4 }, () => idleConnection(t.port)));
    try {
      const shed = await fetch(t.url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${t.adminKey}` }, body: VIEWER });
      expect(shed.status).toBe(503);
      expect(shed.headers.get('retry-after')).toBe('1');
      expect(((await shed.json()) as any).errors[0].extensions.code).toBe('SERVICE_UNAVAILABLE');
      expect((await fetch(`http://127.0.0.1:${t.port}/healthz`)).status).toBe(200);
      expect((await fetch(`http://127.0.0.1:${t.port}/livez`)).status).toBe(200);
      const handshake = await new Promise<{ status: number; retryAfter: string | undefined }>((resolve, reject) => {
        const socket = new WebSocket(`ws://127.0.0.1:${t.port}/graphql`, 'graphql-transport-ws');
        socket.on('unexpected-response', (_request, response) => {
          resolve({ status: response.statusCode ?? 0, retryAfter: response.headers['retry-after'] as string | undefined });
          socket.terminate();
        });
        socket.on('open', () => reject(new Error('the handshake was accepted')));
        socket.on('error', () => undefined);
      });
      expect(handshake).toEqual({ status: 503, retryAfter: '1' });
    } finally {
      await closeAll(idle);
    }
    expect(await answerOnceFreed(t)).toMatchObject({ status: 200, data: { viewer: { serverAdmin: true } } });
  });
});

describe('requests per connection', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ http: { connectionLimits: { maxConnections: 0, maxRequestsInFlight: 0, maxRequestsPerConnection: 2 } } });
  });
  afterAll(() => t.close());

  it('answers the requests past the bound on one keep-alive connection with 503', async () => {
    const socket = await idleConnection(t.port);
    let received = '';
    let closed = false;
    socket.on('data', (chunk) => (received += chunk.toString('latin1')));
    socket.once('close', () => (closed = true));
    socket.write('GET /livez HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'.repeat(3));
    const statuses = () => [...received.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]));
    await until(() => statuses().length === 3 || closed, 'three answers');
    expect(statuses()).toEqual([200, 200, 503]);
    socket.destroy();
  });
});
