/**
 * Fault soak: executed runs against an unreliable endpoint while workers die and PostgreSQL
 * restarts, then a check that nothing was lost, doubled or miscounted.
 *
 *   npm run bench:soak -- --minutes 30
 *   npm run build && node dist/bench/soak/soak.js [--minutes N] [--kill-every-minutes N] [--reports N] …
 *
 * Processes, each its own: an embedded PostgreSQL 18 in a temporary folder; the server
 * (`node dist/src/main.js`, WORKER=false); two workers (`node dist/src/worker.js`, a short
 * JOB_LEASE_SECONDS so that a killed worker's items are taken up within the soak); the fake
 * OpenAI-compatible endpoint (`tests/support/fake-llm/main.ts --fault-mix …`: by default 20 %
 * 500/502/503, 5 % 429 with Retry-After, 5 % stalls beyond the endpoint timeout, 10 % garbage
 * 200s; the rest answers each report with the answer written in it).
 *
 * Load: `--concurrent-runs` runs over a dataset of `--reports` reports are kept going (the first
 * ones as an experiment of ZERO_SHOT and SELF_CONSISTENCY, then startRun alternating the two); a
 * run that ends with failed reports is resumed once (resumeRun) while there is time left.
 * Chaos: every `--kill-every-minutes` the youngest worker is SIGKILLed and a replacement started
 * (so one worker lives through the whole soak, for its memory); at half time PostgreSQL is stopped
 * (`--pg-stop-mode immediate|fast`) for `--pg-down-seconds` and started again on the same port,
 * while server and workers keep running. RSS of every process is sampled every
 * `--sample-seconds`.
 *
 * At the end (no new load after `--minutes`; the runs in flight finish) it checks in SQL: every
 * run is over; every report in a run's scope has exactly one prediction, in a terminal status;
 * no (run, report) twice; the counters and token and latency sums of every run equal its rows;
 * no succeeded prediction carries another report's answer; no server or worker died unasked;
 * server and workers came back after the PostgreSQL restart; the server's and the long-lived
 * worker's memory did not keep growing. It prints a summary and exits 1 if a check failed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Pool } from 'pg';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/db/embedded-postgres';

const ROOT = path.resolve(__dirname, '../../..');
const SECRET_KEY = 'soak-secret-key-of-reportql-0123456789';
const TERMINAL = ['SUCCEEDED', 'PARTIAL', 'FAILED', 'CANCELLED'];
const DIAGNOSES = ['melanoma', 'naevus', 'carcinoma'];

function option(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  const value = i > 0 ? process.argv[i + 1] : undefined;
  return value ?? fallback;
}

function numberOption(name: string, fallback: number): number {
  if (!process.argv.includes(`--${name}`)) return fallback;
  const value = Number(option(name, ''));
  if (!Number.isFinite(value) || value < 0) {
    process.stderr.write(`--${name} must be a non-negative number\n`);
    process.exit(2);
  }
  return value;
}

const settings = {
  minutes: numberOption('minutes', 30),
  killEveryMinutes: numberOption('kill-every-minutes', 3),
  reports: Math.max(1, Math.round(numberOption('reports', 2000))),
  concurrentRuns: Math.max(1, Math.round(numberOption('concurrent-runs', 2))),
  workers: Math.max(1, Math.round(numberOption('workers', 2))),
  workerConcurrency: Math.max(1, Math.round(numberOption('worker-concurrency', 64))),
  maxConcurrency: Math.max(1, Math.round(numberOption('max-concurrency', 32))),
  latencyMs: Math.round(numberOption('latency-ms', 100)),
  timeoutMs: Math.max(1000, Math.round(numberOption('timeout-ms', 2000))),
  stallMs: Math.round(numberOption('stall-ms', 6000)),
  retryAfterSeconds: Math.round(numberOption('retry-after', 1)),
  faultMix: option('fault-mix', '5xx=0.2,429=0.05,stall=0.05,garbage=0.1'),
  faultSeed: Math.round(numberOption('fault-seed', 1)),
  leaseSeconds: Math.max(10, Math.round(numberOption('lease-seconds', 30))),
  pgDownSeconds: numberOption('pg-down-seconds', 10),
  pgStopMode: option('pg-stop-mode', 'immediate') as 'immediate' | 'fast',
  pgRestartAtMinute: numberOption('pg-restart-at-minute', Number.NaN),
  sampleSeconds: Math.max(1, numberOption('sample-seconds', 10)),
  drainMinutes: numberOption('drain-minutes', 10),
  maxRssGrowthMb: numberOption('max-rss-growth-mb', 100),
  recoverSeconds: numberOption('recover-seconds', 120),
  keep: process.argv.includes('--keep'),
};
if (!['immediate', 'fast'].includes(settings.pgStopMode)) {
  process.stderr.write('--pg-stop-mode must be immediate or fast\n');
  process.exit(2);
}
// Half time, between two kills, so that the restart and a kill do not coincide.
if (Number.isNaN(settings.pgRestartAtMinute)) settings.pgRestartAtMinute = settings.minutes / 2 + (settings.killEveryMinutes > 0 ? settings.killEveryMinutes / 2 : 0);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const t0 = Date.now();
const elapsed = () => (Date.now() - t0) / 1000;
const stamp = () => `[${(elapsed() / 60).toFixed(1).padStart(5)} min]`;
const log = (line: string) => process.stdout.write(`${stamp()} ${line}\n`);

// ---------------------------------------------------------------- processes

interface Managed {
  name: string;
  role: 'server' | 'worker' | 'fake';
  child: ChildProcess;
  logFile: string;
  startedAt: number;
  /** Set before we stop or kill it ourselves. */
  expectedExit: boolean;
  exited: { code: number | null; signal: NodeJS.Signals | null; at: number } | null;
  rss: { at: number; mb: number }[];
}

