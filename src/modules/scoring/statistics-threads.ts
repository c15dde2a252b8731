import path from 'node:path';
import v8 from 'node:v8';
import { Worker } from 'node:worker_threads';
import type { BootstrapGridResult, GridRun, GridVariable, MultiplicityMatrix } from '../../analytics/bootstrap';
import { AnalyticsError } from '../../analytics/errors';
import type { KemenyResult, KemenyTieBreak } from '../../analytics/kemeny';
import { percentileRankIntervals } from '../../analytics/rank-intervals';
import type { RankIntervalSlices } from './chunked';
import { InlineStatistics, multiplicitiesIdOf, registerMultiplicities, type RankIntervalRequestOptions, type StatisticsEngine } from './statistics-engine';
import type { GridPart, RankPart, ReleaseMessage, StatisticsTask, StatisticsTaskResult, TaskFailure } from './statistics-tasks';

/**
 * Sources run through a require hook (the tests, the benchmarks' TypeScript runs): the thread
 * compiles them the same way, with scripts/ts-register.js (@swc/core, a development dependency).
 */
const TYPESCRIPT_ENTRY = `
require(require('node:worker_threads').workerData.register);
require(require('node:worker_threads').workerData.entry);
`;

let collectorExposed = false;

/** A statistics thread running statistics-worker (the pool's default `spawn`). */
export function spawnStatisticsThread(): Worker {
  // Threads started from now on get a heap collector (globalThis.gc) to give back what a
  // computation left when they go idle. The flag is V8's, for the whole process: set once,
  // before the first thread, it adds `gc` to the contexts made afterwards (these threads, and
  // any vm context) and changes nothing else.
  if (!collectorExposed) {
    v8.setFlagsFromString('--expose-gc');
    collectorExposed = true;
  }
  const extension = path.extname(__filename);
  const entry = path.join(__dirname, `statistics-worker${extension}`);
  if (extension === '.ts') {
    const register = path.join(__dirname, '../../../scripts/ts-register.js');
    return new Worker(TYPESCRIPT_ENTRY, { eval: true, workerData: { entry, register } });
  }
  return new Worker(entry);
}

interface Job {
  task: StatisticsTask;
  transfer: ArrayBuffer[];
  resolve: (result: StatisticsTaskResult) => void;
  reject: (error: Error) => void;
}

interface Thread {
  worker: Worker;
  job: Job | null;
  /** Asks the thread to give back its memory once it has been idle for RELEASE_IDLE_MS. */
  releaseTimer: NodeJS.Timeout | null;
  /** Ends the thread once it has been idle for IDLE_THREAD_MS. */
  idleTimer: NodeJS.Timeout | null;
}

/**
 * Parts a rank-interval computation is split into per thread; at most one per thread is in the
 * queue at a time, so other requests' tasks are taken up between parts.
 */
const RANK_PARTS_PER_THREAD = 4;
/**
 * A thread idle this long drops the kernel instance it keeps between tasks, collects its heap
 * when that kernel was large or it holds more than COLLECT_HELD_BYTES (statistics-worker.ts),
 * and stays with its compiled code: V8 optimises the statistics over the first two or three
 * computations of a thread, and a cold 90-run leaderboard on new threads took about twice as
 * long (bench/RESULTS.md).
 */
const RELEASE_IDLE_MS = 5_000;
/**
 * A thread that holds more than this when it goes idle (heap objects and the memory they reach:
 * statistics-worker.ts) collects its heap. Held per thread after the tasks of a cold
 * leaderboard, measured: 30–35 MB at 90 runs × 1,252 reports, 38–64 MB at 270, 90–128 MB after
 * 15 runs of 20,000 reports (a thread's share of 30). A full collection also drops much of what
 * V8 learnt while optimising the statistics (a cold 90-run leaderboard after one took 0.6–0.7 s
 * instead of 0.4–0.5 s), so smaller holdings stay until the thread's next computation or its end.
 */
