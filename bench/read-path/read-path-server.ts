/**
 * The server side of the read-path benchmark, in a process of its own: the real server on a
 * fresh embedded PostgreSQL, seeded with a small grid (runs × reports × 16 variables), a project
 * VIEWER key for the load. Prints one JSON line with the port, the key and the ids, then serves
 * until it is sent SIGTERM.
 *
 *   node dist/bench/read-path/read-path-server.js [--runs 30] [--reports 300] [--rate-limits]
 */
import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createApp } from '../../src/app';
import { openDatabase } from '../../src/db/data-source';
import { startEmbeddedPostgres } from '../../src/db/embedded-postgres';
import { createLogger } from '../../src/logger';
import { argument, lcg } from '../support/bench-server';

async function main(): Promise<void> {
  const runs = argument('runs', 30);
  const reports = argument('reports', 300);
  // High enough never to refuse the benchmark's load: what is measured is their cost.
  const rateLimits = process.argv.includes('--rate-limits')
    ? { perKeyPerMinute: 1_000_000, perAddressPerMinute: 1_000_000, authFailuresPerMinute: 20 }
    : undefined;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'reportql-read-bench-'));
  const database = await startEmbeddedPostgres({ dir, database: 'bench' });
  const dataSource = await openDatabase({ url: database.url });
  const app = await createApp(dataSource, createLogger('warn'), { secretKey: 'bench-secret-key-of-reportql', ...(rateLimits ? { rateLimits } : {}) });
  const port = await app.listen(0, '127.0.0.1');
  const admin = `rql_bench_${Date.now()}_admin_key_xxxxxxxx`;
  await app.services.apiKeys.ensureServerAdmin(admin);
  const gql = async (query: string, variables: Record<string, unknown> = {}): Promise<any> => {
    const response = await fetch(`http://127.0.0.1:${port}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${admin}` },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await response.json()) as { data?: any; errors?: unknown[] };
    if (body.errors) throw new Error(JSON.stringify(body.errors));
    return body.data;
  };

  const random = lcg(20261203);
  const variables: { key: string; type: string; options?: string[] }[] = [
    ...Array.from({ length: 12 }, (_, v) => ({ key: `cat_${v}`, type: 'CATEGORICAL', options: Array.from({ length: 2 + (v % 8) }, (_, c) => `class ${c}`) })),
    ...Array.from({ length: 4 }, (_, v) => ({ key: `num_${v}`, type: 'NUMERIC' })),
  ];
  const truth = Array.from({ length: reports }, () =>
    Object.fromEntries(variables.map((v) => [v.key, v.options ? v.options[Math.floor(random() * v.options.length)]! : Math.floor(random() * 10)])),
  );
  const project = (await gql('mutation { createProject(input: { name: "bench" }) { project { id } } }')).createProject.project.id;
  const viewer = (await gql('mutation($p: ID!) { createApiKey(input: { projectId: $p, name: "load", role: VIEWER }) { secret } }', { p: project })).createApiKey.secret;
  const useCase = (await gql('mutation($i: CreateUseCaseInput!) { createUseCase(input: $i) { useCase { id } } }', { i: { projectId: project, name: 'grid', variables } })).createUseCase.useCase.id;
  const dataset = (await gql('mutation($u: ID!) { createDataset(input: { useCaseId: $u, name: "grid" }) { dataset { id } } }', { u: useCase })).createDataset.dataset.id;
  await gql('mutation($i: ImportReportsInput!) { importReports(input: $i) { inserted } }', {
    i: { datasetId: dataset, format: 'JSONL', content: truth.map((_, i) => JSON.stringify({ id: `R${i}`, text: `report ${i}` })).join('\n') },
  });
  await gql('mutation($i: ImportAnnotationsInput!) { importAnnotations(input: $i) { values } }', {
    i: { datasetId: dataset, annotatorName: 'reference', isReference: true, format: 'JSONL', content: truth.map((row, i) => JSON.stringify({ id: `R${i}`, ...row })).join('\n') },
  });
  let run = '';
  for (let r = 0; r < runs; r++) {
    const skill = 0.45 + 0.5 * random();
    const lines = truth.map((row, i) => {
      const answer: Record<string, unknown> = {};
      for (const v of variables) {
        const u = random();
        if (u < 0.02) continue;
        answer[v.key] = u < skill ? row[v.key] : v.options ? v.options[Math.floor(random() * v.options.length)] : Math.floor(random() * 10);
      }
      return JSON.stringify({ id: `R${i}`, extracted_data: answer });
    });
    const imported = await gql('mutation($i: ImportPredictionsInput!) { importPredictions(input: $i) { run { id } } }', {
      i: { datasetId: dataset, modelName: `model-${Math.floor(r / 6)}`, strategy: ['ZERO_SHOT', 'ONE_SHOT', 'FEW_SHOT', 'CHAIN_OF_THOUGHT', 'SELF_CONSISTENCY', 'PROMPT_GRAPH'][r % 6], format: 'JSONL', layout: 'JSON_COLUMN', content: lines.join('\n') },
    });
    run ||= imported.importPredictions.run.id;
  }
  process.stdout.write(`${JSON.stringify({ port, key: viewer, useCase, dataset, run, nodeEnv: process.env['NODE_ENV'] ?? '', rateLimits: Boolean(rateLimits) })}\n`);

  const stop = async (): Promise<void> => {
    await app.close();
    await dataSource.destroy();
    await database.stop();
    rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
}

void main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
