import 'reflect-metadata';
import type { DataSource } from 'typeorm';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createApp } from '../../src/app';
import { openDatabase } from '../../src/db/data-source';
import { startEmbeddedPostgres } from '../../src/db/embedded-postgres';
import { createLogger } from '../../src/logger';
import type { Services } from '../../src/services';

/** A seeded uniform generator on [0, 1): the same workload on every run of a benchmark. */
export function lcg(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

export const BENCH_SECRET_KEY = 'bench-secret-key-of-reportql';

export interface BenchServer {
  port: number;
  /** The embedded database's URL (for worker processes) and the server's data source. */
  databaseUrl: string;
  dataSource: DataSource;
  /** The server's services (to inspect or reset in-process caches between measurements). */
  services: Services;
  /** The server admin key. */
  key: string;
  /** POST /graphql with the server admin key; throws on GraphQL errors. */
  gql(query: string, variables?: Record<string, unknown>): Promise<any>;
  close(): Promise<void>;
}

/** The real server on a fresh embedded PostgreSQL in a temporary folder, for benchmarks. */
export async function startBenchServer(options: { secretKey?: string; analyticsThreads?: number } = {}): Promise<BenchServer> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'reportql-bench-'));
  const database = await startEmbeddedPostgres({ dir, database: 'bench' });
  const dataSource = await openDatabase({ url: database.url });
  const app = await createApp(dataSource, createLogger('warn'), {
    secretKey: options.secretKey ?? BENCH_SECRET_KEY,
    ...(options.analyticsThreads !== undefined ? { analyticsThreads: options.analyticsThreads } : {}),
  });
  const port = await app.listen(0, '127.0.0.1');
  const key = `rql_bench_${Date.now()}_admin_key_xxxxxxxx`;
  await app.services.apiKeys.ensureServerAdmin(key);
  return {
    port,
    databaseUrl: database.url,
    dataSource,
    services: app.services,
    key,
    gql: graphqlClient(port, key),
    async close() {
      await app.close();
      await dataSource.destroy();
      await database.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Asks the server on `port` over HTTP with `key`; an answer with errors throws them. */
export function graphqlClient(port: number, key: string): BenchServer['gql'] {
  return async (query, variables = {}) => {
    const response = await fetch(`http://127.0.0.1:${port}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await response.json()) as { data?: any; errors?: unknown[] };
    if (body.errors) throw new Error(JSON.stringify(body.errors));
    return body.data;
  };
}

export function argument(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}
