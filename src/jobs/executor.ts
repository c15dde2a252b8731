/**
 * The worker: claims work items of runs from the queue, sends their reports to the endpoints
 * under each endpoint's limit, and writes every prediction once.
 *
 * - An item holds up to CHUNK_SIZE reports of one run. Reports that already have a prediction
 *   are skipped, so an item taken up again (its worker died, its lease ran out) does only what
 *   is left.
 * - Each report runs under an overall deadline (every call, retry and backoff of it) that
 *   starts when the endpoint grants it seats; cancelling the run aborts its calls in flight.
 *   A report aborted by cancellation or shutdown writes nothing: it stays pending for resumeRun.
 * - An item stops starting reports when its lease could run out before they finish, and hands
 *   the rest to a new item.
 * - Every worker hands back the items of dead workers (queue.ts `reclaim`) every few seconds.
 *   A worker that finds its claim of an item gone, or cannot renew its heartbeat for long enough
 *   that others may judge it dead, stops the item's reports at once and leaves the item to its
 *   new holder.
 * - Transient failures are retried inside the chat client (backoff with jitter, Retry-After);
 *   what still fails is written as a FAILED prediction with a code, for resumeRun to retry.
 */
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import type { Pool } from 'pg';
import type { DataSource } from 'typeorm';
import { callsPerReport, strategyContext, type RunSnapshot } from '../extraction/run-snapshot';
import { runStrategy } from '../extraction/strategies';
import { createChatClient } from '../llm/chat-client';
import type { EgressPolicy } from '../llm/egress';
import type { SecretBox } from '../llm/secret-box';
import { MAX_ENDPOINT_TIMEOUT_MS, type ChatFn, type EndpointKind, type RetryPolicy } from '../llm/types';
import type { Logger } from '../logger';
import { EndpointLane, WorkerBudget, type BreakerOptions, DEFAULT_BREAKER } from './endpoint-lane';
import { EndpointSlots } from './endpoint-slots';
import { safePublisher, type RunEventListener, type RunEventPublisher } from './events';
import { breakerSignal, ExecutorAbort } from './failure';
import { predictionOutcome, unstorableRow, type PredictionOutcome } from './prediction-outcome';
import { isUnstorable, PredictionWriter } from './prediction-writer';
import { TERMINAL_RUN_STATUSES } from './run-status';
import { CHUNK_SIZE, DEAD_WORKER_SECONDS, poolOf, type Claim, type ClaimedItem, type JobQueue, type RunItem } from './queue';
import { readMetrics, SAMPLE_INTERVAL_MS, storeSample } from './telemetry';

export interface ExecutorOptions {
  /** Calls this worker may have in flight over all endpoints. */
  concurrency: number;
  /** Work items this worker holds at once. */
  maxItems: number;
  /** Idle poll of the queue, milliseconds (new work also wakes the worker at once). */
  pollMs: number;
  /** Slot rebalancing period, milliseconds. */
  tickMs: number;
  /** How often the endpoints' /metrics are sampled while their runs execute, milliseconds. */
  telemetryMs: number;
  breaker: BreakerOptions;
  retry?: RetryPolicy;
  /** ENDPOINT_ALLOW: every connection to an endpoint (chat, /metrics) is checked against it. */
  egress?: EgressPolicy | undefined;
  /** Told of every report's outcome (metrics); must not throw. */
  observer?: ExecutorObserver;
}

export interface ExecutorObserver {
  prediction(outcome: { endpointId: string; status: 'SUCCEEDED' | 'FAILED'; latencyMs: number | null }): void;
}

export const DEFAULT_EXECUTOR_OPTIONS: ExecutorOptions = {
  concurrency: 256,
  maxItems: 32,
  pollMs: 1000,
  tickMs: 250,
  telemetryMs: SAMPLE_INTERVAL_MS,
  breaker: DEFAULT_BREAKER,
};

interface EndpointRow {
  id: string;
  name: string;
  base_url: string;
  kind: EndpointKind;
  timeout_ms: number;
  max_concurrency: number;
  api_key_encrypted: string | null;
  health_status: string;
}