const COLLECT_HELD_BYTES = 80 << 20;
/** An idle thread ends after this long, with all it holds. */
const IDLE_THREAD_MS = 15 * 60_000;
/**
 * Memory the WebAssembly kernels of grids in computation may take together; each thread
 * holds its own transposed copy of the multiplicities: n · B bytes, which `ReplicateKernel.load`
 * asks half as much again for and a new memory a quarter more, so 1.5–1.9 · n · B (the lower
 * figure is used).
 */
const GRID_KERNELS_BYTES = 64 * 1024 * 1024;

/**
 * The statistics on a pool of worker threads (ANALYTICS_THREADS), so that the request thread
 * stays free for other requests while a cold leaderboard computes. Tasks wait in one queue and
 * each thread takes one at a time, oldest first; threads start on first use, do not keep the
 * process alive while idle, and a thread that dies fails only its own task and is replaced.
 * Large read-only inputs (multiplicities, cached item scores, rank-interval replicates) live
 * in shared memory and are never written once shared; results' arrays are handed over, not
 * copied. A thread gives back its memory after RELEASE_IDLE_MS without work and ends after
 * IDLE_THREAD_MS.
 */
export class ThreadedStatistics implements StatisticsEngine {
  private readonly threads: Thread[] = [];
  private readonly idle: Thread[] = [];
  private readonly queue: Job[] = [];
  private readonly variablesCache = new WeakMap<readonly GridVariable[], GridVariable[]>();
  private closed = false;

  private readonly spawn: () => Worker;
  private readonly idleMs: number;
  private readonly releaseMs: number;
  private readonly collectAboveBytes: number;

  constructor(
    readonly size: number,
    options: { spawn?: () => Worker; idleMs?: number; releaseMs?: number; collectAboveBytes?: number } = {},
  ) {
    if (!(Number.isInteger(size) && size >= 1)) throw new RangeError(`statistics threads: ${size}`);
    this.spawn = options.spawn ?? spawnStatisticsThread;
    this.idleMs = options.idleMs ?? IDLE_THREAD_MS;
    this.releaseMs = options.releaseMs ?? RELEASE_IDLE_MS;
    this.collectAboveBytes = options.collectAboveBytes ?? COLLECT_HELD_BYTES;
  }

  gridParallelism(multiplicityEntries: number): number {
    return Math.max(1, Math.min(this.size, Math.floor(GRID_KERNELS_BYTES / (1.5 * multiplicityEntries))));
  }

  /**
   * About two slices per grid that can compute at once, so the threads share the work evenly
   * and every slice after the first on a thread overlaps with the reading of later runs.
   */
  gridSliceRuns(minimum: number, runs: number, multiplicityEntries: number): number {
    return Math.max(minimum, Math.ceil(runs / (2 * this.gridParallelism(multiplicityEntries))));
  }

  /** Threads started and not ended (for tests and operations). */
  get running(): number {
    return this.threads.length;
  }

  async multiplicities(n: number, resamples: number, seed: number): Promise<MultiplicityMatrix> {
    return registerMultiplicities((await this.run({ kind: 'multiplicities', n, resamples, seed })) as MultiplicityMatrix);
  }

  async grid(variables: readonly GridVariable[], runs: readonly GridRun[], multiplicities: MultiplicityMatrix, confidence: number): Promise<BootstrapGridResult> {
    // Item columns in shared memory (the per-run cache's, from `float64`) cross as they are;
    // others are copied column by column (a view would carry its whole buffer) and handed over.
    const transfer: ArrayBuffer[] = [];
    const items = runs.map((run) => ({
      id: run.id,
      items: run.items.map((column) => {
        if (column instanceof Float64Array && isShared(column)) return column;
        const copy = new Float64Array(column);
        transfer.push(copy.buffer);
        return copy;
      }),
    }));
    const part = (await this.run(
      { kind: 'grid', variables: this.sharedVariables(variables), runs: items, multiplicities, multiplicitiesId: multiplicitiesIdOf(multiplicities), confidence },
      transfer,
    )) as GridPart;
    return { ...part, multiplicities };
  }

