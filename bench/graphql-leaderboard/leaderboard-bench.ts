/**
 * Paper-scale leaderboard through GraphQL: 90 imported runs × 1,252 reports × 16 variables
 * (12 categorical with 2–9 classes, 4 numeric), B = 1000. Times the `leaderboard` query cold
 * (first request after the data changed) and cached, on a real server over HTTP with a fresh
 * embedded PostgreSQL. Data are synthetic and deterministic. "Cold" clears every in-process
 * statistics cache first (the per-run item scores too, where the server has them); "after one
 * more run lands" imports one more run and then asks for a leaderboard asked before the import.
 *
 * The server runs in this process: "peak RSS" is this process's resident set, sampled every
 * 20 ms during each cold request (the client's own share is the generated data, small next to it),
 * and the whole process's maximum (import included) from getrusage.
 *
 * `--threads N` sets the server's ANALYTICS_THREADS (default: one per core, at most 4; 0 computes
 * on the request thread, in slices).
 *
 * `--warm-up N` first asks N cold leaderboards that are not timed, as a server that has computed
 * other leaderboards before would have (V8 optimises the statistics over the first several).
 *
 * `--grid N` last times the bootstrap grid alone, N times after one untimed call, on data of the
 * same make (bench/kemeny/leaderboard-data.ts: as many runs, 1,252 reports, the same variables,
 * skills and missing answers; B = 1000): on this process's thread (bootstrapGrid) and on the
 * server's statistics engine in the server's slices, with the cold leaderboard's ratio to each.
 * The grid alone gets its item scores ready-made: it leaves out what the leaderboard spends
 * reading and scoring the runs, and the copy of the scores into shared memory.
 *
 * `--after-idle N` then asks N more cold leaderboards, each after the server has been idle for
 * 6 s: longer than a statistics thread waits before giving back its memory (5 s), as a user
 * asking minutes after the last computation finds it.
 *
 * `--run-scores N` then asks N times for every run's scores at once (`runs { scores }`, one
 * computation over all runs: the records path of the statistics, each time with a new seed), with
 * the slowest `/livez` answer meanwhile.
 *
 * `--fresh-servers N` then asks N more cold leaderboards, each of a new server process
 * (`dist/src/main.js`, NODE_ENV=production) over the same database, as after a restart: that
 * process holds nothing but the server, so its resident set is the server's memory alone
 * (sampled every 20 ms from /proc during the request, and its high-water mark); then, after
 * 6 s idle, its RSS and one more cold request.
 *
 *   npm run build && node dist/bench/graphql-leaderboard/leaderboard-bench.js [--repeats 3] [--runs 90] [--reports 1252] [--landings 3] [--threads N] [--warm-up N] [--grid N] [--after-idle N] [--run-scores N] [--fresh-servers N]
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { bootstrapGrid } from '../../src/analytics/bootstrap';
import { LEADERBOARD_REPORTS, leaderboardGridInput } from '../kemeny/leaderboard-data';
import { argument, BENCH_SECRET_KEY, lcg, startBenchServer, type BenchServer } from '../support/bench-server';
import { serverGridSlice, threadedGrid } from '../support/threaded-grid';

const CATEGORICAL = 12;
const NUMERIC = 4;

async function main(): Promise<void> {
  const repeats = argument('repeats', 3);
  const landings = argument('landings', repeats);
  const RUNS = argument('runs', 90);
  const REPORTS = argument('reports', 1252);
  const random = lcg(20261129);
  const variables: { key: string; type: string; options?: string[] }[] = [
    ...Array.from({ length: CATEGORICAL }, (_, v) => ({
      key: `cat_${v}`,
      type: 'CATEGORICAL',
      options: Array.from({ length: 2 + (v % 8) }, (_, c) => `class ${c}`),
    })),
    ...Array.from({ length: NUMERIC }, (_, v) => ({ key: `num_${v}`, type: 'NUMERIC' })),
  ];
  const truth = Array.from({ length: REPORTS }, () =>
    Object.fromEntries(
      variables.map((v) => [v.key, v.options ? v.options[Math.floor(random() * v.options.length)]! : Math.floor(random() * 10)]),
    ),
  );

  const threads = process.argv.includes('--threads') ? argument('threads', 0) : undefined;
  const server = await startBenchServer(threads === undefined ? {} : { analyticsThreads: threads });
  process.stdout.write(`statistics threads: ${threads ?? 'default'}\n`);
  const { gql, port } = server;

  try {
    const project = (await gql('mutation { createProject(input: { name: "bench" }) { project { id } } }', {})).createProject.project.id;
    const useCase = (
      await gql('mutation($i: CreateUseCaseInput!) { createUseCase(input: $i) { useCase { id } } }', {
        i: { projectId: project, name: 'paper grid', variables },
      })
    ).createUseCase.useCase.id;
    const dataset = (await gql('mutation($u: ID!) { createDataset(input: { useCaseId: $u, name: "grid" }) { dataset { id } } }', { u: useCase }))
      .createDataset.dataset.id;
    await gql('mutation($i: ImportReportsInput!) { importReports(input: $i) { inserted } }', {
      i: { datasetId: dataset, format: 'JSONL', content: truth.map((_, i) => JSON.stringify({ id: `R${i}`, text: `report ${i}` })).join('\n') },
    });
    await gql('mutation($i: ImportAnnotationsInput!) { importAnnotations(input: $i) { values } }', {
      i: {
        datasetId: dataset,
        annotatorName: 'reference',
        isReference: true,
        format: 'JSONL',
        content: truth.map((row, i) => JSON.stringify({ id: `R${i}`, ...row })).join('\n'),
      },
    });
    const importStarted = process.hrtime.bigint();
    const importRun = async (r: number) => {
      const skill = 0.45 + 0.5 * random();
      const lines = truth.map((row, i) => {
        const answer: Record<string, unknown> = {};
        for (const v of variables) {
          const u = random();
          if (u < 0.02) continue;
          if (u < skill) answer[v.key] = row[v.key];
          else answer[v.key] = v.options ? v.options[Math.floor(random() * v.options.length)] : Math.floor(random() * 10);
        }
        return JSON.stringify({ id: `R${i}`, extracted_data: answer });
      });
      await gql('mutation($i: ImportPredictionsInput!) { importPredictions(input: $i) { imported } }', {
        i: {
          datasetId: dataset,
          modelName: `synthetic-model-${Math.floor(r / 6)}`,
          strategy: ['ZERO_SHOT', 'ONE_SHOT', 'FEW_SHOT', 'CHAIN_OF_THOUGHT', 'SELF_CONSISTENCY', 'PROMPT_GRAPH'][r % 6],
          format: 'JSONL',
          layout: 'JSON_COLUMN',
          content: lines.join('\n'),
        },
      });
    };
    for (let r = 0; r < RUNS; r++) await importRun(r);
    process.stdout.write(`imported ${RUNS} runs × ${REPORTS} reports in ${(Number(process.hrtime.bigint() - importStarted) / 1e9).toFixed(1)} s\n`);
    process.stdout.write(`${await autovacuumSettled(server)}\n`);
    const [sizes] = (await server.dataSource.query(
      `SELECT pg_total_relation_size('run_cell_columns') AS columns, pg_total_relation_size('predictions') AS predictions`,
    )) as { columns: string; predictions: string }[];
    process.stdout.write(`stored cell columns ${(Number(sizes!.columns) / 2 ** 20).toFixed(1)} MB; predictions ${(Number(sizes!.predictions) / 2 ** 20).toFixed(0)} MB\n`);

    const query = `query($u: ID!, $d: ID!, $seed: Int!) { node(id: $u) { ... on UseCase { leaderboard(datasetId: $d, options: { resamples: 1000, seed: $seed }) {
      exact score lowerBound entries { rank rankCiLow rankCiHigh run { name } macroAverage { value ciLow ciHigh } } } } } }`;
    const cold: number[] = [];
    const cached: number[] = [];
    const healthWorst: number[] = [];
    const liveWorst: number[] = [];
    const peakRss: number[] = [];
    const startRss: number[] = [];
    // Where the server keeps item scores per run, cold means those are gone too.
    const clearRunCache = () => server.services.scoring.runItems.clear();
    const warmUp: number[] = [];
    for (let i = 0; i < argument('warm-up', 0); i++) {
      clearRunCache();
      const started = process.hrtime.bigint();
      await gql(query, { u: useCase, d: dataset, seed: 5000 + i });
      warmUp.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
    if (warmUp.length > 0) process.stdout.write(`untimed warm-up: ${warmUp.length} cold leaderboards (${warmUp.map((x) => x.toFixed(0)).join(', ')} ms)\n`);
    for (let i = 0; i < repeats; i++) {
      // A new seed is a new computation: nothing of it is cached.
      clearRunCache();
      let started = process.hrtime.bigint();
      // Meanwhile another client polls /healthz: its slowest answer is how long the cold
      // computation kept other requests waiting.
      let polling = true;
      let rssPeak = process.memoryUsage.rss();
      startRss.push(rssPeak / 2 ** 20);
      const rssTimer = setInterval(() => {
        rssPeak = Math.max(rssPeak, process.memoryUsage.rss());
      }, 20);
      // /healthz asks PostgreSQL (SELECT 1); /livez only the event loop: the two tell the
      // server's share of a wait from the database's.
      const poll = slowestAnswer(port, '/healthz', () => polling);
      const livePoll = slowestAnswer(port, '/livez', () => polling);
      const result = await gql(query, { u: useCase, d: dataset, seed: 1000 + i });
      cold.push(Number(process.hrtime.bigint() - started) / 1e6);
      polling = false;
      clearInterval(rssTimer);
      peakRss.push(Math.max(rssPeak, process.memoryUsage.rss()) / 2 ** 20);
      healthWorst.push(await poll);
      liveWorst.push(await livePoll);
      if (result.node.leaderboard.entries.length !== RUNS) throw new Error('leaderboard incomplete');
      started = process.hrtime.bigint();
      await gql(query, { u: useCase, d: dataset, seed: 1000 + i });
      cached.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
    // One more run lands, then the leaderboard last asked for is asked again: the write made
    // the cached answer stale, and the runs that did not change are as before.
    const landed: number[] = [];
    const landedImport: number[] = [];
    const lastSeed = 1000 + repeats - 1;
    for (let i = 0; i < landings; i++) {
      let started = process.hrtime.bigint();
      await importRun(RUNS + i);
      landedImport.push(Number(process.hrtime.bigint() - started) / 1e6);
      started = process.hrtime.bigint();
      const result = await gql(query, { u: useCase, d: dataset, seed: lastSeed });
      landed.push(Number(process.hrtime.bigint() - started) / 1e6);
      if (result.node.leaderboard.entries.length !== RUNS + i + 1) throw new Error('leaderboard after a landing incomplete');
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    process.stdout.write(`leaderboard cold: median ${median(cold).toFixed(0)} ms (runs ${cold.map((x) => x.toFixed(0)).join(', ')})\n`);
    process.stdout.write(`/healthz during the cold computation, slowest answer: median ${median(healthWorst).toFixed(0)} ms (runs ${healthWorst.map((x) => x.toFixed(0)).join(', ')})\n`);
    process.stdout.write(`/livez during the cold computation, slowest answer: median ${median(liveWorst).toFixed(0)} ms (runs ${liveWorst.map((x) => x.toFixed(0)).join(', ')})\n`);
    process.stdout.write(`peak RSS during the cold computation: median ${median(peakRss).toFixed(0)} MB (runs ${peakRss.map((x) => x.toFixed(0)).join(', ')}; RSS as each began ${startRss.map((x) => x.toFixed(0)).join(', ')} MB); process maximum ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB\n`);
    process.stdout.write(`leaderboard cached: median ${median(cached).toFixed(1)} ms (runs ${cached.map((x) => x.toFixed(1)).join(', ')})\n`);
    if (landings > 0) {
      process.stdout.write(`import of one more run: median ${median(landedImport).toFixed(0)} ms (runs ${landedImport.map((x) => x.toFixed(0)).join(', ')})\n`);
      process.stdout.write(`leaderboard after one more run lands: median ${median(landed).toFixed(0)} ms (runs ${landed.map((x) => x.toFixed(0)).join(', ')})\n`);
    }
    const afterIdle = argument('after-idle', 0);
    if (afterIdle > 0) {
      const idleCold: number[] = [];
      const idleRss: number[] = [];
      for (let i = 0; i < afterIdle; i++) {
        clearRunCache();
        await new Promise((resolve) => setTimeout(resolve, 6_000));
        idleRss.push(process.memoryUsage.rss() / 2 ** 20);
        const started = process.hrtime.bigint();
        const result = await gql(query, { u: useCase, d: dataset, seed: 3000 + i });
        idleCold.push(Number(process.hrtime.bigint() - started) / 1e6);
        if (result.node.leaderboard.entries.length !== RUNS + landings) throw new Error('leaderboard after idle incomplete');
      }
      process.stdout.write(`leaderboard cold after 6 s idle: median ${median(idleCold).toFixed(0)} ms (runs ${idleCold.map((x) => x.toFixed(0)).join(', ')}; RSS after each wait ${idleRss.map((x) => x.toFixed(0)).join(', ')} MB)\n`);
    }
    const runScoreRequests = argument('run-scores', 0);
    if (runScoreRequests > 0) {
      const scoresQuery = `query($u: ID!, $seed: Int!) { node(id: $u) { ... on UseCase { runs(first: 200) { nodes { scores(options: { resamples: 1000, seed: $seed }) {
        macroAverage { value ciLow ciHigh } } } } } } }`;
      const times: number[] = [];
      const livez: number[] = [];
      for (let i = 0; i < runScoreRequests; i++) {
        let polling = true;
        const livePoll = slowestAnswer(port, '/livez', () => polling);
        const started = process.hrtime.bigint();
        const result = await gql(scoresQuery, { u: useCase, seed: 4000 + i });
        times.push(Number(process.hrtime.bigint() - started) / 1e6);
        polling = false;
        livez.push(await livePoll);
        if (result.node.runs.nodes.length !== RUNS + landings) throw new Error('run scores incomplete');
      }
      process.stdout.write(
        `every run's scores at once: median ${median(times).toFixed(0)} ms (runs ${times.map((x) => x.toFixed(0)).join(', ')}); ` +
          `slowest /livez ${livez.map((x) => x.toFixed(0)).join(', ')} ms\n`,
      );
    }
    const freshServers = argument('fresh-servers', 0);
    if (freshServers > 0) {
      const fresh: FreshCold[] = [];
      for (let i = 0; i < freshServers; i++) {
        fresh.push(await coldInFreshServer(server, threads, query, { u: useCase, d: dataset, seed: 2000 + i }, RUNS + landings));
      }
      const list = (pick: (f: FreshCold) => number, digits = 0) => fresh.map((f) => pick(f).toFixed(digits)).join(', ');
      process.stdout.write(
        `fresh server process per cold request: median ${median(fresh.map((f) => f.ms)).toFixed(0)} ms (runs ${list((f) => f.ms)}); ` +
          `slowest /livez ${list((f) => f.livez)} ms; server RSS as the request began ${list((f) => f.startRss)} MB, ` +
          `peak during it ${list((f) => f.peakRss)} MB, high-water mark ${list((f) => f.hwm)} MB; ` +
          `after 6 s idle RSS ${list((f) => f.idleRss)} MB and another cold request ${list((f) => f.afterIdleMs)} ms\n`,
      );
    }
    const gridRepeats = argument('grid', 0);
    if (gridRepeats > 0) {
      if (REPORTS !== LEADERBOARD_REPORTS) throw new Error(`--grid needs --reports ${LEADERBOARD_REPORTS}`);
      const { variables, runs } = leaderboardGridInput(RUNS);
      const engine = server.services.scoring.statistics;
      const slice = serverGridSlice(engine, REPORTS, RUNS, 1000);
      const timed = async (compute: () => unknown) => {
        await compute();
        const times: number[] = [];
        for (let i = 0; i < gridRepeats; i++) {
          const started = process.hrtime.bigint();
          await compute();
          times.push(Number(process.hrtime.bigint() - started) / 1e6);
        }
        return times;
      };
      const oneThread = await timed(() => bootstrapGrid({ variables, runs, resamples: 1000, seed: 42 }));
      const onThreads = await timed(() => threadedGrid(engine, variables, runs, { reports: REPORTS, resamples: 1000, seed: 42, slice }));
      const coldMedian = median(cold);
      for (const [label, times] of [
        ['on one thread (bootstrapGrid)', oneThread],
        [`on the server's statistics engine (${threads === 0 ? 'request thread' : 'statistics threads'}, slices of ${slice} runs)`, onThreads],
      ] as const) {
        process.stdout.write(
          `grid alone ${label}: median ${median(times).toFixed(0)} ms (runs ${times.map((x) => x.toFixed(0)).join(', ')}); ` +
            `cold leaderboard / grid ${(coldMedian / median(times)).toFixed(2)}\n`,
        );
      }
    }
  } finally {
    await server.close();
  }
}

/**
 * Waits (up to two minutes) until no autovacuum worker has run for a second, and says how long
 * that took. The imports leave hundreds of megabytes of new predictions, which PostgreSQL's
 * autovacuum then analyses and vacuums on the same cores: a cold request during that measures
 * the maintenance as much as the request (the statistics threads, at a lower priority, lose most).
 */
