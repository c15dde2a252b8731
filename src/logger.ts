import pino from 'pino';
import type { LogLevel } from './config';

export type Logger = pino.Logger;

/**
 * What the log gets of an error: name, message, code (a driver error's SQLSTATE) and stack,
 * nothing else. TypeORM's QueryFailedError carries the statement's `parameters`, which for a
 * failed import are whole report texts (patient data); other fields of driver errors (`detail`,
 * `where`) quote row values too, and a client's error may carry the request it sent.
 */
export function loggableError(error: unknown): Error {
  if (!(error instanceof Error)) return new Error(`non-error thrown: ${typeof error}`);
  const source = error as Error & { code?: unknown; driverError?: { code?: unknown } };
  const code = source.driverError?.code ?? source.code;
  const safe = new Error(source.message) as Error & { code?: string };
  safe.name = source.name;
  if (source.stack !== undefined) safe.stack = source.stack;
  if (typeof code === 'string' || typeof code === 'number') safe.code = String(code);
  return safe;
}

function serializeError(error: unknown): Record<string, unknown> {
  const safe = loggableError(error) as Error & { code?: string };
  return { type: safe.name, message: safe.message, ...(safe.code !== undefined ? { code: safe.code } : {}), stack: safe.stack };
}

/**
 * The JSON logger (to stdout, or to `destination`). Every `err` is logged as
 * {@link loggableError} has it; API keys and authorization headers are redacted.
 */
export function createLogger(level: LogLevel, destination?: pino.DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level,
    redact: {
      paths: ['apiKey', '*.apiKey', 'secret', '*.secret', 'authorization', '*.authorization', 'req.headers.authorization', 'headers.authorization'],
      censor: '[redacted]',
    },
    serializers: { err: serializeError, error: serializeError },
  };
  return destination ? pino(options, destination) : pino(options);
}

/** Warnings Node.js itself raises; their messages name APIs, never data. */
const NODE_WARNINGS = new Set(['DeprecationWarning', 'ExperimentalWarning', 'MaxListenersExceededWarning', 'TimeoutOverflowWarning', 'UnsupportedWarning']);

/**
 * Process warnings go to the JSON log instead of Node's default printing to stderr. A library's
 * warning may quote the data it was given (the yaml package quoted a prompt example), so only
 * Node's own warnings keep their message; others are logged by name and code.
 */
export function routeProcessWarnings(logger: Logger): void {
  process.removeAllListeners('warning');
  process.on('warning', (warning: Error & { code?: string }) => {
    const known = NODE_WARNINGS.has(warning.name);
    logger.warn({ warning: { name: warning.name, ...(warning.code ? { code: warning.code } : {}), ...(known ? { message: warning.message } : {}) } }, 'process warning');
  });
}

/**
 * A library's logger interface (Apollo Server's: debug, info, warn, error) on ours; by default
 * it would print to the console. An error it passes is logged as {@link loggableError}.
 */
export function libraryLogger(logger: Logger, component: string): Record<'debug' | 'info' | 'warn' | 'error', (message?: unknown) => void> {
  const at = (level: 'debug' | 'info' | 'warn' | 'error') => (message?: unknown) => {
    if (message instanceof Error) logger[level]({ component, err: message }, `${component} error`);
    else logger[level]({ component }, String(message));
  };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}