const processes: Managed[] = [];
/** PostgreSQL is stopped by the soak (between the stop and the start of the restart). */
let pgDown = false;
/** Processes started while PostgreSQL was away exit at once, by design: counted, not failures. */
const refusedStarts: string[] = [];
const unexpectedExits: { name: string; code: number | null; signal: string | null; at: number; tail: string }[] = [];
let stoppingAll = false;
let logDir = '';

function tail(file: string, lines = 15): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

function launch(name: string, role: Managed['role'], args: string[], env: Record<string, string>, onUnexpectedExit?: () => void): Managed {
  const logFile = path.join(logDir, `${name}.log`);
  const fd = openSync(logFile, 'a');
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', role === 'fake' ? 'pipe' : fd, fd],
  });
  closeSync(fd);
  const managed: Managed = { name, role, child, logFile, startedAt: Date.now(), expectedExit: false, exited: null, rss: [] };
  const startedWhileDown = pgDown;
  child.once('exit', (code, signal) => {
    managed.exited = { code, signal, at: Date.now() };
    if (managed.expectedExit || stoppingAll) return;
    if (startedWhileDown && code === 1 && /failed to start/.test(tail(logFile))) {
      refusedStarts.push(name);
      log(`${name} was started while PostgreSQL was away and exited (as designed); starting another once it is back`);
      onUnexpectedExit?.();
      return;
    }
    unexpectedExits.push({ name, code, signal, at: elapsed(), tail: tail(logFile) });
    log(`UNEXPECTED EXIT of ${name} (code ${code}, signal ${signal}); last log lines:\n${tail(logFile)}`);
    onUnexpectedExit?.();
  });
  processes.push(managed);
  return managed;
}

function alive(m: Managed): boolean {
  return m.exited === null;
}

function rssMb(pid: number): number | null {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : null;
  } catch {
    return null;
  }
}

