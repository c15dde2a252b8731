import { Client as PgClient } from 'pg';
import { startFakeLlm, type FakeLlm } from '../support/fake-llm/fake-llm-server';
import { globalId, IMPORT_REPORTS, jsonl, rowId } from '../support/graphql-fixtures';
import { collect, setUpRuns, wsClient, type RunSetup } from '../support/run-fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

const DEADLINE_MS = 1000;
const START_EXPERIMENT = `mutation($i: StartExperimentInput!) { startExperiment(input: $i) { experiment { id } runs { id } } }`;

/** Holds the dataset's row locked from another connection, so that writes into it wait. */
async function holdDataset(t: TestApp, datasetId: string): Promise<{ release(): Promise<void> }> {
  const client = new PgClient({ connectionString: t.databaseUrl });
  await client.connect();
  await client.query('BEGIN');
  await client.query('SELECT id FROM datasets WHERE id = $1 FOR UPDATE', [rowId(datasetId)]);
  return {
    release: async () => {
      await client.query('ROLLBACK');
      await client.end();
    },
  };
}

/** The audit outcomes of a mutation since `since`, once the server wrote them (it writes them when the work is over). */
async function auditOutcomes(t: TestApp, action: string, since: Date): Promise<string[]> {
  for (let i = 0; i < 400; i++) {
    const rows = (await t.dataSource.query(`SELECT outcome FROM audit_events WHERE kind = 'CHANGE' AND action = $1 AND at >= $2`, [action, since])) as { outcome: string }[];
    if (rows.length > 0) return rows.map((r) => r.outcome);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no audit event for ${action}`);
}

async function count(t: TestApp, sql: string, params: unknown[]): Promise<number> {
  return ((await t.dataSource.query(sql, params)) as [{ n: number }])[0].n;
}

describe('a write cut off by the request deadline leaves nothing behind', () => {
  let t: TestApp;
  let fake: FakeLlm;
  let setup: RunSetup;

  beforeAll(async () => {
    t = await startTestApp({ requestDeadlineMs: DEADLINE_MS });
    fake = await startFakeLlm({ models: ['fake-model', 'other-model'] });
    setup = await setUpRuns(t, fake.baseUrl, { reports: 3 });
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });
  let since: Date;
  beforeEach(async () => {
    since = ((await t.dataSource.query('SELECT clock_timestamp() AS now')) as [{ now: Date }])[0].now;
  });

  const reportsOf = () => count(t, 'SELECT count(*)::int AS n FROM reports WHERE dataset_id = $1', [rowId(setup.datasetId)]);

  it('importReports answers DEADLINE_EXCEEDED with 503 and its rows are rolled back, the audit log saying FAILED', async () => {
    const before = await reportsOf();
    const content = jsonl(Array.from({ length: 2500 }, (_, i) => ({ id: `late-${i}`, text: `Report ${i}: naevus.` })));
    const lock = await holdDataset(t, setup.datasetId);
    let result;
    try {
      result = await t.gql(IMPORT_REPORTS, { input: { datasetId: setup.datasetId, format: 'JSONL', content } });
    } finally {
      await lock.release();
    }
    expect(result.status).toBe(503);
    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', reason: 'DEADLINE_EXCEEDED' });
    expect(await auditOutcomes(t, 'importReports', since)).toEqual(['FAILED']);
    expect(await reportsOf()).toBe(before);
  });

  it('startExperiment answers DEADLINE_EXCEEDED and creates no experiment, run or work item', async () => {
    const models = ((await t.dataSource.query('SELECT id FROM models WHERE project_id = $1 ORDER BY served_name', [rowId(setup.projectId)])) as { id: string }[]).map(
      (m) => m.id,
    );
    const lock = await holdDataset(t, setup.datasetId);
    let result;
    try {
      result = await t.gql(START_EXPERIMENT, {
        i: {
          datasetId: setup.datasetId,
          name: 'late grid',
          modelIds: models.map((id) => globalId('Model', id)),
          strategies: ['ZERO_SHOT', 'SELF_CONSISTENCY'],
        },
      });
    } finally {
      await lock.release();
    }
    expect(result.errors?.[0]?.extensions).toMatchObject({ reason: 'DEADLINE_EXCEEDED' });
    expect(result.status).toBe(503);
    expect(await auditOutcomes(t, 'startExperiment', since)).toEqual(['FAILED']);
    const project = [rowId(setup.projectId)];
    expect(await count(t, 'SELECT count(*)::int AS n FROM experiments WHERE project_id = $1', project)).toBe(0);
    expect(await count(t, 'SELECT count(*)::int AS n FROM runs WHERE project_id = $1', project)).toBe(0);
    expect(await count(t, `SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'run-reports'`, [])).toBe(0);
  });

  it('a WebSocket import cut off by the deadline is rolled back too', async () => {
    const before = await reportsOf();
    const client = wsClient(t);
    const lock = await holdDataset(t, setup.datasetId);
    let failure: any;
    try {
      const content = jsonl([{ id: 'ws-late', text: 'Report: naevus.' }]);
      await collect(client, IMPORT_REPORTS, { input: { datasetId: setup.datasetId, format: 'JSONL', content } }).done.catch((error: unknown) => (failure = error));
    } finally {
      await lock.release();
    }
    try {
      expect(failure?.errors?.[0]?.extensions).toMatchObject({ reason: 'DEADLINE_EXCEEDED' });
      expect(await auditOutcomes(t, 'importReports', since)).toEqual(['FAILED']);
      expect(await reportsOf()).toBe(before);
    } finally {
      await client.dispose();
    }
  });
});

describe('work larger than a request waits for is refused, pointing to the background form', () => {
  let t: TestApp;
  let fake: FakeLlm;
  let setup: RunSetup;

  beforeAll(async () => {
    t = await startTestApp({ http: { waitedLimits: { importRecords: 1500, experimentRuns: 3 } } });
    fake = await startFakeLlm({ models: ['fake-model', 'other-model'] });
    setup = await setUpRuns(t, fake.baseUrl, { reports: 3 });
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });

  it('importReports of more records than the limit answers USE_BACKGROUND_TASK and writes nothing; the limit itself is imported', async () => {
    const count = () => t.dataSource.query('SELECT count(*)::int AS n FROM reports WHERE dataset_id = $1', [rowId(setup.datasetId)]) as Promise<[{ n: number }]>;
    const before = (await count())[0].n;
    const rows = (n: number, prefix: string) => jsonl(Array.from({ length: n }, (_, i) => ({ id: `${prefix}-${i}`, text: `Report ${i}.` })));
    const refused = await t.gql(IMPORT_REPORTS, { input: { datasetId: setup.datasetId, format: 'JSONL', content: rows(2001, 'big') } });
    expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', reason: 'USE_BACKGROUND_TASK', field: 'content' });
    expect(refused.errors?.[0]?.message).toMatch(/startReportImport/);
    expect((await count())[0].n).toBe(before);
    const accepted = await t.gql(IMPORT_REPORTS, { input: { datasetId: setup.datasetId, format: 'JSONL', content: rows(1500, 'fits') } });
    expect(accepted.data?.importReports).toMatchObject({ inserted: 1500 });
  });

  it('startExperiment of a grid larger than the limit answers USE_BACKGROUND_TASK; startExperimentTask takes it', async () => {
    const models = ((await t.dataSource.query('SELECT id FROM models WHERE project_id = $1', [rowId(setup.projectId)])) as { id: string }[]).map((m) => globalId('Model', m.id));
    const grid = { datasetId: setup.datasetId, name: 'wide grid', modelIds: models, strategies: ['ZERO_SHOT', 'SELF_CONSISTENCY'] };
    const refused = await t.gql(START_EXPERIMENT, { i: grid });
    expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', reason: 'USE_BACKGROUND_TASK' });
    expect(refused.errors?.[0]?.message).toMatch(/startExperimentTask/);
    expect(await t.dataSource.query('SELECT id FROM experiments WHERE project_id = $1', [rowId(setup.projectId)])).toEqual([]);
    const queued = await t.gql(`mutation($i: StartExperimentTaskInput!) { startExperimentTask(input: $i) { created task { status } } }`, { i: grid });
    expect(queued.data?.startExperimentTask).toEqual({ created: true, task: { status: 'QUEUED' } });
  });
});
