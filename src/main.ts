import 'reflect-metadata';
import { createApp } from './app';
import { loadConfigOrExit } from './config';
import { openDatabase } from './db/data-source';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './db/embedded-postgres';
import { createLogger, routeProcessWarnings } from './logger';
import { resolveSecretKey } from './secret-key';
import { queueOptions } from './jobs/queue';
import { startWorker, type Worker } from './worker-process';
import { seedDemo } from './seeds/demo-seed';
import { reservePort } from './port-reservation';
import { databaseAddress, describeStartupFailure, type StartupSettings } from './startup-errors';

/** The settings a failed start names; known once the configuration is read. */
let startupSettings: StartupSettings = { dataDir: '.reportql', databaseUrl: undefined };

/** How a browser on this machine reaches the bound address. */
function browsableHost(host: string): string {
  if (host === '0.0.0.0' || host === '::' || host === '127.0.0.1' || host === '::1') return 'localhost';
  return host.includes(':') ? `[${host}]` : host;
}

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  startupSettings = { dataDir: config.dataDir, databaseUrl: config.databaseUrl };
  const logger = createLogger(config.logLevel);
  routeProcessWarnings(logger);
  const started = Date.now();
  // A first start on a slow machine takes minutes: each step says what it does and how long it took.
  const step = async <T>(doing: string, done: string, work: () => Promise<T>): Promise<T> => {
    logger.info(`${doing}…`);
    const at = Date.now();
    const result = await work();
    logger.info({ ms: Date.now() - at }, `${done} in ${((Date.now() - at) / 1000).toFixed(1)} s`);
    return result;
  };
  // Before the database is created or a key generated: a busy port must not lock a newcomer out.
  const reservation = await reservePort(config.port, config.host);

  // Set once a signal asks the server to stop. The server stops the embedded PostgreSQL last,
  // but Ctrl-C in a terminal reaches it too (one process group), and it then shuts down at once:
  // its clean exit and the connections it ends are expected then.
  let stopping = false;
  let embedded: EmbeddedDatabase | undefined;
  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    logger.info({ dataDir: config.dataDir }, 'DATABASE_URL unset: starting the embedded PostgreSQL');
    const at = Date.now();
    embedded = await startEmbeddedPostgres({
      dir: config.dataDir,
      database: 'reportql',
      onLog: (line) => logger.debug({ postgres: line }),
      onProgress: (message) => logger.info(message),
      // A supervisor (systemd, Docker, Kubernetes) restarts the whole server; readiness said it first.
      handlesSignals: true,
      onUnexpectedExit: (code, signal) => {
        if (stopping && code === 0) return;
        logger.fatal({ code, signal }, 'the embedded PostgreSQL stopped unexpectedly: exiting so that a supervisor restarts the server');
        process.exit(1);
      },
    });
    logger.info({ ms: Date.now() - at }, `the embedded PostgreSQL is up in ${((Date.now() - at) / 1000).toFixed(1)} s`);
    databaseUrl = embedded.url;
  }
  const url = databaseUrl;
  const dataSource = await step(
    `connecting to PostgreSQL${config.databaseUrl ? ` at ${databaseAddress(config.databaseUrl)}` : ''} and applying the migrations`,
    'database ready and migrated',
    () => openDatabase({ url }),
  );
  const app = await createApp(dataSource, logger, {
    secretKey: resolveSecretKey(config, logger),
    queue: queueOptions(config.jobLeaseSeconds),
    egress: config.endpointAllow,
    analyticsRunCacheBytes: config.analyticsRunCacheBytes,
    analyticsThreads: config.analyticsThreads,
    rateLimits: config.rateLimits,
    requestDeadlineMs: config.requestDeadlineMs,
    trustProxyHops: config.trustProxyHops,
    connectionLimits: config.connectionLimits,
    webSocketLimits: config.webSocketLimits,
    events: { outageLimitMs: config.databaseOutageSeconds * 1000 },
    corsOrigins: config.corsOrigins,
    ...(config.metricsToken ? { metricsToken: config.metricsToken } : {}),
    onEventError: (error) => {
      const ended = embedded !== undefined && (error as { code?: unknown }).code === '57P01';
      if (stopping && ended) logger.debug({ err: error }, 'publishing an event failed: the embedded PostgreSQL is stopping');
      else logger.warn({ err: error }, 'publishing an event failed');
    },
  });
  const generatedAdminKey = await app.services.apiKeys.ensureServerAdmin(config.adminApiKey);
  if (config.seedDemo) {
    const at = Date.now();
    const project = await seedDemo(dataSource, app.services, logger);
    if (project) logger.info({ project: project.name, ms: Date.now() - at }, `demo data loaded into the empty database in ${((Date.now() - at) / 1000).toFixed(1)} s`);
  }
  await reservation.release();
  const port = await app.listen(reservation.port, config.host);
  let worker: Worker | undefined;
  if (config.worker) worker = await startWorker(dataSource, app.services, logger, config, app.metrics.executorObserver);
  const origin = `http://${browsableHost(config.host)}:${port}`;
  logger.info({ host: config.host, port, startupMs: Date.now() - started }, `ReportQL listening: GraphiQL at ${origin}/graphql`);
  if (generatedAdminKey) {
    process.stdout.write(
      [
        '',
        '  Server admin API key (shown this once; only its hash is stored):',
        `    ${generatedAdminKey}`,
        `  Open ${origin}/graphql, click "Set API key" and paste it.`,
        '  Set ADMIN_API_KEY to choose the key yourself instead.',
        '',
      ].join('\n') + '\n',
    );
  }

  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    // A database that already died must not keep the process from ending.
    setTimeout(() => process.exit(1), 15_000).unref();
    await worker?.stop().catch((error: unknown) => logger.error({ err: error }, 'stopping the worker failed'));
    await app.close().catch((error: unknown) => logger.error({ err: error }, 'closing the server failed'));
    await dataSource.destroy().catch(() => undefined);
    await embedded?.stop().catch(() => undefined);
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((error: unknown) => {
  process.stderr.write(`${describeStartupFailure(error, startupSettings)}\n`);
  if (process.env.LOG_LEVEL?.trim().toLowerCase() === 'debug' || process.env.LOG_LEVEL?.trim().toLowerCase() === 'trace') {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? '') : ''}\n`);
  }
  process.exit(1);
});
