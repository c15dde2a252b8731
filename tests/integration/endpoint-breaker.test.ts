/**
 * The circuit breaker pauses an endpoint that fails, not one that answers: reports that fail
 * every time (a 500 for that request, an answer that is not a chat completion, a context-length
 * refusal) mixed with reports the endpoint answers at once never open it.
 */
import type { RunExecutor } from '../../src/jobs/executor';
import { startFakeLlm, type FakeLlm } from '../support/fake-llm/fake-llm-server';
import { ok, rowId } from '../support/graphql-fixtures';
import { reportText, setUpRuns, startExecutor, waitForStatus } from '../support/run-fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

const REPORTS = 49;
const HEALTH = `query($id: ID!) { node(id: $id) { ... on Endpoint { health { status lastError } } } }`;

/**
 * Three of every seven reports fail every time (43%), in a row: in even blocks a 500, a garbage
 * 200 and a context-length 400; in odd blocks three 500s.
 */
function text(i: number): string {
  const position = i % 7;
  if (position >= 3) return reportText(i);
  if (Math.floor(i / 7) % 2 === 1 || position === 0) return `Report ${i}: the server crashes on this one.\nFAIL: 500`;
  if (position === 1) return `Report ${i}: GARBAGE-ANSWER`;
  return `Report ${i}: far too long for the context.\nFAIL: 400`;
}

describe('the circuit breaker and bad reports', () => {
  let t: TestApp;
  let fake: FakeLlm;
  let worker: RunExecutor | undefined;

  beforeAll(async () => {
    t = await startTestApp();
    fake = await startFakeLlm({ models: ['fake-model'], answerFromReport: true, recordRequests: false });
  });
  afterAll(async () => {
    await worker?.stop();
    await t.close();
    await fake.close();
  });

  it('a run whose bad reports fail every time finishes without the breaker opening', async () => {
    fake.addRule({ match: 'GARBAGE-ANSWER', respond: { rawBody: '<html><body>proxy page</body></html>' } });
    // One seat: the reports reach the endpoint in order, so the bad ones come three in a row.
    const setup = await setUpRuns(t, fake.baseUrl, { reports: REPORTS, maxConcurrency: 1, texts: text });
    worker = await startExecutor(t, { breaker: { failureThreshold: 3, cooldownMs: 2_000, maxCooldownMs: 4_000, quietMs: 10_000 } });
    const run = ok(await t.gql(`mutation($i: StartRunInput!) { startRun(input: $i) { run { id } } }`, { i: { modelId: setup.modelId, datasetId: setup.datasetId } })).startRun.run;

    const seen = new Set<string>();
    let done = false;
    const finished = waitForStatus(t, run.id, ['SUCCEEDED', 'PARTIAL', 'FAILED'], 120_000).finally(() => (done = true));
    while (!done) {
      const health = ok(await t.gql(HEALTH, { id: setup.endpointId })).node.health as { status: string };
      seen.add(health.status);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const final = await finished;
    expect(final).toMatchObject({ status: 'PARTIAL', progress: { succeeded: 28, failed: 21, pending: 0 } });
    expect(seen.has('DOWN')).toBe(false);
    const codes = (await t.dataSource.query(`SELECT error_code, count(*)::int AS n FROM predictions WHERE run_id = $1 AND status = 'FAILED' GROUP BY error_code ORDER BY error_code`, [
      rowId(run.id),
    ])) as { error_code: string; n: number }[];
    expect(codes).toEqual([
      { error_code: 'HTTP_400', n: 4 },
      { error_code: 'HTTP_500', n: 13 },
      { error_code: 'UNREADABLE', n: 4 },
    ]);
  }, 150_000);
});
