import { timingSafeEqual } from 'node:crypto';
import type { ApolloServerPlugin } from '@apollo/server';
import type { RequestHandler } from 'express';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { DataSource } from 'typeorm';
import type { ExecutorObserver } from '../jobs/executor';
import type { JobQueue } from '../jobs/queue';

/** Routes with their own label; anything else counts as "other", so labels stay few. */
const ROUTES = new Set(['/graphql', '/healthz', '/livez', '/readyz', '/metrics', '/']);
/** Route families labelled by their first segment: `/exports/runs/…/predictions.csv` → `/exports`. */
const ROUTE_PREFIXES = ['/exports', '/charts'];

function routeLabel(path: string): string {
  if (ROUTES.has(path)) return path;
  return ROUTE_PREFIXES.find((prefix) => path.startsWith(`${prefix}/`)) ?? 'other';
}

const OPERATIONS = new Set(['query', 'mutation', 'subscription']);
const CODES = new Set(['BAD_USER_INPUT', 'UNAUTHENTICATED', 'FORBIDDEN', 'NOT_FOUND', 'CONFLICT', 'RATE_LIMITED', 'INTERNAL_SERVER_ERROR']);
const RUN_STATUSES = ['QUEUED', 'RUNNING', 'SUCCEEDED', 'PARTIAL', 'FAILED', 'CANCELLED'];

export interface MetricsSources {
  dataSource: DataSource;
  queue: JobQueue;
}

