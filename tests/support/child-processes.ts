/**
 * Server and worker processes of the tests, started from the sources as `npm start` would, with
 * what they print kept (for a failing test's message and the log scan of the teardown).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { TEST_SECRET_KEY } from './test-app';
import { keepChildOutput } from './test-log';

const ROOT = path.resolve(__dirname, '../..');

export interface Child {
  process: ChildProcess;
  output: () => string;
}

export function startProcess(entry: 'worker' | 'main', env: Record<string, string>): Child {
  let output = '';
  const child = spawn(process.execPath, ['-r', './tests/support/ts-register.js', `src/${entry}.ts`], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', SECRET_KEY: TEST_SECRET_KEY, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  keepChildOutput(child, entry);
  return { process: child, output: () => output };
}

/** SIGTERM, then SIGKILL when the process has not exited within 10 s. */
export async function stopProcess(child: Child | undefined): Promise<void> {
  if (!child || child.process.exitCode !== null || child.process.signalCode !== null) return;
  let timer: NodeJS.Timeout | undefined;
  const exited = new Promise<void>((resolve) => {
    child.process.once('exit', () => resolve());
    timer = setTimeout(() => {
      child.process.kill('SIGKILL');
      resolve();
    }, 10_000);
  });
  child.process.kill('SIGTERM');
  await exited;
  clearTimeout(timer);
}

export async function killProcess(child: Child): Promise<void> {
  if (child.process.exitCode !== null || child.process.signalCode !== null) return;
  const exited = new Promise((resolve) => child.process.once('exit', resolve));
  child.process.kill('SIGKILL');
  await exited;
}
