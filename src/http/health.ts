import { Client, type ClientConfig } from 'pg';
import type { DataSource } from 'typeorm';
import type { Services } from '../services';

export interface Readiness {
  status: 'ready' | 'unavailable';
  database: 'up' | 'down';
  queue: 'up' | 'down';
  events: 'up' | 'down';
}

const within = <T>(promise: Promise<T>, ms: number): Promise<T> =>
  Promise.race([promise, new Promise<T>((_, reject) => setTimeout(() => reject(new Error('timed out')), ms).unref())]);

/**
 * Ready to serve: the database answers, the job queue's tables can be read, and the LISTEN
 * connection that carries events between processes is up. Each check has 2 s.
 */
export async function readiness(dataSource: DataSource, services: Pick<Services, 'queue' | 'bus'>): Promise<Readiness> {
  const [database, queue] = await Promise.all([
    within(dataSource.query('SELECT 1'), 2000).then(() => 'up' as const, () => 'down' as const),
    within(services.queue.depth(), 2000).then(() => 'up' as const, () => 'down' as const),
  ]);
  const events = services.bus.listening ? 'up' : 'down';
  const ready = database === 'up' && queue === 'up' && events === 'up';
  return { status: ready ? 'ready' : 'unavailable', database, queue, events };
}

/**
 * `SELECT 1` on a connection of its own, so that /healthz answers while the pool is busy with
 * requests (it would otherwise wait in the pool's queue behind them). A probe is answered with
 * the last check's result at once, and a check older than a second is renewed for the next
 * probes: a busy database delays no probe, and one that stops answering is reported within the
 * check's timeout. Only the first probe waits for a check. A flood of probes costs one query at a time.
 */
export class DatabaseProbe {
  private client: Client | undefined;
  private pending: Promise<boolean> | undefined;
  private last: { up: boolean; at: number } | undefined;
  private closed = false;

  constructor(
    private readonly connection: ClientConfig,
    /** The server's own access to the database is open (its pool is not closed). */
    private readonly open: () => boolean,
    private readonly timeoutMs = 2000,
    private readonly freshMs = 1000,
  ) {}

  /** The database answered the last check within the timeout. */
  check(): Promise<boolean> {
    if (!this.open()) return Promise.resolve(false);
    const age = this.last ? Date.now() - this.last.at : Infinity;
    if (this.last && age < this.freshMs) return Promise.resolve(this.last.up);
    this.pending ??= this.ask()
      .then((up) => {
        this.last = { up, at: Date.now() };
        return up;
      })
      .finally(() => (this.pending = undefined));
    return this.last ? Promise.resolve(this.last.up) : this.pending;
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private async ask(): Promise<boolean> {
    if (this.closed) return false;
    try {
      await within(this.query(), this.timeoutMs);
      return true;
    } catch {
      // A broken or stuck connection is replaced by the next check.
      const client = this.client;
      this.client = undefined;
      void client?.end().catch(() => undefined);
      return false;
    }
  }

  private async query(): Promise<void> {
    if (!this.client) {
      const client = new Client({ ...this.connection, application_name: 'reportql-health' });
      client.on('error', () => {
        if (this.client === client) this.client = undefined;
      });
      this.client = client;
      await client.connect();
    }
    await this.client.query('SELECT 1');
  }
}
