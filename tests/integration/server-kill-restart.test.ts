/**
 * A server (with its worker and embedded PostgreSQL) SIGKILLed mid-run and started again on the
 * same DATA_DIR, with the default lease of 15 minutes: the run finishes within a minute, each
 * report predicted once.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { killProcess, startProcess, stopProcess, type Child } from '../support/child-processes';
import { startFakeLlm, type FakeLlm } from '../support/fake-llm/fake-llm-server';
import { ok } from '../support/graphql-fixtures';
import { runState, setUpRuns, waitForStatus } from '../support/run-fixtures';
import type { TestApp } from '../support/test-app';

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

describe('a server killed mid-run', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'reportql-kill-'));
  // As root the embedded PostgreSQL runs as `postgres`, which must be able to enter DATA_DIR.
  chmodSync(dir, 0o755);
  let fake: FakeLlm;
  const children: Child[] = [];
  beforeAll(async () => {
    fake = await startFakeLlm({ models: ['fake-model'], answerFromReport: true, recordRequests: false });
  });
  afterAll(async () => {
    await Promise.all(children.map(stopProcess));
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('finishes its run after a restart on the same DATA_DIR, long before the lease', async () => {
    const port = await freePort();
    const adminKey = `kill-restart-admin-${randomBytes(12).toString('hex')}`;
    const server = async (): Promise<Child> => {
      // No JOB_LEASE_SECONDS: the default lease of 900 s.
      const child = startProcess('main', { DATABASE_URL: '', DATA_DIR: path.join(dir, 'data'), PORT: String(port), ADMIN_API_KEY: adminKey, SEED_DEMO: 'false', LOG_LEVEL: 'info' });
      children.push(child);
      for (let i = 0; i < 1200 && !child.output().includes('ReportQL listening'); i++) await sleep(100);
      expect(child.output()).toContain('ReportQL listening');
      return child;
    };
    const url = `http://127.0.0.1:${port}/graphql`;
    const t = {
      adminKey,
      async gql(query: string, variables?: Record<string, unknown>, key: string | null = adminKey) {
        const response = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
          body: JSON.stringify({ query, variables }),
        });
        return { ...((await response.json()) as object), status: response.status };
      },
    } as unknown as TestApp;

    fake.configure({ latencyMs: 100 });
    const first = await server();
    const setup = await setUpRuns(t, fake.baseUrl, { reports: 200, maxConcurrency: 8 });
    const run = ok(await t.gql(`mutation($i: StartRunInput!) { startRun(input: $i) { run { id } } }`, { i: { modelId: setup.modelId, datasetId: setup.datasetId, deadlineMs: 5000 } })).startRun
      .run;
    for (let i = 0; i < 600 && (await runState(t, run.id)).progress.succeeded < 20; i++) await sleep(50);
    await killProcess(first);

    await server();
    const final = await waitForStatus(t, run.id, ['SUCCEEDED', 'PARTIAL', 'FAILED'], 90_000);
    expect(final).toMatchObject({ status: 'SUCCEEDED', progress: { succeeded: 200, failed: 0, pending: 0 } });
  }, 240_000);
});
