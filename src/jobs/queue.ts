/**
 * The job queue: pg-boss on the application's own PostgreSQL (its tables in the `pgboss`
 * schema), reached through the application's connection pool. A run is split into work items
 * of up to CHUNK_SIZE reports; a worker claims an item with a lease (pg-boss's expiration).
 *
 * Every claim is recorded with its worker and a fresh token (job_claims, in the transaction that
 * fetches the item). An item whose worker is gone (its heartbeat silent, its process no longer
 * on this host, or its heartbeat older than the database's last start) is handed back by any
 * live worker within seconds (`reclaim`), whatever the lease; pg-boss's supervisor still fails
 * items whose lease ran out, for anything that escapes that. A holder completes, fails or
 * continues its item only while its token is the item's claim, so a worker that lost its claim
 * (reclaimed while it was cut off) cannot finish an item another worker now runs.
 *
 * Exactly-once results do not depend on the queue: every prediction is written under the unique
 * key (run, report), so an item that runs twice writes each prediction once.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import PgBoss from 'pg-boss';
import type { Pool, PoolClient } from 'pg';
import type { DataSource, EntityManager } from 'typeorm';

export const RUN_QUEUE = 'run-reports';
export const CHUNK_SIZE = 50;

export interface RunItem {
  runId: string;
  reportIds: string[];
}

/** One claim of a work item: the token is new at every claim, so a previous holder's is stale. */
export interface Claim {
  jobId: string;
  token: string;
}

export interface ClaimedItem extends Claim {
  data: RunItem;
  priority: number;
  expireInSeconds: number;
}

/** A worker whose heartbeat is this old is dead, wherever it runs. */
export const DEAD_WORKER_SECONDS = 20;
/**
 * Silence that, with other evidence (its process gone from this host, the database restarted
 * since), marks a worker dead. Live workers beat every tick (250 ms): a worker silent this long
 * is not merely between two beats, even when a pid of another host's namespace looks like ours.
 */
export const SILENT_WORKER_SECONDS = 3;
/** A live worker reconnects within a few ticks of a database restart; after this, one that has not is gone. */
const RECONNECT_GRACE_SECONDS = 10;

interface ClaimHolder {
  worker_id: string;
  host: string | null;
  pid: number | null;
  silent_seconds: number | null;
  before_restart: boolean | null;
}