/**
 * The server's Prometheus metrics (prom-client, one registry per app): HTTP requests, GraphQL
 * operations and their error codes, run progress and queue depth (read from the database at each
 * scrape), predictions and endpoint latency of the worker in this process, and Node's own.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly httpRequests: Counter<'route' | 'method' | 'status'>;
  private readonly httpDuration: Histogram<'route'>;
  private readonly operations: Counter<'operation' | 'outcome'>;
  private readonly errors: Counter<'operation' | 'code'>;
  private readonly predictions: Counter<'status'>;
  private readonly endpointLatency: Histogram<'endpoint_id' | 'status'>;

  constructor(sources: MetricsSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'reportql_' });
    this.httpRequests = new Counter({ name: 'reportql_http_requests_total', help: 'HTTP requests answered, by route, method and status', labelNames: ['route', 'method', 'status'], registers });
    this.httpDuration = new Histogram({
      name: 'reportql_http_request_duration_seconds',
      help: 'Time to answer an HTTP request, by route',
      labelNames: ['route'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.operations = new Counter({ name: 'reportql_graphql_operations_total', help: 'GraphQL operations over HTTP, by type and outcome (ok, error)', labelNames: ['operation', 'outcome'], registers });
    this.errors = new Counter({ name: 'reportql_graphql_errors_total', help: 'GraphQL errors sent, by operation type and extensions.code', labelNames: ['operation', 'code'], registers });
    this.predictions = new Counter({ name: 'reportql_predictions_total', help: "Reports finished by this process's run worker, by status; rate() gives predictions per second", labelNames: ['status'], registers });
    this.endpointLatency = new Histogram({
      name: 'reportql_endpoint_latency_seconds',
      help: "Time one report took at its endpoint (every call and retry), by endpoint id and status, from this process's run worker",
      labelNames: ['endpoint_id', 'status'],
      buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300],
      registers,
    });
    const runs = new Gauge({ name: 'reportql_runs', help: 'Runs by status (all projects)', labelNames: ['status'], registers, collect: () => read() });
    const reports = new Gauge({ name: 'reportql_active_run_reports', help: 'Reports of queued and running runs, by state (succeeded, failed, pending)', labelNames: ['state'], registers, collect: () => read() });
    const queueItems = new Gauge({ name: 'reportql_queue_items', help: 'Work items (up to 50 reports each) waiting for a worker or held by one', labelNames: ['state'], registers, collect: () => read() });
    const runsUp = new Gauge({ name: 'reportql_metrics_database_up', help: '1 when the run and queue gauges could be read at this scrape, else 0', registers, collect: () => read() });
    // Read once per scrape for all four gauges (prom-client calls each collect in turn).
    let reading: Promise<void> | undefined;
    const read = (): Promise<void> =>
      (reading ??= (async () => {
        try {
          const rows = (await sources.dataSource.query(
            `SELECT status, count(*)::int AS runs,
                    coalesce(sum(succeeded_count), 0)::int AS succeeded,
                    coalesce(sum(failed_count), 0)::int AS failed,
                    coalesce(sum(greatest(total_reports - succeeded_count - failed_count, 0)), 0)::int AS pending
               FROM runs GROUP BY status`,
          )) as { status: string; runs: number; succeeded: number; failed: number; pending: number }[];
          const depth = await sources.queue.depth();
          runs.reset();
          for (const status of RUN_STATUSES) runs.set({ status }, rows.find((r) => r.status === status)?.runs ?? 0);
          const active = rows.filter((r) => r.status === 'QUEUED' || r.status === 'RUNNING');
          for (const state of ['succeeded', 'failed', 'pending'] as const) reports.set({ state }, active.reduce((sum, r) => sum + r[state], 0));
          queueItems.set({ state: 'waiting' }, depth.waiting);
          queueItems.set({ state: 'active' }, depth.active);
          runsUp.set(1);
        } catch {
          runsUp.set(0);
        }
      })().finally(() => setImmediate(() => (reading = undefined))));
  }

  /** Counts every HTTP answer by route (known routes only), method and status. */
  http(): RequestHandler {
    return (req, res, next) => {
      const end = this.httpDuration.startTimer();
      res.on('finish', () => {
        const route = routeLabel(req.path);
        this.httpRequests.inc({ route, method: req.method, status: String(res.statusCode) });
        end({ route });
      });
      next();
    };
  }

  /** Counts GraphQL operations over HTTP by type and outcome, and their errors by code. */
  apolloPlugin<T extends object>(): ApolloServerPlugin<T> {
    return {
      requestDidStart: async () => ({
        willSendResponse: async ({ operation, response }) => {
          const type = operation?.operation && OPERATIONS.has(operation.operation) ? operation.operation : 'unknown';
          const errors = response.body.kind === 'single' ? (response.body.singleResult.errors ?? []) : [];
          this.operations.inc({ operation: type, outcome: errors.length > 0 ? 'error' : 'ok' });
          for (const error of errors) {
            const code = String(error.extensions?.['code'] ?? '');
            this.errors.inc({ operation: type, code: CODES.has(code) ? code : 'OTHER' });
          }
        },
      }),
    };
  }

  /** For the run worker of this process. */
  readonly executorObserver: ExecutorObserver = {
    prediction: ({ endpointId, status, latencyMs }) => {
      this.predictions.inc({ status });
      if (latencyMs !== null) this.endpointLatency.observe({ endpoint_id: endpointId, status }, latencyMs / 1000);
    },
  };

  /**
   * GET /metrics: with a token, only for `Authorization: Bearer <token>`; without one, only for
   * clients on this machine (loopback addresses).
   */
  handler(token: string | undefined): RequestHandler {
    const expected = token ? Buffer.from(`Bearer ${token}`) : undefined;
    return async (req, res) => {
      const allowed = expected
        ? (() => {
            const given = Buffer.from(req.headers.authorization ?? '');
            return given.length === expected.length && timingSafeEqual(given, expected);
          })()
        : isLoopback(req.socket.remoteAddress);
      if (!allowed) {
        res.status(expected ? 401 : 403).json({
          errors: [
            expected
              ? { message: 'Send the metrics token as "Authorization: Bearer <METRICS_TOKEN>"', extensions: { code: 'UNAUTHENTICATED' } }
              : { message: 'Metrics are served to this machine only; set METRICS_TOKEN to scrape from elsewhere', extensions: { code: 'FORBIDDEN' } },
          ],
        });
        return;
      }
      res.setHeader('Content-Type', this.registry.contentType);
      res.end(await this.registry.metrics());
    };
  }
}

export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return v4.startsWith('127.') || address === '::1';
}
