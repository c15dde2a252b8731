import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { Writable } from 'node:stream';
import { QueryFailedError } from 'typeorm';
import { createLogger, libraryLogger } from '../../src/logger';

const MARKER = 'RQLMARK-unit-logger';

function capture(): { lines: string[]; stream: Writable } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { lines, stream };
}

describe('the JSON logger', () => {
  it('logs any err as name, message, code and stack: never a failed query\'s parameters or a driver\'s detail', () => {
    const { lines, stream } = capture();
    const logger = createLogger('debug', stream);
    const driverError = Object.assign(new Error('duplicate key value violates unique constraint "reports_pkey"'), { code: '23505', detail: `Key (text)=(${MARKER}) already exists.` });
    const failed = new QueryFailedError('INSERT INTO reports (text) VALUES ($1)', [`Patient report ${MARKER}`], driverError);
    logger.error({ err: failed, runId: 'r1' }, 'writing a prediction failed');
    const client = Object.assign(new Error('request failed'), { request: { body: `report ${MARKER}` }, headers: { authorization: `Bearer ${MARKER}` } });
    logger.warn({ err: client }, 'publishing an event failed');
    logger.warn({ error: client }, 'under another key');
    expect(lines).toHaveLength(3);
    for (const line of lines) expect(line).not.toContain(MARKER);
    const first = JSON.parse(lines[0]!) as { err: Record<string, unknown>; runId: string };
    expect(first.err).toMatchObject({ type: 'QueryFailedError', message: 'duplicate key value violates unique constraint "reports_pkey"', code: '23505' });
    expect(first.err.stack).toEqual(expect.stringContaining('QueryFailedError'));
    expect(first.runId).toBe('r1');
  });

  it('redacts API keys and authorization headers', () => {
    const { lines, stream } = capture();
    createLogger('info', stream).info({ apiKey: MARKER, endpoint: { apiKey: MARKER }, headers: { authorization: MARKER } }, 'registered');
    expect(lines[0]).not.toContain(MARKER);
    expect(JSON.parse(lines[0]!)).toMatchObject({ apiKey: '[redacted]', endpoint: { apiKey: '[redacted]' }, headers: { authorization: '[redacted]' } });
  });

  it("takes a library's messages (Apollo Server's) into the JSON log, errors without their data", () => {
    const { lines, stream } = capture();
    const apollo = libraryLogger(createLogger('debug', stream), 'apollo');
    apollo.warn('A GraphQL operation was received during server shutdown.');
    apollo.error(new QueryFailedError('SELECT $1', [`report ${MARKER}`], new Error('connection terminated')));
    expect(lines.map((l) => JSON.parse(l))).toEqual([
      expect.objectContaining({ level: 40, component: 'apollo', msg: 'A GraphQL operation was received during server shutdown.' }),
      expect.objectContaining({ level: 50, component: 'apollo', err: expect.objectContaining({ type: 'QueryFailedError', message: 'connection terminated' }) }),
    ]);
    expect(lines.join('')).not.toContain(MARKER);
  });

  it("routes process warnings into the log, a library's without its message, and prints nothing else", () => {
    const script = `
      const { createLogger, routeProcessWarnings } = require('./src/logger.ts');
      routeProcessWarnings(createLogger('info'));
      process.emitWarning('Unresolved tag: !x at line 1:\\n\\n task: !x ${MARKER}', { type: 'YAMLWarning', code: 'TAG_RESOLVE_FAILED' });
      process.emitWarning('Buffer() is deprecated', { type: 'DeprecationWarning', code: 'DEP0005' });
    `;
    const root = path.resolve(__dirname, '../..');
    const child = spawnSync(process.execPath, ['-r', './tests/support/ts-register.js', '-e', script], { cwd: root, encoding: 'utf8' });
    expect(child.status).toBe(0);
    expect(child.stderr).toBe('');
    const out = child.stdout;
    const lines = out.trim().split('\n');
    expect(out).not.toContain(MARKER);
    expect(lines.map((l) => JSON.parse(l).warning)).toEqual([
      { name: 'YAMLWarning', code: 'TAG_RESOLVE_FAILED' },
      { name: 'DeprecationWarning', code: 'DEP0005', message: 'Buffer() is deprecated' },
    ]);
  });
});
