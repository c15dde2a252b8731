import os from 'node:os';
import { isIP } from 'node:net';
import path from 'node:path';
import { z } from 'zod';
import type { WebSocketLimits } from './graphql/operation-limits';
import type { RateLimitSettings } from './graphql/rate-limits';
import type { ConnectionLimits } from './http/load-shedding';
import { parseEgressPolicy, type EgressPolicy } from './llm/egress';

const booleanFlag = z
  .string()
  .trim()
  .toLowerCase()
  .refine((v) => ['1', '0', 'true', 'false', 'yes', 'no', 'on', 'off'].includes(v), {
    message: 'must be one of true/false, 1/0, yes/no, on/off',
  })
  .transform((v) => ['1', 'true', 'yes', 'on'].includes(v));

const optionalText = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

/** A whole number with a default when unset or blank, checked against its range. */
function wholeNumber(fallback: string, digits: number, message: string, min: number, max: number) {
  return z
    .string()
    .optional()
    .transform((v) => (v === undefined || v.trim() === '' ? fallback : v.trim()))
    .pipe(z.string().regex(new RegExp(`^\\d{1,${digits}}$`), message))
    .transform(Number)
    .pipe(z.number().int().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`));
}

/** ANALYTICS_THREADS by default: one per core, at most 4. */
export function defaultStatisticsThreads(): number {
  return Math.max(1, Math.min(4, os.availableParallelism()));
}

const HOSTNAME = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;

/** scheme://host[:port], exactly as a browser sends it in Origin. */
function isOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === value;
  } catch {
    return false;
  }
}

const environmentSchema = z.object({
  PORT: wholeNumber('4000', 5, 'must be a port number', 0, 65535),
  HOST: z
    .string()
    .optional()
    .transform((v) => (v === undefined || v.trim() === '' ? '127.0.0.1' : v.trim().replace(/^\[(.*)\]$/, '$1')))
    .pipe(z.string().refine((v) => isIP(v) !== 0 || HOSTNAME.test(v), { message: 'must be an IP address or a host name, e.g. 127.0.0.1 or 0.0.0.0' })),
  CORS_ORIGINS: z
    .string()
    .optional()
    .transform((v) => (v ?? '').split(',').map((o) => o.trim()).filter(Boolean))
    .superRefine((origins, ctx) => {
      for (const origin of origins) {
        if (!isOrigin(origin)) ctx.addIssue({ code: 'custom', message: `"${origin.slice(0, 80)}" is not an origin such as https://app.example.org or http://localhost:5173 (scheme, host and port only, no path, no wildcard)` });
      }
    }),
  DATABASE_URL: optionalText.pipe(
    z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// connection string')
      .optional(),
  ),
  DATA_DIR: optionalText,
  ADMIN_API_KEY: optionalText.pipe(z.string().min(24, 'must be at least 24 characters').optional()),
  SEED_DEMO: z.string().optional().transform((v) => (v === undefined || v.trim() === '' ? 'true' : v)).pipe(booleanFlag),
  WORKER: z.string().optional().transform((v) => (v === undefined || v.trim() === '' ? 'true' : v)).pipe(booleanFlag),
  WORKER_CONCURRENCY: wholeNumber('256', 5, 'must be a whole number', 1, 4096),
  ANALYTICS_RUN_CACHE_MB: wholeNumber('256', 6, 'must be a whole number of megabytes', 0, 1_048_576),
  ANALYTICS_THREADS: wholeNumber(String(defaultStatisticsThreads()), 2, 'must be a whole number of threads', 0, 64),
  JOB_LEASE_SECONDS: wholeNumber('900', 6, 'must be a whole number of seconds', 10, 86_400),
  SECRET_KEY: optionalText.pipe(z.string().min(16, 'must be at least 16 characters').optional()),
  ENDPOINT_ALLOW: optionalText.transform((v, ctx): EgressPolicy | undefined => {
    if (v === undefined) return undefined;
    try {
      return parseEgressPolicy(v);
    } catch (error) {
      ctx.issues.push({ code: 'custom', message: (error as Error).message, input: v });
      return z.NEVER;
    }
  }),
  RATE_LIMIT_PER_KEY: wholeNumber('1200', 7, 'must be a whole number of requests per minute', 0, 1_000_000),
  RATE_LIMIT_PER_ADDRESS: wholeNumber('2400', 7, 'must be a whole number of requests per minute', 0, 1_000_000),
  RATE_LIMIT_AUTH_FAILURES: wholeNumber('20', 7, 'must be a whole number of failures per minute', 0, 1_000_000),
  REQUEST_DEADLINE_MS: wholeNumber('120000', 7, 'must be a whole number of milliseconds', 1000, 3_600_000),
  TRUST_PROXY_HOPS: wholeNumber('0', 2, 'must be a whole number of proxies', 0, 10),
  MAX_CONNECTIONS: wholeNumber('1024', 7, 'must be a whole number of connections', 0, 1_000_000),
  MAX_REQUESTS_IN_FLIGHT: wholeNumber('128', 7, 'must be a whole number of requests', 0, 1_000_000),
  MAX_REQUESTS_PER_CONNECTION: wholeNumber('1000', 7, 'must be a whole number of requests', 0, 1_000_000),
  WS_OPERATIONS_PER_CONNECTION: wholeNumber('100', 7, 'must be a whole number of operations', 0, 1_000_000),
  WS_OPERATIONS_PER_KEY: wholeNumber('500', 7, 'must be a whole number of operations', 0, 1_000_000),
  DATABASE_OUTAGE_SECONDS: wholeNumber('30', 5, 'must be a whole number of seconds', 1, 86_400),
  METRICS_TOKEN: optionalText.pipe(z.string().min(16, 'must be at least 16 characters').optional()),
  LOG_LEVEL: z
    .string()
    .optional()
    .transform((v) => (v === undefined || v.trim() === '' ? 'info' : v.trim().toLowerCase()))
    .pipe(z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])),
});

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface Config {
  port: number;
  /** Address the HTTP server binds: 127.0.0.1 (this machine only) unless set; 0.0.0.0 in a container. */
  host: string;
  /** Browser origins allowed to call the API (CORS); empty: none but the server's own. */
  corsOrigins: string[];
  /** Unset: the embedded PostgreSQL under dataDir. */
  databaseUrl: string | undefined;
  dataDir: string;
  adminApiKey: string | undefined;
  seedDemo: boolean;
  worker: boolean;
  /** Chat calls one worker process may have in flight over all endpoints. */
  workerConcurrency: number;
  /** Budget of the per-run item-score cache of the statistics, in bytes (0: nothing kept). */
  analyticsRunCacheBytes: number;
  /** Worker threads of the statistics (0: computed on the request thread, in slices). */
  analyticsThreads: number;
  /** How long a work item is leased to its worker; a dead worker's items are taken up after it. */
  jobLeaseSeconds: number;
  /** Bearer token for /metrics; unset: /metrics answers clients on this machine only. */
  metricsToken: string | undefined;
  /** Unset: a key generated on first start and kept in dataDir (single-machine setups only). */
  secretKey: string | undefined;
  /**
   * ENDPOINT_ALLOW: hostnames, `*.suffix` wildcards, IPs and CIDR ranges endpoints may be
   * registered at and connected to (checked again after DNS resolution). Unset: any host.
   */
  endpointAllow: EgressPolicy | undefined;
  /** Requests per minute per API key and per client address, failed authentications per address; 0: off. */
  rateLimits: RateLimitSettings;
  /** Connections, HTTP requests in flight and requests per connection past which requests are shed (503); 0: off. */
  connectionLimits: ConnectionLimits;
  /** Operations running at once over WebSocket, per connection and per key; 0: off. */
  webSocketLimits: WebSocketLimits;
  /** How long subscriptions wait for a database that went away before ending with SERVICE_UNAVAILABLE. */
  databaseOutageSeconds: number;
  /** An HTTP request, or a WebSocket query or mutation, is answered within this time. */
  requestDeadlineMs: number;
  /** Proxies in front of the server whose X-Forwarded-For names the client's address. */
  trustProxyHops: number;
  logLevel: LogLevel;
}

