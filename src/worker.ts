/**
 * A worker-only process: executes queued runs and background tasks from the PostgreSQL of
 * DATABASE_URL, alongside the servers and other workers sharing it (`npm run worker`). Give it
 * the servers' SECRET_KEY, so it can decrypt the endpoints' API keys.
 */
import 'reflect-metadata';
import { loadConfigOrExit } from './config';
import { openDatabase } from './db/data-source';
import { queueOptions } from './jobs/queue';
import { createLogger, routeProcessWarnings } from './logger';
import { resolveSecretKey } from './secret-key';
import { createServices } from './services';
import { startWorker } from './worker-process';

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  if (!config.databaseUrl) {
    process.stderr.write('Invalid configuration:\n  - DATABASE_URL: a worker process needs the database of the servers it works for\n');
    process.exit(2);
  }
  const databaseUrl = config.databaseUrl;
  const logger = createLogger(config.logLevel);
  routeProcessWarnings(logger);
  const dataSource = await openDatabase({ url: databaseUrl });
  const services = createServices(dataSource, {
    secretKey: resolveSecretKey(config, logger),
    queue: queueOptions(config.jobLeaseSeconds),
    onEventError: (error) => logger.warn({ err: error }, 'publishing an event failed'),
    egress: config.endpointAllow,
    analyticsThreads: config.analyticsThreads,
  });
  // The servers of this deployment listen on PORT: endpoints may not point at them either.
  services.egress.protectPort(config.port);
  await services.bus.start();
  const worker = await startWorker(dataSource, services, logger, config);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'worker shutting down');
    setTimeout(() => process.exit(1), 15_000).unref();
    await worker.stop().catch((error: unknown) => logger.error({ err: error }, 'stopping the worker failed'));
    await services.queue.stop().catch(() => undefined);
    await services.bus.close().catch(() => undefined);
    await dataSource.destroy().catch(() => undefined);
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((error: unknown) => {
  process.stderr.write(`ReportQL worker failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
