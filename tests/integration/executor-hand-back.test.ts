/**
 * A work item whose last queue call fails (the database went away at that moment) is handed back
 * as soon as the database answers again, not left leased until its lease runs out.
 */
import { RunExecutor } from '../../src/jobs/executor';
import { queueOptions, type JobQueue } from '../../src/jobs/queue';
import { createLogger } from '../../src/logger';
import { startFakeLlm, type FakeLlm } from '../support/fake-llm/fake-llm-server';
import { ok, rowId } from '../support/graphql-fixtures';
import { FAST_EXECUTOR, setUpRuns, waitForStatus } from '../support/run-fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

describe('handing work items back', () => {
  let t: TestApp;
  let fake: FakeLlm;
  let executor: RunExecutor | undefined;
  beforeAll(async () => {
    // A lease far longer than the test: an item left leased would never be seen again here.
    t = await startTestApp({ queue: queueOptions(3600) });
    fake = await startFakeLlm({ answerFromReport: true, recordRequests: false });
  });
  afterAll(async () => {
    await executor?.stop();
    await t.close();
    await fake.close();
  });

  it('an item whose complete and first fail calls are refused is retried and completed', async () => {
    const setup = await setUpRuns(t, fake.baseUrl, { reports: 3 });
    const real = t.services.queue;
    const calls: string[] = [];
    // The real queue, with the database away for its first complete and its first fail.
    const flaky = Object.create(real) as JobQueue;
    flaky.complete = async (id) => {
      calls.push('complete');
      if (calls.filter((c) => c === 'complete').length === 1) throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
      return real.complete(id);
    };
    flaky.fail = async (id, reason) => {
      calls.push('fail');
      if (calls.filter((c) => c === 'fail').length === 1) throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
      return real.fail(id, reason);
    };
    executor = new RunExecutor(t.dataSource, flaky, t.services.bus, t.services.bus, t.services.secretBox, createLogger('silent'), FAST_EXECUTOR);
    await executor.start();

    const run = ok(await t.gql(`mutation($i: StartRunInput!) { startRun(input: $i) { run { id } } }`, { i: { modelId: setup.modelId, datasetId: setup.datasetId } })).startRun.run;
    expect(await waitForStatus(t, run.id, ['SUCCEEDED'])).toMatchObject({ progress: { succeeded: 3 } });
    let states: string[] = [];
    for (let i = 0; i < 300; i++) {
      states = ((await t.dataSource.query(`SELECT state::text FROM pgboss.job WHERE name = 'run-reports' AND data->>'runId' = $1`, [rowId(run.id)])) as { state: string }[]).map((r) => r.state);
      if (states.length > 0 && states.every((s) => s === 'completed')) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(states).toEqual(['completed']);
    // complete refused → fail refused → fail again (accepted) → the retried item completes.
    expect(calls).toEqual(['complete', 'fail', 'fail', 'complete']);
  }, 60_000);
});