  /**
   * The variables with their groups in shared memory, made once per variables array: the
   * slices of one computation share it, so the groups of 20,000 reports cross once.
   */
  private sharedVariables(variables: readonly GridVariable[]): GridVariable[] {
    let shared = this.variablesCache.get(variables);
    if (!shared) {
      shared = variables.map((v) => {
        // Any group codes as given: Int32 where they are Int32 already, exact doubles otherwise.
        const groups =
          v.groups instanceof Int32Array ? new Int32Array(new SharedArrayBuffer(4 * v.groups.length)) : new Float64Array(new SharedArrayBuffer(8 * v.groups.length));
        groups.set(v.groups);
        return { ...v, groups };
      });
      this.variablesCache.set(variables, shared);
    }
    return shared;
  }

  kemeny(scores: readonly Float64Array[], options: KemenyTieBreak): Promise<KemenyResult> {
    return this.run({ kind: 'kemeny', scores: [...scores], options }) as Promise<KemenyResult>;
  }

  float64(length: number): Float64Array {
    return new Float64Array(new SharedArrayBuffer(8 * length));
  }

  async rankIntervals(input: RankIntervalSlices, options: RankIntervalRequestOptions) {
    const { candidates: K, voters: V, replicates: B } = input;
    const data = isShared(input.data) ? input.data : copyToShared(input.data);
    const macro = isShared(input.macro) ? input.macro : copyToShared(input.macro);
    // Each replicate's ranks depend on that replicate alone, so the replicates are split in
    // contiguous parts and the parts' ranks put side by side.
    const parts = Math.max(1, Math.min(B, this.size * RANK_PARTS_PER_THREAD));
    const bounds = Array.from({ length: parts + 1 }, (_, i) => Math.round((i * B) / parts));
    const results = (await mapLimited(bounds.slice(0, -1), this.size, (from, i) =>
      this.run({
        kind: 'rankIntervals',
        data,
        macro,
        candidates: K,
        voters: V,
        replicates: B,
        from,
        to: bounds[i + 1]!,
        options: { level: options.level, names: options.names ?? null, pointOrder: options.pointOrder ?? null },
      }),
    )) as RankPart[];
    const ranks = new Int32Array(K * B);
    results.forEach((part, i) => {
      const from = bounds[i]!;
      const width = bounds[i + 1]! - from;
      for (let c = 0; c < K; c++) ranks.set(part.ranks.subarray(c * width, (c + 1) * width), c * B + from);
    });
    return percentileRankIntervals(ranks, K, B, options.level).map(({ candidate, lower, upper }) => ({ candidate, lower, upper }));
  }

  async close(): Promise<void> {
    this.closed = true;
    const closed = new Error('statistics threads closed');
    for (const job of this.queue.splice(0)) job.reject(closed);
    const threads = this.threads.splice(0);
    for (const thread of threads) {
      clearTimers(thread);
      thread.job?.reject(closed);
    }
    await Promise.all(threads.map((thread) => thread.worker.terminate()));
    this.idle.length = 0;
  }