interface RunRuntime {
  runId: string;
  projectId: string;
  experimentId: string | null;
  snapshot: RunSnapshot;
  chat: ChatFn;
  apiKey: string | null;
  baseUrl: string;
  lane: EndpointLane;
  cancel: AbortController;
  items: number;
}

interface ReportRow {
  id: string;
  external_id: string;
  text: string;
}

/** Time kept free at the end of a lease (at most a quarter of it): items stop starting reports before it. */
const LEASE_MARGIN_MS = 30_000;
/** How often the claims of dead workers are looked for, and this worker's own claims checked. */
const CLAIM_CHECK_MS = 2_000;
const RECLAIM_MS = 5_000;
/**
 * Without a heartbeat for this long, this worker's items stop: from DEAD_WORKER_SECONDS of
 * silence on, others may take them, and the claim checks (every CLAIM_CHECK_MS) must come first.
 */
const SELF_FENCE_MS = (DEAD_WORKER_SECONDS - 5) * 1000;

/** An item in hand: its claim and what stops its reports when the claim is lost. */
interface HeldItem {
  claim: Claim;
  lost: AbortController;
  /** Its claim is being given up (completed, failed, continued): a claim found gone is no loss then. */
  finishing: boolean;
}

/**
 * An AbortController that follows `sources` (and `ms`, when given) until disposed. Listeners are
 * removed on dispose, so long-lived sources do not collect one per report.
 */
function linked(sources: AbortSignal[], ms?: number, onTimeout?: () => unknown): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  // Each call of a report (samples, retries) adds a listener the SDK never removes; they go with the report.
  setMaxListeners(0, controller.signal);
  const listeners = sources.map((source) => {
    const forward = (): void => controller.abort(source.reason);
    if (source.aborted) controller.abort(source.reason);
    else source.addEventListener('abort', forward, { once: true });
    return { source, forward };
  });
  const timer = ms === undefined ? undefined : setTimeout(() => controller.abort(onTimeout?.()), Math.max(1, ms));
  return {
    signal: controller.signal,
    dispose() {
      if (timer) clearTimeout(timer);
      for (const { source, forward } of listeners) source.removeEventListener('abort', forward);
    },
  };
}

/** A sleep that can be cut short; a wake-up that finds nobody asleep ends the next sleep at once. */
class Nap {
  private waker: (() => void) | null = null;
  private pending = false;

  wake(): void {
    if (this.waker) this.waker();
    else this.pending = true;
  }

  sleep(ms: number, signal: AbortSignal): Promise<void> {
    if (this.pending || signal.aborted) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.waker = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
      this.waker = done;
    });
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

export class RunExecutor {
  readonly workerId = randomUUID();
  private readonly pool: Pool;
  private readonly publisher: RunEventPublisher;
  private readonly writer: PredictionWriter;
  private readonly slots: EndpointSlots;
  private readonly budget: WorkerBudget;
  private readonly lanes = new Map<string, EndpointLane>();
  private readonly runtimes = new Map<string, RunRuntime>();
  private readonly items = new Set<Promise<void>>();
  private readonly held = new Map<string, HeldItem>();
  private readonly shutdown = new AbortController();
  private readonly fetchNap = new Nap();
  private readonly tickNap = new Nap();
  private loops: Promise<void>[] = [];
  private unsubscribe: (() => void)[] = [];
  private undispatched = 0;

  constructor(
    dataSource: DataSource,
    private readonly queue: JobQueue,
    publisher: RunEventPublisher,
    private readonly listener: RunEventListener,
    private readonly secrets: SecretBox,
    private readonly logger: Logger,
    private readonly options: ExecutorOptions = DEFAULT_EXECUTOR_OPTIONS,
  ) {
    this.pool = poolOf(dataSource);
    // Publishing never fails the work that publishes: a lost event costs a subscriber an update.
    this.publisher = safePublisher(publisher, (error) => logger.warn({ err: error }, 'publishing a run event failed'));
    this.writer = new PredictionWriter(this.pool, this.publisher);
    this.budget = new WorkerBudget(options.concurrency);
    const connection = (dataSource.options as { url?: string }).url;
    this.slots = new EndpointSlots({ connectionString: connection }, this.workerId, options.concurrency, logger);
  }

