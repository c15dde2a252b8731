import type { DataSource } from 'typeorm';
import type { Config } from './config';
import { DEFAULT_EXECUTOR_OPTIONS, RunExecutor, type ExecutorObserver } from './jobs/executor';
import type { Logger } from './logger';
import type { Services } from './services';

/** A run worker on the services' queue and event bus (in the server process or on its own). */
export async function startWorker(
  dataSource: DataSource,
  services: Services,
  logger: Logger,
  config: Pick<Config, 'workerConcurrency'>,
  observer?: ExecutorObserver,
): Promise<RunExecutor> {
  const executor = new RunExecutor(dataSource, services.queue, services.bus, services.bus, services.secretBox, logger, {
    ...DEFAULT_EXECUTOR_OPTIONS,
    concurrency: config.workerConcurrency,
    egress: services.egress,
    ...(observer ? { observer } : {}),
  });
  await executor.start();
  return executor;
}
