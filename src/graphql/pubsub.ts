/**
 * The cross-process event bus: PostgreSQL LISTEN/NOTIFY on one channel. Every process (server
 * or worker) publishes through the pool and listens on a connection of its own, so a worker's
 * event reaches the subscribers of every server. Payloads carry ids only (NOTIFY allows 8000
 * bytes); receivers read the state from the database. A lost listening connection is
 * reconnected; events sent while it was down are not replayed, which is why subscriptions
 * start from the current state and workers also poll.
 */
import { Client, type ClientConfig, type Pool } from 'pg';
import type { RunChange, RunEventListener, RunEventPublisher } from '../jobs/events';
import type { RunFeed, RunFeedEvent } from '../modules/run/run-progress.service';

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

export class PgEventBus implements RunEventPublisher, RunEventListener {
  private readonly listeners = new Set<Listener>();
  private client: Client | undefined;
  private closed = false;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private live = false;

  constructor(
    private readonly pool: Pool,
    private readonly connection: ClientConfig,
    private readonly onError: (error: unknown) => void = () => undefined,
  ) {}

  async start(): Promise<void> {
    const client = new Client({ ...this.connection, application_name: 'reportql-events' });
    client.on('notification', (message) => {
      if (message.channel !== EVENT_CHANNEL) return;
      const event = parse(message.payload);
      if (event) this.emit(event);
    });
    client.on('error', (error) => {
      this.onError(error);
      this.reconnect(client);
    });
    client.on('end', () => this.reconnect(client));
    await client.connect();
    await client.query(`LISTEN ${EVENT_CHANNEL}`);
    this.client = client;
    this.live = true;
  }

  /** The LISTEN connection is up: events of other processes reach this one. */
  get listening(): boolean {
    return this.live && !this.closed;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  /** Receives every event of this process's connection; returns the unsubscribe function. */
  on(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
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

  private reconnect(broken: Client): void {
    if (this.closed || this.client !== broken) return;
    this.client = undefined;
    this.live = false;
    void broken.end().catch(() => undefined);
    this.reconnectTimer = setTimeout(() => {
      if (this.closed) return;
      this.start().catch((error: unknown) => {
        this.onError(error);
        this.client = broken;
        this.reconnect(broken);
      });
    }, 1000);
    this.reconnectTimer.unref();
  }
}

export interface SubscriptionOptions<T> {
  /** Reload this often even without events (a missed notification, a deleted object), milliseconds. */
  refreshMs?: number;
  /** Values with the key of the value sent last are not sent again. */
  key?: (value: T) => string;
}

/**
 * The events matching `select`, as an async iterator for a GraphQL subscription: `initial`
 * first (the current state, for late subscribers), then what `load` makes of the events that
 * came, with bursts coalesced: while `load` runs, further events only queue for the next load.
 * `load` may call `end()`: the iteration finishes after the values it returns. A failing load
 * ends the iteration with that error.
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
  let waiter: { resolve(result: IteratorResult<T>): void; reject(error: unknown): void } | null = null;
  let loading = false;
  let finished = false;
  let ending = false;
  let lastKey: string | undefined;
  let failure: { error: unknown } | null = null;
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
    if (timer) clearInterval(timer);
  };
  const off = bus.on((event) => {
    if (finished || !select(event)) return;
    pendingEvents.push(event);
    void pump();
  });
  const timer = options.refreshMs
    ? setInterval(() => {
        refreshDue = true;
        void pump();
      }, options.refreshMs)
    : undefined;
  timer?.unref();
  const pump = async (first?: (end: () => void) => Promise<T[]>): Promise<void> => {
    if (loading || finished) return;
    loading = true;
    try {
      if (first) push(await first(end));
      deliver();
      while ((pendingEvents.length > 0 || refreshDue) && !finished && !ending) {
        const batch = pendingEvents;
        pendingEvents = [];
        refreshDue = false;
        push(await load(batch, end));
        deliver();
      }
      if (ending) stop();
    } catch (error) {
      failure = { error };
      stop();
    } finally {
      loading = false;
    }
    deliver();
  };
  void pump(initial);

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
