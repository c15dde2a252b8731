/**
 * A live subscription across a PostgreSQL restart: the server's own embedded cluster (driven by
 * tests/support/embedded-db-control.ts) is stopped with `immediate` (the postmaster and its
 * backends go at once, as after a crash) under a `runProgress` subscriber.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import { createClient, type Client } from 'graphql-ws';
import type { DataSource } from 'typeorm';
import WebSocket from 'ws';
import { createApp, type App } from '../../src/app';
import { openDatabase } from '../../src/db/data-source';
import { startFakeLlm, type FakeLlm } from '../support/fake-llm/fake-llm-server';
import { ok, rowId } from '../support/graphql-fixtures';
import { setUpRuns, type RunSetup } from '../support/run-fixtures';
import { TEST_SECRET_KEY, type GraphQLResponse, type TestApp } from '../support/test-app';
import { LOG_MARKER, testLogger } from '../support/test-log';

const ROOT = path.resolve(__dirname, '../..');
/** Long enough for a restart on a busy machine, which the first test must not mistake for an outage. */
const OUTAGE_LIMIT_MS = 20_000;
const PROGRESS = 'subscription($id: ID!) { runProgress(runId: $id) { status progress { succeeded total } } }';

interface Watched {
  values: { status: string; progress: { succeeded: number; total: number } }[];
  errors: { message: string; extensions?: Record<string, unknown> }[];
  completed: boolean;
}

/** Polls a condition of the test's own state (no timing asserted: the bound only ends a hung test). */
async function until(condition: () => boolean, what: string, limitMs = 30_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`still waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('subscriptions across a PostgreSQL restart', () => {
  let dir: string;
  let control: ChildProcess;
  let lines: Interface;
  let dataSource: DataSource;
  let app: App;
  let fake: FakeLlm;
  let port: number;
  let adminKey: string;
  let setup: RunSetup;
  let client: Client;
  const nextLine = () => new Promise<string>((resolve) => lines.once('line', resolve));
  const command = async (line: string) => {
    const answer = nextLine();
    control.stdin!.write(`${line}\n`);
    return answer;
  };
  const gql = async (query: string, variables?: Record<string, unknown>): Promise<GraphQLResponse<any>> => {
    const response = await fetch(`http://127.0.0.1:${port}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${adminKey}` },
      body: JSON.stringify({ query, variables }),
    });
    return { ...((await response.json()) as GraphQLResponse), status: response.status };
  };
  const startRun = async (): Promise<string> =>
    ok(await gql('mutation($i: StartRunInput!) { startRun(input: $i) { run { id } } }', { i: { modelId: setup.modelId, datasetId: setup.datasetId, strategy: 'ZERO_SHOT' } })).startRun.run.id;
  const watch = (runId: string): Watched => {
    const watched: Watched = { values: [], errors: [], completed: false };
    client.subscribe(
      { query: PROGRESS, variables: { id: runId } },
      {
        next: (value) => {
          if (value.errors) watched.errors.push(...(value.errors as Watched['errors']));
          else watched.values.push((value.data as { runProgress: Watched['values'][number] }).runProgress);
        },
        error: (error) => watched.errors.push({ message: String(error) }),
        complete: () => void (watched.completed = true),
      },
    );
    return watched;
  };

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'reportql-subscription-restart-'));
    control = spawn(process.execPath, ['-r', './tests/support/ts-register.js', 'tests/support/embedded-db-control.ts', dir], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
    lines = createInterface({ input: control.stdout! });
    const url = (JSON.parse(await nextLine()) as { url: string }).url;
    dataSource = await openDatabase({ url });
    app = await createApp(dataSource, testLogger(), {
      secretKey: TEST_SECRET_KEY,
      events: { reconnectDelayMs: 100, maxReconnectDelayMs: 400, outageLimitMs: OUTAGE_LIMIT_MS },
    });
    port = await app.listen(0, '127.0.0.1');
    adminKey = `rql_test_admin_${LOG_MARKER}_${randomBytes(16).toString('hex')}`;
    await app.services.apiKeys.ensureServerAdmin(adminKey);
    fake = await startFakeLlm({ models: [{ id: 'fake-model', maxModelLen: 32768 }] });
    setup = await setUpRuns({ gql: (query: string, variables?: Record<string, unknown>) => gql(query, variables), adminKey } as unknown as TestApp, fake.baseUrl, { reports: 3 });
    client = createClient({ url: `ws://127.0.0.1:${port}/graphql`, webSocketImpl: WebSocket, connectionParams: { Authorization: `Bearer ${adminKey}` }, retryAttempts: 0 });
  }, 120_000);
  afterAll(async () => {
    await client?.dispose();
    await app?.close();
    await dataSource?.destroy();
    await fake?.close();
    const exited = new Promise((resolve) => control.once('exit', resolve));
    control.stdin!.write('exit\n');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('goes on after the restart: the current state is sent again, then the events that follow', async () => {
    const runId = await startRun();
    const watched = watch(runId);
    await until(() => watched.values.length === 1, 'the first state');
    expect(watched.values[0]).toEqual({ status: 'QUEUED', progress: { succeeded: 0, total: 3 } });

    expect(await command('stop immediate')).toBe('ok');
    await until(() => !app.services.bus.listening, 'the event connection to break');
    expect(await command('start')).toBe('ok');
    // Unchanged state is never sent twice except as the snapshot that follows a reconnection.
    await until(() => watched.values.length === 2, 'the state sent again after the restart');
    expect(watched.values[1]).toEqual(watched.values[0]);
    expect(watched.errors).toEqual([]);

    await dataSource.query(`UPDATE runs SET status = 'RUNNING' WHERE id = $1`, [rowId(runId)]);
    await app.services.bus.runsChanged([{ runId: rowId(runId), experimentId: null }]);
    await until(() => watched.values.length === 3, 'the event after the restart');
    expect(watched.values[2]!.status).toBe('RUNNING');

    await dataSource.query(`UPDATE runs SET status = 'CANCELLED', finished_at = now() WHERE id = $1`, [rowId(runId)]);
    await app.services.bus.runsChanged([{ runId: rowId(runId), experimentId: null }]);
    await until(() => watched.completed, 'the end of the run');
    expect(watched.values.at(-1)!.status).toBe('CANCELLED');
    expect(watched.errors).toEqual([]);
  }, 120_000);

  it('ends with SERVICE_UNAVAILABLE, never an internal error, when the database stays away', async () => {
    const runId = await startRun();
    const watched = watch(runId);
    await until(() => watched.values.length === 1, 'the first state');

    expect(await command('stop immediate')).toBe('ok');
    try {
      await until(() => watched.completed || watched.errors.length > 0, 'the subscription to end', OUTAGE_LIMIT_MS + 30_000);
      await until(() => watched.completed, 'the subscription to complete');
      expect(watched.errors).toHaveLength(1);
      expect(watched.errors[0]!.extensions).toMatchObject({ code: 'SERVICE_UNAVAILABLE', reason: 'DATABASE_UNAVAILABLE' });
      expect(watched.values).toHaveLength(1);
    } finally {
      expect(await command('start')).toBe('ok');
    }
    // The server itself recovers: a new subscription gets the current state.
    await until(() => app.services.bus.listening, 'the event connection to come back');
    const again = watch(runId);
    await until(() => again.values.length === 1, 'the state of a new subscription');
    expect(again.values[0]!.status).toBe('QUEUED');
  }, 120_000);
});
