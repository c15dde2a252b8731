/**
 * A dead worker's items come back within seconds, whatever the lease: a worker process killed
 * mid-run with claimed items, under the default lease of 15 minutes, and a new worker finishes
 * the run. A holder whose claim was reclaimed can no longer complete the item.
 */
import { randomUUID } from 'node:crypto';
import { RunExecutor } from '../../src/jobs/executor';
import { DEFAULT_QUEUE_OPTIONS, JobQueue, RUN_QUEUE } from '../../src/jobs/queue';
import { createLogger } from '../../src/logger';
import { killProcess, startProcess, stopProcess, type Child } from '../support/child-processes';
import { startFakeLlm, type FakeLlm } from '../support/fake-llm/fake-llm-server';
import { ok, rowId } from '../support/graphql-fixtures';
import { answerOf, expectedValues, FAST_EXECUTOR, lastUserText, predictionRows, runState, setUpRuns, startExecutor, waitForStatus } from '../support/run-fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const START_RUN = /* GraphQL */ `mutation($i: StartRunInput!) { startRun(input: $i) { run { id } } }`;

describe('reclaiming the items of dead workers', () => {
  let t: TestApp;
  let fake: FakeLlm;
  const children: Child[] = [];

  beforeAll(async () => {
    t = await startTestApp();
    fake = await startFakeLlm({ models: ['fake-model'], answerFromReport: true, recordRequests: false });
  });
  afterAll(async () => {
    await Promise.all(children.map(stopProcess));
    await t.close();
    await fake.close();
  });

  async function worker(): Promise<Child> {
    // No JOB_LEASE_SECONDS: the default lease of 900 s.
    const child = startProcess('worker', { DATABASE_URL: t.databaseUrl, WORKER_CONCURRENCY: '8' });
    children.push(child);
    for (let i = 0; i < 300; i++) {
      const [{ n }] = await t.dataSource.query(`SELECT count(*)::int AS n FROM job_workers WHERE pid = $1 AND heartbeat_at > now() - interval '5 seconds'`, [child.process.pid]);
      if (n > 0) break;
      await sleep(100);
    }
    return child;
  }

  it('a worker SIGKILLed with claimed items under the default lease: a new worker finishes the run long before the lease', async () => {
    expect(DEFAULT_QUEUE_OPTIONS.leaseSeconds).toBe(900);
    fake.configure({ latencyMs: 100 });
    const setup = await setUpRuns(t, fake.baseUrl, { reports: 200, maxConcurrency: 8 });
    const first = await worker();
    const run = ok(await t.gql(START_RUN, { i: { modelId: setup.modelId, datasetId: setup.datasetId, deadlineMs: 5000 } })).startRun.run;
    for (let i = 0; i < 600 && (await runState(t, run.id)).progress.succeeded < 20; i++) await sleep(50);
    await killProcess(first);
    const atKill = (await runState(t, run.id)).progress.succeeded as number;
    expect(atKill).toBeLessThan(200);
    // The dead worker still holds items, leased for 15 minutes.
    const [{ active }] = await t.dataSource.query(
      `SELECT count(*)::int AS active FROM pgboss.job WHERE name = $1 AND state = 'active' AND data->>'runId' = $2 AND expire_in >= interval '800 seconds'`,
      [RUN_QUEUE, rowId(run.id)],
    );
    expect(active).toBeGreaterThan(0);

    await worker();
    const final = await waitForStatus(t, run.id, ['SUCCEEDED', 'PARTIAL', 'FAILED'], 90_000);
    expect(final).toMatchObject({ status: 'SUCCEEDED', progress: { succeeded: 200, failed: 0, pending: 0 } });
    const rows = await predictionRows(t, run.id);
    expect(rows).toHaveLength(200);
    expect(new Set(rows.map((r) => r.report)).size).toBe(200);
    rows.forEach((row, i) => expect(row.values).toEqual(expectedValues(i)));
    await Promise.all(children.splice(0).map(stopProcess));
  }, 180_000);

  it('a worker whose claim is taken stops its reports at once; the new holder finishes the run, each report asked for at most once more', async () => {
    const fake2 = await startFakeLlm({ models: ['fake-model'], answerFromReport: true, latencyMs: 200 });
    const executors: RunExecutor[] = [];
    try {
      const setup = await setUpRuns(t, fake2.baseUrl, { reports: 30, maxConcurrency: 1 });
      const said: string[] = [];
      const logger = createLogger('info', { write: (line: string) => void said.push((JSON.parse(line) as { msg: string }).msg) });
      const first = new RunExecutor(t.dataSource, t.services.queue, t.services.bus, t.services.bus, t.services.secretBox, logger, FAST_EXECUTOR);
      executors.push(first);
      await first.start();
      const run = ok(await t.gql(START_RUN, { i: { modelId: setup.modelId, datasetId: setup.datasetId } })).startRun.run;
      for (let i = 0; i < 600 && (await runState(t, run.id)).progress.succeeded < 3; i++) await sleep(50);
      // What reclaiming does when the first worker looks dead: its claim is gone, the item back in
      // the queue (ready a little later here, so that it is not simply fetched again at once).
      await t.dataSource.query(
        `WITH lost AS (DELETE FROM job_claims WHERE worker_id = $1 RETURNING job_id)
         UPDATE pgboss.job SET state = 'retry', start_after = now() + interval '6 seconds' WHERE id IN (SELECT job_id FROM lost)`,
        [first.workerId],
      );
      for (let i = 0; i < 200 && !said.includes('a work item was reclaimed from this worker: its reports stop'); i++) await sleep(50);
      expect(said).toContain('a work item was reclaimed from this worker: its reports stop');

      executors.push(await startExecutor(t));
      const final = await waitForStatus(t, run.id, ['SUCCEEDED', 'PARTIAL', 'FAILED'], 60_000);
      expect(final).toMatchObject({ status: 'SUCCEEDED', progress: { succeeded: 30, pending: 0 } });
      expect(await predictionRows(t, run.id)).toHaveLength(30);
      const asked = new Map<string, number>();
      for (const request of fake2.requests) {
        if (request.path !== '/v1/chat/completions') continue;
        // (the endpoint's capability probes at registration carry no report)
        const answer = answerOf(lastUserText(request.body as never));
        if (answer !== null) asked.set(answer, (asked.get(answer) ?? 0) + 1);
      }
      // Only the report in flight when the claim was lost (aborted, written by nobody) is asked for again.
      expect(asked.size).toBe(30);
      expect([...asked.values()].filter((n) => n > 1).length).toBeLessThanOrEqual(1);
      expect(said).not.toContain('a work item was reclaimed by another worker before this one finished it');
    } finally {
      for (const executor of executors) await executor.stop();
      await fake2.close();
    }
  }, 120_000);

  it('a worker that stops removes its heartbeat row, so nobody takes it for a dead one', async () => {
    const executor = await startExecutor(t);
    const rows = () => t.dataSource.query(`SELECT id FROM job_workers WHERE id = $1`, [executor.workerId]) as Promise<unknown[]>;
    expect(await rows()).toHaveLength(1);
    await executor.stop();
    expect(await rows()).toHaveLength(0);
  });

  it('a reclaimed item cannot be completed or failed by its previous holder', async () => {
    const queue = new JobQueue(t.dataSource);
    await queue.start();
    try {
      await t.dataSource.transaction((manager) => queue.enqueue(manager, randomUUID(), [randomUUID()]));
      // Two holders on another host: one silent for a minute (dead), one beating now.
      const gone = randomUUID();
      const alive = randomUUID();
      await t.dataSource.query(
        `INSERT INTO job_workers (id, host, pid, heartbeat_at) VALUES ($1, 'elsewhere', 1, now() - interval '60 seconds'), ($2, 'elsewhere', 1, now())`,
        [gone, alive],
      );
      const [claimed] = await queue.fetch(1, gone);
      expect(claimed).toBeDefined();
      expect(await queue.reclaim()).toEqual([claimed!.jobId]);
      expect((await queue.held([claimed!])).size).toBe(0);

      const [again] = await queue.fetch(1, alive);
      expect(again?.jobId).toBe(claimed!.jobId);
      // The live holder keeps its claim through another round of reclaiming.
      expect(await queue.reclaim()).toEqual([]);
      expect(await queue.complete(claimed!)).toBe(false);
      expect(await queue.fail(claimed!, 'late')).toBe(false);
      const [{ state }] = await t.dataSource.query(`SELECT state::text FROM pgboss.job WHERE id = $1`, [again!.jobId]);
      expect(state).toBe('active');
      expect(await queue.complete(again!)).toBe(true);
      const [{ state: after }] = await t.dataSource.query(`SELECT state::text FROM pgboss.job WHERE id = $1`, [again!.jobId]);
      expect(after).toBe('completed');
    } finally {
      await queue.stop();
    }
  }, 60_000);
});