  async start(): Promise<void> {
    // Every report in flight listens to these two signals (and removes its listener when done).
    setMaxListeners(0, this.shutdown.signal);
    await this.queue.start();
    this.queue.reportErrorsTo((error) => this.logger.warn({ err: error }, "the job queue's maintenance failed; it runs again at its next interval"));
    // The heartbeat row exists before the first claim, so no reclaimer takes this worker for a dead one.
    await this.slots.tick([]);
    this.unsubscribe = [
      this.listener.onRunCancelled((runId) => this.runtimes.get(runId)?.cancel.abort(new ExecutorAbort('CANCELLED'))),
      this.listener.onJobsAvailable(() => this.wakeUp()),
    ];
    this.loops = [this.fetchLoop(), this.tickLoop(), this.watchLoop(), this.reclaimLoop()];
    this.logger.info({ workerId: this.workerId, concurrency: this.options.concurrency }, 'run worker started');
  }

  /** Stops fetching, aborts reports in flight (they stay pending) and hands the items back to the queue. */
  async stop(): Promise<void> {
    if (this.shutdown.signal.aborted) return;
    this.shutdown.abort(new ExecutorAbort('SHUTDOWN'));
    for (const off of this.unsubscribe) off();
    for (const lane of this.lanes.values()) lane.drain(new ExecutorAbort('SHUTDOWN'));
    await Promise.allSettled([...this.items]);
    await Promise.allSettled(this.loops);
    await this.writer.idle();
    await this.slots.close();
  }

  private wakeUp(): void {
    this.fetchNap.wake();
  }

  private async fetchLoop(): Promise<void> {
    const stop = this.shutdown.signal;
    while (!stop.aborted) {
      const room = this.options.maxItems - this.items.size;
      // Enough reports in hand to keep this worker's slots busy, and no more: what one worker
      // holds undispatched, the others cannot work on.
      // At least what the endpoints in use allow at once, so a run starts at full speed.
      let held = 0;
      let allowed = 0;
      for (const lane of this.lanes.values()) {
        held += lane.capacity;
        if (lane.demand() > 0) allowed += lane.maxConcurrency;
      }
      const hungry = this.undispatched < Math.min(2 * this.budget.limit, Math.max(CHUNK_SIZE, 2 * held, allowed));
      let fetched = 0;
      if (room > 0 && hungry) {
        try {
          const jobs = await this.queue.fetch(1, this.workerId);
          fetched = jobs.length;
          for (const job of jobs) {
            // Counted at once, so the next round of this loop sees the reports just fetched.
            this.undispatched += job.data.reportIds.length;
            const leaseEnd = Date.now() + job.expireInSeconds * 1000;
            const held: HeldItem = { claim: { jobId: job.jobId, token: job.token }, lost: new AbortController(), finishing: false };
            // Every report of the item listens to it (and removes its listener when done).
            setMaxListeners(0, held.lost.signal);
            this.held.set(job.token, held);
            const item = this.process(job, held)
              .catch((error: unknown) => {
                this.logger.error({ err: error, jobId: job.jobId }, 'work item failed; the queue retries it');
                held.finishing = true;
                return this.handBack(held.claim, leaseEnd);
              })
              .finally(() => this.held.delete(job.token));
            this.items.add(item);
            void item.finally(() => {
              this.items.delete(item);
              this.wakeUp();
            });
          }
        } catch (error) {
          this.logger.warn({ err: error }, 'fetching work items failed');
        }
      }
      if (fetched === 0 || room - fetched <= 0 || !hungry) {
        await this.fetchNap.sleep(this.options.pollMs, stop);
      }
    }
  }

