/**
 * The per-endpoint concurrency limit across every worker process sharing the database.
 *
 * Slot s of endpoint e is the PostgreSQL advisory lock (hashtext('reportql:endpoint:' || e), s),
 * for s < maxConcurrency, held on a connection of its own by the worker that uses it. A worker
 * that dies loses its connection and, with it, its slots at once: no lease to wait for. Since a
 * slot is a lock, the endpoint never has more than maxConcurrency calls in flight from all
 * workers together, however the workers share them.
 *
 * The sharing: every tick each worker records its demand per endpoint in job_workers (its
 * heartbeat), reads the demand of the live workers, and takes its max-min fair share
 * (water-filling: nobody gets more than it wants, the rest is split evenly). It acquires free
 * slots up to its share and releases the slots it holds beyond it, as soon as they are idle.
 */
import { hostname } from 'node:os';
import { Client, type ClientConfig } from 'pg';
import type { Logger } from '../logger';
import type { EndpointLane } from './endpoint-lane';

export const HEARTBEAT_STALE_SECONDS = 10;

/** Max-min fair shares of `capacity` among `wants` (integers; leftovers to the earliest). */
export function fairShares(capacity: number, wants: readonly number[]): number[] {
  const shares = wants.map(() => 0);
  let left = Math.max(0, capacity);
  let open = wants.map((w, i) => ({ i, w: Math.max(0, w) })).filter((x) => x.w > 0);
  while (left > 0 && open.length > 0) {
    const each = Math.max(1, Math.floor(left / open.length));
    const next: typeof open = [];
    for (const x of open) {
      if (left === 0) break;
      const give = Math.min(each, x.w - shares[x.i]!, left);
      shares[x.i]! += give;
      left -= give;
      if (shares[x.i]! < x.w) next.push(x);
    }
    open = next;
  }
  return shares;
}

export class EndpointSlots {
  private client: Client | undefined;
  private readonly held = new Map<string, Set<number>>();
  private connecting: Promise<Client> | undefined;
  /** When this worker's heartbeat was last recorded (Date.now()); 0 before the first. */
  lastBeatAt = 0;

  constructor(
    private readonly connection: ClientConfig,
    readonly workerId: string,
    private readonly perWorkerCap: number,
    private readonly logger: Logger,
  ) {}

  /** One round: heartbeat with demand, fair shares, acquire and release. */
  async tick(lanes: readonly EndpointLane[]): Promise<void> {
    let client: Client;
    try {
      client = await this.connect();
    } catch (error) {
      // Tried again at the next tick (4 times a second while the database is away: debug only).
      this.logger.debug({ err: error }, 'the endpoint slots connection failed; this worker holds no slots until it is back');
      this.lost(lanes);
      return;
    }
    try {
      const demand: Record<string, number> = {};
      for (const lane of lanes) {
        const wanted = Math.min(lane.demand(), this.perWorkerCap);
        if (wanted > 0 || (this.held.get(lane.endpointId)?.size ?? 0) > 0) demand[lane.endpointId] = wanted;
      }
      await client.query(
        `INSERT INTO job_workers (id, host, pid, heartbeat_at, demand) VALUES ($1, $2, $3, now(), $4)
         ON CONFLICT (id) DO UPDATE SET heartbeat_at = now(), demand = EXCLUDED.demand`,
        [this.workerId, hostname(), process.pid, JSON.stringify(demand)],
      );
      this.lastBeatAt = Date.now();
      const ids = lanes.map((l) => l.endpointId);
      if (ids.length === 0) return;
      const others = (
        await client.query<{ id: string; demand: Record<string, number> }>(
          `SELECT id, demand FROM job_workers WHERE heartbeat_at > now() - make_interval(secs => $1) ORDER BY id`,
          [HEARTBEAT_STALE_SECONDS],
        )
      ).rows;
      const limits = new Map(
        (await client.query<{ id: string; max_concurrency: number }>('SELECT id, max_concurrency FROM endpoints WHERE id = ANY($1)', [ids])).rows.map((r) => [
          r.id,
          r.max_concurrency,
        ]),
      );
      for (const lane of lanes) {
        const max = limits.get(lane.endpointId);
        if (max === undefined) {
          await this.resize(client, lane, 0, 0);
          continue;
        }
        lane.maxConcurrency = max;
        const wants = others.map((w) => (w.id === this.workerId ? (demand[lane.endpointId] ?? 0) : Number(w.demand[lane.endpointId] ?? 0)));
        const me = others.findIndex((w) => w.id === this.workerId);
        const share = me >= 0 ? fairShares(max, wants)[me]! : 0;
        await this.resize(client, lane, share, max);
      }
    } catch (error) {
      // The connection broke: its locks are gone with it.
      this.logger.debug({ err: error }, 'the endpoint slots connection broke; its slots are released');
      this.dropClient();
      this.lost(lanes);
    }
  }

  async close(): Promise<void> {
    const client = this.client;
    // Not dropClient: the row is deleted on this connection before it ends.
    this.client = undefined;
    this.held.clear();
    if (client) {
      // A row left behind is a silent heartbeat: other workers take it for a dead worker's.
      await client
        .query('DELETE FROM job_workers WHERE id = $1', [this.workerId])
        .catch((error: unknown) => this.logger.warn({ err: error }, "removing this worker's heartbeat row failed"));
      await client.end().catch((error: unknown) => this.logger.debug({ err: error }, 'closing the endpoint slots connection failed'));
    }
  }

  private async resize(client: Client, lane: EndpointLane, share: number, max: number): Promise<void> {
    let held = this.held.get(lane.endpointId);
    if (!held) {
      held = new Set();
      this.held.set(lane.endpointId, held);
    }
    const key = `reportql:endpoint:${lane.endpointId}`;
    // Slots beyond a lowered limit, and idle slots beyond the share, go back (highest first).
    const keep = Math.max(share, lane.inUse);
    for (const slot of [...held].sort((x, y) => y - x)) {
      if (slot < max && held.size <= keep) break;
      await client.query('SELECT pg_advisory_unlock(hashtext($1), $2)', [key, slot]);
      held.delete(slot);
    }
    const need = Math.min(share, max) - held.size;
    if (need > 0) {
      const candidates = Array.from({ length: max }, (_, s) => s).filter((s) => !held.has(s));
      const got = (
        await client.query<{ s: number }>('SELECT s FROM unnest($2::int[]) AS s WHERE pg_try_advisory_lock(hashtext($1), s) LIMIT $3', [key, candidates, need])
      ).rows;
      for (const { s } of got) held.add(s);
    }
    lane.capacity = [...held].filter((s) => s < max).length;
    lane.pump();
  }

  private lost(lanes: readonly EndpointLane[]): void {
    this.held.clear();
    for (const lane of lanes) lane.capacity = 0;
  }

  private connect(): Promise<Client> {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= (async () => {
      const client = new Client({ ...this.connection, application_name: 'reportql-slots' });
      client.on('error', () => {
        if (this.client === client) this.dropClient();
      });
      try {
        await client.connect();
      } catch (error) {
        this.connecting = undefined;
        throw error;
      }
      this.client = client;
      this.connecting = undefined;
      return client;
    })();
    return this.connecting;
  }

  private dropClient(): void {
    const client = this.client;
    this.client = undefined;
    this.held.clear();
    // Its locks go with the connection, however the end goes.
    if (client) void client.end().catch((error: unknown) => this.logger.debug({ err: error }, 'closing the endpoint slots connection failed'));
  }
}
