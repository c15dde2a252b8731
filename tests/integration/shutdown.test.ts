import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

describe('SIGTERM', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'reportql-shutdown-'));
  // As root the embedded PostgreSQL runs as `postgres`, which must be able to enter DATA_DIR.
  chmodSync(dir, 0o755);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  // NODE_ENV=production as in the container image: Apollo's own signal handler would race the
  // server's stop, and the process then ends only by its 15 s fallback, with status 1.
  it('ends an API-only server with NODE_ENV=production with status 0 after it stopped', async () => {
    const child = spawn(process.execPath, ['-r', './tests/support/ts-register.js', 'src/main.ts'], {
      cwd: ROOT,
      env: {
        ...process.env,
        NODE_ENV: 'production',
        LOG_LEVEL: 'info',
        PORT: '0',
        DATABASE_URL: '',
        DATA_DIR: path.join(dir, 'data'),
        ADMIN_API_KEY: 'shutdown-test-admin-key-0123456789',
        SEED_DEMO: 'false',
        // An API-only server, as docker-compose.yml runs it: its stop reaches Apollo at once.
        WORKER: 'false',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    const killer = setTimeout(() => child.kill('SIGKILL'), 55_000);
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    await new Promise<void>((resolve) => {
      child.stdout.on('data', (d: Buffer) => {
        stdout += d.toString();
        if (stdout.includes('ReportQL listening')) resolve();
      });
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('exit', () => resolve());
    });
    expect({ stdout, stderr }).toEqual({ stdout: expect.stringContaining('ReportQL listening'), stderr: '' });
    child.kill('SIGTERM');
    const code = await exited;
    clearTimeout(killer);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toContain('shutting down');
  }, 60_000);
});
