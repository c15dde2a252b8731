/**
 * The job queue: pg-boss on the application's own PostgreSQL (its tables in the `pgboss`
 * schema), reached through the application's connection pool. A run is split into work items
 * of up to CHUNK_SIZE reports; a worker claims an item with a lease (pg-boss's expiration), and
 * an item whose worker died is failed by pg-boss's supervisor when the lease runs out and taken
 * up again by another worker (retry). Exactly-once results do not depend on the queue: every
 * prediction is written under the unique key (run, report), so an item that runs twice writes
 * each prediction once.
 */
import PgBoss from 'pg-boss';
import type { Pool } from 'pg';
import type { DataSource, EntityManager } from 'typeorm';

export const RUN_QUEUE = 'run-reports';
export const CHUNK_SIZE = 50;

export interface RunItem {
  runId: string;
  reportIds: string[];
}

export interface QueueOptions {
  /** Seconds a claimed item is leased to its worker before another may take it up. */
  leaseSeconds: number;
  /** How often the supervisor fails items with an expired lease, seconds. */
  superviseSeconds: number;
}

/** The supervisor looks for expired leases five times per lease, at most every 30 s. */
export function queueOptions(leaseSeconds: number): QueueOptions {
  return { leaseSeconds, superviseSeconds: Math.max(1, Math.min(30, Math.floor(leaseSeconds / 5))) };
}

export const DEFAULT_QUEUE_OPTIONS: QueueOptions = queueOptions(900);

/**
 * Priority of a run's item k: the k-th items of all runs come before the (k+1)-th of any, so a
 * small run started after a big one is not queued behind all of the big one's items.
 */
export function itemPriority(index: number): number {
  return Math.max(0, 100_000 - index);
}

/** pg-boss's database interface over a pg pool or client. */
function dbOfPool(pool: Pool): PgBoss.Db {
  return { executeSql: async (text, values) => ({ rows: (await pool.query(text, values)).rows }) };
}

/** pg-boss's database interface inside a TypeORM transaction. */
function dbOfTransaction(manager: EntityManager): PgBoss.Db {
  const runner = manager.queryRunner;
  if (!runner) throw new Error('enqueue needs a transaction');
  return { executeSql: async (text, values) => ({ rows: (await runner.query(text, values, true)).records }) };
}

/** The pg pool behind a TypeORM data source. */
export function poolOf(dataSource: DataSource): Pool {
  return (dataSource.driver as unknown as { master: Pool }).master;
}

export class JobQueue {
  private readonly boss: PgBoss;
  private started: Promise<void> | undefined;

  constructor(
    dataSource: DataSource,
    readonly options: QueueOptions = DEFAULT_QUEUE_OPTIONS,
  ) {
    this.boss = new PgBoss({
      db: dbOfPool(poolOf(dataSource)),
      schema: 'pgboss',
      supervise: true,
      maintenanceIntervalSeconds: options.superviseSeconds,
      schedule: false,
    });
    this.boss.on('error', () => undefined);
  }

  start(): Promise<void> {
    this.started ??= (async () => {
      await this.boss.start();
      await this.boss.createQueue(RUN_QUEUE, {
        name: RUN_QUEUE,
        // An item is retried when its worker died (lease expired) or the database failed under it.
        retryLimit: 1000,
        retryDelay: 1,
        retryBackoff: true,
        expireInSeconds: this.options.leaseSeconds,
      });
    })();
    return this.started;
  }

  /** Enqueues the items of a run inside the caller's transaction: they exist iff the run does. */
  async enqueue(manager: EntityManager, runId: string, reportIds: string[], firstIndex = 0): Promise<number> {
    const jobs: PgBoss.JobInsert<RunItem>[] = [];
    for (let i = 0; i < reportIds.length; i += CHUNK_SIZE) {
      jobs.push({
        name: RUN_QUEUE,
        data: { runId, reportIds: reportIds.slice(i, i + CHUNK_SIZE) },
        priority: itemPriority(firstIndex + i / CHUNK_SIZE),
        expireInSeconds: this.options.leaseSeconds,
      });
    }
    for (let i = 0; i < jobs.length; i += 500) await this.boss.insert(jobs.slice(i, i + 500), { db: dbOfTransaction(manager) });
    return jobs.length;
  }

  /** The rest of an item whose lease is running out, as a new item of the same priority. */
  async continueWith(item: RunItem, priority: number, leaseSeconds: number): Promise<void> {
    await this.boss.send(RUN_QUEUE, item, { priority, expireInSeconds: leaseSeconds });
  }

  async fetch(count: number): Promise<PgBoss.JobWithMetadata<RunItem>[]> {
    return this.boss.fetch<RunItem>(RUN_QUEUE, { batchSize: count, includeMetadata: true });
  }

  complete(id: string): Promise<void> {
    return this.boss.complete(RUN_QUEUE, id);
  }

  fail(id: string, reason: string): Promise<void> {
    return this.boss.fail(RUN_QUEUE, id, { reason });
  }

  /** Work items waiting for a worker and held by one (reads pg-boss's tables: fails when they cannot be read). */
  async depth(): Promise<{ waiting: number; active: number }> {
    const [waiting, upToActive] = await Promise.all([this.boss.getQueueSize(RUN_QUEUE), this.boss.getQueueSize(RUN_QUEUE, { before: 'completed' })]);
    return { waiting, active: Math.max(0, upToActive - waiting) };
  }

  async stop(): Promise<void> {
    if (!this.started) return;
    await this.started.catch(() => undefined);
    await this.boss.stop({ graceful: false, wait: true, close: false });
  }
}