export class ConfigError extends Error {
  readonly code = 'INVALID_CONFIGURATION';
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

/** The configuration, or, when it is bad, the problems on stderr and exit status 2. */
export function loadConfigOrExit(): Config {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
}

/** Reads and validates the environment (DESIGN.md "Running"); throws ConfigError naming every problem. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): Config {
  const parsed = environmentSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => `${issue.path.join('.') || 'environment'}: ${issue.message}`),
    );
  }
  const e = parsed.data;
  return {
    port: e.PORT,
    host: e.HOST,
    corsOrigins: e.CORS_ORIGINS,
    databaseUrl: e.DATABASE_URL,
    dataDir: path.resolve(cwd, e.DATA_DIR ?? '.reportql'),
    adminApiKey: e.ADMIN_API_KEY,
    seedDemo: e.SEED_DEMO,
    worker: e.WORKER,
    workerConcurrency: e.WORKER_CONCURRENCY,
    jobLeaseSeconds: e.JOB_LEASE_SECONDS,
    analyticsRunCacheBytes: e.ANALYTICS_RUN_CACHE_MB * 1024 * 1024,
    analyticsThreads: e.ANALYTICS_THREADS,
    secretKey: e.SECRET_KEY,
    endpointAllow: e.ENDPOINT_ALLOW,
    rateLimits: { perKeyPerMinute: e.RATE_LIMIT_PER_KEY, perAddressPerMinute: e.RATE_LIMIT_PER_ADDRESS, authFailuresPerMinute: e.RATE_LIMIT_AUTH_FAILURES },
    requestDeadlineMs: e.REQUEST_DEADLINE_MS,
    trustProxyHops: e.TRUST_PROXY_HOPS,
    connectionLimits: { maxConnections: e.MAX_CONNECTIONS, maxRequestsInFlight: e.MAX_REQUESTS_IN_FLIGHT, maxRequestsPerConnection: e.MAX_REQUESTS_PER_CONNECTION },
    webSocketLimits: { perConnection: e.WS_OPERATIONS_PER_CONNECTION, perKey: e.WS_OPERATIONS_PER_KEY },
    databaseOutageSeconds: e.DATABASE_OUTAGE_SECONDS,
    metricsToken: e.METRICS_TOKEN,
    logLevel: e.LOG_LEVEL,
  };
}
