import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { openDatabase } from '../../src/db/data-source';
import { startEmbeddedPostgres, unreachableByPostgres, type EmbeddedDatabase } from '../../src/db/embedded-postgres';
import { JobQueue } from '../../src/jobs/queue';
import { LOGS_ROOT, removeLogsOfDeadRuns } from './test-log';

declare global {
  var __reportqlEmbedded: EmbeddedDatabase | undefined;
}

/**
 * One PostgreSQL for the whole test run: the embedded one by default, or the server of
 * DATABASE_URL. Migrations are applied once to a template database; every test file clones it.
 */
export default async function globalSetup(): Promise<void> {
  // The tests load src/ directly: the WebAssembly kernel's binary is assembled from its .wat.
  execFileSync(process.execPath, [path.resolve(__dirname, '../../scripts/assemble-wasm.mjs')], { stdio: 'inherit' });
  // This run's logs (test-log.ts): the global teardown checks them for planted markers.
  removeLogsOfDeadRuns();
  const logDir = path.join(LOGS_ROOT, `run-${process.pid}`);
  rmSync(logDir, { recursive: true, force: true });
  mkdirSync(logDir, { recursive: true });
  process.env.REPORTQL_TEST_LOG_DIR = logDir;
  let serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    // One cluster per jest process: parallel jest runs must not share (and stop) a cluster.
    // Test clusters live in the checkout, or, when run as root from a folder the postgres user
    // cannot enter, in the system's temporary folder (they are thrown away after the run).
    const inCheckout = path.resolve(__dirname, '../.tmp');
    const root = (await unreachableByPostgres(inCheckout)) ? path.join(os.tmpdir(), 'reportql-tests') : inCheckout;
    removeClustersOfDeadRuns(root);
    const embedded = await startEmbeddedPostgres({ dir: path.join(root, `embedded-${process.pid}`), database: 'postgres' });
    globalThis.__reportqlEmbedded = embedded;
    serverUrl = embedded.url;
  }
  const template = `reportql_test_template_${process.pid}`;
  const admin = new Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    const stale = (await admin.query("SELECT datname FROM pg_database WHERE datname LIKE 'reportql_test_%'")).rows as { datname: string }[];
    for (const { datname } of stale) {
      await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`).catch(() => undefined);
    }
    await admin.query(`CREATE DATABASE "${template}"`);
  } finally {
    await admin.end();
  }
  const dataSource = await openDatabase({ url: withDatabase(serverUrl, template) });
  // The queue's schema too, so that every cloned database has it ready.
  const queue = new JobQueue(dataSource);
  await queue.start();
  await queue.stop();
  await dataSource.destroy();
  process.env.REPORTQL_TEST_SERVER_URL = serverUrl;
  process.env.REPORTQL_TEST_TEMPLATE = template;
}

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

function removeClustersOfDeadRuns(root: string): void {
  if (!existsSync(root)) return;
  for (const entry of readdirSync(root)) {
    const pid = Number(/^embedded-(\d+)$/.exec(entry)?.[1]);
    if (!pid) continue;
    try {
      process.kill(pid, 0);
    } catch {
      rmSync(path.join(root, entry), { recursive: true, force: true });
    }
  }
}