  /**
   * Fails an item back to the queue, which retries it at once. While the database is away that
   * call fails too, and the item would wait for its lease to run out (15 minutes by default):
   * it is tried again until the database is back or the lease is nearly over anyway.
   */
  private async handBack(claim: Claim, leaseEnd: number): Promise<void> {
    for (let wait = 250; ; wait = Math.min(5000, wait * 2)) {
      try {
        if (!(await this.queue.fail(claim, 'worker error'))) this.logger.info({ jobId: claim.jobId }, 'a work item to hand back was taken up by another worker already');
        return;
      } catch (error) {
        if (Date.now() + wait >= leaseEnd || this.shutdown.signal.aborted) {
          this.logger.warn({ err: error, jobId: claim.jobId }, 'handing a work item back failed; it is taken up again when its lease runs out or its claim is reclaimed');
          return;
        }
        await sleep(wait, this.shutdown.signal);
      }
    }
  }

  /** Every telemetryMs: each endpoint this worker is calling, its /metrics, for its runs. */
  private async sampleEndpoints(): Promise<void> {
    const byEndpoint = new Map<string, { baseUrl: string; apiKey: string | null; runIds: string[] }>();
    for (const runtime of this.runtimes.values()) {
      if (runtime.lane.inUse === 0) continue;
      const entry = byEndpoint.get(runtime.lane.endpointId) ?? { baseUrl: runtime.baseUrl, apiKey: runtime.apiKey, runIds: [] };
      entry.runIds.push(runtime.runId);
      byEndpoint.set(runtime.lane.endpointId, entry);
    }
    await Promise.all(
      [...byEndpoint].map(async ([endpointId, e]) => {
        const sample = await readMetrics(e.baseUrl, e.apiKey, this.options.egress);
        if (sample) await storeSample(this.pool, endpointId, e.runIds, sample);
      }),
    );
  }

  private async tickLoop(): Promise<void> {
    const stop = this.shutdown.signal;
    let sampled = 0;
    while (!stop.aborted) {
      if (Date.now() - sampled >= this.options.telemetryMs) {
        sampled = Date.now();
        void this.sampleEndpoints().catch((error: unknown) => this.logger.debug({ err: error }, 'endpoint telemetry failed'));
      }
      // tick handles a lost connection itself; anything else is logged and the next tick tries again
      await this.slots.tick([...this.lanes.values()]).catch((error: unknown) => this.logger.warn({ err: error }, 'sharing endpoint slots failed'));
      // Lanes without work and without slots are forgotten.
      // (a lane whose breaker is not closed is kept: it remembers the endpoint's state)
      for (const [id, lane] of this.lanes) {
        if (lane.breakerState === 'CLOSED' && lane.demand() === 0 && lane.capacity === 0 && ![...this.runtimes.values()].some((r) => r.lane === lane)) this.lanes.delete(id);
      }
      await this.tickNap.sleep(this.options.tickMs, stop);
    }
  }

  /**
   * Cancellation seen in the database, for workers that missed the notification; and the claims
   * of the items in hand: an item whose claim is gone (or may be taken, this worker's heartbeat
   * being too old) stops its reports.
   */
  private async watchLoop(): Promise<void> {
    const stop = this.shutdown.signal;
    while (!stop.aborted) {
      await sleep(CLAIM_CHECK_MS, stop);
      if (stop.aborted) break;
      if (this.held.size > 0 && Date.now() - this.slots.lastBeatAt > SELF_FENCE_MS) {
        this.logger.warn({ items: this.held.size }, "this worker's heartbeat is too old: its items stop and are left to other workers");
        for (const item of this.held.values()) item.lost.abort(new ExecutorAbort('CLAIM_LOST'));
      }
      try {
        const items = [...this.held.values()].filter((i) => !i.finishing);
        const stillHeld = await this.queue.held(items.map((i) => i.claim));
        for (const item of items) {
          if (stillHeld.has(item.claim.token) || item.lost.signal.aborted || item.finishing) continue;
          this.logger.warn({ jobId: item.claim.jobId }, 'a work item was reclaimed from this worker: its reports stop');
          item.lost.abort(new ExecutorAbort('CLAIM_LOST'));
        }
      } catch (error) {
        this.logger.warn({ err: error }, 'checking the claims of work items failed; the next round tries again');
      }
      const ids = [...this.runtimes.keys()];
      if (ids.length === 0) continue;
      try {
        const rows = (await this.pool.query<{ id: string }>(`SELECT id FROM runs WHERE id = ANY($1::uuid[]) AND status = 'CANCELLED'`, [ids])).rows;
        for (const { id } of rows) this.runtimes.get(id)?.cancel.abort(new ExecutorAbort('CANCELLED'));
      } catch (error) {
        this.logger.warn({ err: error }, 'checking runs for cancellation failed; the next round tries again');
      }
    }
  }

