/**
 * The cross-process event bus: PostgreSQL LISTEN/NOTIFY on one channel. Every process (server
 * or worker) publishes through the pool and listens on a connection of its own, so a worker's
 * event reaches the subscribers of every server. Payloads carry ids only (NOTIFY allows 8000
 * bytes); receivers read the state from the database. A lost listening connection is
 * reconnected with growing waits; events sent while it was down are not replayed, which is why
 * subscriptions read the current state again when it is back and workers also poll.
 */
import { Client, type ClientConfig, type Pool } from 'pg';
import type { RunChange, RunEventListener, RunEventPublisher } from '../jobs/events';
import type { RunFeed, RunFeedEvent } from '../modules/run/run-progress.service';
import { isConnectionLoss } from '../jobs/prediction-writer';
import { databaseUnavailable } from '../domain/errors';

export const EVENT_CHANNEL = 'reportql_events';
const IDS_PER_NOTIFICATION = 150;

export type BusEvent =
  | { kind: 'run'; runId: string; experimentId: string | null }
  | { kind: 'predictions'; runId: string; ids: string[] }
  | { kind: 'cancel'; runId: string }
  | { kind: 'jobs' }
  | { kind: 'keyRevoked'; keyId: string }
  | { kind: 'task'; taskId: string };

type Listener = (event: BusEvent) => void;

/** NOTIFY payloads are limited to 8000 bytes: ids go out in groups. */
function predictionEvents(runId: string, ids: readonly string[]): BusEvent[] {
  const events: BusEvent[] = [];
  for (let i = 0; i < ids.length; i += IDS_PER_NOTIFICATION) events.push({ kind: 'predictions', runId, ids: ids.slice(i, i + IDS_PER_NOTIFICATION) });
  return events;
}

function parse(payload: string | undefined): BusEvent | null {
  if (!payload) return null;
  try {
    const event = JSON.parse(payload) as BusEvent;
    return typeof event === 'object' && event !== null && typeof event.kind === 'string' ? event : null;
  } catch {
    return null;
  }
}

/** The LISTEN connection's state as subscriptions see it. */
export type BusConnectionState =
  /** The connection broke: events of other processes do not arrive until it is back. */
  | 'down'
  /** The connection is back: events sent meanwhile are lost, current state must be read again. */
  | 'up'
  /** The connection stayed away longer than the outage limit: subscriptions end (reconnecting goes on). */
  | 'unavailable';

export interface EventBusOptions {
  /** Wait before the first reconnection attempt, milliseconds; it doubles per failed attempt. */
  reconnectDelayMs?: number;
  /** Longest wait between reconnection attempts, milliseconds. */
  maxReconnectDelayMs?: number;
  /** How long subscriptions wait for a lost connection before ending with SERVICE_UNAVAILABLE, milliseconds. */
  outageLimitMs?: number;
}

export const DEFAULT_OUTAGE_LIMIT_MS = 30_000;

export class PgEventBus implements RunEventPublisher, RunEventListener {
  private readonly listeners = new Set<Listener>();
  private readonly connectionListeners = new Set<(state: BusConnectionState) => void>();
  private client: Client | undefined;
  private closed = false;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private outageTimer: NodeJS.Timeout | undefined;
  private live = false;
  private failedAttempts = 0;
  private readonly reconnectDelayMs: number;
  private readonly maxReconnectDelayMs: number;
  /** How long a subscription waits for the database to come back (also when only its own reads fail). */
  readonly outageLimitMs: number;

  constructor(
    private readonly pool: Pool,
    private readonly connection: ClientConfig,
    private readonly onError: (error: unknown) => void = () => undefined,
    options: EventBusOptions = {},
  ) {
    this.reconnectDelayMs = options.reconnectDelayMs ?? 250;
    this.maxReconnectDelayMs = options.maxReconnectDelayMs ?? 5000;
    this.outageLimitMs = options.outageLimitMs ?? DEFAULT_OUTAGE_LIMIT_MS;
  }