/** Whether process `pid` exists on this host (EPERM: it does, under another user). */
function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether the worker holding claims is gone; `host` is this machine's name. */
export function isDeadHolder(holder: ClaimHolder, host: string, exists: (pid: number) => boolean = processExists): boolean {
  // No heartbeat row: it stopped (and deleted its row) or never beat; its claims are older than a beat.
  if (holder.silent_seconds === null) return true;
  if (holder.silent_seconds >= DEAD_WORKER_SECONDS) return true;
  if (holder.silent_seconds < SILENT_WORKER_SECONDS) return false;
  if (holder.before_restart) return true;
  return holder.host === host && holder.pid !== null && !exists(holder.pid);
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

/** pg-boss's database interface over a pg pool, or over one client inside its transaction. */
function dbOfPool(pool: Pick<Pool | PoolClient, 'query'>): PgBoss.Db {
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
  private readonly pool: Pool;
  private started: Promise<void> | undefined;
  private errorListener: (error: unknown) => void = (error) =>
    process.emitWarning(`the job queue's maintenance failed and is tried again at its next interval: ${String(error)}`);

  constructor(
    dataSource: DataSource,
    readonly options: QueueOptions = DEFAULT_QUEUE_OPTIONS,
  ) {
    this.pool = poolOf(dataSource);
    this.boss = new PgBoss({
      db: dbOfPool(this.pool),
      schema: 'pgboss',
      supervise: true,
      maintenanceIntervalSeconds: options.superviseSeconds,
      schedule: false,
    });
    // Unheard, pg-boss's 'error' event would end the process; its maintenance retries by itself.
    this.boss.on('error', (error: unknown) => this.errorListener(error));
  }

  /** Where the queue's own maintenance failures are told (a worker's logger). */
  reportErrorsTo(listener: (error: unknown) => void): void {
    this.errorListener = listener;
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

  /** Claims up to `count` items for `workerId`; the claims are recorded with the fetch, in one transaction. */
  async fetch(count: number, workerId: string): Promise<ClaimedItem[]> {
    return this.transaction(async (client) => {
      const jobs = await this.boss.fetch<RunItem>(RUN_QUEUE, { batchSize: count, includeMetadata: true, db: dbOfPool(client) });
      const items = jobs.map((job) => ({ jobId: job.id, token: randomUUID(), data: job.data, priority: job.priority, expireInSeconds: job.expireInSeconds }));
      if (items.length > 0) {
        await client.query(
          `INSERT INTO job_claims (job_id, worker_id, token)
           SELECT job_id, $2, token FROM unnest($1::uuid[], $3::uuid[]) AS c(job_id, token)
           ON CONFLICT (job_id) DO UPDATE SET worker_id = EXCLUDED.worker_id, token = EXCLUDED.token, claimed_at = now()`,
          [items.map((i) => i.jobId), workerId, items.map((i) => i.token)],
        );
      }
      return items;
    });
  }

  /** Completes a claimed item; false (and nothing done) when the claim was lost. */
  complete(claim: Claim): Promise<boolean> {
    return this.asHolder(claim, async (db) => {
      await this.boss.complete(RUN_QUEUE, claim.jobId, { db });
    });
  }

  /** Fails a claimed item back to the queue, which retries it; false when the claim was lost. */
  fail(claim: Claim, reason: string): Promise<boolean> {
    return this.asHolder(claim, async (db) => {
      await this.boss.fail(RUN_QUEUE, claim.jobId, { reason }, { db });
    });
  }

  /**
   * Completes a claimed item whose lease is running out and enqueues its rest as a new item of
   * the same priority, together; false when the claim was lost.
   */
  continueWith(claim: Claim, rest: RunItem, priority: number, leaseSeconds: number): Promise<boolean> {
    return this.asHolder(claim, async (db) => {
      await this.boss.send(RUN_QUEUE, rest, { priority, expireInSeconds: leaseSeconds, db });
      await this.boss.complete(RUN_QUEUE, claim.jobId, { db });
    });
  }

  /** The tokens among `claims` that are still their items' claims. */
  async held(claims: readonly Claim[]): Promise<Set<string>> {
    if (claims.length === 0) return new Set();
    const rows = (
      await this.pool.query<{ token: string }>('SELECT token FROM job_claims WHERE job_id = ANY($1::uuid[]) AND token = ANY($2::uuid[])', [
        claims.map((c) => c.jobId),
        claims.map((c) => c.token),
      ])
    ).rows;
    return new Set(rows.map((r) => r.token));
  }

  /**
   * Hands the items of dead workers back to the queue, ready at once (not after pg-boss's retry
   * backoff, which grows with every failure of the item); returns their ids.
   */
  async reclaim(): Promise<string[]> {
    const holders = (
      await this.pool.query<ClaimHolder>(
        `SELECT c.worker_id, w.host, w.pid,
                extract(epoch FROM now() - w.heartbeat_at)::float8 AS silent_seconds,
                w.heartbeat_at < pg_postmaster_start_time() AND now() - pg_postmaster_start_time() > make_interval(secs => $1) AS before_restart
         FROM (SELECT DISTINCT worker_id FROM job_claims) c LEFT JOIN job_workers w ON w.id = c.worker_id`,
        [RECONNECT_GRACE_SECONDS],
      )
    ).rows;
    const host = hostname();
    const dead = holders.filter((h) => isDeadHolder(h, host)).map((h) => h.worker_id);
    if (dead.length === 0) return [];
    // A holder that beat again since it was judged keeps its claims.
    const rows = (
      await this.pool.query<{ id: string }>(
        `WITH lost AS (
           DELETE FROM job_claims c WHERE c.worker_id = ANY($2::uuid[])
             AND NOT EXISTS (SELECT 1 FROM job_workers w WHERE w.id = c.worker_id AND w.heartbeat_at > now() - make_interval(secs => $3))
           RETURNING c.job_id)
         UPDATE pgboss.job SET state = 'retry', start_after = now()
         WHERE name = $1 AND id IN (SELECT job_id FROM lost) AND state = 'active'
         RETURNING id`,
        [RUN_QUEUE, dead, SILENT_WORKER_SECONDS],
      )
    ).rows;
    return rows.map((r) => r.id);
  }

  /** Runs `action` only while `claim` holds, and gives the claim up in the same transaction. */
  private asHolder(claim: Claim, action: (db: PgBoss.Db) => Promise<void>): Promise<boolean> {
    return this.transaction(async (client) => {
      const gone = await client.query('DELETE FROM job_claims WHERE job_id = $1 AND token = $2', [claim.jobId, claim.token]);
      if (gone.rowCount === 0) return false;
      await action(dbOfPool(client));
      return true;
    });
  }

  private async transaction<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      // The caller hears of the first failure; a client that cannot even roll back is discarded, not reused.
      try {
        await client.query('ROLLBACK');
      } catch (rollbackFailure) {
        broken = rollbackFailure instanceof Error ? rollbackFailure : new Error('rollback failed');
      }
      throw error;
    } finally {
      client.release(broken);
    }
  }

  /** Work items waiting for a worker and held by one (reads pg-boss's tables: fails when they cannot be read). */
  async depth(): Promise<{ waiting: number; active: number }> {
    const [waiting, upToActive] = await Promise.all([this.boss.getQueueSize(RUN_QUEUE), this.boss.getQueueSize(RUN_QUEUE, { before: 'completed' })]);
    return { waiting, active: Math.max(0, upToActive - waiting) };
  }

  async stop(): Promise<void> {
    if (!this.started) return;
    // A failed start was told to its caller; stopping needs only that it is over.
    await this.started.catch(() => undefined);
    await this.boss.stop({ graceful: false, wait: true, close: false });
  }
}
