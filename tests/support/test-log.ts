/**
 * The logs of a test run: every server, worker and executor the tests start writes JSON lines at
 * debug to a file of its process under `tests/.tmp/logs/run-<jest pid>/`, and the global teardown
 * fails the run when a line holds a planted marker or an API key ({@link scanLogs}).
 */
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { createLogger, type Logger } from '../../src/logger';

/** Planted in report texts, annotation values and API keys of the fixtures; never in a log line. */
export const LOG_MARKER = 'RQLMARK';

export const LOGS_ROOT = path.resolve(__dirname, '../.tmp/logs');

/** The folder of this run's logs (set by the global setup; its children inherit it). */
export function runLogDir(): string {
  return process.env.REPORTQL_TEST_LOG_DIR ?? path.join(LOGS_ROOT, `run-${process.pid}`);
}

let shared: Logger | undefined;

/** The logger of this test file's servers and workers: JSON at debug into the run's log folder. */
export function testLogger(): Logger {
  shared ??= createLogger('debug', pino.destination({ dest: path.join(runLogDir(), `${process.pid}.log`), append: true, mkdir: true, sync: true }));
  return shared;
}

/**
 * Keeps what a child process (a server or worker the tests spawn) prints, JSON log or not, in the
 * run's log folder, so that the check at the end covers it too.
 */
export function keepChildOutput(child: { pid?: number | undefined; stdout: NodeJS.ReadableStream | null; stderr: NodeJS.ReadableStream | null }, name: string): void {
  const dir = runLogDir();
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}-${child.pid ?? 'unknown'}.log`);
  const keep = (chunk: Buffer | string) => appendFileSync(file, chunk);
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
}

/** What gives a log line away: the marker, and anything shaped like one of our API key secrets. */
const SECRET_PATTERNS: { name: string; pattern: RegExp }[] = [
  { name: `the marker ${LOG_MARKER} (report text, annotation value or key of a fixture)`, pattern: new RegExp(LOG_MARKER) },
  { name: 'an API key secret (rql_…)', pattern: /rql_[A-Za-z0-9_-]{20,}/ },
];

export interface LogFinding {
  file: string;
  line: number;
  what: string;
}

/** Every log line of a run that holds a marker or a secret, by file and line (never the line itself). */
export function scanLogs(dir: string): { files: number; lines: number; findings: LogFinding[] } {
  const findings: LogFinding[] = [];
  let files = 0;
  let lines = 0;
  if (!existsSync(dir)) return { files, lines, findings };
  for (const name of readdirSync(dir).sort()) {
    const file = path.join(dir, name);
    files++;
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((text, i) => {
        if (text === '') return;
        lines++;
        for (const { name: what, pattern } of SECRET_PATTERNS) if (pattern.test(text)) findings.push({ file, line: i + 1, what });
      });
  }
  return { files, lines, findings };
}

/** Removes the log folders of runs whose jest process is gone. */
export function removeLogsOfDeadRuns(): void {
  if (!existsSync(LOGS_ROOT)) return;
  for (const entry of readdirSync(LOGS_ROOT)) {
    const pid = Number(/^run-(\d+)$/.exec(entry)?.[1]);
    if (!pid) continue;
    try {
      process.kill(pid, 0);
    } catch {
      rmSync(path.join(LOGS_ROOT, entry), { recursive: true, force: true });
    }
  }
}
