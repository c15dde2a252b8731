/**
 * One endpoint as this worker sees it: how many concurrent calls it may make there now (the
 * slots it holds of the endpoint's limit, see endpoint-slots.ts), who waits for them, and the
 * circuit breaker.
 *
 * Waiting reports are served round-robin by run, so one big run does not starve a small one that
 * shares the endpoint. A report takes as many seats as it makes concurrent calls (a
 * self-consistency report with k samples takes k), for its whole duration.
 *
 * Breaker: it hears only what a report says about the endpoint (failure.ts `breakerSignal`). A
 * report the endpoint answered, even with a refusal of that request or an answer that does not
 * parse, is a sign of life; a failure of the endpoint itself (no connection, 5xx, 429, no answer
 * in time) counts against it. After `failureThreshold` such failures in a row, with no answer for
 * `quietMs`, the lane opens and grants nothing for `cooldownMs` (doubling while probes keep
 * failing, never beyond `maxCooldownMs`); then one report is let through as a probe (half-open);
 * an answer closes the lane, a failure opens it again. Bad reports mixed with good ones therefore
 * never pause an endpoint that answers.
 */

export interface BreakerOptions {
  failureThreshold: number;
  cooldownMs: number;
  /** The longest pause (docs/operations.md). */
  maxCooldownMs: number;
  /** How long the endpoint must have answered nothing before failures open the lane (default: cooldownMs). */
  quietMs?: number;
}

export const DEFAULT_BREAKER: BreakerOptions = { failureThreshold: 5, cooldownMs: 5_000, maxCooldownMs: 60_000 };

/** What one report's outcome says about its endpoint. */
export type EndpointSignal = 'ANSWERED' | 'FAILED' | 'NO_SIGN';

/** Time as the lane sees it: injected so its tests need not race real timers. */
export interface LaneClock {
  now(): number;
  /** Runs `fn` after `ms`, without keeping the process alive; returns the cancel function. */
  schedule(fn: () => void, ms: number): () => void;
}

export const SYSTEM_CLOCK: LaneClock = {
  now: () => Date.now(),
  schedule(fn, ms) {
    const timer = setTimeout(fn, ms);
    timer.unref();
    return () => clearTimeout(timer);
  },
};

export type BreakerState = 'CLOSED' | 'OPEN' | 'HALF_OPEN';

/** Calls this worker may have in flight across all endpoints. */
export class WorkerBudget {
  inUse = 0;
  constructor(readonly limit: number) {}
}

interface Waiter {
  weight: number;
  resolve(release: () => void): void;
  reject(error: unknown): void;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
}

export interface LaneEvents {
  /** The breaker opened; `reason` is our own short text of the last failure. */
  opened(reason: string): void;
  closed(): void;
}

export class EndpointLane {
  /** Seats this worker holds of the endpoint's limit (set by the slot pool). */
  capacity = 0;
  /** The endpoint's own limit, the cap of one report's weight. */
  maxConcurrency: number;
  inUse = 0;
  /** Seats of reports this worker holds for the endpoint and has not asked seats for yet. */
  backlog = 0;
  private readonly queues = new Map<string, Waiter[]>();
  private readonly rotation: string[] = [];
  private state: BreakerState = 'CLOSED';
  private consecutiveFailures = 0;
  private cooldownMs: number;
  private openUntil = 0;
  private probeOut = false;
  private lastAnswerAt = Number.NEGATIVE_INFINITY;
  private cancelTimer: (() => void) | undefined;
  /** The endpoint is recorded DOWN (by this lane's predecessor or another worker): the next success says it is up. */
  announceRecovery = false;

  constructor(
    readonly endpointId: string,
    maxConcurrency: number,
    private readonly budget: WorkerBudget,
    private readonly events: LaneEvents,
    private readonly breaker: BreakerOptions = DEFAULT_BREAKER,
    private readonly clock: LaneClock = SYSTEM_CLOCK,
  ) {
    this.maxConcurrency = maxConcurrency;
    this.cooldownMs = breaker.cooldownMs;
  }

  get breakerState(): BreakerState {
    return this.state;
  }

  /** Seats wanted: those in use, those waited for and those of the reports in hand. */
  demand(): number {
    let waiting = 0;
    for (const queue of this.queues.values()) for (const w of queue) waiting += w.weight;
    return this.inUse + waiting + this.backlog;
  }

  waiting(): number {
    let n = 0;
    for (const queue of this.queues.values()) n += queue.length;
    return n;
  }

