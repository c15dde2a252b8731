import { BackgroundTaskRunner } from '../../src/modules/background-task/background-task-runner';
import { startFakeLlm, type FakeLlm } from '../support/fake-llm/fake-llm-server';
import { createProject, globalId, jsonl, ok, rowId } from '../support/graphql-fixtures';
import { collect, setUpRuns, wsClient, type RunSetup } from '../support/run-fixtures';
import { startTestApp, type TestApp } from '../support/test-app';
import { testLogger } from '../support/test-log';

const TASK_FIELDS = `id kind status processed attempts idempotencyKey result error { code message details } dataset { id reportCount } experiment { id name }`;
const START_IMPORT = `mutation($i: StartReportImportInput!) { startReportImport(input: $i) { created task { ${TASK_FIELDS} } } }`;
const START_EXPERIMENT = `mutation($i: StartExperimentTaskInput!) { startExperimentTask(input: $i) { created task { ${TASK_FIELDS} } } }`;
const TASK = `query($id: ID!) { backgroundTask(id: $id) { ${TASK_FIELDS} } }`;
const PROGRESS = `subscription($id: ID!) { backgroundTaskProgress(backgroundTaskId: $id) { status processed attempts result } }`;

function reports(n: number, prefix: string): string {
  return jsonl(Array.from({ length: n }, (_, i) => ({ id: `${prefix}-${i}`, text: `Report ${i}: excision, naevus.` })));
}