  /** The items of dead workers, back to the queue (at start too: a restarted server's previous self is one). */
  private async reclaimLoop(): Promise<void> {
    const stop = this.shutdown.signal;
    while (!stop.aborted) {
      try {
        const ids = await this.queue.reclaim();
        if (ids.length > 0) {
          this.logger.info({ items: ids.length }, "work items of a dead worker handed back to the queue");
          await this.publisher.jobsAvailable();
          this.wakeUp();
        }
      } catch (error) {
        this.logger.warn({ err: error }, 'looking for the work items of dead workers failed; the next round tries again');
      }
      await sleep(RECLAIM_MS, stop);
    }
  }

  private lane(endpoint: EndpointRow): EndpointLane {
    let lane = this.lanes.get(endpoint.id);
    if (!lane) {
      lane = new EndpointLane(
        endpoint.id,
        endpoint.max_concurrency,
        this.budget,
        {
          opened: (reason) => void this.setHealth(endpoint.id, 'DOWN', reason),
          closed: () => void this.setHealth(endpoint.id, 'UP', null),
        },
        this.options.breaker,
      );
      this.lanes.set(endpoint.id, lane);
    }
    if (endpoint.health_status === 'DOWN' && lane.breakerState === 'CLOSED') lane.announceRecovery = true;
    return lane;
  }

  private async setHealth(endpointId: string, status: 'UP' | 'DOWN', reason: string | null): Promise<void> {
    try {
      await this.pool.query(
        status === 'UP'
          ? `UPDATE endpoints SET health_status = 'UP', health_last_error = NULL, last_seen_at = now(), checked_at = now() WHERE id = $1`
          : `UPDATE endpoints SET health_status = 'DOWN', health_last_error = $2, checked_at = now() WHERE id = $1`,
        status === 'UP' ? [endpointId] : [endpointId, `circuit open after consecutive failures: ${reason ?? ''}`.slice(0, 200)],
      );
    } catch (error) {
      this.logger.warn({ err: error, endpointId }, 'recording endpoint health failed');
    }
  }

  /** The run's state for executing it; null when the run is gone or over. */
  private async runtime(runId: string): Promise<RunRuntime | null> {
    const row = (
      await this.pool.query<{ project_id: string; experiment_id: string | null; status: string; config: RunSnapshot }>(
        'SELECT project_id, experiment_id, status, config FROM runs WHERE id = $1',
        [runId],
      )
    ).rows[0];
    if (!row || TERMINAL_RUN_STATUSES.has(row.status)) return null;
    const cached = this.runtimes.get(runId);
    if (cached && !cached.cancel.signal.aborted) return cached;
    const snapshot = row.config;
    const endpoint = (
      await this.pool.query<EndpointRow>(
        'SELECT id, name, base_url, kind, timeout_ms, max_concurrency, api_key_encrypted, health_status FROM endpoints WHERE id = $1',
        [snapshot.model.endpointId],
      )
    ).rows[0];
    if (!endpoint) {
      await this.failRun(runId, row.experiment_id, 'the endpoint of this run is no longer registered');
      return null;
    }
    let apiKey: string | null = null;
    try {
      apiKey = endpoint.api_key_encrypted ? this.secrets.decrypt(endpoint.api_key_encrypted) : null;
    } catch {
      await this.failRun(runId, row.experiment_id, `the API key of endpoint "${endpoint.name}" cannot be decrypted with this worker's SECRET_KEY`);
      return null;
    }
    const runtime: RunRuntime = {
      runId,
      projectId: row.project_id,
      experimentId: row.experiment_id,
      snapshot,
      chat: createChatClient({
        baseUrl: endpoint.base_url,
        apiKey,
        kind: endpoint.kind,
        timeoutMs: Math.min(endpoint.timeout_ms, MAX_ENDPOINT_TIMEOUT_MS),
        egress: this.options.egress,
        ...(this.options.retry ? { retry: this.options.retry } : {}),
      }),
      apiKey,
      baseUrl: endpoint.base_url,
      lane: this.lane(endpoint),
      cancel: new AbortController(),
      items: 0,
    };
    setMaxListeners(0, runtime.cancel.signal);
    this.runtimes.set(runId, runtime);
    return runtime;
  }

