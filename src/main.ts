import 'reflect-metadata';
import path from 'node:path';
import { createApp } from './app';
import { loadConfigOrExit } from './config';
import { openDatabase } from './db/data-source';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './db/embedded-postgres';
import { createLogger, routeProcessWarnings } from './logger';
import { resolveSecretKey } from './secret-key';
import { queueOptions } from './jobs/queue';
import { startWorker } from './worker-process';
import type { RunExecutor } from './jobs/executor';
import { seedDemo } from './seeds/demo-seed';

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const logger = createLogger(config.logLevel);
  routeProcessWarnings(logger);
  const started = Date.now();

  let embedded: EmbeddedDatabase | undefined;
  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    logger.info({ dataDir: config.dataDir }, 'DATABASE_URL unset: starting the embedded PostgreSQL');
    embedded = await startEmbeddedPostgres({ dir: config.dataDir, database: 'reportql', onLog: (line) => logger.debug({ postgres: line }) });
    databaseUrl = embedded.url;
    if (!path.resolve(embedded.clusterDirectory).startsWith(path.resolve(config.dataDir) + path.sep)) {
      logger.warn(
        { clusterDirectory: embedded.clusterDirectory, dataDir: config.dataDir },
        'DATA_DIR is not reachable by the postgres user, so the embedded database lives in the temporary folder above; choose a DATA_DIR outside private home folders to keep it across reboots',
      );
    }
  }
  const dataSource = await openDatabase({ url: databaseUrl });
  const app = await createApp(dataSource, logger, {
    secretKey: resolveSecretKey(config, logger),
    queue: queueOptions(config.jobLeaseSeconds),
    egress: config.endpointAllow,
  });
  const generatedAdminKey = await app.services.apiKeys.ensureServerAdmin(config.adminApiKey);
  if (config.seedDemo) {
    const project = await seedDemo(dataSource, app.services, logger);
    if (project) logger.info({ project: project.name }, 'demo data loaded into the empty database');
  }
  const port = await app.listen(config.port);
  let worker: RunExecutor | undefined;
  if (config.worker) worker = await startWorker(dataSource, app.services, logger, config);
  logger.info({ port, startupMs: Date.now() - started }, `ReportQL listening: GraphiQL at http://localhost:${port}/graphql`);
  if (generatedAdminKey) {
    process.stdout.write(
      [
        '',
        '  Server admin API key (shown this once; only its hash is stored):',
        `    ${generatedAdminKey}`,
        '  Paste into GraphiQL → Headers: { "Authorization": "Bearer <key>" }',
        '  Set ADMIN_API_KEY to choose the key yourself instead.',
        '',
      ].join('\n') + '\n',
    );
  }

  let stopping = false;
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
  process.stderr.write(`ReportQL failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
