/**
 * Background tasks: the request stores the task (and the file of an import) and answers at once;
 * a worker (background-task-runner.ts) claims it with a lease and does the work in one
 * transaction that also marks the task SUCCEEDED, so a task is all or nothing and a task whose
 * worker died is done again from the start by another.
 */
import type { DataSource, EntityManager } from 'typeorm';
import { controlledTransaction, type WorkControl } from '../../db/work-control';
import { badInput, conflict, notFound } from '../../domain/errors';
import { Role } from '../api-key/api-key.entity';
import { requireRole, type Principal } from '../api-key/principal';
import type { DatasetService } from '../dataset/dataset.service';
import type { InlineFiles } from '../imports/inline-file';
import { importSource, type ImportFileFields } from '../imports/upload';
import type { RunExecutionService } from '../run/run-execution.service';
import { Prompt } from '../prompt/prompt.entity';
import type { StartExperimentInput } from '../run/run-execution.input';
import { BackgroundTask, BackgroundTaskKind, type BackgroundTaskResult } from './background-task.entity';
import { storeTaskFile } from './task-file';

export const MAX_IDEMPOTENCY_KEY_LENGTH = 200;
/** A task that failed this often for reasons other than its input is FAILED with INTERNAL_SERVER_ERROR. */
export const MAX_TASK_ATTEMPTS = 3;

export interface ExperimentTaskIds {
  datasetId: string;
  modelIds: string[];
  promptIds: (string | null)[];
}

function checkedKey(key: string | null | undefined): string | null {
  if (key === null || key === undefined) return null;
  if (key.trim() === '' || key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw badInput(`idempotencyKey must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`, { field: 'idempotencyKey' });
  }
  if (key.includes('\u0000') || !(key as string & { isWellFormed(): boolean }).isWellFormed()) {
    throw badInput('idempotencyKey must be text without NUL characters or lone surrogates', { field: 'idempotencyKey' });
  }
  return key;
}

/** Where a task's changes are announced to its subscribers (the PostgreSQL event bus implements it). */
export interface TaskEventPublisher {
  publish(event: { kind: 'task'; taskId: string }): Promise<void>;
}