/** RSS of the embedded PostgreSQL: the postmaster of our data directory and its children. */
function postgresRssMb(postmaster: number | null): number | null {
  if (postmaster === null) return null;
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (pid === postmaster || ppid === postmaster) total += rssMb(pid) ?? 0;
    } catch {
      // gone
    }
  }
  return total;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'reportql-soak-'));
  logDir = path.join(dir, 'logs');
  await import('node:fs/promises').then((fs) => fs.mkdir(logDir, { recursive: true }));
  log(`soak: ${JSON.stringify(settings)}`);
  log(`logs in ${logDir}`);

  const db: EmbeddedDatabase = await startEmbeddedPostgres({ dir, database: 'soak' });
  const pool = new Pool({ connectionString: db.url, max: 4, application_name: 'reportql-soak' });
  pool.on('error', () => undefined);
  const postmasterPid = (): number | null => {
    try {
      return Number.parseInt(readFileSync(path.join(db.clusterDirectory, 'postmaster.pid'), 'utf8').split('\n')[0] ?? '', 10) || null;
    } catch {
      return null;
    }
  };

  const adminKey = `rql_soak_${randomBytes(16).toString('hex')}`;
  const port = await freePort();
  const common = { DATABASE_URL: db.url, SECRET_KEY, JOB_LEASE_SECONDS: String(settings.leaseSeconds), LOG_LEVEL: 'warn' };

  let serverCount = 0;
  const startServer = (): Managed =>
    launch(
      `server-${++serverCount}`,
      'server',
      ['dist/src/main.js'],
      { ...common, PORT: String(port), WORKER: 'false', SEED_DEMO: 'false', ADMIN_API_KEY: adminKey },
      () => {
        void (async () => {
          await sleep(2000);
          while (pgDown) await sleep(500);
          if (!stoppingAll) server = startServer();
        })();
      },
    );
  let server = startServer();

  let workerCount = 0;
  const workers: Managed[] = [];
  const startWorker = (): Managed => {
    const worker = launch(`worker-${++workerCount}`, 'worker', ['dist/src/worker.js'], { ...common, WORKER_CONCURRENCY: String(settings.workerConcurrency) }, () => {
      void (async () => {
        await sleep(2000);
        while (pgDown) await sleep(500);
        if (!stoppingAll) workers.push(startWorker());
      })();
    });
    return worker;
  };

  const fake = launch('fake-llm', 'fake', [
    '-r',
    './bench/kemeny/swc-register.js',
    'tests/support/fake-llm/main.ts',
    '--port',
    '0',
    '--latency-ms',
    String(settings.latencyMs),
    '--models',
    'soak-model',
    '--answer-from-report',
    '--no-record',
    '--max-running',
    '1024',
    '--fault-mix',
    settings.faultMix,
    '--stall-ms',
    String(settings.stallMs),
    '--retry-after',
    String(settings.retryAfterSeconds),
    '--fault-seed',
    String(settings.faultSeed),
  ], {});
  const fakeLine = await new Promise<string>((resolve, reject) => {
    createInterface({ input: fake.child.stdout! }).once('line', resolve);
    fake.child.once('exit', () => reject(new Error(`the fake endpoint did not start:\n${tail(fake.logFile)}`)));
  });
  const fakeUrl = (JSON.parse(fakeLine) as { baseUrl: string; port: number }).baseUrl;
  const fakeOrigin = new URL(fakeUrl).origin;

  const healthy = async (): Promise<boolean> => {
    try {
      const response = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(2000) });
      return response.ok;
    } catch {
      return false;
    }
  };
  for (let i = 0; !(await healthy()); i++) {
    if (i > 600 || !alive(server)) throw new Error(`the server did not start:\n${tail(server.logFile)}`);
    await sleep(100);
  }
  for (let i = 0; i < settings.workers; i++) workers.push(startWorker());

  /** GraphQL with the admin key; retried while the database or the server is away. */
  const gql = async (query: string, variables: Record<string, unknown> = {}): Promise<any> => {
    const until = Date.now() + 5 * 60_000;
    for (let attempt = 1; ; attempt++) {
      try {
        const response = await fetch(`http://127.0.0.1:${port}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${adminKey}` },
          body: JSON.stringify({ query, variables }),
          signal: AbortSignal.timeout(60_000),
        });
        const body = (await response.json()) as { data?: any; errors?: { message: string; extensions?: { code?: string } }[] };
        if (!body.errors) return body.data;
        const code = body.errors[0]?.extensions?.code;
        // A request during the database's absence is masked as an internal error: try again.
        if (code !== 'INTERNAL_SERVER_ERROR' || Date.now() > until) throw new Error(`GraphQL error: ${JSON.stringify(body.errors)}`);
      } catch (error) {
        if (error instanceof Error && error.message.startsWith('GraphQL error') ) throw error;
        if (Date.now() > until) throw error;
      }
      await sleep(Math.min(5000, 200 * attempt));
    }
  };
  const sql = async <T extends Record<string, any>>(text: string, params: unknown[] = []): Promise<T[]> => {
    const until = Date.now() + 5 * 60_000;
    for (;;) {
      try {
        return (await pool.query<T>(text, params)).rows;
      } catch (error) {
        if (Date.now() > until) throw error;
        await sleep(1000);
      }
    }
  };
  const rowId = (globalId: string) => Buffer.from(globalId, 'base64url').toString('utf8').split(':')[1]!;

  // ---------------------------------------------------------------- setup
  const projectId = (await gql('mutation { createProject(input: { name: "soak" }) { project { id } } }')).createProject.project.id;
  const useCaseId = (
    await gql(`mutation($i: CreateUseCaseInput!) { createUseCase(input: $i) { useCase { id } } }`, {
      i: {
        projectId,
        name: 'soak',
        variables: [
          { key: 'diagnosis', type: 'CATEGORICAL', options: [...DIAGNOSES, 'Not specified'] },
          { key: 'breslow_mm', type: 'NUMERIC' },
        ],
      },
    })
  ).createUseCase.useCase.id;
  const datasetId = (await gql(`mutation($i: CreateDatasetInput!) { createDataset(input: $i) { dataset { id } } }`, { i: { useCaseId, name: 'soak' } })).createDataset.dataset.id;
  // Every report's answer is its own (a distinct breslow_mm), so a crossed answer shows.
  const expected = (i: number) => ({ diagnosis: DIAGNOSES[i % 3]!, breslow_mm: Math.round(i + 1) / 10 });
  const reportText = (i: number) =>
    [
      `Verslag ${i}. Huidexcidaat van 2,4 x 1,1 cm met centraal een onregelmatig bruin-zwarte laesie.`,
      'Microscopie: invasief melanoom van het oppervlakkig spreidende type. Geen ulceratie.',
      `ANSWER: ${JSON.stringify(expected(i))}`,
    ].join('\n');
  for (let from = 0; from < settings.reports; from += 5000) {
    const content = Array.from({ length: Math.min(5000, settings.reports - from) }, (_, j) => JSON.stringify({ id: `R${String(from + j).padStart(6, '0')}`, text: reportText(from + j) })).join('\n');
    await gql(`mutation($i: ImportReportsInput!) { importReports(input: $i) { inserted } }`, { i: { datasetId, format: 'JSONL', idField: 'id', textField: 'text', content } });
  }
  const registered = (
    await gql(`mutation($i: RegisterEndpointInput!) { registerEndpoint(input: $i) { endpoint { id } models { id servedName } } }`, {
      i: { projectId, name: 'unreliable fake', baseUrl: fakeUrl, kind: 'VLLM', maxConcurrency: settings.maxConcurrency, timeoutMs: settings.timeoutMs, gpuCount: 1 },
    })
  ).registerEndpoint;
  const modelId = registered.models.find((m: { servedName: string }) => m.servedName === 'soak-model').id;
  log(`set up: ${settings.reports} reports, endpoint ${fakeUrl} (maxConcurrency ${settings.maxConcurrency}, timeout ${settings.timeoutMs} ms)`);

  // ---------------------------------------------------------------- load
  const SC_SETTINGS = { samples: 3, temperatures: [0.3, 0.6, 0.9] };
  const runs = new Map<string, { id: string; strategy: string; resumed: number; startedAt: number }>();
  let started = 0;
  let resumes = 0;
  const endAt = t0 + settings.minutes * 60_000;

  const startExperiment = async () => {
    const result = (
      await gql(`mutation($i: StartExperimentInput!) { startExperiment(input: $i) { runs { id strategy } } }`, {
        i: { datasetId, name: 'soak', modelIds: [modelId], strategies: ['ZERO_SHOT', 'SELF_CONSISTENCY'], settings: SC_SETTINGS },
      })
    ).startExperiment.runs as { id: string; strategy: string }[];
    for (const r of result) runs.set(rowId(r.id), { id: r.id, strategy: r.strategy, resumed: 0, startedAt: Date.now() });
    started += result.length;
  };
  const startRun = async () => {
    const strategy = started % 2 === 0 ? 'ZERO_SHOT' : 'SELF_CONSISTENCY';
    const run = (
      await gql(`mutation($i: StartRunInput!) { startRun(input: $i) { run { id } } }`, {
        i: { modelId, datasetId, strategy, ...(strategy === 'SELF_CONSISTENCY' ? SC_SETTINGS : {}) },
      })
    ).startRun.run;
    runs.set(rowId(run.id), { id: run.id, strategy, resumed: 0, startedAt: Date.now() });
    started++;
  };

  const runStates = async () =>
    sql<{ id: string; status: string; succeeded_count: number; failed_count: number; total_reports: number }>(
      'SELECT id, status, succeeded_count, failed_count, total_reports FROM runs WHERE id = ANY($1::uuid[])',
      [[...runs.keys()]],
    );

  let loadError: unknown = null;
  const loadLoop = (async () => {
    await startExperiment();
    while (Date.now() < endAt) {
      const states = await runStates();
      let active = states.filter((s) => !TERMINAL.includes(s.status)).length;
      for (const s of states) {
        if (active >= settings.concurrentRuns || Date.now() >= endAt) break;
        const run = runs.get(s.id)!;
        if (TERMINAL.includes(s.status) && s.failed_count > 0 && run.resumed === 0) {
          run.resumed++;
          resumes++;
          const resumed = (await gql(`mutation($i: ResumeRunInput!) { resumeRun(input: $i) { retried queued } }`, { i: { runId: run.id } })).resumeRun;
          log(`resumed run ${s.id.slice(0, 8)} (${run.strategy}): ${resumed.retried} failed reports retried`);
          active++;
        }
      }
      while (active < settings.concurrentRuns && Date.now() < endAt) {
        await startRun();
        active++;
      }
      await sleep(2000);
    }
  })().catch((error: unknown) => {
    loadError = error;
    log(`load loop failed: ${error instanceof Error ? error.message : String(error)}`);
  });

  // ---------------------------------------------------------------- chaos
  const kills: { at: number; worker: string; ageS: number }[] = [];
  const killLoop = (async () => {
    if (settings.killEveryMinutes <= 0) return;
    for (let next = t0 + settings.killEveryMinutes * 60_000; next < endAt; next += settings.killEveryMinutes * 60_000) {
      await sleep(next - Date.now());
      // A worker started while the database is away exits at once: kill after the restart.
      while (pgDown) await sleep(500);
      const live = workers.filter(alive);
      const victim = live.sort((a, b) => b.startedAt - a.startedAt)[0];
      if (!victim || live.length === 0) continue;
      victim.expectedExit = true;
      victim.child.kill('SIGKILL');
      kills.push({ at: elapsed(), worker: victim.name, ageS: (Date.now() - victim.startedAt) / 1000 });
      const replacement = startWorker();
      workers.push(replacement);
      log(`SIGKILLed ${victim.name} (pid ${victim.child.pid}, up ${((Date.now() - victim.startedAt) / 1000).toFixed(0)} s); started ${replacement.name}`);
    }
  })();

  const restart: {
    stoppedAt?: number;
    startedAt?: number;
    downS?: number;
    healthzAfterS?: number;
    predictionsAfterS?: number;
    heartbeatsAfterS?: number;
    error?: string;
  } = {};
  const restartLoop = (async () => {
    if (settings.pgDownSeconds <= 0 && settings.pgRestartAtMinute <= 0) return;
    await sleep(t0 + settings.pgRestartAtMinute * 60_000 - Date.now());
    if (Date.now() >= endAt) return;
    log(`stopping PostgreSQL (${settings.pgStopMode})`);
    const stopStart = Date.now();
    pgDown = true;
    await db.stop(settings.pgStopMode);
    restart.stoppedAt = elapsed();
    log(`PostgreSQL down after ${((Date.now() - stopStart) / 1000).toFixed(1)} s; starting again in ${settings.pgDownSeconds} s`);
    await sleep(settings.pgDownSeconds * 1000);
    const startedAt = Date.now();
    await db.start();
    pgDown = false;
    restart.startedAt = elapsed();
    restart.downS = restart.startedAt - restart.stoppedAt;
    log(`PostgreSQL up again (start took ${((Date.now() - startedAt) / 1000).toFixed(1)} s)`);
    const [{ n: before }] = await sql<{ n: number }>('SELECT count(*)::int AS n FROM predictions');
    const deadline = Date.now() + settings.recoverSeconds * 1000;
    const liveWorkers = () => workers.filter(alive).map((w) => w.child.pid);
    while (Date.now() < deadline && (restart.healthzAfterS === undefined || restart.predictionsAfterS === undefined || restart.heartbeatsAfterS === undefined)) {
      if (restart.healthzAfterS === undefined && (await healthy())) restart.healthzAfterS = (Date.now() - startedAt) / 1000;
      if (restart.predictionsAfterS === undefined) {
        const [{ n }] = await sql<{ n: number }>('SELECT count(*)::int AS n FROM predictions');
        if (n > before) restart.predictionsAfterS = (Date.now() - startedAt) / 1000;
      }
      if (restart.heartbeatsAfterS === undefined) {
        // Each live worker's slot connection is back: its heartbeat is newer than the restart.
        const rows = await sql<{ pid: number }>(`SELECT pid FROM job_workers WHERE heartbeat_at > now() - make_interval(secs => $1)`, [(Date.now() - startedAt) / 1000]);
        const beating = new Set(rows.map((r) => r.pid));
        if (liveWorkers().every((pid) => beating.has(pid!))) restart.heartbeatsAfterS = (Date.now() - startedAt) / 1000;
      }
      await sleep(250);
    }
    log(
      `after the restart: /healthz ok after ${restart.healthzAfterS?.toFixed(1) ?? 'never'} s, new predictions after ${restart.predictionsAfterS?.toFixed(1) ?? 'never'} s, ` +
        `every worker's heartbeat after ${restart.heartbeatsAfterS?.toFixed(1) ?? 'never'} s`,
    );
  })().catch((error: unknown) => {
    restart.error = error instanceof Error ? error.message : String(error);
    log(`PostgreSQL restart failed: ${restart.error}`);
  });

  // ---------------------------------------------------------------- sampling
  const throughput: { at: number; predictions: number }[] = [];
  /** The endpoint's peak of calls in flight per sample window (its stats are reset at every sample). */
  const peaks: { at: number; peak: number }[] = [];
  let chatRequests = 0;
  const pgRss: { at: number; mb: number }[] = [];
  let sampling = true;
  const sampleLoop = (async () => {
    let lastReport = 0;
    while (sampling) {
      const at = elapsed();
      for (const m of processes) {
        if (!alive(m) || m.child.pid === undefined) continue;
        const mb = rssMb(m.child.pid);
        if (mb !== null) m.rss.push({ at, mb });
      }
      try {
        const stats = (await (await fetch(`${fakeOrigin}/_fake/stats`)).json()) as { chatRequests: number; peakInFlight: number };
        await fetch(`${fakeOrigin}/_fake/reset-stats`, { method: 'POST' });
        peaks.push({ at, peak: stats.peakInFlight });
        chatRequests += stats.chatRequests;
      } catch {
        // the fake is busy: the next sample covers this window too
      }
      const pg = postgresRssMb(postmasterPid());
      if (pg !== null && pg > 0) pgRss.push({ at, mb: pg });
      try {
        const [{ n }] = (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM predictions')).rows as [{ n: number }];
        throughput.push({ at, predictions: n });
      } catch {
        // the database is away (the restart): no sample
      }
      if (at - lastReport >= 60) {
        lastReport = at;
        const last = throughput.at(-1);
        const prev = throughput.find((s) => s.at >= at - 60);
        const rate = last && prev && last.at > prev.at ? (last.predictions - prev.predictions) / (last.at - prev.at) : 0;
        const rss = processes.filter((m) => alive(m) && m.role !== 'fake').map((m) => `${m.name} ${m.rss.at(-1)?.mb.toFixed(0) ?? '?'} MB`).join(', ');
        log(`${last?.predictions ?? '?'} predictions (${rate.toFixed(1)}/s), ${runs.size} runs started, ${resumes} resumed, ${kills.length} kills; RSS ${rss}`);
      }
      await sleep(settings.sampleSeconds * 1000);
    }
  })();

  // ---------------------------------------------------------------- drain
  await sleep(endAt - Date.now());
  await loadLoop;
  await killLoop;
  await restartLoop;
  log(`load over: ${runs.size} runs started; waiting up to ${settings.drainMinutes} min for the runs in flight`);
  const drainUntil = Date.now() + settings.drainMinutes * 60_000;
  let states = await runStates();
  while (states.some((s) => !TERMINAL.includes(s.status)) && Date.now() < drainUntil) {
    await sleep(2000);
    states = await runStates();
  }
  const drainedAt = elapsed();
  sampling = false;
  await sampleLoop;

  // ---------------------------------------------------------------- checks
  const failures: string[] = [];
  const check = (ok: boolean, what: string) => {
    if (!ok) failures.push(what);
    log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  };
  if (loadError) check(false, `the load kept going (${loadError instanceof Error ? loadError.message : String(loadError)})`);

  const notOver = states.filter((s) => !TERMINAL.includes(s.status) || s.status === 'CANCELLED');
  check(notOver.length === 0, `every run is over and none cancelled (${notOver.map((s) => `${s.id.slice(0, 8)} ${s.status} ${s.succeeded_count}+${s.failed_count}/${s.total_reports}`).join(', ') || 'all'})`);

  const coverage = await sql<{ run_id: string; missing: number; doubled: number; scope: number }>(
    `SELECT r.id AS run_id,
            count(*) FILTER (WHERE n.k = 0)::int AS missing,
            count(*) FILTER (WHERE n.k > 1)::int AS doubled,
            count(*)::int AS scope
     FROM runs r
     JOIN reports rep ON rep.dataset_id = (r.config->'scope'->>'datasetId')::uuid AND rep.ordinal <= (r.config->'scope'->>'maxOrdinal')::int
     CROSS JOIN LATERAL (SELECT count(*)::int AS k FROM predictions p WHERE p.run_id = r.id AND p.report_id = rep.id) n
     WHERE r.id = ANY($1::uuid[]) GROUP BY r.id`,
    [[...runs.keys()]],
  );
  const missing = coverage.reduce((a, c) => a + c.missing, 0);
  const doubled = coverage.reduce((a, c) => a + c.doubled, 0);
  check(coverage.length === runs.size && missing === 0, `every report of every run has a prediction (${missing} missing over ${coverage.length} runs)`);
  check(doubled === 0, `no report has two predictions in a run (${doubled})`);
  const [dup] = await sql<{ n: number }>(`SELECT count(*)::int AS n FROM (SELECT 1 FROM predictions GROUP BY run_id, report_id HAVING count(*) > 1) d`);
  check(dup!.n === 0, `no duplicate (run, report) key in predictions (${dup!.n})`);
  const [strays] = await sql<{ n: number; statuses: string[] }>(
    `SELECT count(*)::int AS n, coalesce(array_agg(DISTINCT status), '{}') AS statuses FROM predictions WHERE status NOT IN ('SUCCEEDED', 'FAILED')`,
  );
  check(strays!.n === 0, `every prediction is in a terminal status (${strays!.n} are not: ${strays!.statuses.join(', ')})`);

  const counters = await sql<{ id: string; status: string; bad: string[] }>(
    `SELECT r.id, r.status, array_remove(ARRAY[
        CASE WHEN r.succeeded_count <> c.succeeded THEN 'succeeded ' || r.succeeded_count || ' vs ' || c.succeeded END,
        CASE WHEN r.failed_count <> c.failed THEN 'failed ' || r.failed_count || ' vs ' || c.failed END,
        CASE WHEN r.total_reports <> c.rows THEN 'total ' || r.total_reports || ' vs ' || c.rows END,
        CASE WHEN r.prompt_tokens <> c.prompt_tokens THEN 'prompt_tokens ' || r.prompt_tokens || ' vs ' || c.prompt_tokens END,
        CASE WHEN r.completion_tokens <> c.completion_tokens THEN 'completion_tokens ' || r.completion_tokens || ' vs ' || c.completion_tokens END,
        CASE WHEN r.latency_ms_sum <> c.latency THEN 'latency_ms_sum ' || r.latency_ms_sum || ' vs ' || c.latency END,
        CASE WHEN r.status NOT IN ('QUEUED', 'RUNNING', 'CANCELLED') AND r.status <> (CASE WHEN c.failed = 0 THEN 'SUCCEEDED' WHEN c.succeeded = 0 THEN 'FAILED' ELSE 'PARTIAL' END)
             THEN 'status ' || r.status || ' with ' || c.succeeded || ' succeeded, ' || c.failed || ' failed' END
      ], NULL) AS bad
     FROM runs r CROSS JOIN LATERAL (
       SELECT count(*) FILTER (WHERE status = 'SUCCEEDED')::int AS succeeded, count(*) FILTER (WHERE status = 'FAILED')::int AS failed, count(*)::int AS rows,
              coalesce(sum(prompt_tokens), 0)::bigint AS prompt_tokens, coalesce(sum(completion_tokens), 0)::bigint AS completion_tokens,
              coalesce(sum(latency_ms) FILTER (WHERE status = 'SUCCEEDED'), 0)::bigint AS latency
       FROM predictions p WHERE p.run_id = r.id) c
     WHERE r.id = ANY($1::uuid[])`,
    [[...runs.keys()]],
  );
  const miscounted = counters.filter((c) => c.bad.length > 0);
  check(miscounted.length === 0, `the counters of every run equal its rows (${miscounted.map((c) => `${c.id.slice(0, 8)}: ${c.bad.join('; ')}`).join(' | ') || 'all equal'})`);

  // A succeeded prediction holds its own report's answer, or the garbage the endpoint sent, never another report's.
  const answers = await sql<{ external_id: string; diagnosis: unknown; breslow: unknown }>(
    `SELECT rep.external_id, p."values"->'diagnosis' AS diagnosis, p."values"->'breslow_mm' AS breslow
     FROM predictions p JOIN reports rep ON rep.id = p.report_id WHERE p.run_id = ANY($1::uuid[]) AND p.status = 'SUCCEEDED'`,
    [[...runs.keys()]],
  );
  let right = 0;
  let junk = 0;
  let crossed = 0;
  for (const a of answers) {
    const want = expected(Number(a.external_id.slice(1)));
    if (a.diagnosis === want.diagnosis && a.breslow === want.breslow_mm) right++;
    else if (typeof a.breslow === 'number' && DIAGNOSES.includes(a.diagnosis as string)) crossed++;
    else junk++;
  }
  check(crossed === 0, `no succeeded prediction carries another report's answer (${crossed}; ${right} right, ${junk} from garbage answers)`);

  check(unexpectedExits.length === 0, `no server or worker exited unasked (${unexpectedExits.map((e) => `${e.name} at ${(e.at / 60).toFixed(1)} min, code ${e.code} signal ${e.signal}`).join('; ') || 'none'})`);
  if (restart.stoppedAt !== undefined) {
    check(
      restart.healthzAfterS !== undefined && restart.predictionsAfterS !== undefined && restart.heartbeatsAfterS !== undefined,
      `server and workers recovered within ${settings.recoverSeconds} s of the PostgreSQL restart`,
    );
  } else if (settings.pgRestartAtMinute < settings.minutes) {
    check(false, `PostgreSQL was restarted (${restart.error ?? 'not reached'})`);
  }

  /** Median RSS of the samples in [from, to) of the process's life, as shares of it. */
  const median = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted.length === 0 ? Number.NaN : sorted[Math.floor(sorted.length / 2)]!;
  };
  const growth = (m: Managed): number | null => {
    if (m.rss.length < 12) return null;
    const n = m.rss.length;
    // After a warm-up (the first fifth): the second quarter against the last quarter.
    const early = m.rss.slice(Math.floor(n / 5), Math.floor(n / 5 + n / 4)).map((s) => s.mb);
    const late = m.rss.slice(Math.floor((3 * n) / 4)).map((s) => s.mb);
    return median(late) - median(early);
  };
  const longLived = processes.filter((m) => m.role !== 'fake' && m.rss.length >= 12 && (m.exited === null || !m.expectedExit));
  for (const m of longLived) {
    const g = growth(m);
    if (g === null) continue;
    check(g <= settings.maxRssGrowthMb, `${m.name}'s memory is bounded: median RSS of the last quarter ${g >= 0 ? '+' : ''}${g.toFixed(0)} MB against the second quarter (limit ${settings.maxRssGrowthMb} MB)`);
  }

  // The endpoint limit holds across workers, except right after the restart: a worker whose slot
  // connection broke keeps its calls in flight while the slots (advisory locks) are free for others.
  const nearRestart = (at: number) => restart.stoppedAt !== undefined && at >= restart.stoppedAt && at <= (restart.startedAt ?? restart.stoppedAt) + 30 + settings.sampleSeconds;
  const peakOutside = Math.max(0, ...peaks.filter((p) => !nearRestart(p.at)).map((p) => p.peak));
  const peakNear = Math.max(0, ...peaks.filter((p) => nearRestart(p.at)).map((p) => p.peak));
  check(peakOutside <= settings.maxConcurrency, `the endpoint never had more than maxConcurrency (${settings.maxConcurrency}) calls in flight outside the restart (peak ${peakOutside})`);

  // ---------------------------------------------------------------- summary
  const byStatus = await sql<{ status: string; n: number; attempts: number }>(
    `SELECT status, count(*)::int AS n, sum(attempts)::int AS attempts FROM predictions WHERE run_id = ANY($1::uuid[]) GROUP BY status ORDER BY status`,
    [[...runs.keys()]],
  );
  const byCode = await sql<{ code: string; n: number }>(
    `SELECT coalesce(error_code, '?') AS code, count(*)::int AS n FROM predictions WHERE run_id = ANY($1::uuid[]) AND status = 'FAILED' GROUP BY 1 ORDER BY 2 DESC`,
    [[...runs.keys()]],
  );
  const runStatuses = await sql<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM runs WHERE id = ANY($1::uuid[]) GROUP BY status ORDER BY status`, [[...runs.keys()]]);
  const jobs = await sql<{ state: string; n: number }>(`SELECT state::text, count(*)::int AS n FROM pgboss.job WHERE name = 'run-reports' GROUP BY state ORDER BY state`).catch(() => []);
  const faults = (await (await fetch(`${fakeOrigin}/_fake/faults`)).json()) as Record<string, number>;
  const fakeStats = (await (await fetch(`${fakeOrigin}/_fake/stats`)).json()) as Record<string, number>;
  const total = byStatus.reduce((a, s) => a + s.n, 0);
  const attempts = byStatus.reduce((a, s) => a + s.attempts, 0);
  const rates: number[] = [];
  for (let i = 1; i < throughput.length; i++) {
    const a = throughput[i - 1]!;
    const b = throughput[i]!;
    if (b.at > a.at) rates.push((b.predictions - a.predictions) / (b.at - a.at));
  }
  const loadSeconds = Math.min(drainedAt, settings.minutes * 60);
  const atEnd = throughput.filter((s) => s.at <= settings.minutes * 60).at(-1)?.predictions ?? total;
  const rssLine = (name: string, samples: { at: number; mb: number }[]) => {
    if (samples.length === 0) return `  ${name}: no samples`;
    const mbs = samples.map((s) => s.mb);
    const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))]!.mb.toFixed(0);
    return `  ${name}: ${Math.min(...mbs).toFixed(0)}–${Math.max(...mbs).toFixed(0)} MB over ${(samples[0]!.at / 60).toFixed(1)}–${(samples.at(-1)!.at / 60).toFixed(1)} min (at 0/25/50/75/100 % of its life: ${[0, 0.25, 0.5, 0.75, 0.999].map(at).join(' / ')})`;
  };
  const summary = [
    '',
    '## Fault soak summary',
    `length ${settings.minutes} min of load, drained at ${(drainedAt / 60).toFixed(1)} min; ${runs.size} runs started (${resumes} resumed once), ${settings.reports} reports each`,
    `runs by status: ${runStatuses.map((s) => `${s.status} ${s.n}`).join(', ')}`,
    `predictions: ${total} (${byStatus.map((s) => `${s.status} ${s.n}`).join(', ')}); succeeded values: ${right} right, ${junk} from garbage answers, ${crossed} crossed`,
    `failed by error code: ${byCode.map((c) => `${c.code} ${c.n}`).join(', ') || 'none'}`,
    `attempts recorded on the predictions: ${attempts} for ${total} (${attempts - total} retries)`,
    `endpoint calls in flight at once: peak ${peakOutside} (limit ${settings.maxConcurrency}); within 30 s of the PostgreSQL restart peak ${peakNear}`,
    `fake endpoint: ${chatRequests + (fakeStats['chatRequests'] ?? 0)} chat requests; injected ${faults['serverError']} 5xx, ${faults['rateLimited']} 429, ${faults['stall']} stalls, ${faults['garbage']} garbage (of ${faults['drawn']} drawn)`,
    `throughput: ${(atEnd / loadSeconds).toFixed(1)} predictions/s over the load (${atEnd} in ${(loadSeconds / 60).toFixed(1)} min); per ${settings.sampleSeconds} s sample min ${Math.min(...rates).toFixed(1)}, median ${median(rates).toFixed(1)}, max ${Math.max(...rates).toFixed(1)}`,
    `processes started while PostgreSQL was away (exited at once, restarted after it): ${refusedStarts.join(', ') || 'none'}`,
    `worker kills: ${kills.length} (${kills.map((k) => `${k.worker} at ${(k.at / 60).toFixed(1)} min, up ${k.ageS.toFixed(0)} s`).join('; ') || 'none'})`,
    restart.stoppedAt === undefined
      ? 'PostgreSQL restart: none'
      : `PostgreSQL restart (${settings.pgStopMode}) at ${(restart.stoppedAt / 60).toFixed(1)} min, down ${restart.downS?.toFixed(1)} s; after its start: server /healthz ok in ${restart.healthzAfterS?.toFixed(1) ?? 'never'} s, ` +
        `first new prediction in ${restart.predictionsAfterS?.toFixed(1) ?? 'never'} s, every worker's heartbeat in ${restart.heartbeatsAfterS?.toFixed(1) ?? 'never'} s`,
    `queue items by state: ${jobs.map((j) => `${j.state} ${j.n}`).join(', ')}`,
    'RSS (sampled every ' + settings.sampleSeconds + ' s):',
    ...processes.filter((m) => m.role !== 'fake' && m.rss.length > 1).map((m) => rssLine(`${m.name}${m.expectedExit ? ' (killed)' : ''}`, m.rss)),
    rssLine('fake endpoint', fake.rss),
    rssLine('PostgreSQL (all its processes)', pgRss),
    `checks: ${failures.length === 0 ? 'all passed' : `${failures.length} FAILED`}`,
    '',
  ];
  process.stdout.write(summary.join('\n'));

  // ---------------------------------------------------------------- teardown
  stoppingAll = true;
  for (const m of processes) {
    if (!alive(m)) continue;
    m.expectedExit = true;
    m.child.kill('SIGTERM');
  }
  await Promise.all(processes.filter(alive).map((m) => new Promise((resolve) => {
    const timer = setTimeout(() => {
      m.child.kill('SIGKILL');
      resolve(undefined);
    }, 20_000);
    m.child.once('exit', () => {
      clearTimeout(timer);
      resolve(undefined);
    });
  })));
  await pool.end().catch(() => undefined);
  await db.stop();
  if (settings.keep || failures.length > 0) log(`kept ${dir} (logs in ${logDir})`);
  else rmSync(dir, { recursive: true, force: true });
  process.exit(failures.length === 0 ? 0 : 1);
}

main().catch((error: unknown) => {
  process.stderr.write(`soak failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  stoppingAll = true;
  for (const m of processes) if (alive(m)) m.child.kill('SIGKILL');
  process.exit(1);
});
