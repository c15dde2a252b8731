/**
 * The worker side of background tasks: claims one task at a time with a lease it keeps renewing,
 * runs the task's work with a {@link WorkControl} whose commit also marks the task SUCCEEDED, and
 * records a failure as the coded error the synchronous mutation would have answered. A task
 * whose worker dies keeps its lease until it runs out and is then claimed by another worker; a
 * worker that stops gives its task back at once. Either way the work of the first attempt was
 * rolled back with its transaction, so the next one starts from nothing.
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { WorkControl } from '../../db/work-control';
import { apiErrorOf, DomainException } from '../../domain/errors';
import type { PgEventBus } from '../../graphql/pubsub';
import { loggableError, type Logger } from '../../logger';
import type { DatasetService } from '../dataset/dataset.service';
import type { ImportAnnotationsInput } from '../annotation/annotation.input';
import type { AnnotationService } from '../annotation/annotation.service';
import type { ImportReportsInput } from '../dataset/dataset.input';
import type { ImportFileFields } from '../imports/upload';
import type { StartExperimentInput } from '../run/run-execution.input';
import type { RunExecutionService } from '../run/run-execution.service';
import type { ImportPredictionsInput } from '../run/run.input';
import type { RunService } from '../run/run.service';
import { BackgroundTask, BackgroundTaskKind, type BackgroundTaskResult } from './background-task.entity';
import { MAX_TASK_ATTEMPTS, type BackgroundTaskService, type ExperimentTaskIds } from './background-task.service';
import { readTaskFile } from './task-file';

export interface BackgroundTaskRunnerOptions {
  /** Seconds a claimed task is leased; renewed every third of it while the worker lives. */
  leaseSeconds: number;
  /** How often an idle runner looks for tasks without a notification, milliseconds. */
  pollMs: number;
  /** Least time between two progress writes of one task, milliseconds. */
  progressMs: number;
}

export const DEFAULT_TASK_RUNNER_OPTIONS: BackgroundTaskRunnerOptions = { leaseSeconds: 30, pollMs: 2000, progressMs: 500 };

interface TaskServices {
  tasks: BackgroundTaskService;
  datasets: DatasetService;
  annotations: AnnotationService;
  runs: RunService;
  execution: RunExecutionService;
  bus: PgEventBus;
}

export class BackgroundTaskRunner {
  readonly worker = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private readonly stopping = new AbortController();
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private offBus: (() => void) | undefined;

  constructor(
    private readonly dataSource: DataSource,
    private readonly services: TaskServices,
    private readonly logger: Logger,
    private readonly options: BackgroundTaskRunnerOptions = DEFAULT_TASK_RUNNER_OPTIONS,
  ) {}

  start(): void {
    if (this.loop) return;
    this.offBus = this.services.bus.on((event) => {
      if (event.kind === 'task') this.wake?.();
    });
    this.loop = this.run();
  }

  /** Stops after aborting the task in hand (rolled back and given back to the queue). */
  async stop(): Promise<void> {
    this.stopping.abort(new Error('the worker is stopping'));
    this.wake?.();
    this.offBus?.();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopping.signal.aborted) {
      let task: BackgroundTask | null = null;
      try {
        task = await this.services.tasks.claim(this.worker, this.options.leaseSeconds);
      } catch (error) {
        this.logger.warn({ err: loggableError(error) }, 'claiming a background task failed');
      }
      if (task) {
        await this.execute(task);
        continue;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.options.pollMs);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
  }

  private async execute(task: BackgroundTask): Promise<void> {
    const { tasks } = this.services;
    const lost = new AbortController();
    const heartbeat = setInterval(
      () => {
        tasks.renew(task.id, this.worker, this.options.leaseSeconds).then(
          (held) => {
            if (!held) lost.abort(new Error('the task was taken over by another worker'));
          },
          (error: unknown) => this.logger.warn({ err: loggableError(error) }, 'renewing the lease of a background task failed'),
        );
      },
      Math.max(100, (this.options.leaseSeconds * 1000) / 3),
    );
    let processed = 0;
    let written = 0;
    let lastWrite = 0;
    const control: WorkControl = {
      signal: AbortSignal.any([lost.signal, this.stopping.signal]),
      beforeCommit: (manager, result) => tasks.succeedIn(manager, task.id, this.worker, summary(task.kind, result), processed),
      progress: (done) => {
        processed = done;
        const now = Date.now();
        if (now - lastWrite < this.options.progressMs || done === written) return;
        lastWrite = now;
        written = done;
        tasks.progress(task.id, this.worker, done).then(
          () => tasks.publish(task.id),
          (error: unknown) => this.logger.warn({ err: loggableError(error) }, 'recording the progress of a background task failed'),
        );
      },
    };
    await tasks.publish(task.id);
    try {
      if (await tasks.keyRevoked(task.principal)) throw new DomainException('FORBIDDEN', 'The API key that started the task was revoked');
      await this.work(task, control);
    } catch (error) {
      await this.failed(task, error, control.signal!);
    } finally {
      clearInterval(heartbeat);
    }
    await tasks.publish(task.id);
  }