export class BackgroundTaskService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly datasets: DatasetService,
    private readonly execution: RunExecutionService,
    private readonly bus: TaskEventPublisher,
  ) {}

  async get(principal: Principal, id: string): Promise<BackgroundTask> {
    const task = await this.dataSource.getRepository(BackgroundTask).findOneBy({ id });
    if (!task) throw notFound('Background task');
    requireRole(principal, task.projectId, Role.VIEWER, 'Background task');
    return task;
  }

  /**
   * Stores an import (reports, annotations or predictions) as a task with its file; the
   * request's `control` (its deadline) can still cancel the storing. `ids` are the input's IDs
   * decoded to rows (datasetId, promptId); the file fields are not kept in the input.
   */
  async startImport(
    kind: BackgroundTaskKind.REPORT_IMPORT | BackgroundTaskKind.ANNOTATION_IMPORT | BackgroundTaskKind.PREDICTION_IMPORT,
    principal: Principal,
    ids: { datasetId: string } & Record<string, string | null>,
    input: ImportFileFields & { idempotencyKey?: string | null },
    inline: InlineFiles | undefined,
    control?: WorkControl,
  ): Promise<{ task: BackgroundTask; created: boolean }> {
    const dataset = await this.datasets.get(principal, ids.datasetId, Role.EDITOR);
    const key = checkedKey(input.idempotencyKey);
    const earlier = await this.byKey(dataset.projectId, key, kind);
    if (earlier) return { task: earlier, created: false };
    // What the import would refuse before reading the file is refused now.
    if (ids['promptId']) {
      const prompt = await this.dataSource.getRepository(Prompt).findOneBy({ id: ids['promptId'] });
      if (!prompt || prompt.useCaseId !== dataset.useCaseId) throw notFound('Prompt');
    }
    const source = await importSource(input, inline);
    const { content: _content, file: _file, source: _source, idempotencyKey: _key, ...rest } = input;
    return this.create(principal, dataset.projectId, kind, { ...rest, ...ids }, key, control, (manager, taskId) => storeTaskFile(manager, taskId, source));
  }

  /** Stores an experiment's creation as a task, once the grid passed startExperiment's checks (the worker checks again). */
  async startExperiment(
    principal: Principal,
    input: StartExperimentInput & { idempotencyKey?: string | null },
    ids: ExperimentTaskIds,
    control?: WorkControl,
  ): Promise<{ task: BackgroundTask; created: boolean }> {
    const dataset = await this.datasets.get(principal, ids.datasetId, Role.EDITOR);
    const key = checkedKey(input.idempotencyKey);
    const earlier = await this.byKey(dataset.projectId, key, BackgroundTaskKind.EXPERIMENT);
    if (earlier) return { task: earlier, created: false };
    await this.execution.planExperiment(principal, input, ids);
    const { idempotencyKey: _key, ...rest } = input;
    const stored = { ...rest, datasetId: dataset.id, ids };
    return this.create(principal, dataset.projectId, BackgroundTaskKind.EXPERIMENT, stored, key, control);
  }

  private async byKey(projectId: string, key: string | null, kind: BackgroundTaskKind): Promise<BackgroundTask | null> {
    if (key === null) return null;
    const task = await this.dataSource.getRepository(BackgroundTask).findOneBy({ projectId, idempotencyKey: key });
    if (task && task.kind !== kind) throw conflict(`idempotencyKey was used for a ${task.kind} task of this project`, { field: 'idempotencyKey' });
    return task;
  }

  private async create(
    principal: Principal,
    projectId: string,
    kind: BackgroundTaskKind,
    input: Record<string, unknown>,
    key: string | null,
    control: WorkControl | undefined,
    storeFile?: (manager: EntityManager, taskId: string) => Promise<unknown>,
  ): Promise<{ task: BackgroundTask; created: boolean }> {
    const created = await controlledTransaction(this.dataSource, control, async (manager) => {
      // A concurrent request with the same key may have stored its task since the lookup: it wins.
      const rows = (await manager.query(
        `INSERT INTO background_tasks (project_id, kind, status, principal, input, idempotency_key)
         VALUES ($1, $2, 'QUEUED', $3, $4, $5) ON CONFLICT (project_id, idempotency_key) DO NOTHING RETURNING id`,
        [projectId, kind, JSON.stringify(principal), JSON.stringify(input), key],
      )) as { id: string }[];
      const id = rows[0]?.id;
      if (id && storeFile) await storeFile(manager, id);
      return id ?? null;
    });
    if (!created) {
      const earlier = await this.byKey(projectId, key, kind);
      if (!earlier) throw conflict('A request with this idempotencyKey is being stored; try again', { field: 'idempotencyKey' });
      return { task: earlier, created: false };
    }
    await this.publish(created);
    return { task: await this.dataSource.getRepository(BackgroundTask).findOneByOrFail({ id: created }), created: true };
  }

  /** Wakes idle workers and followers of the task; publishing never fails the work. */
  async publish(taskId: string): Promise<void> {
    await this.bus.publish({ kind: 'task', taskId }).catch(() => undefined);
  }

  /**
   * Claims the oldest task that is queued or whose worker's lease ran out, for `leaseSeconds`;
   * null when there is none. Another worker's live lease is never taken.
   */
  async claim(worker: string, leaseSeconds: number): Promise<BackgroundTask | null> {
    const rows = (await this.dataSource.query(
      `UPDATE background_tasks t SET status = 'RUNNING', worker = $1, lease_until = now() + make_interval(secs => $2),
              attempts = t.attempts + 1, processed = 0, started_at = coalesce(t.started_at, now())
       WHERE t.id = (SELECT id FROM background_tasks
                     WHERE status = 'QUEUED' OR (status = 'RUNNING' AND lease_until < now())
                     ORDER BY created_at FOR UPDATE SKIP LOCKED LIMIT 1)
       RETURNING t.id`,
      [worker, leaseSeconds],
    )) as [{ id: string }[], number];
    const id = rows[0][0]?.id;
    return id ? this.dataSource.getRepository(BackgroundTask).findOneByOrFail({ id }) : null;
  }

  /** Extends the lease; false when the task is no longer this worker's (another took it over). */
  async renew(taskId: string, worker: string, leaseSeconds: number): Promise<boolean> {
    const rows = (await this.dataSource.query(
      `UPDATE background_tasks SET lease_until = now() + make_interval(secs => $3) WHERE id = $1 AND worker = $2 AND status = 'RUNNING' RETURNING id`,
      [taskId, worker, leaseSeconds],
    )) as [unknown[], number];
    return rows[0].length > 0;
  }

  async progress(taskId: string, worker: string, processed: number): Promise<void> {
    await this.dataSource.query(`UPDATE background_tasks SET processed = $3 WHERE id = $1 AND worker = $2 AND status = 'RUNNING'`, [taskId, worker, processed]);
  }

  /**
   * Marks the task SUCCEEDED inside the transaction of its work (so both commit or neither) and
   * drops its file; throws when the task is no longer this worker's, which rolls the work back.
   */
  async succeedIn(manager: EntityManager, taskId: string, worker: string, result: BackgroundTaskResult, processed: number): Promise<void> {
    const rows = (await manager.query(
      `UPDATE background_tasks SET status = 'SUCCEEDED', result = $3, processed = $4, finished_at = now(), lease_until = NULL
       WHERE id = $1 AND worker = $2 AND status = 'RUNNING' RETURNING id`,
      [taskId, worker, JSON.stringify(result), processed],
    )) as [unknown[], number];
    if (rows[0].length === 0) throw new Error('the task was taken over by another worker');
    await manager.query('DELETE FROM background_task_files WHERE task_id = $1', [taskId]);
  }

  /** Ends the task as FAILED with the error its synchronous form would have answered; nothing of its work was written. */
  async fail(taskId: string, worker: string, error: { code: string; message: string; details: Record<string, unknown> | null }): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      const rows = (await manager.query(
        `UPDATE background_tasks SET status = 'FAILED', error_code = $3, error_message = $4, error_details = $5, finished_at = now(), lease_until = NULL
         WHERE id = $1 AND worker = $2 AND status = 'RUNNING' RETURNING id`,
        [taskId, worker, error.code, error.message, error.details === null ? null : JSON.stringify(error.details)],
      )) as [unknown[], number];
      if (rows[0].length > 0) await manager.query('DELETE FROM background_task_files WHERE task_id = $1', [taskId]);
    });
  }

  /** Gives the task back to the queue (this worker stops): another worker starts it again at once. */
  async release(taskId: string, worker: string): Promise<void> {
    await this.dataSource.query(`UPDATE background_tasks SET status = 'QUEUED', worker = NULL, lease_until = NULL WHERE id = $1 AND worker = $2 AND status = 'RUNNING'`, [
      taskId,
      worker,
    ]);
  }

  /** Whether the key that started the task was revoked since (the task then fails FORBIDDEN). */
  async keyRevoked(principal: Principal): Promise<boolean> {
    const rows = (await this.dataSource.query('SELECT revoked_at FROM api_keys WHERE id::text = $1', [principal.keyId])) as { revoked_at: Date | null }[];
    return rows.length > 0 && rows[0]!.revoked_at !== null;
  }
}
