#!/usr/bin/env node
/**
 * Checks examples/typed-client as its README uses it: installs it from its lockfile (no engine
 * warning allowed), generates the types from schema/schema.graphql, compiles, then runs it
 * against a server started from this checkout's dist/ (embedded PostgreSQL with the demo), with
 * the admin key (a leaderboard must be printed) and with a wrong key (a caught
 * UNAUTHENTICATED error and status 1). Exits non-zero when a step fails.
 *
 *   npm run build && node scripts/check-typed-client.mjs
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const example = path.join(repo, 'examples', 'typed-client');
const started = Date.now();
const log = (m) => process.stdout.write(`[typed-client ${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s] ${m}\n`);
class CheckError extends Error {}
const fail = (m) => {
  throw new CheckError(m);
};

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...options });
  if (result.error) fail(`${command} ${args.join(' ')}: ${result.error.message}`);
  return result;
}
function runOk(command, args, options = {}) {
  const result = run(command, args, options);
  if (result.status !== 0) fail(`${command} ${args.join(' ')} exited with ${result.status}:\n${result.stdout}${result.stderr}`);
  return result;
}

const freePort = () =>
  new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

async function main() {
  if (!fs.existsSync(path.join(repo, 'dist', 'src', 'main.js'))) fail('build the server first: npm run build');

  const install = runOk('npm', ['ci', '--no-audit', '--no-fund', '--prefer-offline'], { cwd: example });
  if (/EBADENGINE/.test(install.stderr)) fail(`npm ci warned about engines:\n${install.stderr}`);
  log(`npm ci in examples/typed-client: ${install.stdout.trim().split('\n').pop()}, no engine warning`);
  const generate = runOk('npm', ['run', '--silent', 'generate'], { cwd: example });
  log(generate.stdout.trim());
  runOk('npm', ['run', '--silent', 'build'], { cwd: example });
  log('compiled against the generated types (tsc)');

  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'reportql-typed-client-'));
  // As root the embedded PostgreSQL runs as `postgres`, which must be able to enter DATA_DIR.
  fs.chmodSync(tmp, 0o755);
  const port = await freePort();
  const adminKey = `rq_example_${randomBytes(24).toString('base64url')}`;
  const serverLog = path.join(tmp, 'server.log');
  const out = fs.openSync(serverLog, 'a');
  const server = spawn(process.execPath, ['dist/src/main.js'], {
    cwd: repo,
    env: { PATH: process.env.PATH, HOST: '127.0.0.1', PORT: String(port), DATA_DIR: path.join(tmp, 'data'), ADMIN_API_KEY: adminKey, SEED_DEMO: 'true', WORKER: 'false', LOG_LEVEL: 'warn' },
    stdio: ['ignore', out, out],
  });
  fs.closeSync(out);
  let exit = null;
  const exited = new Promise((resolve) => server.on('exit', (code, signal) => resolve((exit = { code, signal }))));
  try {
    const base = `http://127.0.0.1:${port}`;
    for (let ready = false; !ready; ) {
      if (exit) fail(`the server exited (${JSON.stringify(exit)}):\n${fs.readFileSync(serverLog, 'utf8')}`);
      if (Date.now() - started > 240_000) fail('the server was not ready within 240 s');
      ready = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(2000) }).then((r) => r.ok, () => false);
      if (!ready) await new Promise((r) => setTimeout(r, 500));
    }
    log(`server ready on port ${port} (embedded PostgreSQL, demo loaded)`);

    const env = { PATH: process.env.PATH, REPORTQL_URL: `${base}/graphql` };
    const good = run(process.execPath, ['dist/main.js'], { cwd: example, env: { ...env, REPORTQL_KEY: adminKey } });
    if (good.status !== 0 || good.stderr !== '') fail(`the example failed (${good.status}):\n${good.stdout}${good.stderr}`);
    const entries = good.stdout.split('\n').filter((line) => /^\s+\d+\s+\[\d+–\d+\]/.test(line));
    if (entries.length < 2) fail(`no leaderboard printed:\n${good.stdout}`);
    log(`npm start with the admin key: exit 0, a leaderboard of ${entries.length} models:\n${good.stdout.trimEnd()}`);

    const bad = run(process.execPath, ['dist/main.js'], { cwd: example, env: { ...env, REPORTQL_KEY: 'rql_not_a_key_of_this_server_000000' } });
    if (bad.status !== 1 || !/^ReportQL UNAUTHENTICATED: /.test(bad.stderr) || bad.stdout !== '') fail(`a wrong key did not end in a caught UNAUTHENTICATED error:\n${bad.stdout}${bad.stderr}`);
    log(`npm start with a wrong key: exit 1, ${bad.stderr.trim()}`);
  } finally {
    if (!exit) server.kill('SIGTERM');
    const timer = setTimeout(() => server.kill('SIGKILL'), 20_000);
    const { code } = await exited;
    clearTimeout(timer);
    fs.rmSync(tmp, { recursive: true, force: true });
    if (code !== 0) log(`the server ended with status ${code}`);
  }
  log('passed');
}

main().then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(`[typed-client] FAILED: ${error instanceof CheckError ? error.message : (error?.stack ?? String(error))}\n`);
    process.exit(1);
  },
);