describe('background tasks', () => {
  let t: TestApp;
  let fake: FakeLlm;
  let setup: RunSetup;
  let runner: BackgroundTaskRunner | undefined;

  const startRunner = (): BackgroundTaskRunner => {
    runner = new BackgroundTaskRunner(t.dataSource, t.services, testLogger(), { leaseSeconds: 5, pollMs: 100, progressMs: 0 });
    runner.start();
    return runner;
  };
  const task = async (id: string) => ok(await t.gql(TASK, { id })).backgroundTask;
  const waitOver = async (id: string) => {
    for (let i = 0; i < 600; i++) {
      const current = await task(id);
      if (current.status === 'SUCCEEDED' || current.status === 'FAILED') return current;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error('the task did not end');
  };
  const reportCount = async () =>
    ((await t.dataSource.query('SELECT count(*)::int AS n FROM reports WHERE dataset_id = $1', [rowId(setup.datasetId)])) as [{ n: number }])[0].n;

  beforeAll(async () => {
    t = await startTestApp();
    fake = await startFakeLlm({ models: ['fake-model', 'other-model'] });
    setup = await setUpRuns(t, fake.baseUrl, { reports: 3 });
  });
  afterEach(async () => {
    await runner?.stop();
    runner = undefined;
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });

  it('imports reports as a task: its subscription shows it running with progress and ends with its final state', async () => {
    const before = await reportCount();
    const started = ok(await t.gql(START_IMPORT, { i: { datasetId: setup.datasetId, format: 'JSONL', content: reports(30_000, 'bg') } })).startReportImport;
    expect(started).toMatchObject({ created: true, task: { kind: 'REPORT_IMPORT', status: 'QUEUED', processed: 0 } });
    const client = wsClient(t);
    try {
      const progress = collect(client, PROGRESS, { id: started.task.id });
      for (let i = 0; i < 200 && progress.values.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 25));
      expect(progress.values[0]).toMatchObject({ backgroundTaskProgress: { status: 'QUEUED' } });
      startRunner();
      const values = (await progress.done).map((v) => v.backgroundTaskProgress);
      expect(values[values.length - 1]).toEqual({ status: 'SUCCEEDED', processed: 30_000, attempts: 1, result: { inserted: 30_000, updated: 0 } });
      expect(values.some((v) => v.status === 'RUNNING' && v.processed > 0 && v.processed < 30_000)).toBe(true);
    } finally {
      await client.dispose();
    }
    const done = await task(started.task.id);
    expect(done.dataset).toEqual({ id: setup.datasetId, reportCount: before + 30_000 });
    // The stored file is dropped with the task's success.
    expect(await t.dataSource.query('SELECT 1 FROM background_task_files WHERE task_id = $1', [rowId(started.task.id)])).toEqual([]);
  });

  it('a request repeated with the same idempotency key answers the first task and writes nothing new', async () => {
    startRunner();
    const input = { datasetId: setup.datasetId, format: 'JSONL', content: reports(10, 'once'), idempotencyKey: 'import once' };
    const first = ok(await t.gql(START_IMPORT, { i: input })).startReportImport;
    expect(first.created).toBe(true);
    expect((await waitOver(first.task.id)).status).toBe('SUCCEEDED');
    const count = await reportCount();
    const again = ok(await t.gql(START_IMPORT, { i: input })).startReportImport;
    expect(again).toMatchObject({ created: false, task: { id: first.task.id, status: 'SUCCEEDED', idempotencyKey: 'import once' } });
    expect(await reportCount()).toBe(count);
    expect(await t.dataSource.query(`SELECT id FROM background_tasks WHERE idempotency_key = 'import once'`)).toHaveLength(1);

    const models = ((await t.dataSource.query('SELECT id FROM models WHERE project_id = $1', [rowId(setup.projectId)])) as { id: string }[]).map((m) => globalId('Model', m.id));
    const grid = { datasetId: setup.datasetId, name: 'keyed grid', modelIds: models, strategies: ['ZERO_SHOT', 'SELF_CONSISTENCY'], idempotencyKey: 'grid once' };
    const [a, b] = await Promise.all([t.gql(START_EXPERIMENT, { i: grid }), t.gql(START_EXPERIMENT, { i: grid })]);
    const tasks = [ok(a).startExperimentTask, ok(b).startExperimentTask];
    expect(tasks.map((x) => x.created).sort()).toEqual([false, true]);
    expect(tasks[0].task.id).toBe(tasks[1].task.id);
    const over = await waitOver(tasks[0].task.id);
    expect(over).toMatchObject({ kind: 'EXPERIMENT', status: 'SUCCEEDED', processed: 4, result: { runs: 4 }, experiment: { name: 'keyed grid' } });
    expect(ok(await t.gql(START_EXPERIMENT, { i: grid })).startExperimentTask).toMatchObject({ created: false, task: { id: over.id } });
    expect(await t.dataSource.query(`SELECT id FROM experiments WHERE name = 'keyed grid'`)).toHaveLength(1);
    expect(await t.dataSource.query(`SELECT id FROM runs WHERE experiment_id = $1`, [rowId(over.experiment.id)])).toHaveLength(4);
    // A key of one kind of task is not another kind's.
    const reused = await t.gql(START_IMPORT, { i: { ...input, idempotencyKey: 'grid once' } });
    expect(reused.errors?.[0]?.extensions).toMatchObject({ code: 'CONFLICT', field: 'idempotencyKey' });
  });

  it('a task whose worker died is done by another worker, once', async () => {
    const before = await reportCount();
    const started = ok(await t.gql(START_IMPORT, { i: { datasetId: setup.datasetId, format: 'JSONL', content: reports(2500, 'again') } })).startReportImport;
    // What a worker killed mid-task leaves: the task RUNNING under its expired lease, its work rolled back with its connection.
    await t.dataSource.query(`UPDATE background_tasks SET status = 'RUNNING', worker = 'killed-worker', attempts = 1, lease_until = now() - interval '1 second' WHERE id = $1`, [
      rowId(started.task.id),
    ]);
    startRunner();
    expect(await waitOver(started.task.id)).toMatchObject({ status: 'SUCCEEDED', attempts: 2, processed: 2500, result: { inserted: 2500, updated: 0 } });
    expect(await reportCount()).toBe(before + 2500);
  });

  it('a task whose input is bad FAILS with the coded error of the synchronous mutation and writes nothing', async () => {
    startRunner();
    const before = await reportCount();
    const content = `${reports(1500, 'bad')}\n{"id":"bad-0","text":"a repeated id"}\n`;
    const started = ok(await t.gql(START_IMPORT, { i: { datasetId: setup.datasetId, format: 'JSONL', content } })).startReportImport;
    const over = await waitOver(started.task.id);
    expect(over.status).toBe('FAILED');
    expect(over.error).toMatchObject({ code: 'BAD_USER_INPUT', message: expect.any(String) });
    expect(over.result).toBeNull();
    expect(await reportCount()).toBe(before);
  });

  it('imports annotations and predictions as tasks', async () => {
    startRunner();
    const annotations = ok(
      await t.gql(`mutation($i: StartAnnotationImportInput!) { startAnnotationImport(input: $i) { task { id kind } } }`, {
        i: { datasetId: setup.datasetId, annotatorName: 'task reader', isReference: true, format: 'CSV', content: 'id,diagnosis\nR0000,melanoma\nR0001,naevus\n' },
      }),
    ).startAnnotationImport.task;
    const predictions = ok(
      await t.gql(`mutation($i: StartPredictionImportInput!) { startPredictionImport(input: $i) { task { id kind } } }`, {
        i: {
          datasetId: setup.datasetId,
          modelName: 'task-model',
          strategy: 'ZERO_SHOT',
          layout: 'JSON_COLUMN',
          format: 'JSONL',
          content: jsonl([{ id: 'R0000', extracted_data: { diagnosis: 'melanoma' } }]),
        },
      }),
    ).startPredictionImport.task;
    const FIELDS = `status result error { code } annotator { name isReference } run { name source }`;
    const read = async (id: string) => {
      await waitOver(id);
      return ok(await t.gql(`query($id: ID!) { backgroundTask(id: $id) { ${FIELDS} } }`, { id })).backgroundTask;
    };
    expect(annotations.kind).toBe('ANNOTATION_IMPORT');
    expect(await read(annotations.id)).toEqual({
      status: 'SUCCEEDED',
      result: { reports: 2, values: 2 },
      error: null,
      annotator: { name: 'task reader', isReference: true },
      run: null,
    });
    expect(predictions.kind).toBe('PREDICTION_IMPORT');
    expect(await read(predictions.id)).toMatchObject({ status: 'SUCCEEDED', result: { imported: 1 }, error: null, annotator: null, run: { source: 'IMPORTED' } });
  });

  it("refuses at once what startExperiment would refuse before writing, and stores no task", async () => {
    const before = (await t.dataSource.query('SELECT count(*)::int AS n FROM background_tasks')) as [{ n: number }];
    const unknownModel = globalId('Model', '00000000-0000-4000-8000-000000000000');
    const refused = await t.gql(START_EXPERIMENT, { i: { datasetId: setup.datasetId, name: 'nowhere', modelIds: [unknownModel], strategies: ['ZERO_SHOT'] } });
    expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND' });
    const fewShot = await t.gql(START_EXPERIMENT, { i: { datasetId: setup.datasetId, name: 'no examples', modelIds: [globalId('Model', rowId(setup.modelId))], strategies: ['FEW_SHOT'] } });
    expect(fewShot.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', reason: 'NO_EXAMPLES' });
    expect(await t.dataSource.query('SELECT count(*)::int AS n FROM background_tasks')).toEqual(before);
  });

  it('imports an uploaded file (multipart request) as a task, its parts stored and read back in order', async () => {
    startRunner();
    const before = await reportCount();
    // Over 1 MB with multi-byte characters, so the stored parts split characters between them.
    const content = jsonl(Array.from({ length: 12_000 }, (_, i) => ({ id: `up-${i}`, text: `Verslag ${i}: naevus — géén maligniteit, 🧬 ${'é'.repeat(40)}` })));
    const form = new FormData();
    form.append('operations', JSON.stringify({ query: START_IMPORT, variables: { i: { datasetId: setup.datasetId, format: 'JSONL', file: null } } }));
    form.append('map', JSON.stringify({ 0: ['variables.i.file'] }));
    form.append('0', new Blob([content]), 'reports.jsonl');
    const response = await fetch(t.url, { method: 'POST', headers: { authorization: `Bearer ${t.adminKey}`, 'apollo-require-preflight': 'true' }, body: form });
    const started = ((await response.json()) as { data: { startReportImport: { task: { id: string } } } }).data.startReportImport;
    expect(Buffer.byteLength(content)).toBeGreaterThan(1024 * 1024);
    expect(await waitOver(started.task.id)).toMatchObject({ status: 'SUCCEEDED', result: { inserted: 12_000, updated: 0 } });
    expect(await reportCount()).toBe(before + 12_000);
    const [stored] = (await t.dataSource.query(`SELECT text FROM reports WHERE dataset_id = $1 AND external_id = 'up-11999'`, [rowId(setup.datasetId)])) as { text: string }[];
    expect(stored!.text).toBe(`Verslag 11999: naevus — géén maligniteit, 🧬 ${'é'.repeat(40)}`);
  });

  it('another project cannot read a task; its own reads it by node(id:)', async () => {
    const started = ok(await t.gql(START_IMPORT, { i: { datasetId: setup.datasetId, format: 'JSONL', content: reports(1, 'hidden') } })).startReportImport;
    const other = await createProject(t, 'elsewhere');
    expect(ok(await t.gql(TASK, { id: started.task.id }, other.adminKey)).backgroundTask).toBeNull();
    expect(ok(await t.gql(`query($id: ID!) { node(id: $id) { id } }`, { id: started.task.id }, other.adminKey)).node).toBeNull();
    expect(ok(await t.gql(`query($id: ID!) { node(id: $id) { ... on BackgroundTask { kind } } }`, { id: started.task.id })).node).toEqual({ kind: 'REPORT_IMPORT' });
  });
});