  /** Resolves with the release function once `weight` seats are granted to a report of `runId`. */
  acquire(runId: string, weight: number, signal?: AbortSignal): Promise<() => void> {
    const seats = Math.max(1, Math.min(weight, this.maxConcurrency));
    return new Promise((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const waiter: Waiter = { weight: seats, resolve, reject, signal, onAbort: undefined };
      if (signal) {
        waiter.onAbort = () => {
          const queue = this.queues.get(runId);
          const i = queue?.indexOf(waiter) ?? -1;
          if (queue && i >= 0) queue.splice(i, 1);
          reject(signal.reason);
          this.pump();
        };
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      let queue = this.queues.get(runId);
      if (!queue) {
        queue = [];
        this.queues.set(runId, queue);
        this.rotation.push(runId);
      }
      queue.push(waiter);
      this.pump();
    });
  }

  /** The outcome of a report that held seats: feeds the breaker. `reason` is our own short text of a failure. */
  reportOutcome(signal: EndpointSignal, reason?: string): void {
    if (signal === 'NO_SIGN') {
      // Nothing learnt about the endpoint; a probe that learnt nothing makes room for the next.
      if (this.state === 'HALF_OPEN' && this.probeOut) {
        this.probeOut = false;
        this.pump();
      }
      return;
    }
    if (signal === 'ANSWERED') {
      this.consecutiveFailures = 0;
      this.lastAnswerAt = this.clock.now();
      if (this.state !== 'CLOSED' || this.announceRecovery) {
        this.state = 'CLOSED';
        this.cooldownMs = this.breaker.cooldownMs;
        this.probeOut = false;
        this.announceRecovery = false;
        this.safely(() => this.events.closed());
      }
      this.pump();
      return;
    }
    this.consecutiveFailures++;
    const quiet = this.clock.now() - this.lastAnswerAt >= (this.breaker.quietMs ?? this.breaker.cooldownMs);
    if (this.state === 'HALF_OPEN' || (this.state === 'CLOSED' && this.consecutiveFailures >= this.breaker.failureThreshold && quiet)) {
      const reopened = this.state === 'HALF_OPEN';
      this.state = 'OPEN';
      this.probeOut = false;
      this.cooldownMs = Math.min(this.breaker.maxCooldownMs, reopened ? this.cooldownMs * 2 : this.cooldownMs);
      this.openUntil = this.clock.now() + this.cooldownMs;
      this.schedule(this.cooldownMs);
      this.safely(() => this.events.opened(reason ?? 'consecutive failures'));
    }
  }

  /** Grants seats while there are some, round-robin by run. */
  pump(): void {
    if (this.state === 'OPEN') {
      if (this.clock.now() < this.openUntil) return;
      this.state = 'HALF_OPEN';
    }
    while (this.rotation.length > 0) {
      if (this.state === 'HALF_OPEN' && this.probeOut) return;
      const runId = this.rotation[0]!;
      const queue = this.queues.get(runId)!;
      const head = queue[0];
      if (!head) {
        this.rotation.shift();
        this.queues.delete(runId);
        continue;
      }
      if (this.inUse + head.weight > this.capacity || this.budget.inUse + head.weight > this.budget.limit) return;
      queue.shift();
      this.rotation.push(this.rotation.shift()!);
      if (queue.length === 0) {
        this.queues.delete(runId);
        this.rotation.pop();
      }
      if (head.onAbort) head.signal?.removeEventListener('abort', head.onAbort);
      this.inUse += head.weight;
      this.budget.inUse += head.weight;
      if (this.state === 'HALF_OPEN') this.probeOut = true;
      let released = false;
      head.resolve(() => {
        if (released) return;
        released = true;
        this.inUse -= head.weight;
        this.budget.inUse -= head.weight;
        this.pump();
      });
    }
  }

  /** Rejects every waiter (shutdown). */
  drain(reason: unknown): void {
    for (const queue of this.queues.values()) {
      for (const w of queue) {
        if (w.onAbort) w.signal?.removeEventListener('abort', w.onAbort);
        w.reject(reason);
      }
    }
    this.queues.clear();
    this.rotation.length = 0;
    this.cancelTimer?.();
  }

  private schedule(ms: number): void {
    this.cancelTimer?.();
    this.cancelTimer = this.clock.schedule(() => this.pump(), ms + 5);
  }

  private safely(fn: () => void): void {
    try {
      fn();
    } catch (error) {
      // An observer's failure must not change the lane; it is reported where it can be seen.
      process.emitWarning(`an endpoint lane observer failed: ${String(error)}`);
    }
  }
}
