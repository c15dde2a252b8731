/**
 * `npm start` builds first: the build says what it does and how long it took (a first build on a
 * small machine takes a minute), at info like the server's log, and nothing below LOG_LEVEL=info.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

function build(env: Record<string, string>) {
  const result = spawnSync(process.execPath, ['scripts/timed-build.mjs'], { cwd: ROOT, env: { ...process.env, ...env }, encoding: 'utf8', timeout: 300_000 });
  return { status: result.status, lines: result.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { level: number; msg: string; ms?: number }) };
}

describe('the build before npm start', () => {
  it('logs that it builds and how long it took', () => {
    const { status, lines } = build({ LOG_LEVEL: 'info' });
    expect(status).toBe(0);
    expect(lines.map((l) => l.level)).toEqual([30, 30]);
    expect(lines[0]!.msg).toMatch(/^building: compiling the TypeScript sources/);
    expect(lines[1]).toEqual(expect.objectContaining({ ms: expect.any(Number), msg: expect.stringMatching(/^built in \d+\.\d s$/) }));
  }, 300_000);

  it('is quiet below info', () => {
    const { status, lines } = build({ LOG_LEVEL: 'warn' });
    expect(status).toBe(0);
    expect(lines).toEqual([]);
  }, 300_000);
});
