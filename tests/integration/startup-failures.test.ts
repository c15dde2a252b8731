/**
 * A start that cannot go on says which setting to change, in one line without a Node stack and
 * without the database password; a first start says what it does and how long each step took.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { createLogger } from '../../src/logger';
import { demoSeedDir, seedDemo } from '../../src/seeds/demo-seed';
import { startTestApp, type TestApp } from '../support/test-app';

const ROOT = path.resolve(__dirname, '../..');
const PASSWORD = 'Sup3r-s3cret-pw';

/** Runs src/main.ts until it exits, or until its output matches `until` (then stops it). */
function runServer(env: Record<string, string>, until?: RegExp): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    let stdout = '';
    let stderr = '';
    const child = spawn(process.execPath, ['-r', './tests/support/ts-register.js', 'src/main.ts'], {
      cwd: ROOT,
      env: { ...process.env, LOG_LEVEL: 'info', DATABASE_URL: '', ADMIN_API_KEY: '', PORT: '0', SEED_DEMO: 'false', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const check = () => {
      if (until && until.test(stdout)) child.kill('SIGTERM');
    };
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      check();
    });
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** One line, no stack frames. */
function expectOneClearLine(stderr: string): void {
  const lines = stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(stderr).not.toMatch(/^\s+at /m);
  expect(stderr).toMatch(/^ReportQL cannot start: /);
}

describe('a start that fails', () => {
  const scratch = mkdtempSync(path.join(tmpdir(), 'reportql-startup-'));
  // As root the embedded PostgreSQL runs as the postgres user, which must reach its folders.
  chmodSync(scratch, 0o755);
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('names DATA_DIR when it cannot create the data folder there', async () => {
    const file = path.join(scratch, 'a-file');
    writeFileSync(file, '');
    const result = await runServer({ DATA_DIR: path.join(file, 'data') });
    expect(result.code).toBe(1);
    expectOneClearLine(result.stderr);
    expect(result.stderr).toContain('DATA_DIR');
    expect(result.stderr).toContain(path.join(file, 'data'));
  }, 120_000);

  it('names TMPDIR when the temporary folder cannot be written', async () => {
    const result = await runServer({ DATA_DIR: path.join(scratch, 'fresh'), TMPDIR: path.join(scratch, 'no-such-folder') });
    expect(result.code).toBe(1);
    expectOneClearLine(result.stderr);
    expect(result.stderr).toContain('TMPDIR');
    expect(result.stderr).toContain(path.join(scratch, 'no-such-folder'));
  }, 120_000);

  it('names DATABASE_URL with its host and port, never its password, when nothing answers there', async () => {
    const port = await new Promise<number>((resolve) => {
      const server = createServer();
      server.listen(0, '127.0.0.1', () => {
        const address = server.address() as { port: number };
        server.close(() => resolve(address.port));
      });
    });
    const result = await runServer({ DATA_DIR: path.join(scratch, 'external'), DATABASE_URL: `postgresql://reportql:${PASSWORD}@127.0.0.1:${port}/reportql` });
    expect(result.code).toBe(1);
    expectOneClearLine(result.stderr);
    expect(result.stderr).toContain('DATABASE_URL');
    expect(result.stderr).toContain(`127.0.0.1:${port}`);
    expect(result.stderr + result.stdout).not.toContain(PASSWORD);
  }, 120_000);

  it('names the user and password of DATABASE_URL as what to correct when PostgreSQL refuses them, without the password', async () => {
    const t: TestApp = await startTestApp();
    try {
      const url = new URL(t.databaseUrl);
      url.password = PASSWORD;
      const result = await runServer({ DATA_DIR: path.join(scratch, 'refused'), DATABASE_URL: url.href });
      expect(result.code).toBe(1);
      expectOneClearLine(result.stderr);
      expect(result.stderr).toContain('refused the user and password of DATABASE_URL');
      expect(result.stderr).toContain(`${url.hostname}:${url.port}`);
      expect(result.stderr + result.stdout).not.toContain(PASSWORD);
    } finally {
      await t.close();
    }
  }, 120_000);

  it('names the database of DATABASE_URL when it does not exist there', async () => {
    const t: TestApp = await startTestApp();
    try {
      const url = new URL(t.databaseUrl);
      url.pathname = '/no_such_database';
      const result = await runServer({ DATA_DIR: path.join(scratch, 'missing'), DATABASE_URL: url.href });
      expect(result.code).toBe(1);
      expectOneClearLine(result.stderr);
      expect(result.stderr).toContain('the database named in DATABASE_URL does not exist');
      expect(result.stderr + result.stdout).not.toContain(decodeURIComponent(url.password));
    } finally {
      await t.close();
    }
  }, 120_000);

  it('names PORT when the port is busy', async () => {
    const busy = createServer();
    const port = await new Promise<number>((resolve) => busy.listen(0, '127.0.0.1', () => resolve((busy.address() as { port: number }).port)));
    try {
      const result = await runServer({ DATA_DIR: path.join(scratch, 'busy'), PORT: String(port) });
      expect(result.code).toBe(1);
      expectOneClearLine(result.stderr);
      expect(result.stderr).toContain(`PORT=${port + 1}`);
    } finally {
      await new Promise((resolve) => busy.close(resolve));
    }
  }, 120_000);
});

describe('a first start', () => {
  const scratch = mkdtempSync(path.join(tmpdir(), 'reportql-first-steps-'));
  chmodSync(scratch, 0o755);
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('logs each step at info with how long it took: the cluster, PostgreSQL, the migrations', async () => {
    const result = await runServer({ DATA_DIR: path.join(scratch, 'data') }, /ReportQL listening/);
    const lines = result.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { level: number; msg: string; ms?: number });
    const messages = lines.filter((l) => l.level === 30).map((l) => l.msg);
    const order = ['creating the database cluster', 'the embedded PostgreSQL is up in', 'connecting to PostgreSQL and applying the migrations', 'database ready and migrated in', 'ReportQL listening'];
    const positions = order.map((start) => messages.findIndex((m) => m.startsWith(start)));
    expect(positions.every((p) => p >= 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    for (const timed of lines.filter((l) => / in \d+\.\d s$/.test(l.msg))) expect(timed.ms).toEqual(expect.any(Number));
  }, 120_000);

  it('counts the demo use cases as it loads them (n of m)', async () => {
    const seedDir = mkdtempSync(path.join(scratch, 'seed-'));
    mkdirSync(seedDir, { recursive: true });
    for (const slug of ['paper-sarcoma-cs']) symlinkSync(path.join(demoSeedDir(), slug), path.join(seedDir, slug));
    symlinkSync(path.join(demoSeedDir(), 'models.json'), path.join(seedDir, 'models.json'));
    writeFileSync(path.join(seedDir, 'index.json'), JSON.stringify(['paper-sarcoma-cs']));
    const logged: { msg: string; loaded?: number; of?: number }[] = [];
    const logger = createLogger('info', { write: (line: string) => void logged.push(JSON.parse(line) as { msg: string }) } as pino.DestinationStream);
    const t = await startTestApp();
    try {
      await seedDemo(t.dataSource, t.services, logger, seedDir);
    } finally {
      await t.close();
    }
    expect(logged.filter((l) => l.msg.startsWith('demo use case'))).toEqual([expect.objectContaining({ msg: 'demo use case 1 of 1 loaded', loaded: 1, of: 1 })]);
  }, 120_000);
});