  private run(task: StatisticsTask, transfer: ArrayBuffer[] = []): Promise<StatisticsTaskResult> {
    if (this.closed) return Promise.reject(new Error('statistics threads closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ task, transfer, resolve, reject });
      this.dispatch();
    });
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      let thread = this.idle.pop() ?? null;
      if (!thread && this.threads.length < this.size) {
        try {
          thread = this.start();
        } catch (error) {
          // No thread could be started: the threads there are take the queue on; without any,
          // what waits fails.
          if (this.threads.length === 0) {
            const failure = new Error(`statistics thread could not start: ${(error as Error).message}`);
            for (const job of this.queue.splice(0)) job.reject(failure);
          }
          return;
        }
      }
      if (!thread) return;
      const job = this.queue.shift()!;
      clearTimers(thread);
      thread.job = job;
      thread.worker.ref();
      try {
        thread.worker.postMessage({ task: job.task }, job.transfer);
      } catch (error) {
        // The message could not be cloned: the task fails, the thread stays free.
        thread.job = null;
        this.markIdle(thread);
        job.reject(new Error(`statistics task could not be sent to a thread (${(error as Error).name})`));
      }
    }
  }

  private start(): Thread {
    const worker = this.spawn();
    const thread: Thread = { worker, job: null, releaseTimer: null, idleTimer: null };
    worker.unref();
    worker.on('message', (message: { ok: true; result: StatisticsTaskResult } | { ok: false; failure: TaskFailure }) => {
      const job = thread.job;
      // A thread answers tasks only (never a release): a message while it has none is ignored.
      if (!job) return;
      thread.job = null;
      this.markIdle(thread);
      if (message.ok) job.resolve(message.result);
      else job.reject(failureError(message.failure));
      this.dispatch();
    });
    const ended = (error: Error) => {
      if (!this.forget(thread)) return;
      const job = thread.job;
      thread.job = null;
      job?.reject(error);
      if (!this.closed) this.dispatch();
    };
    worker.on('error', (error) => ended(new Error(`a statistics thread failed: ${error.message}`, { cause: error })));
    worker.on('exit', (code) => ended(new Error(`a statistics thread ended (exit code ${code})`)));
    this.threads.push(thread);
    return thread;
  }

  /** The thread has no task: it waits in the idle list, gives back memory after releaseMs and ends after idleMs. */
  private markIdle(thread: Thread): void {
    thread.worker.unref();
    clearTimers(thread);
    if (!this.threads.includes(thread)) return;
    this.idle.push(thread);
    // A task given to the thread, or its end, clears this timer (clearTimers).
    thread.releaseTimer = setTimeout(() => {
      thread.releaseTimer = null;
      const release: ReleaseMessage = { release: true, collectAbove: this.collectAboveBytes };
      thread.worker.postMessage(release);
    }, this.releaseMs);
    thread.releaseTimer.unref();
    thread.idleTimer = setTimeout(() => {
      if (this.forget(thread)) void thread.worker.terminate();
    }, this.idleMs);
    thread.idleTimer.unref();
  }

  /** Takes a thread out of the pool; false when it was out already. */
  private forget(thread: Thread): boolean {
    const at = this.threads.indexOf(thread);
    if (at < 0) return false;
    this.threads.splice(at, 1);
    const idleAt = this.idle.indexOf(thread);
    if (idleAt >= 0) this.idle.splice(idleAt, 1);
    clearTimers(thread);
    return true;
  }
}

function clearTimers(thread: Thread): void {
  if (thread.releaseTimer) clearTimeout(thread.releaseTimer);
  if (thread.idleTimer) clearTimeout(thread.idleTimer);
  thread.releaseTimer = null;
  thread.idleTimer = null;
}

/** `fn` over `items` with at most `limit` calls pending at once; results in the order of `items`. */
export async function mapLimited<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const lane = async () => {
    while (next < items.length && !failed) {
      const i = next++;
      try {
        results[i] = await fn(items[i]!, i);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}

/** The statistics on `threads` worker threads, or on the calling thread for 0. */
export function createStatisticsEngine(threads: number): StatisticsEngine {
  return threads === 0 ? new InlineStatistics() : new ThreadedStatistics(threads);
}

/** Shared memory, also when it was made in another realm (a thread, a test's context). */
function isShared(values: ArrayBufferView): boolean {
  return Object.prototype.toString.call(values.buffer) === '[object SharedArrayBuffer]';
}

function copyToShared(values: Float64Array): Float64Array {
  const shared = new Float64Array(new SharedArrayBuffer(values.byteLength));
  shared.set(values);
  return shared;
}

function failureError(failure: TaskFailure): Error {
  return failure.analyticsCode ? new AnalyticsError(failure.analyticsCode, failure.message) : new Error(`statistics thread: ${failure.message}`);
}