async function autovacuumSettled(server: BenchServer): Promise<string> {
  const started = process.hrtime.bigint();
  let quietSince: bigint | null = null;
  let seen = 0;
  for (;;) {
    const [{ n }] = (await server.dataSource.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'`)) as { n: number }[];
    const now = process.hrtime.bigint();
    seen = Math.max(seen, n);
    quietSince = n > 0 ? null : (quietSince ?? now);
    const waited = Number(now - started) / 1e9;
    if (quietSince !== null && Number(now - quietSince) >= 1e9) return `autovacuum: quiet after ${waited.toFixed(1)} s (at most ${seen} workers seen)`;
    if (waited > 120) return `autovacuum: still running after ${waited.toFixed(1)} s; measuring anyway`;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Asks `path` every 20 ms while `polling()` holds and returns its slowest answer in ms. A server
 * that went away ends the polling: the request's own failure is what is reported.
 */
async function slowestAnswer(port: number, path: string, polling: () => boolean): Promise<number> {
  let worst = 0;
  while (polling()) {
    const t0 = process.hrtime.bigint();
    if (!(await fetch(`http://127.0.0.1:${port}${path}`).then(() => true, () => false))) break;
    worst = Math.max(worst, Number(process.hrtime.bigint() - t0) / 1e6);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return worst;
}

interface FreshCold {
  ms: number;
  livez: number;
  startRss: number;
  peakRss: number;
  hwm: number;
  /** RSS after 6 s idle, and a cold request after that. */
  idleRss: number;
  afterIdleMs: number;
}

/** /proc/<pid>/status fields in MB (VmRSS, VmHWM). */
function memoryOf(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN) / 1024;
  return { rss: field('VmRSS'), hwm: field('VmHWM') };
}

/** One cold leaderboard from a new server process over `server`'s database. */
async function coldInFreshServer(server: BenchServer, threads: number | undefined, query: string, variables: Record<string, unknown>, entries: number): Promise<FreshCold> {
  const child = spawn(process.execPath, [path.join(__dirname, '../../src/main.js')], {
    env: {
      ...process.env,
      NODE_ENV: 'production',
      DATABASE_URL: server.databaseUrl,
      HOST: '127.0.0.1',
      PORT: '0',
      SECRET_KEY: BENCH_SECRET_KEY,
      ADMIN_API_KEY: server.key,
      SEED_DEMO: 'false',
      WORKER: 'false',
      LOG_LEVEL: 'info',
      ...(threads !== undefined ? { ANALYTICS_THREADS: String(threads) } : {}),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  let sampler: NodeJS.Timeout | undefined;
  let polling = true;
  try {
    const port = await new Promise<number>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`the server exited with ${code}`)));
      const timer = setTimeout(() => reject(new Error('the server did not listen within 60 s')), 60_000);
      createInterface({ input: child.stdout! }).on('line', (line) => {
        if (!line.startsWith('{')) return;
        const entry = JSON.parse(line) as { msg?: string; port?: number };
        if (entry.msg?.startsWith('ReportQL listening') && entry.port) {
          clearTimeout(timer);
          resolve(entry.port);
        }
      });
    });
    const startRss = memoryOf(child.pid!).rss;
    let peakRss = startRss;
    sampler = setInterval(() => {
      if (child.exitCode === null) peakRss = Math.max(peakRss, memoryOf(child.pid!).rss);
    }, 20);
    const livez = slowestAnswer(port, '/livez', () => polling);
    const cold = async (seed: number) => {
      const started = process.hrtime.bigint();
      const response = await fetch(`http://127.0.0.1:${port}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${server.key}` },
        body: JSON.stringify({ query, variables: { ...variables, seed } }),
      });
      const body = (await response.json()) as { data?: any; errors?: unknown[] };
      if (body.errors || body.data.node.leaderboard.entries.length !== entries) throw new Error('leaderboard of the fresh server incomplete');
      return Number(process.hrtime.bigint() - started) / 1e6;
    };
    const ms = await cold(variables.seed as number);
    polling = false;
    clearInterval(sampler);
    const last = memoryOf(child.pid!);
    const result = { ms, livez: await livez, startRss, peakRss: Math.max(peakRss, last.rss), hwm: last.hwm };
    // Then idle for 6 s (the statistics threads give back their memory after 5 s), and one
    // more cold request.
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    const idleRss = memoryOf(child.pid!).rss;
    return { ...result, idleRss, afterIdleMs: await cold((variables.seed as number) + 500) };
  } finally {
    polling = false;
    clearInterval(sampler);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  }
}

void main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