  private async failRun(runId: string, experimentId: string | null, reason: string): Promise<void> {
    await this.pool.query(
      `UPDATE runs SET status = 'FAILED', error = $2, finished_at = now() WHERE id = $1 AND status IN ('QUEUED', 'RUNNING')`,
      [runId, reason],
    );
    await this.publisher.runsChanged([{ runId, experimentId }]);
  }

  private async process(job: ClaimedItem, held: HeldItem): Promise<void> {
    const claimed = Date.now();
    const item = job.data;
    // `undispatched` counts the item's reports from its fetch until each is started or dropped.
    let counted = item.reportIds.length;
    const uncount = (n: number) => {
      this.undispatched -= n;
      counted -= n;
      // Fewer reports in hand: the fetch loop may want the next item now, not at its next poll.
      if (n > 0) this.wakeUp();
    };
    try {
      const runtime = await this.runtime(item.runId);
      if (!runtime) {
        held.finishing = true;
        await this.queue.complete(job);
        return;
      }
      runtime.items++;
      try {
        await this.work(job, held, claimed + job.expireInSeconds * 1000, runtime, uncount);
      } finally {
        runtime.items--;
        // A run resumed after a cancel has a new runtime by now: only this one's own entry goes.
        if (runtime.items === 0 && this.runtimes.get(runtime.runId) === runtime) this.runtimes.delete(runtime.runId);
      }
    } finally {
      uncount(counted);
    }
  }

