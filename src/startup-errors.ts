import os from 'node:os';
import path from 'node:path';

/** What start-up knows when it fails: the settings a message may name. */
export interface StartupSettings {
  dataDir: string;
  databaseUrl: string | undefined;
}

/** A start-up failure already worded for the person starting the server (one line, what to change). */
export class StartupError extends Error {
  readonly code = 'STARTUP_FAILED';
}

const FILE_REASONS: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'not permitted',
  EROFS: 'the file system is read-only',
  ENOTDIR: 'a part of the path is a file, not a folder',
  ENOENT: 'a part of the path does not exist',
  ENOSPC: 'the disk is full',
  EEXIST: 'a file is in the way',
  EISDIR: 'a folder is in the way',
};

const NETWORK_REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused: nothing listens there',
  ENOTFOUND: 'the host name is not known',
  EAI_AGAIN: 'the host name could not be looked up',
  ETIMEDOUT: 'the connection timed out',
  EHOSTUNREACH: 'the host is unreachable',
  ENETUNREACH: 'the network is unreachable',
  ECONNRESET: 'the server closed the connection',
};

/** Host and port of a connection string; never its user's password. */
export function databaseAddress(url: string): string {
  try {
    const parsed = new URL(url);
    const host = parsed.hostname || 'localhost';
    return `${host}:${parsed.port || '5432'}`;
  } catch {
    return 'the address in DATABASE_URL';
  }
}

function within(file: string, folder: string): boolean {
  const relative = path.relative(folder, file);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

/** The setting that decides where a file goes, for a message that names what to change. */
function settingOf(file: string, settings: StartupSettings): string {
  const resolved = path.resolve(file);
  if (within(resolved, settings.dataDir)) return `DATA_DIR (${settings.dataDir})`;
  if (within(resolved, os.tmpdir())) return `TMPDIR, the temporary folder (${os.tmpdir()})`;
  return 'the folder settings (DATA_DIR, TMPDIR)';
}

/** Removes the password of DATABASE_URL wherever a message might carry it. */
function withoutPassword(text: string, databaseUrl: string | undefined): string {
  if (!databaseUrl) return text;
  let password = '';
  try {
    password = decodeURIComponent(new URL(databaseUrl).password);
  } catch {
    return text.split(databaseUrl).join('DATABASE_URL');
  }
  let out = text.split(databaseUrl).join('DATABASE_URL');
  if (password) out = out.split(password).join('***').split(encodeURIComponent(password)).join('***');
  return out;
}

/**
 * One line for a start that failed: which setting to change and how, never a stack (a stack
 * names the code, not the setting) and never the database password.
 */
export function describeStartupFailure(error: unknown, settings: StartupSettings): string {
  const failure = error as { code?: unknown; path?: unknown; syscall?: unknown; message?: unknown } | null;
  const code = typeof failure?.code === 'string' ? failure.code : undefined;
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof StartupError || (code && ['PORT_UNAVAILABLE', 'EMBEDDED_POSTGRES_FAILED', 'INVALID_CONFIGURATION'].includes(code))) {
    return withoutPassword(message, settings.databaseUrl);
  }
  if (code && FILE_REASONS[code] && typeof failure?.path === 'string') {
    return `ReportQL cannot start: it cannot ${failure.syscall === 'mkdir' ? 'create' : 'write'} ${failure.path} (${FILE_REASONS[code]}). Change ${settingOf(failure.path, settings)} to a folder this user may write, or make that one writable.`;
  }
  if (settings.databaseUrl && code && NETWORK_REASONS[code]) {
    return `ReportQL cannot start: it cannot reach the PostgreSQL server of DATABASE_URL at ${databaseAddress(settings.databaseUrl)} (${NETWORK_REASONS[code]}). Start that server, or correct DATABASE_URL's host and port.`;
  }
  if (settings.databaseUrl && (code === '28P01' || code === '28000')) {
    return `ReportQL cannot start: the PostgreSQL server at ${databaseAddress(settings.databaseUrl)} refused the user and password of DATABASE_URL. Correct them in DATABASE_URL.`;
  }
  if (settings.databaseUrl && code === '3D000') {
    return `ReportQL cannot start: the database named in DATABASE_URL does not exist on ${databaseAddress(settings.databaseUrl)}. Create it (createdb), or correct the database name in DATABASE_URL.`;
  }
  const first = withoutPassword(message, settings.databaseUrl).split('\n')[0]!.slice(0, 300);
  return `ReportQL failed to start: ${first}${code ? ` (${code})` : ''}. LOG_LEVEL=debug logs where it failed.`;
}
