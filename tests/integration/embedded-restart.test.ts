/**
 * The embedded PostgreSQL stopped (fast or immediate) and started again: same cluster, same
 * port, so the URL that servers and workers hold stays valid, and committed data survives.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import { Client } from 'pg';

const ROOT = path.resolve(__dirname, '../..');

async function query(url: string, sql: string): Promise<unknown[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

describe('embedded PostgreSQL restart', () => {
  let dir: string;
  let child: ChildProcess;
  let lines: Interface;
  let url: string;
  const nextLine = () => new Promise<string>((resolve) => lines.once('line', resolve));
  const command = async (line: string) => {
    const answer = nextLine();
    child.stdin!.write(`${line}\n`);
    return answer;
  };

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'reportql-restart-'));
    child = spawn(process.execPath, ['-r', './tests/support/ts-register.js', 'tests/support/embedded-db-control.ts', dir], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
    lines = createInterface({ input: child.stdout! });
    url = (JSON.parse(await nextLine()) as { url: string }).url;
  }, 60_000);
  afterAll(async () => {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.stdin!.write('exit\n');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  });

  it.each(['immediate', 'fast'])('stop %s, then start: the same data on the same URL', async (mode) => {
    await query(url, `CREATE TABLE IF NOT EXISTS kept (mode text); INSERT INTO kept VALUES ('${mode}')`);
    const held = new Client({ connectionString: url });
    const broken = new Promise<Error>((resolve) => held.on('error', resolve));
    await held.connect();

    expect(await command(`stop ${mode}`)).toBe('ok');
    // A connection held across the stop is broken, and new ones are refused.
    expect(await broken).toBeInstanceOf(Error);
    await expect(query(url, 'SELECT 1')).rejects.toThrow(/ECONNREFUSED/);
    expect(await command(`stop ${mode}`)).toBe('ok'); // a stopped server stays stopped

    expect(await command('start')).toBe('ok');
    const rows = (await query(url, 'SELECT mode FROM kept')) as { mode: string }[];
    expect(rows.map((r) => r.mode)).toContain(mode);
    await held.end().catch(() => undefined);
  }, 60_000);
});
