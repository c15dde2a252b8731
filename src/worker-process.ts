import type { DataSource } from 'typeorm';
import type { Config } from './config';
import { DEFAULT_EXECUTOR_OPTIONS, RunExecutor, type ExecutorObserver } from './jobs/executor';
import type { Logger } from './logger';
import { BackgroundTaskRunner } from './modules/background-task/background-task-runner';
import type { Services } from './services';

/** What a worker runs: the work items of runs, and background tasks (large imports and experiments). */
export interface Worker {
  executor: RunExecutor;
  tasks: BackgroundTaskRunner;
  stop(): Promise<void>;
}

/** A worker on the services' queue and event bus (in the server process or on its own). */
export async function startWorker(
  dataSource: DataSource,
  services: Services,
  logger: Logger,
  config: Pick<Config, 'workerConcurrency'>,
  observer?: ExecutorObserver,
): Promise<Worker> {
  const executor = new RunExecutor(dataSource, services.queue, services.bus, services.bus, services.secretBox, logger, {
    ...DEFAULT_EXECUTOR_OPTIONS,
    concurrency: config.workerConcurrency,
    egress: services.egress,
    ...(observer ? { observer } : {}),
  });
  await executor.start();
  const tasks = new BackgroundTaskRunner(dataSource, services, logger);
  tasks.start();
  return {
    executor,
    tasks,
    stop: async () => {
      await Promise.all([executor.stop(), tasks.stop()]);
    },
  };
}