  async start(): Promise<void> {
    const client = new Client({ ...this.connection, application_name: 'reportql-events' });
    client.on('notification', (message) => {
      if (message.channel !== EVENT_CHANNEL) return;
      const event = parse(message.payload);
      if (event) this.emit(event);
    });
    client.on('error', (error) => {
      this.onError(error);
      this.lost(client);
    });
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${EVENT_CHANNEL}`);
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.live = true;
  }

  /** The LISTEN connection is up: events of other processes reach this one. */
  get listening(): boolean {
    return this.live && !this.closed;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    clearTimeout(this.outageTimer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  /** Receives every event of this process's connection; returns the unsubscribe function. */
  on(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Told when the LISTEN connection breaks, comes back, or stays away past the outage limit. */
  onConnection(listener: (state: BusConnectionState) => void): () => void {
    this.connectionListeners.add(listener);
    return () => this.connectionListeners.delete(listener);
  }

  async publish(event: BusEvent): Promise<void> {
    await this.pool.query('SELECT pg_notify($1, $2)', [EVENT_CHANNEL, JSON.stringify(event)]);
  }

  /** Several events in one statement (one round trip), in order. */
  async publishAll(events: readonly BusEvent[]): Promise<void> {
    if (events.length === 0) return;
    await this.pool.query('SELECT pg_notify($1, payload) FROM unnest($2::text[]) WITH ORDINALITY AS e(payload, n) ORDER BY n', [
      EVENT_CHANNEL,
      events.map((e) => JSON.stringify(e)),
    ]);
  }

  runsChanged(changes: readonly RunChange[]): Promise<void> {
    return this.publishAll(changes.map((c) => ({ kind: 'run', runId: c.runId, experimentId: c.experimentId })));
  }

  committed(predictions: readonly { runId: string; ids: readonly string[] }[], changes: readonly RunChange[]): Promise<void> {
    return this.publishAll([
      ...predictions.flatMap((p) => predictionEvents(p.runId, p.ids)),
      ...changes.map((c): BusEvent => ({ kind: 'run', runId: c.runId, experimentId: c.experimentId })),
    ]);
  }

  runCancelled(runId: string): Promise<void> {
    return this.publish({ kind: 'cancel', runId });
  }

  jobsAvailable(): Promise<void> {
    return this.publish({ kind: 'jobs' });
  }

  onRunCancelled(listener: (runId: string) => void): () => void {
    return this.on((event) => {
      if (event.kind === 'cancel') listener(event.runId);
    });
  }

  onJobsAvailable(listener: () => void): () => void {
    return this.on((event) => {
      if (event.kind === 'jobs') listener();
    });
  }

  private emit(event: BusEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (error) {
        this.onError(error);
      }
    }
  }

  private announce(state: BusConnectionState): void {
    for (const listener of this.connectionListeners) {
      try {
        listener(state);
      } catch (error) {
        this.onError(error);
      }
    }
  }

  /** The connection broke: reconnect with growing waits, and give subscribers up after the outage limit. */
  private lost(broken: Client): void {
    if (this.closed || this.client !== broken) return;
    this.client = undefined;
    this.live = false;
    void broken.end().catch(() => undefined);
    this.failedAttempts = 0;
    clearTimeout(this.outageTimer);
    this.outageTimer = setTimeout(() => this.announce('unavailable'), this.outageLimitMs);
    this.outageTimer.unref();
    this.announce('down');
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    // Jitter keeps the processes of a deployment from reconnecting in step after a restart.
    const backoff = Math.min(this.maxReconnectDelayMs, this.reconnectDelayMs * 2 ** this.failedAttempts);
    const wait = backoff / 2 + Math.random() * (backoff / 2);
    this.reconnectTimer = setTimeout(() => {
      if (this.closed) return;
      this.start().then(
        () => {
          if (this.closed) return;
          clearTimeout(this.outageTimer);
          this.failedAttempts = 0;
          this.announce('up');
        },
        (error: unknown) => {
          if (this.closed) return;
          this.onError(error);
          this.failedAttempts++;
          this.scheduleReconnect();
        },
      );
    }, wait);
    this.reconnectTimer.unref();
  }
}

export interface SubscriptionOptions<T> {
  /** Reload this often even without events (a missed notification, a deleted object), milliseconds. */
  refreshMs?: number;
  /** Values with the key of the value sent last are not sent again. */
  key?: (value: T) => string;
}

/** How soon a subscription whose reads failed on a lost connection reads again while the event connection is up. */
const RETRY_AFTER_CONNECTION_LOSS_MS = 1000;

/**
 * The events matching `select`, as an async iterator for a GraphQL subscription: `initial`
 * first (the current state, for late subscribers), then what `load` makes of the events that
 * came, with bursts coalesced: while `load` runs, further events only queue for the next load.
 * `load` may call `end()`: the iteration finishes after the values it returns. A failing load
 * ends the iteration with that error, except a lost database connection: the subscription then
 * waits for the database and sends `initial` again once it is back (events of the outage are
 * lost, the current state replaces them); a database away longer than the bus's outage limit
 * ends it with SERVICE_UNAVAILABLE.
 */
export function subscription<T>(
  bus: PgEventBus,
  select: (event: BusEvent) => boolean,
  load: (events: BusEvent[], end: () => void) => Promise<T[]>,
  initial: (end: () => void) => Promise<T[]>,
  options: SubscriptionOptions<T> = {},
): AsyncIterableIterator<T> {
  const ready: T[] = [];
  let pendingEvents: BusEvent[] = [];
  let refreshDue = false;
  let snapshotDue = true;
  let waiter: { resolve(result: IteratorResult<T>): void; reject(error: unknown): void } | null = null;
  let loading = false;
  let finished = false;
  let ending = false;
  let lastKey: string | undefined;
  let failure: { error: unknown } | null = null;
  /** Since when reads have failed on a lost connection (undefined: they have not). */
  let failingSince: number | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  const end = (): void => {
    ending = true;
  };
  const push = (values: T[]): void => {
    for (const value of values) {
      const key = options.key?.(value);
      if (key !== undefined && key === lastKey) continue;
      lastKey = key;
      ready.push(value);
    }
  };

  const deliver = (): void => {
    if (!waiter) return;
    const { resolve, reject } = waiter;
    if (ready.length > 0) {
      waiter = null;
      resolve({ value: ready.shift()!, done: false });
    } else if (failure) {
      waiter = null;
      reject(failure.error);
    } else if (finished) {
      waiter = null;
      resolve({ value: undefined, done: true });
    }
  };
  const stop = (): void => {
    finished = true;
    off();
    offConnection();
    if (timer) clearInterval(timer);
    clearTimeout(retryTimer);
  };
  const fail = (error: unknown): void => {
    if (finished) return;
    failure = { error };
    stop();
    deliver();
  };
  const off = bus.on((event) => {
    if (finished || !select(event)) return;
    pendingEvents.push(event);
    void pump();
  });
  const offConnection = bus.onConnection((state) => {
    if (finished) return;
    if (state === 'unavailable') return fail(databaseUnavailable());
    if (state !== 'up') return;
    // The client may have missed anything: it gets the current state even when it looks the same.
    lastKey = undefined;
    snapshotDue = true;
    void pump();
  });
  const timer = options.refreshMs
    ? setInterval(() => {
        refreshDue = true;
        void pump();
      }, options.refreshMs)
    : undefined;
  timer?.unref();
  const pump = async (): Promise<void> => {
    if (loading || finished) return;
    loading = true;
    try {
      while ((snapshotDue || pendingEvents.length > 0 || refreshDue) && !finished && !ending) {
        if (snapshotDue) {
          snapshotDue = false;
          // Events already queued are covered by the state read now.
          pendingEvents = [];
          refreshDue = false;
          push(await initial(end));
        } else {
          const batch = pendingEvents;
          pendingEvents = [];
          refreshDue = false;
          push(await load(batch, end));
        }
        failingSince = undefined;
        deliver();
      }
      if (ending) stop();
    } catch (error) {
      if (!isConnectionLoss(error)) {
        failure = { error };
        stop();
      } else {
        failingSince ??= Date.now();
        if (Date.now() - failingSince >= bus.outageLimitMs) {
          failure = { error: databaseUnavailable() };
          stop();
        } else {
          // Whatever the lost read carried is read again as the current state.
          snapshotDue = true;
          // While the event connection is down its return starts the next read; otherwise a timer does.
          if (bus.listening) {
            clearTimeout(retryTimer);
            retryTimer = setTimeout(() => void pump(), RETRY_AFTER_CONNECTION_LOSS_MS);
            retryTimer.unref();
          }
        }
      }
    } finally {
      loading = false;
    }
    deliver();
  };
  void pump();

  const iterator: AsyncIterableIterator<T> = {
    next: () =>
      new Promise<IteratorResult<T>>((resolve, reject) => {
        waiter = { resolve, reject };
        deliver();
      }),
    return: async () => {
      stop();
      ready.length = 0;
      failure = null;
      deliver();
      return { value: undefined, done: true };
    },
    [Symbol.asyncIterator]: () => iterator,
  };
  return iterator;
}

function isRunFeedEvent(event: BusEvent): event is RunFeedEvent & BusEvent {
  return event.kind === 'run' || event.kind === 'predictions';
}

/** A feed of the run-progress service as a subscription over this bus. */
export function feedSubscription<T>(bus: PgEventBus, feed: RunFeed<T>): AsyncIterableIterator<T> {
  return subscription(bus, (e) => isRunFeedEvent(e) && feed.wakesOn(e), (events, end) => feed.load(events.filter(isRunFeedEvent), end), feed.initial, {
    refreshMs: feed.refreshMs,
    ...(feed.key ? { key: feed.key } : {}),
  });
}
