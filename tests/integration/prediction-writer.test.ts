import net from 'node:net';
import { Pool } from 'pg';
import { poolOf } from '../../src/jobs/queue';
import { isUnstorable, PredictionWriter, type PredictionRow } from '../../src/jobs/prediction-writer';
import { ok, rowId } from '../support/graphql-fixtures';
import { setUpRuns } from '../support/run-fixtures';
import { startFakeLlm } from '../support/fake-llm/fake-llm-server';
import { startTestApp, type TestApp } from '../support/test-app';

describe('the prediction writer', () => {
  let t: TestApp;
  let runId: string;
  let projectId: string;
  let reportIds: string[];
  const published: unknown[] = [];

  beforeAll(async () => {
    t = await startTestApp();
    const fake = await startFakeLlm();
    const setup = await setUpRuns(t, fake.baseUrl, { reports: 7 });
    await fake.close();
    projectId = rowId(setup.projectId);
    // No worker runs in this file: the run stays queued while the writer is driven by hand.
    const run = ok(await t.gql('mutation($i: StartRunInput!) { startRun(input: $i) { run { id } } }', { i: { modelId: setup.modelId, datasetId: setup.datasetId } })).startRun.run;
    runId = rowId(run.id);
    reportIds = ((await t.dataSource.query('SELECT id FROM reports WHERE dataset_id = $1 ORDER BY ordinal', [rowId(setup.datasetId)])) as { id: string }[]).map((r) => r.id);
  });
  afterAll(() => t.close());

  const row = (reportId: string, extra: Partial<PredictionRow> = {}): PredictionRow => ({
    projectId,
    runId,
    reportId,
    status: 'SUCCEEDED',
    values: { diagnosis: 'melanoma' },
    cells: { diagnosis: { status: 'VALUE', value: 'melanoma' } },
    parsed: { diagnosis: 'melanoma' },
    raw: 'output',
    reasoning: null,
    samples: null,
    finishReason: 'stop',
    latencyMs: 10,
    promptTokens: 100,
    completionTokens: 5,
    attempts: 1,
    error: null,
    errorCode: null,
    inputTruncated: false,
    evidence: null,
    ...extra,
  });

  const writer = () =>
    new PredictionWriter(poolOf(t.dataSource), {
      committed: async (p, c) => void published.push([p, c]),
      runsChanged: async () => undefined,
      runCancelled: async () => undefined,
      jobsAvailable: async () => undefined,
    });

  it('writes each prediction once with its counters; a duplicate is a no-op', async () => {
    const w = writer();
    expect(await Promise.all([w.write(row(reportIds[0]!)), w.write(row(reportIds[1]!))])).toEqual([true, true]);
    expect(await w.write(row(reportIds[0]!, { values: { diagnosis: 'naevus' } }))).toBe(false);
    const [run] = await t.dataSource.query('SELECT succeeded_count, prompt_tokens FROM runs WHERE id = $1', [runId]);
    expect(run).toEqual({ succeeded_count: 2, prompt_tokens: '200' });
    const [stored] = await t.dataSource.query(`SELECT raw, parsed, "values" FROM predictions WHERE run_id = $1 AND report_id = $2`, [runId, reportIds[0]]);
    expect(stored).toEqual({ raw: 'output', parsed: { diagnosis: 'melanoma' }, values: { diagnosis: 'melanoma' } });
    expect(published.length).toBeGreaterThan(0);
  });

  it('refuses rows it would have to alter (NUL, lone surrogates, decoded "\\u0000", infinite numbers, deep nesting), writing nothing of them', async () => {
    const w = writer();
    const bad: Partial<PredictionRow>[] = [
      { raw: 'out\u0000put' },
      { parsed: { diagnosis: 'melanoma', note: 'cut \ud800 here' } },
      { reasoning: 'lone low \udc00' },
      { parsed: { 'k\u0000': 'v' } },
      { values: { size: Number.POSITIVE_INFINITY } },
      { samples: [JSON.parse('['.repeat(70) + ']'.repeat(70))] },
      { finishReason: 'stop\u0000' },
    ];
    for (const extra of bad) {
      const error = await w.write(row(reportIds[5]!, extra)).then(() => null, (e: unknown) => e);
      expect([extra, isUnstorable(error)]).toEqual([extra, true]);
      expect((error as Error).message).toMatch(/^the endpoint's answer cannot be stored: a value /);
    }
    // A literal backslash-u0000 in a string is six characters, not a NUL: stored exactly.
    expect(await w.write(row(reportIds[5]!, { parsed: { note: 'a\\u0000b' }, raw: '{"note":"a\\\\u0000b"}' }))).toBe(true);
    const [stored] = await t.dataSource.query(`SELECT raw, parsed FROM predictions WHERE run_id = $1 AND report_id = $2`, [runId, reportIds[5]]);
    expect(stored).toEqual({ raw: '{"note":"a\\\\u0000b"}', parsed: { note: 'a\\u0000b' } });
  });

  it('a row PostgreSQL refuses fails alone: the rest of its batch is written', async () => {
    const w = writer();
    const results = await Promise.allSettled([w.write(row(reportIds[2]!)), w.write(row(reportIds[3]!, { latencyMs: 1e12 })), w.write(row(reportIds[4]!))]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(isUnstorable((results[1] as PromiseRejectedResult).reason)).toBe(true);
    const [counts] = await t.dataSource.query(
      'SELECT r.succeeded_count, (SELECT count(*)::int FROM predictions p WHERE p.run_id = r.id) AS rows FROM runs r WHERE r.id = $1',
      [runId],
    );
    expect(counts).toEqual({ succeeded_count: 5, rows: 5 });
  });

  it('a connection lost mid-commit is tried again once the database is back: no uncaught error event, one row', async () => {
    // The writer's pool goes through a proxy whose sockets are cut, as when PostgreSQL goes away
    // abruptly: the socket ends while the statement runs, with no error message before.
    const target = new URL(t.databaseUrl);
    const sockets = new Set<net.Socket>();
    let down = false;
    let refused = 0;
    const proxy = net.createServer((client) => {
      if (down) {
        refused++;
        client.destroy();
        return;
      }
      const upstream = net.connect(Number(target.port || 5432), target.hostname);
      sockets.add(client);
      client.on('error', () => undefined);
      upstream.on('error', () => client.destroy());
      client.on('close', () => upstream.destroy());
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const proxied = new URL(t.databaseUrl);
    proxied.hostname = '127.0.0.1';
    proxied.port = String((proxy.address() as net.AddressInfo).port);
    const pool = new Pool({ connectionString: proxied.toString(), max: 2 });
    pool.on('error', () => undefined);
    const w = new PredictionWriter(pool, { committed: async () => undefined, runsChanged: async () => undefined, runCancelled: async () => undefined, jobsAvailable: async () => undefined });

    // The run's row is locked, so the writer's statement waits on it while its connection is cut.
    const holder = t.dataSource.createQueryRunner();
    await holder.connect();
    await holder.startTransaction();
    await holder.query('SELECT id FROM runs WHERE id = $1 FOR UPDATE', [runId]);
    const writing = w.write(row(reportIds[6]!));
    let waiting = false;
    for (let i = 0; i < 500 && !waiting; i++) {
      waiting = (await t.dataSource.query(`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%WITH input AS%'`)).length > 0;
      if (!waiting) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(waiting).toBe(true);
    // The database goes away (its connections cut, new ones refused) and comes back.
    down = true;
    for (const socket of sockets) socket.destroy();
    for (let i = 0; i < 500 && refused === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(refused).toBeGreaterThan(0);
    await holder.rollbackTransaction();
    await holder.release();
    down = false;
    // (The cut-off statement itself may have committed once the lock was free: then the retry
    // finds its row and inserts nothing.)
    await expect(writing).resolves.toEqual(expect.any(Boolean));
    const [counts] = await t.dataSource.query(
      `SELECT r.succeeded_count, (SELECT count(*)::int FROM predictions p WHERE p.run_id = r.id) AS rows,
              (SELECT count(*)::int FROM predictions p WHERE p.run_id = r.id AND p.report_id = $2) AS mine
       FROM runs r WHERE r.id = $1`,
      [runId, reportIds[6]],
    );
    expect(counts.mine).toBe(1);
    expect(counts.succeeded_count).toBe(counts.rows);
    await pool.end();
    await new Promise((resolve) => proxy.close(resolve));
  });
});
