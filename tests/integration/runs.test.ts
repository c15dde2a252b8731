import type { RunExecutor } from '../../src/jobs/executor';
import { startFakeLlm, type FakeLlm } from '../support/fake-llm/fake-llm-server';
import { CREATE_PROMPT, createApiKey, failure, ok, rowId } from '../support/graphql-fixtures';
import {
  answerFromReport,
  collect,
  expectedValues,
  lastUserText,
  predictionRows,
  reportText,
  RUN_VARIABLES,
  runState,
  setUpRuns,
  startExecutor,
  waitForStatus,
  wsClient,
  type RunSetup,
} from '../support/run-fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

const START_RUN = /* GraphQL */ `
  mutation($i: StartRunInput!) { startRun(input: $i) { run { id name status strategy warnings dataset { id name reportCount } progress { total pending } } } }`;
const CANCEL_RUN = /* GraphQL */ `mutation($id: ID!) { cancelRun(input: { runId: $id }) { run { id status } } }`;
const RESUME_RUN = /* GraphQL */ `mutation($id: ID!) { resumeRun(input: { runId: $id }) { run { id status } retried queued } }`;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** A stalled endpoint's wait: it must not keep the test process alive after the tests. */
const stall = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());

describe('executed runs', () => {
  let t: TestApp;
  let fake: FakeLlm;
  let worker: RunExecutor;
  let setup: RunSetup;
  const REPORTS = 40;

  beforeAll(async () => {
    t = await startTestApp();
    fake = await startFakeLlm({ models: [{ id: 'fake-model', maxModelLen: 32768 }] });
    setup = await setUpRuns(t, fake.baseUrl, { reports: REPORTS, maxConcurrency: 4 });
    worker = await startExecutor(t);
  });
  afterAll(async () => {
    await worker.stop();
    await t.close();
    await fake.close();
  });
  beforeEach(() => fake.reset());

  it('runs a dataset to the end: one prediction per report, each its own answer, counters equal to the rows, usage and live progress', async () => {
    let inFlight = 0;
    let peak = 0;
    fake.setHandler(async (body) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      await sleep(20);
      inFlight--;
      return answerFromReport()(body);
    });
    const started = ok(await t.gql(START_RUN, { i: { modelId: setup.modelId, datasetId: setup.datasetId, strategy: 'ZERO_SHOT', sampling: { seed: 3 } } })).startRun.run;
    expect(started).toMatchObject({ status: 'QUEUED', strategy: 'ZERO_SHOT', progress: { total: REPORTS, pending: REPORTS } });

    const client = wsClient(t);
    const progress = collect(client, 'subscription($id: ID!) { runProgress(runId: $id) { status progress { succeeded failed pending total } } }', { id: started.id });
    const events = await progress.done;
    await client.dispose();
    // A late subscriber gets the current state first; the stream ends with the final state.
    expect(events.length).toBeGreaterThanOrEqual(1);
    expect(events.at(-1)!.runProgress).toMatchObject({ status: 'SUCCEEDED', progress: { succeeded: REPORTS, failed: 0, pending: 0, total: REPORTS } });
    const succeeded = events.map((e) => e.runProgress.progress.succeeded as number);
    expect([...succeeded].sort((a, b) => a - b)).toEqual(succeeded);

    const rows = await predictionRows(t, started.id);
    expect(rows).toHaveLength(REPORTS);
    rows.forEach((row, i) => expect(row).toMatchObject({ report: `R${String(i).padStart(4, '0')}`, status: 'SUCCEEDED', values: expectedValues(i) }));
    // The endpoint's limit held.
    expect(peak).toBeLessThanOrEqual(4);
    expect(peak).toBeGreaterThan(1);

    const state = await runState(t, started.id);
    expect(state.progress).toMatchObject({ total: REPORTS, succeeded: REPORTS, failed: 0, pending: 0, etaMs: null });
    expect(state.usage).toMatchObject({ promptTokens: 100 * REPORTS, completionTokens: 10 * REPORTS });
    expect(state.usage.latencyP50Ms).toBeGreaterThanOrEqual(20);
    expect(state.usage.latencyP95Ms).toBeGreaterThanOrEqual(state.usage.latencyP50Ms);
    expect(state.usage.tokensPerSecondPerGpu).toBeCloseTo(state.usage.tokensPerSecond / 2, 9);
    // The fake's /metrics was sampled while the run had calls in flight: requests running, and a
    // prefix cache that hits, since everything before the report is the same for every report.
    expect(state.telemetry.samples).toBeGreaterThan(0);
    expect(state.telemetry.meanRunning).toBeGreaterThan(0);
    expect(state.telemetry.meanKvCacheUsage).toBeGreaterThan(0);
    if (state.telemetry.samples > 1) expect(state.telemetry.prefixCacheHitRate).toBeGreaterThan(0.5);
    expect(state.telemetry.tokensPerSecondAtFullCache).toBeCloseTo(state.usage.tokensPerSecond / state.telemetry.meanKvCacheUsage, 6);
    // The snapshot: the model's name, the merged sampling, the scope.
    expect(state.config).toMatchObject({ strategy: 'ZERO_SHOT', seed: 3, model: { servedName: 'fake-model' }, scope: { maxOrdinal: REPORTS - 1 } });
    // The seed reached the wire.
    expect(fake.chatRequests().every((b) => b.seed === 3)).toBe(true);
    const [{ n }] = await t.dataSource.query('SELECT count(*)::int AS n FROM pgboss.job WHERE state NOT IN ($1, $2)', ['completed', 'cancelled']);
    expect(n).toBe(0);
  });

  it('records failures as data: codes, attempts, retried transient ones, no upstream text; resume retries them', async () => {
    const seen = new Map<string, number>();
    fake.setHandler((body) => {
      const text = lastUserText(body);
      const id = /Report (\d+):/.exec(text)?.[1] ?? '?';
      const n = (seen.get(id) ?? 0) + 1;
      seen.set(id, n);
      const i = Number(id);
      if (i === 1) return { status: 500, error: 'internal page of http://10.0.0.7/admin' };
      if (i === 2) return { status: 400, error: 'bad request from the proxy' };
      if (i === 3) return { rawBody: '<html>proxy login</html>' };
      if (i === 4 && n === 1) return { status: 429, error: 'slow down', retryAfter: 0.05 };
      // Numbers from the endpoint are not believed blindly: absurd token counts are dropped, the answer kept.
      if (i === 5) return { content: JSON.stringify(expectedValues(5)), usage: { promptTokens: 1e12, completionTokens: -3 } };
      return answerFromReport()(body);
    });
    const run = ok(await t.gql(START_RUN, { i: { modelId: setup.modelId, datasetId: setup.datasetId } })).startRun.run;
    const state = await waitForStatus(t, run.id, ['PARTIAL', 'SUCCEEDED', 'FAILED']);
    expect(state.status).toBe('PARTIAL');
    expect(state.progress).toMatchObject({ succeeded: REPORTS - 3, failed: 3, pending: 0 });
    const rows = await predictionRows(t, run.id);
    expect(rows).toHaveLength(REPORTS);
    expect(rows[1]).toMatchObject({ status: 'FAILED', error_code: 'HTTP_500', attempts: 3 });
    expect(rows[2]).toMatchObject({ status: 'FAILED', error_code: 'HTTP_400', attempts: 1 });
    expect(rows[3]).toMatchObject({ status: 'FAILED', error_code: 'UNREADABLE', attempts: 3 });
    expect(rows[4]).toMatchObject({ status: 'SUCCEEDED', attempts: 2, values: expectedValues(4) });
    expect(rows[5]).toMatchObject({ status: 'SUCCEEDED', values: expectedValues(5) });
    const [tokens] = await t.dataSource.query('SELECT prompt_tokens, completion_tokens FROM predictions p JOIN reports r ON r.id = p.report_id WHERE p.run_id = $1 AND r.external_id = $2', [rowId(run.id), 'R0005']);
    expect(tokens).toEqual({ prompt_tokens: null, completion_tokens: null });
    for (const row of rows.filter((r) => r.status === 'FAILED')) {
      expect(row.error).not.toMatch(/10\.0\.0\.7|proxy|html/);
    }
    const viaApi = ok(await t.gql(`query($id: ID!) { node(id: $id) { ... on Run { predictions(first: 5, filter: { status: FAILED }) { nodes { errorCode error attempts } } } } }`, { id: run.id }));
    expect(viaApi.node.predictions.nodes.map((p: { errorCode: string }) => p.errorCode)).toEqual(['HTTP_500', 'HTTP_400', 'UNREADABLE']);

    // The endpoint is fixed: resume retries the three failures only.
    fake.setHandler(answerFromReport());
    fake.clearRequests();
    const resumed = ok(await t.gql(RESUME_RUN, { id: run.id })).resumeRun;
    expect(resumed).toMatchObject({ retried: 3, queued: 3, run: { status: 'QUEUED' } });
    const final = await waitForStatus(t, run.id, ['SUCCEEDED', 'PARTIAL', 'FAILED']);
    expect(final).toMatchObject({ status: 'SUCCEEDED', progress: { succeeded: REPORTS, failed: 0 } });
    expect(fake.chatRequests()).toHaveLength(3);
    const after = await predictionRows(t, run.id);
    expect(after).toHaveLength(REPORTS);
    after.forEach((row, i) => expect(row.values).toEqual(expectedValues(i)));
    // A finished run has nothing to resume; a running one cannot be resumed.
    expect(ok(await t.gql(RESUME_RUN, { id: run.id })).resumeRun).toMatchObject({ retried: 0, queued: 0, run: { status: 'SUCCEEDED' } });
  });

  it('cancels: calls in flight are aborted, nothing more is written, resume finishes the rest', async () => {
    let answered = 0;
    fake.setHandler(async (body) => {
      const i = Number(/Report (\d+):/.exec(lastUserText(body))?.[1]);
      if (i >= 8) await stall(60_000);
      answered++;
      return answerFromReport()(body);
    });
    const run = ok(await t.gql(START_RUN, { i: { modelId: setup.modelId, datasetId: setup.datasetId } })).startRun.run;
    for (let i = 0; i < 100 && (await runState(t, run.id)).progress.succeeded < 8; i++) await sleep(50);
    await sleep(200);
    const cancelled = ok(await t.gql(CANCEL_RUN, { id: run.id })).cancelRun.run;
    expect(cancelled.status).toBe('CANCELLED');
    await sleep(500);
    const state = await runState(t, run.id);
    expect(state.status).toBe('CANCELLED');
    expect(state.progress).toMatchObject({ succeeded: 8, failed: 0, pending: REPORTS - 8 });
    expect(await predictionRows(t, run.id)).toHaveLength(8);
    // Cancelling twice is harmless; a running run cannot be resumed, a cancelled one can.
    expect(ok(await t.gql(CANCEL_RUN, { id: run.id })).cancelRun.run.status).toBe('CANCELLED');

    fake.setHandler(answerFromReport());
    const resumed = ok(await t.gql(RESUME_RUN, { id: run.id })).resumeRun;
    expect(resumed).toMatchObject({ retried: 0, queued: REPORTS - 8 });
    const conflict = failure(await t.gql(RESUME_RUN, { id: run.id }), 'CONFLICT');
    expect(conflict.message).toMatch(/still queued or running/);
    const final = await waitForStatus(t, run.id, ['SUCCEEDED', 'PARTIAL', 'FAILED']);
    expect(final).toMatchObject({ status: 'SUCCEEDED', progress: { succeeded: REPORTS } });
    expect(await predictionRows(t, run.id)).toHaveLength(REPORTS);
    expect(answered).toBeGreaterThanOrEqual(8);
    // The half second spent cancelled is not part of the run's time (nor of its per-report pace).
    const wall = new Date(final.progress.finishedAt).getTime() - new Date(final.progress.startedAt).getTime();
    expect(final.progress.elapsedMs).toBeLessThanOrEqual(wall - 450);
  });

  it('ends a report at its overall deadline, across retries', async () => {
    fake.setHandler(async (body) => {
      const i = Number(/Report (\d+):/.exec(lastUserText(body))?.[1]);
      if (i === 0) return { delayMs: 5_000, content: '{}' };
      return answerFromReport()(body);
    });
    const run = ok(await t.gql(START_RUN, { i: { modelId: setup.modelId, datasetId: setup.datasetId, deadlineMs: 1500 } })).startRun.run;
    const state = await waitForStatus(t, run.id, ['PARTIAL', 'SUCCEEDED', 'FAILED']);
    expect(state).toMatchObject({ status: 'PARTIAL', progress: { failed: 1, succeeded: REPORTS - 1 } });
    const [first] = await predictionRows(t, run.id);
    expect(first).toMatchObject({ status: 'FAILED', error_code: 'DEADLINE' });
  });

  it('runs over ad-hoc texts as a new dataset of the use case', async () => {
    fake.setHandler(answerFromReport());
    const texts = [0, 1, 2].map((i) => ({ externalId: `doc-${i}`, text: `Report ${i}: adhoc.\nANSWER: ${JSON.stringify(expectedValues(i))}` }));
    const run = ok(await t.gql(START_RUN, { i: { modelId: setup.modelId, useCaseId: setup.useCaseId, texts, name: 'service batch' } })).startRun.run;
    expect(run.dataset).toMatchObject({ reportCount: 3 });
    expect(run.dataset.name).toMatch(/^Ad-hoc texts · service batch/);
    await waitForStatus(t, run.id, ['SUCCEEDED']);
    expect((await predictionRows(t, run.id)).map((r) => [r.report, r.values])).toEqual(texts.map((x, i) => [x.externalId, expectedValues(i)]));
    expect(failure(await t.gql(START_RUN, { i: { modelId: setup.modelId, datasetId: setup.datasetId, useCaseId: setup.useCaseId, texts } }), 'BAD_USER_INPUT').message).toMatch(/either/);
    // A run whose every report failed says so.
    fake.setHandler(() => ({ status: 404, error: 'The model `x` does not exist.' }));
    const failed = ok(await t.gql(START_RUN, { i: { modelId: setup.modelId, useCaseId: setup.useCaseId, texts } })).startRun.run;
    expect(await waitForStatus(t, failed.id, ['FAILED', 'PARTIAL', 'SUCCEEDED'])).toMatchObject({ status: 'FAILED', error: expect.stringMatching(/every report failed/) });
    expect(failure(await t.gql(START_RUN, { i: { modelId: setup.modelId, useCaseId: setup.useCaseId, texts: [{ text: 'a' }, { externalId: 'text-1', text: 'b' }] } }), 'BAD_USER_INPUT').message).toMatch(/twice/);
  });

  it('starts an experiment grid in one call and reports its progress to the end', async () => {
    fake.setHandler(answerFromReport());
    const result = ok(
      await t.gql(
        `mutation($i: StartExperimentInput!) { startExperiment(input: $i) { experiment { id name } runs { id name strategy status config } } }`,
        { i: { datasetId: setup.datasetId, name: 'grid', modelIds: [setup.modelId], strategies: ['ZERO_SHOT', 'SELF_CONSISTENCY'], thinking: [true, false], settings: { samples: 3 } } },
      ),
    ).startExperiment;
    expect(result.runs).toHaveLength(4);
    expect(new Set(result.runs.map((r: { name: string }) => r.name)).size).toBe(4);
    const sc = result.runs.find((r: { strategy: string; config: { thinking: boolean } }) => r.strategy === 'SELF_CONSISTENCY' && r.config.thinking === true);
    expect(sc.config.selfConsistency).toEqual({ samples: 3 });

    const client = wsClient(t);
    const events = await collect(client, 'subscription($id: ID!) { experimentProgress(experimentId: $id) { progress { runs succeeded total predictionsSucceeded finished fraction } } }', {
      id: result.experiment.id,
    }).done;
    await client.dispose();
    expect(events.at(-1)!.experimentProgress.progress).toEqual({ runs: 4, succeeded: 4, total: 4 * REPORTS, predictionsSucceeded: 4 * REPORTS, finished: true, fraction: 1 });
    // Thinking on and off reached the endpoint; self-consistency samples at distinct temperatures.
    const bodies = fake.chatRequests();
    expect(bodies.filter((b) => (b.chat_template_kwargs as { enable_thinking?: boolean } | undefined)?.enable_thinking === true).length).toBe(REPORTS + 3 * REPORTS);
    const scTemperatures = new Set(bodies.filter((b) => String(JSON.stringify(b.messages)).includes('Report 5:')).map((b) => b.temperature));
    expect(scTemperatures.size).toBeGreaterThanOrEqual(3);
    const listed = ok(await t.gql(`query($id: ID!) { node(id: $id) { ... on Experiment { runs(first: 10) { totalCount } progress { finished } } } }`, { id: result.experiment.id }));
    expect(listed.node).toEqual({ runs: { totalCount: 4 }, progress: { finished: true } });
  });

  it('streams predictions as they are committed', async () => {
    fake.setHandler(async (body) => {
      await sleep(5);
      return answerFromReport()(body);
    });
    const client = wsClient(t);
    const run = ok(await t.gql(START_RUN, { i: { modelId: setup.modelId, datasetId: setup.datasetId } })).startRun.run;
    const stream = collect(client, 'subscription($id: ID!) { predictionAdded(runId: $id) { id status report { externalId } values } }', { id: run.id });
    await waitForStatus(t, run.id, ['SUCCEEDED']);
    // The stream ends with the run.
    await stream.done;
    await client.dispose();
    // Subscribed after the start, it may miss the first ones, but never sees one twice.
    const ids = stream.values.map((v) => v.predictionAdded.report.externalId as string);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBeGreaterThan(0);
    for (const v of stream.values) expect(v.predictionAdded.values).toEqual(expectedValues(Number(v.predictionAdded.report.externalId.slice(1))));
  });

  it('pauses an endpoint that keeps failing, shows it in its health, and resumes after a probe succeeds', async () => {
    await worker.stop();
    worker = await startExecutor(t, { breaker: { failureThreshold: 3, cooldownMs: 800, maxCooldownMs: 800 } });
    let failing = true;
    let calls = 0;
    fake.setHandler((body) => {
      calls++;
      return failing ? { status: 503, error: 'upstream secret page' } : answerFromReport()(body);
    });
    const HEALTH = `query($id: ID!) { node(id: $id) { ... on Endpoint { health { status lastError } } } }`;
    const run = ok(await t.gql(START_RUN, { i: { modelId: setup.modelId, datasetId: setup.datasetId } })).startRun.run;
    let health: { status: string; lastError: string | null } = { status: '', lastError: null };
    for (let i = 0; i < 100 && health.status !== 'DOWN'; i++) {
      await sleep(50);
      health = ok(await t.gql(HEALTH, { id: setup.endpointId })).node.health;
    }
    expect(health.status).toBe('DOWN');
    expect(health.lastError).toMatch(/circuit open.*HTTP 503/);
    expect(health.lastError).not.toMatch(/secret/);
    // While open, the worker sends nothing new (the calls in flight when it opened finish their
    // retries): the reports wait instead of failing one after another.
    await sleep(100);
    const during = calls;
    await sleep(150);
    expect(calls).toBe(during);
    const failedWhileOpen = (await runState(t, run.id)).progress.failed as number;
    expect(failedWhileOpen).toBeLessThan(10);
    failing = false;
    const state = await waitForStatus(t, run.id, ['SUCCEEDED', 'PARTIAL', 'FAILED']);
    expect(state.progress.succeeded + state.progress.failed).toBe(REPORTS);
    expect(state.progress.succeeded).toBeGreaterThan(REPORTS - 10);
    expect(ok(await t.gql(HEALTH, { id: setup.endpointId })).node.health).toEqual({ status: 'UP', lastError: null });
  });

  it('a run completes when publishing its events fails: events are never worth a prediction', async () => {
    await worker.stop();
    const refuse = () => Promise.reject(new Error('NOTIFY refused'));
    worker = await startExecutor(t, {}, { runsChanged: refuse, committed: refuse, runCancelled: refuse, jobsAvailable: refuse });
    fake.setHandler(answerFromReport());
    const run = ok(await t.gql(START_RUN, { i: { modelId: setup.modelId, datasetId: setup.datasetId } })).startRun.run;
    const state = await waitForStatus(t, run.id, ['SUCCEEDED', 'PARTIAL', 'FAILED']);
    expect(state).toMatchObject({ status: 'SUCCEEDED', progress: { succeeded: REPORTS } });
    expect(await predictionRows(t, run.id)).toHaveLength(REPORTS);
  });

  it("draws few-shot examples once, with the run's seed, into the snapshot; warns when an example is one of the reports", async () => {
    fake.setHandler(answerFromReport());
    const examples = [0, 50, 51, 52, 53].map((i) => ({ name: `ex-${i}`, input: reportText(i), output: expectedValues(i) }));
    ok(await t.gql(CREATE_PROMPT, { input: { useCaseId: setup.useCaseId, name: 'with examples', examples } }));
    const start = async (seed: number) =>
      ok(await t.gql(START_RUN, { i: { modelId: setup.modelId, datasetId: setup.datasetId, strategy: 'FEW_SHOT', exampleCount: 3, sampling: { seed } } })).startRun.run;
    // Seed 5 draws examples 2, 1, 4 of the five; seed 7 draws 0, 3, 2 (example 0 is report R0000).
    const [a, b, c] = [await start(5), await start(5), await start(7)];
    const chosen = async (run: { id: string }) => ((await runState(t, run.id)).config.examples as { name: string }[]).map((e) => e.name);
    expect(await chosen(a)).toHaveLength(3);
    expect(await chosen(b)).toEqual(await chosen(a));
    const drawsOf = [await chosen(a), await chosen(c)];
    const leaked = drawsOf.map((names) => names.includes('ex-0'));
    expect(leaked).toEqual([false, true]);
    for (const [i, run] of [a, c].entries()) {
      const warned = (run.warnings as string[]).some((w) => w.includes('R0000'));
      expect(warned).toBe(leaked[i]);
    }
    for (const run of [a, b, c]) await waitForStatus(t, run.id, ['SUCCEEDED']);
    // Every request of run a showed its three examples, in the drawn order, before the report.
    const names = await chosen(a);
    const first = fake.chatRequests().find((body) => JSON.stringify(body.messages).includes(`Report 7:`))!;
    const text = JSON.stringify(first.messages);
    const positions = names.map((n) => text.indexOf(`Report ${n.slice(3)}:`));
    expect(positions.every((p) => p >= 0)).toBe(true);
  });

  it('extract can keep its result as a prediction of the dataset run of its settings, to be scored later', async () => {
    fake.setHandler(answerFromReport());
    const EXTRACT = `mutation($i: ExtractInput!) { extract(input: $i) { status values prediction { id status values report { externalId } } } }`;
    const call = (id: string, i: number, extra: Record<string, unknown> = {}) =>
      t.gql(EXTRACT, { i: { modelId: setup.modelId, useCaseId: setup.useCaseId, text: reportText(i), reportId: id, store: { datasetId: setup.datasetId }, ...extra } });
    const first = ok(await call('svc-1', 101)).extract;
    expect(first).toMatchObject({ status: 'SUCCEEDED', values: expectedValues(101), prediction: { status: 'SUCCEEDED', values: expectedValues(101), report: { externalId: 'svc-1' } } });
    ok(await call('svc-2', 102));
    // The same report twice in the same run, or another text under an existing id, is refused.
    expect(failure(await call('svc-2', 102), 'CONFLICT').message).toMatch(/already has a prediction/);
    expect(failure(await call('svc-1', 103), 'CONFLICT').message).toMatch(/another text/);
    // Other settings: another run.
    ok(await call('svc-1', 101, { sampling: { temperature: 0.3 } }));
    const runs = (await t.dataSource.query(`SELECT name, total_reports, succeeded_count, status FROM runs WHERE name LIKE '%(extract calls)' ORDER BY created_at`)) as Record<string, unknown>[];
    expect(runs).toEqual([
      { name: 'fake-model · ZERO_SHOT (extract calls)', total_reports: 2, succeeded_count: 2, status: 'SUCCEEDED' },
      { name: 'fake-model · ZERO_SHOT (extract calls)', total_reports: 1, succeeded_count: 1, status: 'SUCCEEDED' },
    ]);
    const [{ n }] = await t.dataSource.query(`SELECT count(*)::int AS n FROM reports WHERE dataset_id = $1 AND external_id LIKE 'svc-%'`, [rowId(setup.datasetId)]);
    expect(n).toBe(2);
    // A dataset of another use case is refused before the endpoint is called.
    fake.clearRequests();
    const otherUseCase = ok(await t.gql(`mutation($i: CreateUseCaseInput!) { createUseCase(input: $i) { useCase { id } } }`, { i: { projectId: setup.projectId, name: 'other', variables: RUN_VARIABLES } })).createUseCase.useCase.id;
    expect(failure(await t.gql(EXTRACT, { i: { modelId: setup.modelId, useCaseId: otherUseCase, text: 'x', store: { datasetId: setup.datasetId } } }), 'BAD_USER_INPUT').extensions!.field).toBe('store.datasetId');
    expect(fake.chatRequests()).toHaveLength(0);
  });

  it('keeps the API contract: roles, tenants, coded errors over WebSocket', async () => {
    const viewer = (await createApiKey(t, setup.projectId, "VIEWER")).secret;
    failure(await t.gql(START_RUN, { i: { modelId: setup.modelId, datasetId: setup.datasetId } }, viewer), 'FORBIDDEN');
    const other = ok(await t.gql('mutation { createProject(input: { name: "other" }) { project { id } } }')).createProject.project.id;
    const outsider = (await createApiKey(t, other, "ADMIN")).secret;
    failure(await t.gql(START_RUN, { i: { modelId: setup.modelId, datasetId: setup.datasetId } }, outsider), 'NOT_FOUND');
    fake.setHandler(answerFromReport());
    const runId = ok(await t.gql(START_RUN, { i: { modelId: setup.modelId, datasetId: setup.datasetId } })).startRun.run.id as string;
    await waitForStatus(t, runId, ['SUCCEEDED']);
    failure(await t.gql(CANCEL_RUN, { id: runId }, outsider), 'NOT_FOUND');
    const client = wsClient(t, outsider);
    const error = await collect(client, 'subscription($id: ID!) { runProgress(runId: $id) { status } }', { id: runId }).done.catch((e: { errors?: { extensions?: { code?: string } }[] }) => e);
    await client.dispose();
    expect((error as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code).toBe('NOT_FOUND');
    // Settings out of range are refused before anything is queued, with the field named.
    const base = { modelId: setup.modelId, datasetId: setup.datasetId };
    for (const [extra, field] of [
      [{ sampling: { temperature: -1 } }, 'sampling.temperature'],
      [{ sampling: { topP: 7 } }, 'sampling.topP'],
      [{ sampling: { maxTokens: -3 } }, 'sampling.maxTokens'],
      [{ sampling: { seed: -1 } }, 'sampling.seed'],
      [{ exampleCount: 99 }, 'exampleCount'],
      [{ deadlineMs: 10 }, 'deadlineMs'],
      [{ name: '   ' }, 'name'],
      [{ name: 'x'.repeat(301) }, 'name'],
    ] as const) {
      expect(failure(await t.gql(START_RUN, { i: { ...base, ...extra } }), 'BAD_USER_INPUT').extensions!.field).toBe(field);
    }
    const grid = { datasetId: setup.datasetId, name: 'g', modelIds: [setup.modelId], strategies: ['ZERO_SHOT'] };
    const START_EXPERIMENT = `mutation($i: StartExperimentInput!) { startExperiment(input: $i) { experiment { id } } }`;
    expect(failure(await t.gql(START_EXPERIMENT, { i: { ...grid, thinking: [] } }), 'BAD_USER_INPUT').extensions!.field).toBe('thinking');
    expect(failure(await t.gql(START_EXPERIMENT, { i: { ...grid, strategies: ['ZERO_SHOT', 'ZERO_SHOT'] } }), 'BAD_USER_INPUT').extensions!.field).toBe('strategies');
    const [{ n }] = await t.dataSource.query('SELECT count(*)::int AS n FROM runs WHERE status = $1', ['QUEUED']);
    expect(n).toBe(0);
  });
});
