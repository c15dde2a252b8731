import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestApp, type TestApp } from '../support/test-app';

const ROOT = path.resolve(__dirname, '../..');

function occupy(host: string): Promise<{ server: Server; port: number }> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      if (typeof address === 'object' && address) resolve({ server, port: address.port });
      else reject(new Error('no port'));
    });
  });
}

/** Runs src/main.ts to its exit; its output and status. */
function runServer(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    let stdout = '';
    let stderr = '';
    const child = spawn(process.execPath, ['-r', './tests/support/ts-register.js', 'src/main.ts'], {
      cwd: ROOT,
      env: { ...process.env, LOG_LEVEL: 'info', DATABASE_URL: '', ADMIN_API_KEY: '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 50_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('a first start on a busy port', () => {
  const dataDir = path.join(mkdtempSync(path.join(tmpdir(), 'reportql-first-start-')), 'data');
  afterAll(() => rmSync(path.dirname(dataDir), { recursive: true, force: true }));

  it('stops with a message and a non-zero status before creating the database or a key', async () => {
    const busy = await occupy('127.0.0.1');
    try {
      const result = await runServer({ PORT: String(busy.port), DATA_DIR: dataDir });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`port ${busy.port}`);
      expect(result.stderr).toContain('already in use');
      expect(result.stdout).not.toMatch(/rql_/);
      expect(existsSync(dataDir)).toBe(false);
    } finally {
      await new Promise((resolve) => busy.server.close(resolve));
    }
  });
});

describe('HOST', () => {
  it('is the address the server binds: one that is not this machine\'s stops the start with a message', async () => {
    const dataDir = path.join(mkdtempSync(path.join(tmpdir(), 'reportql-host-')), 'data');
    try {
      // 192.0.2.1 (TEST-NET-1) is never assigned to a machine; binding it fails locally, nothing is sent.
      const result = await runServer({ PORT: '0', HOST: '192.0.2.1', DATA_DIR: dataDir });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('192.0.2.1 is not an address of this machine');
      expect(existsSync(dataDir)).toBe(false);
    } finally {
      rmSync(path.dirname(dataDir), { recursive: true, force: true });
    }
  });
});

describe('paths other than the API', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('redirects / to GraphiQL', async () => {
    const response = await fetch(`http://127.0.0.1:${t.port}/`, { redirect: 'manual' });
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('/graphql');
  });

  it('answers unknown paths with a JSON NOT_FOUND error', async () => {
    for (const [method, route] of [['GET', '/nothing-here'], ['POST', '/api/v1/graphql'], ['GET', '/graphql/extra']] as const) {
      const response = await fetch(`http://127.0.0.1:${t.port}${route}`, { method, headers: { accept: 'text/html' } });
      expect({ route, status: response.status }).toEqual({ route, status: 404 });
      expect(response.headers.get('content-type')).toContain('application/json');
      const body = (await response.json()) as { errors: { message: string; extensions: { code: string } }[] };
      expect(body.errors[0]!.extensions.code).toBe('NOT_FOUND');
      expect(body.errors[0]!.message).not.toContain(route);
    }
  });
});