  private async work(job: ClaimedItem, held: HeldItem, leaseEnd: number, runtime: RunRuntime, uncount: (n: number) => void): Promise<void> {
    const item: RunItem = job.data;
    const lost = held.lost.signal;
    const { runId, snapshot, lane } = runtime;
    const started = await this.pool.query<{ experiment_id: string | null }>(
      `UPDATE runs SET status = 'RUNNING', started_at = coalesce(started_at, now()) WHERE id = $1 AND status = 'QUEUED' RETURNING experiment_id`,
      [runId],
    );
    if (started.rows.length > 0) await this.publisher.runsChanged([{ runId, experimentId: runtime.experimentId }]);

    const reports = (
      await this.pool.query<ReportRow>(
        `SELECT r.id, r.external_id, r.text FROM reports r
         WHERE r.id = ANY($1::uuid[]) AND NOT EXISTS (SELECT 1 FROM predictions p WHERE p.run_id = $2 AND p.report_id = r.id)
         ORDER BY r.ordinal`,
        [item.reportIds, runId],
      )
    ).rows;
    const leaseMs = leaseEnd - Date.now();
    const stopAt = Math.max(Date.now() + 1000, leaseEnd - snapshot.deadlineMs - Math.min(LEASE_MARGIN_MS, leaseMs / 4));
    const weight = callsPerReport(snapshot);
    const inFlight = new Set<Promise<void>>();
    let writeFailed = false;
    let next = 0;
    uncount(item.reportIds.length - reports.length);
    const stop = linked([runtime.cancel.signal, this.shutdown.signal, lost], stopAt - Date.now(), () => new ExecutorAbort('LEASE'));
    // The reports in hand count as demand for the endpoint's slots before they ask for seats.
    let backlog = reports.length * weight;
    lane.backlog += backlog;
    // More demand than slots: rebalance now rather than at the next tick.
    if (lane.demand() > lane.capacity) this.tickNap.wake();
    try {
      while (next < reports.length) {
        let release: () => void;
        try {
          release = await lane.acquire(runId, weight, stop.signal);
        } catch {
          // Rejected only when the item stops (lease, cancel, shutdown, claim lost): nothing to report.
          break;
        }
        if (stop.signal.aborted) {
          release();
          break;
        }
        const report = reports[next++]!;
        uncount(1);
        lane.backlog -= weight;
        backlog -= weight;
        const done = this.predict(runtime, report, release, lost).catch((error: unknown) => {
          writeFailed = true;
          this.logger.error({ err: error, runId }, 'writing a prediction failed');
        });
        inFlight.add(done);
        void done.then(() => inFlight.delete(done));
      }
    } finally {
      stop.dispose();
      lane.backlog -= backlog;
    }
    await Promise.allSettled([...inFlight]);
    // A write that failed leaves its report pending: the item fails and is taken up again.
    if (writeFailed) throw new Error('a prediction could not be written');
    // The item is another worker's now: what is left of it is that worker's to do.
    if (lost.aborted) return;
    held.finishing = true;
    let finished: boolean;
    if (this.shutdown.signal.aborted && !runtime.cancel.signal.aborted) {
      // Handed back: another worker (or this one after a restart) takes the item up at once.
      finished = await this.queue.fail(job, 'worker stopped');
    } else if (next < reports.length && !runtime.cancel.signal.aborted) {
      finished = await this.queue.continueWith(job, { runId, reportIds: reports.slice(next).map((r) => r.id) }, job.priority, job.expireInSeconds);
    } else {
      finished = await this.queue.complete(job);
    }
    if (!finished) this.logger.info({ jobId: job.jobId }, 'a work item was reclaimed by another worker before this one finished it');
  }

  private async predict(runtime: RunRuntime, report: ReportRow, release: () => void, lost: AbortSignal): Promise<void> {
    const { snapshot } = runtime;
    const abort = linked([runtime.cancel.signal, this.shutdown.signal, lost], snapshot.deadlineMs, () => new ExecutorAbort('DEADLINE'));
    const signal = abort.signal;
    const t0 = performance.now();
    const key = { projectId: runtime.projectId, runId: runtime.runId, reportId: report.id };
    const settings = { deadlineMs: snapshot.deadlineMs, secrets: [runtime.apiKey], reportText: report.text };
    let outcome: PredictionOutcome | null = null;
    try {
      const result = await runStrategy(snapshot.strategy, strategyContext(snapshot, runtime.chat, { id: report.external_id, text: report.text }, signal));
      outcome = predictionOutcome(key, { result }, settings);
      runtime.lane.reportOutcome('ANSWERED');
    } catch (error) {
      const reason = signal.aborted ? signal.reason : error;
      if (reason instanceof ExecutorAbort && reason.kind !== 'DEADLINE') {
        runtime.lane.reportOutcome('NO_SIGN');
        return;
      }
      outcome = predictionOutcome(key, { error: reason, latencyMs: Math.round(performance.now() - t0) }, settings);
      // A bad report or a configuration problem of the run is not the endpoint's failure.
      if (outcome.status === 'FAILED') runtime.lane.reportOutcome(breakerSignal(outcome.failure), outcome.failure.message);
    } finally {
      abort.dispose();
      release();
    }
    const { row } = outcome;
    try {
      this.options.observer?.prediction({ endpointId: runtime.lane.endpointId, status: row.status, latencyMs: row.latencyMs });
    } catch (error) {
      // Metrics never fail a report.
      this.logger.warn({ err: error }, 'the prediction observer failed');
    }
    try {
      await this.writer.write(row);
    } catch (error) {
      // PostgreSQL refused what the endpoint answered: the report fails with a code instead.
      if (!isUnstorable(error)) throw error;
      await this.writer.write(unstorableRow(row, error));
    }
  }
}
