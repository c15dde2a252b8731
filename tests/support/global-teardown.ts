import { rmSync } from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { scanLogs } from './test-log';

export default async function globalTeardown(): Promise<void> {
  try {
    await stopDatabase();
  } finally {
    checkLogs();
  }
}

/**
 * Fails the run when a log line of any test holds a marker planted in report texts, annotation
 * values and keys, or an API key: names the file and line, never prints the line.
 */
function checkLogs(): void {
  const dir = process.env.REPORTQL_TEST_LOG_DIR;
  if (!dir) return;
  const { files, lines, findings } = scanLogs(dir);
  if (findings.length === 0) {
    if (lines > 0) process.stdout.write(`Log check: ${lines} log lines in ${files} files, none with a planted marker or an API key.\n`);
    if (!process.env.REPORTQL_KEEP_TEST_LOGS) rmSync(dir, { recursive: true, force: true });
    return;
  }
  const shown = findings.slice(0, 50).map((f) => `  ${path.relative(process.cwd(), f.file)}:${f.line}: ${f.what}`);
  const message = [`Log check: ${findings.length} of ${lines} log lines (${files} files) hold what no log may hold:`, ...shown, `The logs are kept in ${dir}.`].join('\n');
  throw new Error(message);
}

async function stopDatabase(): Promise<void> {
  const serverUrl = process.env.REPORTQL_TEST_SERVER_URL;
  const template = process.env.REPORTQL_TEST_TEMPLATE;
  if (serverUrl && template) {
    const admin = new Client({ connectionString: serverUrl });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${template}" WITH (FORCE)`).catch(() => undefined);
    await admin.end();
  }
  if (globalThis.__reportqlEmbedded) {
    await globalThis.__reportqlEmbedded.stop();
    rmSync(path.dirname(globalThis.__reportqlEmbedded.clusterDirectory), { recursive: true, force: true });
  }
}
