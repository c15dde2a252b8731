import { createHash } from 'node:crypto';
import { Client } from 'pg';
import type { DataSource } from 'typeorm';

/** Channel on which analytics_changes announces `<project id>:<newest change id>` on commit. */
export const ANALYTICS_CHANNEL = 'reportql_analytics';
const RECONNECT_MS = 1000;


/**
 * Results of statistics keyed by (project revision, what was asked). Any write to a project's
 * annotations, predictions, variables, runs, reports or models appends a change (database
 * triggers) and so moves the project's revision on, in any process.
 *
 * Revisions are learnt by LISTEN/NOTIFY on a connection of this cache's own: a project's
 * revision is queried once, when the listening connection is up, and then kept current by the
 * notifications sent on commit. While the connection is down (not yet up, lost, reconnecting)
 * nothing is trusted: every request queries the revision as before, and nothing learnt before
 * the loss is kept. Concurrent requests for the same cold entry share one computation.
 */
export class AnalyticsCache {
  private readonly entries = new Map<string, Promise<unknown>>();
  /** Newest change id queried per project since the listening connection came up. */
  private readonly known = new Map<string, bigint>();
  /** Notifications received per project since the listening connection came up. */
  private readonly notifications = new Map<string, number>();
  /** Counts the listening connections: tokens of an earlier one never equal a later one's. */
  private epoch = 0;
  private client: Client | undefined;
  private live = false;
  private starting: Promise<void> | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly dataSource: DataSource,
    private readonly capacity = 256,
  ) {}

  /**
   * The project's current revision as an opaque token, synchronously, or undefined when this
   * process does not know it for sure (the listening connection is not up, or the project has
   * not been asked for since it came up): then call `revision(projectId)`. Two equal tokens
   * for a project mean no change to its analytics inputs was announced between them; a change
   * committed in any process gives a new token once its notification arrives (normally within
   * milliseconds of the commit).
   */
  currentRevision(projectId: string): string | undefined {
    if (!this.live) {
      this.ensureListening();
      return undefined;
    }
    const max = this.known.get(projectId);
    return max === undefined ? undefined : this.token(projectId, max);
  }

  /** The project's current revision token: the known one, or one query when it is not known. */
  async revision(projectId: string): Promise<string> {
    const cached = this.currentRevision(projectId);
    if (cached !== undefined) return cached;
    const wasLive = this.live;
    const rows = (await this.dataSource.query('SELECT max(id) AS revision FROM analytics_changes WHERE project_id = $1', [projectId])) as {
      revision: string | null;
    }[];
    const max = BigInt(rows[0]?.revision ?? '0');
    if (!wasLive || !this.live) return `${max}`;
    // LISTEN was up before the query began, so every commit the query may have missed is
    // notified and counted in the token: the token moves on after every announced commit.
    const existing = this.known.get(projectId);
    if (existing !== undefined) return this.token(projectId, existing);
    this.known.set(projectId, max);
    return this.token(projectId, max);
  }

  async getOrCompute<T>(projectId: string, kind: string, args: unknown, compute: () => Promise<T>): Promise<T> {
    const key = `${projectId}:${await this.revision(projectId)}:${kind}:${createHash('sha256').update(JSON.stringify(args)).digest('hex')}`;
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit as Promise<T>;
    }
    const pending = compute();
    this.entries.set(key, pending);
    pending.catch(() => this.entries.delete(key));
    while (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value as string);
    return pending;
  }

  /**
   * Called after this process committed a write a client waits on (a mutation): the revisions
   * known so far are queried again once each, so the client's next read sees its own write even
   * if the write's notification has not arrived yet. Tokens of projects the write did not touch
   * stay equal, so their cached results stay in use.
   */
  afterWrite(): void {
    this.known.clear();
  }

  /** Whether revisions are being learnt by notification (the listening connection is up). */
  get listening(): boolean {
    return this.live;
  }

  /** Waits until the listening connection is up (or has failed; then revisions are queried). */
  async ready(): Promise<void> {
    this.ensureListening();
    await this.starting;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.live = false;
    this.known.clear();
    this.notifications.clear();
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  /**
   * Until a notification arrives, the token is the queried newest change id, the same token a
   * query gives while nothing listens: results computed just before the listening connection came
   * up (at start, after a reconnect) stay in use. After a notification it names the connection
   * and the notifications counted on it, so every announced commit moves it on, also one whose
   * change id is lower than one seen before (transactions commit out of id order).
   */
  private token(projectId: string, max: bigint): string {
    const notified = this.notifications.get(projectId) ?? 0;
    return notified === 0 ? `${max}` : `${this.epoch}.${max}.${notified}`;
  }

  private ensureListening(): void {
    if (this.closed || this.starting || this.reconnectTimer || !this.dataSource.isInitialized) return;
    this.starting = this.listen().finally(() => {
      this.starting = undefined;
    });
  }

  private async listen(): Promise<void> {
    const url = (this.dataSource.options as { url?: string }).url;
    if (!url) return;
    const client = new Client({ connectionString: url, application_name: 'reportql-analytics' });
    client.on('notification', (message) => {
      if (message.channel === ANALYTICS_CHANNEL && client === this.client) this.notified(message.payload);
    });
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      // The listening connection must not keep a process alive that is otherwise done.
      (client as unknown as { connection?: { stream?: { unref?: () => void } } }).connection?.stream?.unref?.();
      this.client = client;
      await client.query(`LISTEN ${ANALYTICS_CHANNEL}`);
      if (this.client !== client || this.closed) return;
      this.known.clear();
      this.notifications.clear();
      this.epoch += 1;
      this.live = true;
    } catch {
      this.lost(client);
    }
  }

  private notified(payload: string | undefined): void {
    const colon = payload?.lastIndexOf(':') ?? -1;
    if (!payload || colon < 0) return;
    const projectId = payload.slice(0, colon);
    this.notifications.set(projectId, (this.notifications.get(projectId) ?? 0) + 1);
  }

  private lost(client: Client): void {
    if (this.client !== client && this.client !== undefined) return;
    this.client = undefined;
    this.live = false;
    this.known.clear();
    this.notifications.clear();
    client.end().catch(() => undefined);
    if (this.closed || this.reconnectTimer) return;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.ensureListening();
    }, RECONNECT_MS);
    this.reconnectTimer.unref();
  }
}
