/**
 * Runs across processes on one database: worker processes killed mid-run, a second server
 * process whose subscribers see what workers elsewhere produce, and the endpoint limit held
 * across workers. The fake endpoint runs in this (the test) process, so it sees every worker.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { queueOptions } from '../../src/jobs/queue';
import { startFakeLlm, type FakeLlm } from '../support/fake-llm/fake-llm-server';
import { ok, rowId } from '../support/graphql-fixtures';
import { collect, expectedValues, predictionRows, runState, setUpRuns, waitForStatus, wsClient, type RunSetup } from '../support/run-fixtures';
import { startTestApp, type TestApp } from '../support/test-app';
import { startProcess, stopProcess as stop, type Child } from '../support/child-processes';

const LEASE_SECONDS = 12;
const START_RUN = /* GraphQL */ `mutation($i: StartRunInput!) { startRun(input: $i) { run { id } } }`;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

function start(entry: 'worker' | 'main', env: Record<string, string>): Child {
  return startProcess(entry, { JOB_LEASE_SECONDS: String(LEASE_SECONDS), ...env });
}

describe('runs across processes', () => {
  let t: TestApp;
  let fake: FakeLlm;
  const children: Child[] = [];

  beforeAll(async () => {
    t = await startTestApp({ queue: queueOptions(LEASE_SECONDS) });
    fake = await startFakeLlm({ models: ['fake-model'], answerFromReport: true, recordRequests: false });
  });
  afterAll(async () => {
    await Promise.all(children.map(stop));
    await t.close();
    await fake.close();
  });

  async function workers(count: number, concurrency: number): Promise<Child[]> {
    const started = Array.from({ length: count }, () => start('worker', { DATABASE_URL: t.databaseUrl, WORKER_CONCURRENCY: String(concurrency) }));
    children.push(...started);
    // Each worker records a heartbeat once it runs.
    for (let i = 0; i < 300; i++) {
      const [{ n }] = await t.dataSource.query(`SELECT count(*)::int AS n FROM job_workers WHERE heartbeat_at > now() - interval '5 seconds'`);
      if (n >= count) break;
      await sleep(100);
    }
    return started;
  }

  it('a worker killed mid-run loses nothing: another takes its items up, no prediction twice', async () => {
    fake.configure({ latencyMs: 40 });
    const setup: RunSetup = await setUpRuns(t, fake.baseUrl, { reports: 120, maxConcurrency: 8 });
    const [first] = await workers(1, 8);
    const run = ok(await t.gql(START_RUN, { i: { modelId: setup.modelId, datasetId: setup.datasetId, deadlineMs: 3000 } })).startRun.run;
    for (let i = 0; i < 300 && (await runState(t, run.id)).progress.succeeded < 20; i++) await sleep(50);
    first!.process.kill('SIGKILL');
    await new Promise((resolve) => first!.process.once('exit', resolve));
    const atKill = (await runState(t, run.id)).progress.succeeded as number;
    expect(atKill).toBeGreaterThanOrEqual(20);
    expect(atKill).toBeLessThan(120);

    await workers(1, 8);
    const final = await waitForStatus(t, run.id, ['SUCCEEDED', 'PARTIAL', 'FAILED'], 90_000);
    expect(final).toMatchObject({ status: 'SUCCEEDED', progress: { succeeded: 120, failed: 0, pending: 0 } });
    const rows = await predictionRows(t, run.id);
    expect(rows).toHaveLength(120);
    expect(new Set(rows.map((r) => r.report)).size).toBe(120);
    rows.forEach((row, i) => expect(row.values).toEqual(expectedValues(i)));
    const [counts] = await t.dataSource.query(
      `SELECT r.succeeded_count, (SELECT count(*)::int FROM predictions p WHERE p.run_id = r.id) AS rows FROM runs r WHERE r.id = $1`,
      [rowId(run.id)],
    );
    expect(counts.succeeded_count).toBe(counts.rows);
  }, 150_000);

  it('two workers share an endpoint without exceeding its limit; a second server streams their progress', async () => {
    await Promise.all(children.splice(0).map(stop));
    fake.configure({ latencyMs: 60 });
    fake.resetStats();
    const setup = await setUpRuns(t, fake.baseUrl, { reports: 90, maxConcurrency: 3 });
    await workers(2, 2);
    const port = await freePort();
    const adminKey = `rql_second_server_${randomBytes(16).toString('hex')}`;
    const server = start('main', { DATABASE_URL: t.databaseUrl, PORT: String(port), WORKER: 'false', SEED_DEMO: 'false', ADMIN_API_KEY: adminKey });
    children.push(server);
    for (let i = 0; i < 300; i++) {
      const up = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok).catch(() => false);
      if (up) break;
      await sleep(100);
    }

    const run = ok(await t.gql(START_RUN, { i: { modelId: setup.modelId, datasetId: setup.datasetId } })).startRun.run;
    // Subscribed on the other server process, with that server's admin key.
    const client = wsClient({ ...t, port, adminKey }, adminKey);
    const events = await collect(client, 'subscription($id: ID!) { runProgress(runId: $id) { status progress { succeeded } } }', { id: run.id }).done;
    await client.dispose();
    expect(events.at(-1)!.runProgress).toEqual({ status: 'SUCCEEDED', progress: { succeeded: 90 } });
    expect(events.length).toBeGreaterThan(2);

    const stats = fake.stats();
    // Each worker may hold 2 calls; together they reach the endpoint's limit of 3 and never pass it.
    expect(stats.peakInFlight).toBe(3);
    expect(await predictionRows(t, run.id)).toHaveLength(90);
  }, 150_000);
});