  private async work(task: BackgroundTask, control: WorkControl): Promise<void> {
    const { datasets, annotations, runs, execution } = this.services;
    const source = readTaskFile(this.dataSource, task.id);
    switch (task.kind) {
      case BackgroundTaskKind.REPORT_IMPORT: {
        const stored = task.input as unknown as ImportReportsInput;
        const input: ImportReportsInput & ImportFileFields = { ...stored, source };
        await datasets.importReports(task.principal, stored.datasetId, input, undefined, control);
        return;
      }
      case BackgroundTaskKind.ANNOTATION_IMPORT: {
        const stored = task.input as unknown as ImportAnnotationsInput;
        const input: ImportAnnotationsInput & ImportFileFields = { ...stored, source };
        await annotations.importAnnotations(task.principal, stored.datasetId, input, undefined, control);
        return;
      }
      case BackgroundTaskKind.PREDICTION_IMPORT: {
        const stored = task.input as unknown as ImportPredictionsInput;
        const input: ImportPredictionsInput & ImportFileFields = { ...stored, source };
        await runs.importPredictions(task.principal, stored.datasetId, stored.promptId ?? null, input, undefined, control);
        return;
      }
      case BackgroundTaskKind.EXPERIMENT: {
        const { ids, ...input } = task.input as unknown as StartExperimentInput & { ids: ExperimentTaskIds };
        await execution.startExperiment(task.principal, input, ids, control);
        return;
      }
    }
  }

  private async failed(task: BackgroundTask, error: unknown, signal: AbortSignal): Promise<void> {
    const { tasks } = this.services;
    try {
      if (this.stopping.signal.aborted) {
        await tasks.release(task.id, this.worker);
        return;
      }
      // Another worker holds the task now; its attempt decides.
      if (signal.aborted) return;
      if (error instanceof DomainException) {
        await tasks.fail(task.id, this.worker, { code: apiErrorOf(error).code, message: error.message, details: error.details ?? null });
        return;
      }
      const correlationId = randomUUID();
      this.logger.error({ correlationId, taskId: task.id, err: loggableError(error) }, 'a background task failed unexpectedly');
      if (task.attempts < MAX_TASK_ATTEMPTS) await tasks.release(task.id, this.worker);
      else await tasks.fail(task.id, this.worker, { code: 'INTERNAL_SERVER_ERROR', message: `The task failed (correlation id ${correlationId})`, details: { correlationId } });
    } catch (recording) {
      this.logger.error({ taskId: task.id, err: loggableError(recording) }, 'recording the end of a background task failed; its lease will run out');
    }
  }
}

/** What a task's result keeps of its work's answer: ids and counts. */
function summary(kind: BackgroundTaskKind, result: unknown): BackgroundTaskResult {
  switch (kind) {
    case BackgroundTaskKind.REPORT_IMPORT: {
      const r = result as { inserted: number; updated: number };
      return { inserted: r.inserted, updated: r.updated };
    }
    case BackgroundTaskKind.ANNOTATION_IMPORT: {
      const r = result as { annotator: { id: string }; reports: number; values: number };
      return { annotatorId: r.annotator.id, reports: r.reports, values: r.values };
    }
    case BackgroundTaskKind.PREDICTION_IMPORT: {
      const r = result as { run: { id: string }; imported: number; missingReports: number };
      return { runId: r.run.id, imported: r.imported, missingReports: r.missingReports };
    }
    case BackgroundTaskKind.EXPERIMENT: {
      const r = result as { experiment: { id: string }; runs: unknown[] };
      return { experimentId: r.experiment.id, runs: r.runs.length };
    }
  }
}
