/**
 * The server side of the flood benchmark, in a process of its own: the real server on a fresh
 * embedded PostgreSQL with the connection and WebSocket bounds of its environment (MAX_CONNECTIONS,
 * MAX_REQUESTS_IN_FLIGHT, MAX_REQUESTS_PER_CONNECTION, WS_OPERATIONS_PER_CONNECTION,
 * WS_OPERATIONS_PER_KEY; 0 switches one off), a run that is still running (subscriptions to it
 * stay open) and a page of its predictions to read. Prints one JSON line with the port, the key,
 * the run and its own pid, then serves until it is sent SIGTERM. On SIGUSR2 it prints a JSON
 * line with the event loop's delay since the last one (10 ms resolution).
 *
 *   node dist/bench/floods/flood-server.js [--reports 200]
 */
import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import path from 'node:path';
import { createApp } from '../../src/app';
import { loadConfig } from '../../src/config';
import { openDatabase } from '../../src/db/data-source';
import { startEmbeddedPostgres } from '../../src/db/embedded-postgres';
import { createLogger } from '../../src/logger';
import { argument, graphqlClient } from '../support/bench-server';

async function main(): Promise<void> {
  const reports = argument('reports', 200);
  const config = loadConfig(process.env, process.cwd());
  const dir = mkdtempSync(path.join(os.tmpdir(), 'reportql-flood-bench-'));
  const database = await startEmbeddedPostgres({ dir, database: 'bench' });
  const dataSource = await openDatabase({ url: database.url });
  const app = await createApp(dataSource, createLogger('warn'), {
    secretKey: 'bench-secret-key-of-reportql',
    connectionLimits: config.connectionLimits,
    webSocketLimits: config.webSocketLimits,
  });
  const port = await app.listen(0, '127.0.0.1');
  const key = `rql_bench_${Date.now()}_admin_key_xxxxxxxx`;
  await app.services.apiKeys.ensureServerAdmin(key);
  const gql = graphqlClient(port, key);

  const variables = Array.from({ length: 8 }, (_, v) => ({ key: `v${v}`, type: 'CATEGORICAL', options: ['a', 'b', 'c'] }));
  const project = (await gql('mutation { createProject(input: { name: "floods" }) { project { id } } }')).createProject.project.id;
  const useCase = (await gql('mutation($i: CreateUseCaseInput!) { createUseCase(input: $i) { useCase { id } } }', { i: { projectId: project, name: 'floods', variables } })).createUseCase.useCase.id;
  const dataset = (await gql('mutation($u: ID!) { createDataset(input: { useCaseId: $u, name: "floods" }) { dataset { id } } }', { u: useCase })).createDataset.dataset.id;
  await gql('mutation($i: ImportReportsInput!) { importReports(input: $i) { inserted } }', {
    i: { datasetId: dataset, format: 'JSONL', content: Array.from({ length: reports }, (_, i) => JSON.stringify({ id: `R${i}`, text: `report ${i}` })).join('\n') },
  });
  const run = (
    await gql('mutation($i: ImportPredictionsInput!) { importPredictions(input: $i) { run { id } } }', {
      i: {
        datasetId: dataset,
        modelName: 'flood-model',
        format: 'JSONL',
        layout: 'JSON_COLUMN',
        content: Array.from({ length: reports }, (_, i) => JSON.stringify({ id: `R${i}`, extracted_data: Object.fromEntries(variables.map((v, k) => [v.key, v.options[(i + k) % 3]])) })).join('\n'),
      },
    })
  ).importPredictions.run.id as string;
  // A run still running keeps its subscriptions open, as during an executed run.
  const decoded = Buffer.from(run, 'base64url').toString('utf8');
  const runRow = decoded.slice(decoded.indexOf(':') + 1);
  await dataSource.query(`UPDATE runs SET status = 'RUNNING', finished_at = NULL WHERE id = $1`, [runRow]);

  process.stdout.write(`${JSON.stringify({ port, key, run, pid: process.pid, connectionLimits: config.connectionLimits, webSocketLimits: config.webSocketLimits })}\n`);
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  process.on('SIGUSR2', () => {
    const ms = (ns: number) => Math.round(ns / 1e5) / 10;
    process.stdout.write(`${JSON.stringify({ eventLoopDelay: { p50Ms: ms(loop.percentile(50)), p99Ms: ms(loop.percentile(99)), maxMs: ms(loop.max) } })}\n`);
    loop.reset();
  });
  const stop = async () => {
    await app.close().catch(() => undefined);
    await dataSource.destroy().catch(() => undefined);
    await database.stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
