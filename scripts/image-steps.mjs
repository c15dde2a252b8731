#!/usr/bin/env node
/**
 * The container image's steps without a Docker engine: reads the Dockerfile and performs its
 * stages in a clean temporary folder, then starts the image's start command (and a worker,
 * as docker-compose.yml does) as an unprivileged user against a PostgreSQL, waits until the
 * image's HEALTHCHECK passes, runs a GraphQL query with the admin key and stops everything.
 *
 *   node scripts/image-steps.mjs                 # embedded PostgreSQL started for the check
 *   DATABASE_URL=postgresql://u:p@host:5432/postgres node scripts/image-steps.mjs
 *       # a PostgreSQL of yours: the user needs CREATEDB; a database is created and dropped
 *   flags: --keep (leave the folder), --reuse-dist (take dist/ from this checkout instead of
 *          building it in the build stage), --ready-timeout <seconds> (default 240)
 *
 * As root, the Dockerfile's build steps (npm ci, the build) run as root, as `docker build`
 * runs them, and the processes run as the user `reportql-image` (created when missing), which
 * can read the application but write only DATA_DIR, like the image's USER. Otherwise
 * everything runs as the current user. Exits non-zero when a step fails.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const flag = (name) => argv.includes(name);
const option = (name, fallback) => {
  const i = argv.indexOf(name);
  return i >= 0 && argv[i + 1] !== undefined ? argv[i + 1] : fallback;
};
const keep = flag('--keep');
const reuseDist = flag('--reuse-dist');
const readyTimeoutMs = Number(option('--ready-timeout', '240')) * 1000;
const IMAGE_USER = 'reportql-image';

const started = Date.now();
const timings = [];
const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;
const log = (message) => process.stdout.write(`[image-steps ${seconds(Date.now() - started).padStart(7)}] ${message}\n`);
class StepError extends Error {}
const fail = (message) => {
  throw new StepError(message);
};
async function step(name, fn) {
  const t0 = Date.now();
  log(`${name} …`);
  const result = await fn();
  timings.push([name, Date.now() - t0]);
  log(`${name}: done in ${seconds(Date.now() - t0)}`);
  return result;
}

// ---------------------------------------------------------------------------------------------
// The Dockerfile, read as far as the steps below need: stages, WORKDIR, COPY, RUN, ENV, USER,
// HEALTHCHECK and CMD (exec form). A RUN step this script does not know stops it, so that the
// Dockerfile and this script cannot drift apart silently.

function parseDockerfile(text) {
  const lines = [];
  let current = '';
  for (const raw of text.split('\n')) {
    const line = raw.trimEnd();
    if (current === '' && (line.trim().startsWith('#') || line.trim() === '')) continue;
    if (line.endsWith('\\')) {
      current += `${line.slice(0, -1).trim()} `;
      continue;
    }
    current += line.trim();
    lines.push(current);
    current = '';
  }
  const args = {};
  const stages = [];
  let stage;
  for (const line of lines) {
    const [instruction, ...rest] = line.split(/\s+/);
    const body = line.slice(instruction.length).trim();
    switch (instruction.toUpperCase()) {
      case 'ARG': {
        const [name, value] = body.split('=');
        if (!stage) args[name] = value;
        break;
      }
      case 'FROM': {
        const match = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(body) ?? fail(`FROM not understood: ${line}`);
        const image = match[1].replace(/\$\{(\w+)\}/g, (_, n) => args[n] ?? '');
        stage = { name: match[2] ?? `stage${stages.length}`, image, workdir: '/', steps: [], env: {}, user: 'root', cmd: null, healthcheck: null };
        stages.push(stage);
        break;
      }
      case 'WORKDIR':
        stage.workdir = body;
        break;
      case 'ENV':
        for (const pair of body.split(/\s+/)) {
          const eq = pair.indexOf('=');
          if (eq < 0) fail(`ENV without "=" is not supported: ${line}`);
          stage.env[pair.slice(0, eq)] = pair.slice(eq + 1);
        }
        break;
      case 'COPY': {
        const from = rest[0]?.startsWith('--from=') ? rest.shift().slice('--from='.length) : null;
        if (rest.some((r) => r.startsWith('--'))) fail(`COPY option not supported: ${line}`);
        stage.steps.push({ kind: 'COPY', from, sources: rest.slice(0, -1), dest: rest.at(-1), line });
        break;
      }
      case 'RUN':
        stage.steps.push({ kind: 'RUN', command: body, line, user: stage.user });
        break;
      case 'USER':
        stage.user = body;
        break;
      case 'CMD':
        stage.cmd = JSON.parse(body);
        break;
      case 'HEALTHCHECK': {
        const match = /\bCMD\s+(\[.*\])\s*$/.exec(body) ?? fail(`HEALTHCHECK must use CMD in exec form: ${line}`);
        stage.healthcheck = JSON.parse(match[1]);
        break;
      }
      case 'EXPOSE':
      case 'VOLUME':
      case 'STOPSIGNAL':
      case 'LABEL':
        break;
      default:
        fail(`Dockerfile instruction not supported by this script: ${line}`);
    }
  }
  return stages;
}

// ---------------------------------------------------------------------------------------------
// Processes

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { stdio: options.capture ? ['ignore', 'pipe', 'pipe'] : 'inherit', encoding: 'utf8', ...options });
  if (result.error) fail(`${command} ${args.join(' ')}: ${result.error.message}`);
  if (result.status !== 0) fail(`${command} ${args.join(' ')} exited with ${result.status ?? result.signal}${options.capture ? `\n${result.stderr}` : ''}`);
  return result.stdout;
}

/** How processes are started as the unprivileged user: setpriv changes uid and gid and drops root's groups, then execs. */
function unprivileged() {
  if (process.getuid() !== 0) {
    const name = os.userInfo().username;
    log(`not root: every step runs as the current user ${name} (uid ${process.getuid()})`);
    return { name, uid: process.getuid(), gid: process.getgid(), prefix: [] };
  }
  if (spawnSync('id', ['-u', IMAGE_USER], { stdio: 'ignore' }).status !== 0) {
    run('useradd', ['--system', '--no-create-home', '--home-dir', '/nonexistent', '--shell', '/usr/sbin/nologin', IMAGE_USER]);
    log(`created the system user ${IMAGE_USER}`);
  }
  const uid = Number(run('id', ['-u', IMAGE_USER], { capture: true }).trim());
  const gid = Number(run('id', ['-g', IMAGE_USER], { capture: true }).trim());
  log(`running as root: build steps as root (as docker build does), the processes as ${IMAGE_USER} (uid ${uid})`);
  return { name: IMAGE_USER, uid, gid, prefix: ['setpriv', `--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', '--'] };
}

const children = new Set();
function startProcess(name, user, command, { cwd, env, logFile }) {
  const out = fs.openSync(logFile, 'a');
  const [file, ...args] = [...user.prefix, ...command];
  const child = spawn(file, args, { cwd, env, stdio: ['ignore', out, out] });
  fs.closeSync(out);
  const info = { name, child, logFile, exit: null };
  info.exited = new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      info.exit = { code, signal };
      children.delete(info);
      resolve(info.exit);
    });
  });
  children.add(info);
  return info;
}

async function stopProcess(info, timeoutMs = 20_000) {
  if (info.exit) return info.exit;
  info.child.kill('SIGTERM');
  const timer = setTimeout(() => info.child.kill('SIGKILL'), timeoutMs);
  const exit = await info.exited;
  clearTimeout(timer);
  return exit;
}

function tail(file, lines = 40) {
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
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

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------------------------

async function main() {
  const stages = parseDockerfile(fs.readFileSync(path.join(repo, 'Dockerfile'), 'utf8'));
  const runtime = stages.at(-1);
  if (!runtime.cmd || !runtime.healthcheck) fail('the last stage of the Dockerfile needs CMD and HEALTHCHECK');
  if (['root', '0', '0:0'].includes(runtime.user)) fail(`the image runs as ${runtime.user}: set a non-root USER`);
  log(`Dockerfile: stages ${stages.map((s) => `${s.name} (${s.image})`).join(', ')}; runs as ${runtime.user}: ${runtime.cmd.join(' ')}`);
  log(`node ${process.version}, npm ${run('npm', ['--version'], { capture: true }).trim()} (the image has ${stages[0].image})`);

  const user = unprivileged();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'reportql-image-'));
  fs.chmodSync(root, 0o755);
  const cleanups = [];
  let database;
  try {
    // The build context: the files of this checkout that git tracks or would track (no
    // node_modules, dist or data), as `docker build .` would send them.
    const context = path.join(root, 'context');
    await step('build context', () => {
      const files = run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: repo, capture: true }).split('\0').filter(Boolean);
      let copied = 0;
      for (const file of files) {
        const from = path.join(repo, file);
        if (!fs.existsSync(from) || fs.lstatSync(from).isDirectory()) continue;
        fs.mkdirSync(path.dirname(path.join(context, file)), { recursive: true });
        fs.copyFileSync(from, path.join(context, file));
        copied++;
      }
      log(`${copied} files`);
    });

    const stageDir = new Map();
    const logs = path.join(root, 'logs');
    fs.mkdirSync(logs);
    const dataDir = path.join(root, 'data');
    for (const stage of stages) {
      const dir = path.join(root, stage.name);
      stageDir.set(stage.name, { dir, workdir: stage.workdir });
      if (stage !== runtime && reuseDist) {
        const dist = path.join(repo, 'dist', 'src', 'main.js');
        if (!fs.existsSync(dist)) fail('--reuse-dist: build this checkout first (npm run build)');
        stageDir.set(stage.name, { dir: repo, workdir: stage.workdir });
        log(`stage ${stage.name}: skipped, dist/ taken from ${repo} (--reuse-dist)`);
        continue;
      }
      fs.mkdirSync(dir, { recursive: true });
      const inStage = (p) => path.join(dir, path.posix.isAbsolute(p) ? path.posix.relative(stage.workdir, p) : p);
      await step(`stage ${stage.name}`, async () => {
        for (const s of stage.steps) {
          if (s.kind === 'COPY') {
            const source = s.from ? stageDir.get(s.from) ?? fail(`COPY --from=${s.from}: no such stage`) : { dir: context, workdir: '/' };
            const destIsDir = s.dest.endsWith('/') || s.sources.length > 1;
            for (const src of s.sources) {
              const from = path.join(source.dir, path.posix.isAbsolute(src) ? path.posix.relative(source.workdir, src) : src);
              if (!fs.existsSync(from)) fail(`${s.line}: ${src} does not exist`);
              const to = destIsDir ? path.join(inStage(s.dest), path.basename(src)) : inStage(s.dest);
              fs.mkdirSync(path.dirname(to), { recursive: true });
              fs.cpSync(from, to, { recursive: true });
            }
            log(`  ${s.line}`);
          } else {
            const command = s.command;
            const t0 = Date.now();
            if (/^npm ci --omit=dev( --no-audit)?( --no-fund)?( && npm cache clean --force)?$/.test(command)) {
              // The shared npm cache is kept (the image drops its own).
              run('npm', ['ci', '--omit=dev', '--no-audit', '--no-fund', '--prefer-offline'], { cwd: dir });
            } else if (/^npm ci( --no-audit)?( --no-fund)?$/.test(command)) {
              run('npm', ['ci', '--no-audit', '--no-fund', '--prefer-offline'], { cwd: dir });
            } else if (command === 'npm run build') {
              run('npm', ['run', 'build'], { cwd: dir });
            } else if (/^mkdir -p \/data && chown node:node \/data$/.test(command)) {
              fs.mkdirSync(dataDir, { mode: 0o700 });
              fs.chownSync(dataDir, user.uid, user.gid);
            } else {
              fail(`${s.line}: a RUN step this script does not perform; teach scripts/image-steps.mjs what it does`);
            }
            log(`  ${s.line} (${seconds(Date.now() - t0)})`);
          }
        }
      });
    }
    if (!fs.existsSync(dataDir)) fail('the runtime stage creates no DATA_DIR for its user');

    const app = stageDir.get(runtime.name).dir;
    if (user.prefix.length > 0) {
      const writable = spawnSync(user.prefix[0], [...user.prefix.slice(1), 'test', '-w', path.join(app, 'dist', 'src')]).status === 0;
      if (writable) fail(`${user.name} can write the application folder`);
      log(`${user.name} can read the application but not write it; it owns only DATA_DIR`);
    }

    // A PostgreSQL: a fresh database on DATABASE_URL's server, or the project's embedded one.
    database = await step('PostgreSQL', async () => {
      const name = `reportql_image_${randomBytes(4).toString('hex')}`;
      if (process.env.DATABASE_URL) {
        const admin = process.env.DATABASE_URL;
        const client = `const {Client}=require('pg');const c=new Client({connectionString:process.env.U});c.connect().then(()=>c.query(process.env.Q)).then(()=>c.end(),e=>{console.error(e.message);process.exit(1)})`;
        const sql = (statement) => run(process.execPath, ['-e', client], { cwd: app, env: { ...process.env, U: admin, Q: statement } });
        sql(`CREATE DATABASE ${name}`);
        const url = new URL(admin);
        url.pathname = `/${name}`;
        log(`database ${name} on ${url.host}`);
        // An autovacuum worker on the fresh database (a superuser's backend, which a role that is
        // not a superuser may not end) makes DROP … WITH (FORCE) fail until it is done: a few
        // tries a second apart. One left behind is dropped by the next .ci/run.
        const drop = async () => {
          for (let attempt = 1; ; attempt++) {
            const result = spawnSync(process.execPath, ['-e', client], { cwd: app, encoding: 'utf8', env: { ...process.env, U: admin, Q: `DROP DATABASE IF EXISTS ${name} WITH (FORCE)` } });
            if (result.status === 0) return;
            if (attempt === 10) throw new Error(result.stderr.trim());
            await new Promise((resolve) => setTimeout(resolve, 1000));
          }
        };
        return { url: url.toString(), drop };
      }
      const pgDir = path.join(root, 'pg');
      fs.mkdirSync(pgDir, { mode: 0o700 });
      fs.chownSync(pgDir, user.uid, user.gid);
      const helper = path.join(root, 'embedded-pg.cjs');
      fs.writeFileSync(
        helper,
        `const { startEmbeddedPostgres } = require(${JSON.stringify(path.join(app, 'dist', 'src', 'db', 'embedded-postgres.js'))});
startEmbeddedPostgres({ dir: process.argv[2], database: 'reportql' }).then((db) => {
  process.stdout.write('URL ' + db.url + '\\n');
  const stop = () => db.stop().then(() => process.exit(0), () => process.exit(1));
  process.on('SIGTERM', stop); process.on('SIGINT', stop);
}, (error) => { process.stderr.write(String(error && error.message) + '\\n'); process.exit(1); });
`,
      );
      const logFile = path.join(logs, 'postgres.log');
      const pg = startProcess('embedded PostgreSQL', user, [process.execPath, helper, pgDir], { cwd: app, env: { PATH: process.env.PATH }, logFile });
      const deadline = Date.now() + 120_000;
      for (;;) {
        const match = /^URL (\S+)$/m.exec(tail(logFile, 1000));
        if (match) {
          log(`embedded PostgreSQL (from the image's node_modules) as ${user.name}`);
          return { url: match[1], drop: () => stopProcess(pg) };
        }
        if (pg.exit) fail(`the embedded PostgreSQL did not start:\n${tail(logFile)}`);
        if (Date.now() > deadline) fail('the embedded PostgreSQL did not start within 120 s');
        await sleep(200);
      }
    });

    // The image's start command, with the image's ENV, as docker-compose.yml runs it: the server
    // with WORKER=false and a worker process beside it.
    const port = await freePort();
    const adminKey = `rq_image_${randomBytes(24).toString('base64url')}`;
    const env = {
      PATH: process.env.PATH,
      ...runtime.env,
      DATA_DIR: dataDir,
      // The image listens on every interface; the check needs this machine only.
      HOST: '127.0.0.1',
      PORT: String(port),
      DATABASE_URL: database.url,
      SECRET_KEY: randomBytes(24).toString('base64url'),
      ADMIN_API_KEY: adminKey,
      WORKER: 'false',
      SEED_DEMO: 'true',
    };
    const server = startProcess('server', user, runtime.cmd, { cwd: app, env, logFile: path.join(logs, 'server.log') });
    cleanups.push(() => stopProcess(server));
    const readyMs = await step(`start: ${runtime.cmd.join(' ')} until HEALTHCHECK passes`, async () => {
      const t0 = Date.now();
      for (;;) {
        const check = spawnSync(user.prefix[0] ?? runtime.healthcheck[0], [...user.prefix.slice(1), ...(user.prefix.length ? runtime.healthcheck : runtime.healthcheck.slice(1))], { cwd: app, env, stdio: 'ignore', timeout: 10_000 });
        if (check.status === 0) return Date.now() - t0;
        if (server.exit) fail(`the server exited (${JSON.stringify(server.exit)}):\n${tail(server.logFile)}`);
        if (Date.now() - t0 > readyTimeoutMs) fail(`not healthy within ${readyTimeoutMs / 1000} s:\n${tail(server.logFile)}`);
        await sleep(1000);
      }
    });
    log(`healthy ${seconds(readyMs)} after start (migrations and the demo included)`);

    const worker = startProcess('worker', user, ['node', 'dist/src/worker.js'], { cwd: app, env, logFile: path.join(logs, 'worker.log') });
    cleanups.push(() => stopProcess(worker));

    await step('checks', async () => {
      const base = `http://127.0.0.1:${port}`;
      const readyz = await fetch(`${base}/readyz`);
      const readyBody = await readyz.json();
      log(`GET /readyz: ${readyz.status} ${JSON.stringify(readyBody)}`);
      if (readyz.status !== 200 || readyBody.status !== 'ready') fail('/readyz is not ready');

      const query = '{ viewer { serverAdmin } projects(first: 50) { totalCount nodes { name useCases(first: 1) { totalCount } } } }';
      const answer = await fetch(`${base}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${adminKey}` },
        body: JSON.stringify({ query }),
      });
      const body = await answer.json();
      if (answer.status !== 200 || body.errors) fail(`GraphQL answered ${answer.status}: ${JSON.stringify(body.errors ?? body).slice(0, 500)}`);
      if (body.data.viewer.serverAdmin !== true) fail('the admin key is not a server admin key');
      const projects = body.data.projects;
      if (projects.totalCount < 1 || projects.nodes[0].useCases.totalCount < 1) fail('the demo is not loaded (are seeds/ in the image?)');
      log(`POST /graphql with the admin key: serverAdmin true, ${projects.totalCount} project(s), "${projects.nodes[0].name}" with ${projects.nodes[0].useCases.totalCount}+ use case(s)`);

      const anonymous = await fetch(`${base}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ viewer { serverAdmin } }' }) });
      if (anonymous.status !== 401) fail(`without a key /graphql answered ${anonymous.status}, not 401`);
      log('POST /graphql without a key: 401');

      // The worker shares the database; it must still be running once it has started.
      await sleep(3000);
      if (worker.exit) fail(`the worker exited (${JSON.stringify(worker.exit)}):\n${tail(worker.logFile)}`);
      log('worker (node dist/src/worker.js) running beside the server');
    });

    await step('stop (SIGTERM)', async () => {
      const workerExit = await stopProcess(worker);
      const serverExit = await stopProcess(server);
      if (workerExit.code !== 0) fail(`the worker ended with ${JSON.stringify(workerExit)}:\n${tail(worker.logFile)}`);
      if (serverExit.code !== 0) fail(`the server ended with ${JSON.stringify(serverExit)}:\n${tail(server.logFile)}`);
      log('server and worker exited with status 0');
    });
    log(`passed in ${seconds(Date.now() - started)}: ${timings.map(([n, ms]) => `${n.split(':')[0]} ${seconds(ms)}`).join(', ')}`);
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    for (const child of children) if (child.name !== 'embedded PostgreSQL') await stopProcess(child, 5000);
    if (database) await Promise.resolve(database.drop()).catch((error) => log(`dropping the database failed: ${error.message}`));
    for (const child of children) await stopProcess(child, 10_000);
    if (keep) log(`kept ${root}`);
    else fs.rmSync(root, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(`[image-steps] FAILED: ${error instanceof StepError ? error.message : (error?.stack ?? String(error))}\n`);
    process.exit(1);
  },
);
