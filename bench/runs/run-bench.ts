/**
 * Run execution benchmark: the real server (this process, no worker in it), one worker process
 * (`node dist/src/worker.js`) and the fake OpenAI-compatible endpoint (its own process, answering
 * each report with the answer written in it), on a fresh embedded PostgreSQL.
 *
 *   npm run bench:runs            # all three workloads
 *   npm run build && node dist/bench/runs/run-bench.js [--only a|b|c] [--profile <dir>]
 *
 * (a) endpoint latency 100 ms, maxConcurrency 64, 5,000 reports, ZERO_SHOT: throughput against
 *     the ideal 640 predictions/s, and CPU per prediction of the server, the worker and PostgreSQL
 *     (the server's own cluster only: its postmaster and the backends it started, live or ended).
 * (b) endpoint latency 0, maxConcurrency 64, 20,000 reports: persisted predictions per second.
 * (c) endpoint latency 0, 50,000 reports: the worker's resident memory over the run.
 * Each run is timed from the startRun call to the run's finishedAt (the status is polled every
 * 500 ms, so that watching costs little), and checked:
 * one prediction per report, counters equal to the rows.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { BENCH_SECRET_KEY, startBenchServer } from '../support/bench-server';
import { cpuSeconds, postgresCpu, postmasterPid } from './process-cpu';

const ROOT = path.resolve(__dirname, '../../..');

function option(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
}

function rssMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : 0;
}

async function startFake(latencyMs: number): Promise<{ child: ChildProcess; baseUrl: string }> {
  const child = spawn(
    process.execPath,
    ['-r', './bench/kemeny/swc-register.js', 'tests/support/fake-llm/main.ts', '--port', '0', '--latency-ms', String(latencyMs), '--models', 'bench-model', '--answer-from-report', '--no-record', '--max-running', '1024'],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const line = await new Promise<string>((resolve) => createInterface({ input: child.stdout! }).once('line', resolve));
  return { child, baseUrl: (JSON.parse(line) as { baseUrl: string }).baseUrl };
}

function startWorker(databaseUrl: string): ChildProcess {
  // --profile <dir>: a V8 CPU profile of the worker, written when it exits.
  const profile = option('profile');
  return spawn(process.execPath, [...(profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : []), 'dist/src/worker.js'], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: databaseUrl, SECRET_KEY: BENCH_SECRET_KEY, LOG_LEVEL: 'warn', WORKER_CONCURRENCY: '256' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
}

function reportText(i: number): string {
  const diagnosis = ['melanoma', 'naevus', 'carcinoma'][i % 3];
  return [
    `Verslag ${i}. Huidexcidaat van 2,4 x 1,1 cm met centraal een onregelmatig bruin-zwarte laesie.`,
    'Microscopie: invasief melanoom van het oppervlakkig spreidende type. Geen ulceratie. Mitosen 2/mm².',
    'De snijvlakken zijn vrij; de kleinste afstand tot het laterale snijvlak bedraagt 4 mm.',
    `ANSWER: {"diagnosis": "${diagnosis}", "breslow_mm": ${((i % 40) / 10 + 0.1).toFixed(1)}}`,
  ].join('\n');
}

async function main(): Promise<void> {
  const only = option('only');
  const server = await startBenchServer();
  const { gql, dataSource } = server;
  const postmaster = await postmasterPid(dataSource);
  const worker = startWorker(server.databaseUrl);
  const fakes: ChildProcess[] = [];
  const projectId = (await gql('mutation { createProject(input: { name: "bench" }) { project { id } } }')).createProject.project.id;
  const useCaseId = (
    await gql(`mutation($i: CreateUseCaseInput!) { createUseCase(input: $i) { useCase { id } } }`, {
      i: {
        projectId,
        name: 'bench',
        variables: [
          { key: 'diagnosis', type: 'CATEGORICAL', options: ['melanoma', 'naevus', 'carcinoma', 'Not specified'] },
          { key: 'breslow_mm', type: 'NUMERIC' },
        ],
      },
    })
  ).createUseCase.useCase.id;

  async function workload(label: string, latencyMs: number, reports: number, sampleMemory: boolean): Promise<void> {
    const fake = await startFake(latencyMs);
    fakes.push(fake.child);
    const datasetId = (await gql(`mutation($i: CreateDatasetInput!) { createDataset(input: $i) { dataset { id } } }`, { i: { useCaseId, name: label } })).createDataset.dataset.id;
    const content = Array.from({ length: reports }, (_, i) => JSON.stringify({ id: `R${String(i).padStart(6, '0')}`, text: reportText(i) })).join('\n');
    await gql(`mutation($i: ImportReportsInput!) { importReports(input: $i) { inserted } }`, { i: { datasetId, format: 'JSONL', idField: 'id', textField: 'text', content } });
    const endpoint = (
      await gql(`mutation($i: RegisterEndpointInput!) { registerEndpoint(input: $i) { models { id } } }`, {
        i: { projectId, name: `fake ${label}`, baseUrl: fake.baseUrl, kind: 'VLLM', maxConcurrency: 64, timeoutMs: 30_000, gpuCount: 1 },
      })
    ).registerEndpoint;
    const modelId = endpoint.models[0].id;

    const cpu0 = { server: process.cpuUsage(), worker: cpuSeconds(worker.pid!), postgres: postgresCpu(postmaster), endpoint: cpuSeconds(fake.child.pid!) };
    const t0 = performance.now();
    const startedAt = Date.now();
    const runId = (await gql(`mutation($i: StartRunInput!) { startRun(input: $i) { run { id } } }`, { i: { modelId, datasetId, strategy: 'ZERO_SHOT' } })).startRun.run.id;
    const memory: { at: number; done: number; rssMb: number }[] = [];
    let state: any;
    let lastSample = 0;
    for (;;) {
      state = (await gql(`query($id: ID!) { node(id: $id) { ... on Run { status progress { succeeded failed } } } }`, { id: runId })).node;
      const now = performance.now();
      if (sampleMemory && now - lastSample > 1000) {
        lastSample = now;
        memory.push({ at: (now - t0) / 1000, done: state.progress.succeeded, rssMb: rssMb(worker.pid!) });
      }
      if (['SUCCEEDED', 'PARTIAL', 'FAILED', 'CANCELLED'].includes(state.status)) break;
      // Polled slowly, so that watching costs the server little; the time is the run's own end.
      await new Promise((r) => setTimeout(r, 500));
    }
    const usage = (await gql(`query($id: ID!) { node(id: $id) { ... on Run { startedAt finishedAt usage { latencyP50Ms latencyP95Ms } } } }`, { id: runId })).node;
    const seconds = (new Date(usage.finishedAt).getTime() - startedAt) / 1000;
    const server = process.cpuUsage(cpu0.server);
    const cpu = {
      server: (server.user + server.system) / 1e6,
      worker: cpuSeconds(worker.pid!) - cpu0.worker,
      postgres: postgresCpu(postmaster) - cpu0.postgres,
      endpoint: cpuSeconds(fake.child.pid!) - cpu0.endpoint,
    };
    const [check] = (await dataSource.query(
      `SELECT r.succeeded_count, r.failed_count, (SELECT count(*)::int FROM predictions p WHERE p.run_id = r.id) AS rows,
              (SELECT count(DISTINCT report_id)::int FROM predictions p WHERE p.run_id = r.id) AS reports
       FROM runs r WHERE r.id = $1`,
      [Buffer.from(runId, 'base64url').toString('utf8').split(':')[1]],
    )) as { succeeded_count: number; failed_count: number; rows: number; reports: number }[];
    const perSecond = reports / seconds;
    const perPrediction = (s: number) => `${((s / reports) * 1000).toFixed(3)} ms`;
    process.stdout.write(
      [
        `\n## ${label}: latency ${latencyMs} ms, maxConcurrency 64, ${reports} reports`,
        `status ${state.status}; rows ${check!.rows}, distinct reports ${check!.reports}, counters ${check!.succeeded_count} + ${check!.failed_count}`,
        `wall ${seconds.toFixed(2)} s → ${perSecond.toFixed(0)} predictions/s` + (latencyMs > 0 ? ` (${((perSecond / ((64 * 1000) / latencyMs)) * 100).toFixed(1)} % of the ideal ${(64 * 1000) / latencyMs}/s)` : ''),
        `latency per report as the worker saw it: p50 ${usage.usage.latencyP50Ms.toFixed(1)} ms, p95 ${usage.usage.latencyP95Ms.toFixed(1)} ms; first report started ${new Date(usage.startedAt).getTime() - startedAt} ms after startRun`,
        `CPU per prediction: server ${perPrediction(cpu.server)}, worker ${perPrediction(cpu.worker)}, PostgreSQL ${perPrediction(cpu.postgres)}, fake endpoint ${perPrediction(cpu.endpoint)}`,
        ...(sampleMemory
          ? [`worker RSS (MB) by time: ${memory.map((m) => `${m.at.toFixed(0)}s/${m.done}: ${m.rssMb.toFixed(0)}`).join(', ')}`]
          : []),
        '',
      ].join('\n'),
    );
    fake.child.kill('SIGTERM');
  }

  try {
    if (!only || only === 'a') await workload('a', 100, 5_000, false);
    if (!only || only === 'b') await workload('b', 0, 20_000, false);
    if (!only || only === 'c') await workload('c', 0, 50_000, true);
  } finally {
    worker.kill('SIGTERM');
    for (const f of fakes) f.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 1000));
    await server.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
