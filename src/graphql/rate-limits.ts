import { RateLimiterPostgres, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { DataSource } from 'typeorm';
import { RateLimitedError } from '../domain/errors';

/** Requests per minute; 0 switches a limit off. */
export interface RateLimitSettings {
  /** Per API key, over every process sharing the database. */
  perKeyPerMinute: number;
  /** Per client address, authenticated or not. */
  perAddressPerMinute: number;
  /** Failed authentications per client address; past it, the address is refused for the rest of the minute. */
  authFailuresPerMinute: number;
}

/** The table the limiters share (migration 1764520000000-rate-limits). */
export const RATE_LIMIT_TABLE = 'rate_limits';

/** A lease takes at most this share of what is left of a window, and at most LEASE_MAX points. */
const LEASE_SHARE = 16;
const LEASE_MAX = 50;

interface Lease {
  /** Points taken from the shared counter and not yet spent here. */
  left: number;
  /** The shared window ends (Date.now()). */
  until: number;
  /** What the shared counter had left after the last lease. */
  remaining: number;
  /** The key is over its limit until `until`. */
  refused: boolean;
  /** A lease under way: other requests for the key wait for it. */
  pending?: Promise<void>;
}

/**
 * A limiter of the shared store that takes points in leases: a request spends a point of its
 * process's lease; an empty lease takes a new one from PostgreSQL, of 1 point while fewer than
 * LEASE_SHARE are left in the window and of up to 1/LEASE_SHARE of what is left otherwise. Every
 * point admitted is counted in the store first, so all processes together never admit more than
 * the limit; a lease left unspent when its window ends admits that much less (at most
 * 1/LEASE_SHARE of a window per process).
 */
class LeasedLimiter {
  private readonly leases = new Map<string, Lease>();

  constructor(
    private readonly limiter: RateLimiterAbstract,
    private readonly onStoreError: (error: unknown) => void,
  ) {}

  async consume(key: string): Promise<void> {
    for (;;) {
      const now = Date.now();
      const lease = this.leases.get(key);
      const current = lease && lease.until > now ? lease : undefined;
      if (current?.refused) throw new RateLimitedError(Math.max(1, Math.ceil((current.until - now) / 1000)));
      if (current && current.left > 0) {
        current.left -= 1;
        return;
      }
      if (lease?.pending) {
        await lease.pending;
        continue;
      }
      const size = current ? Math.max(1, Math.min(LEASE_MAX, Math.floor(current.remaining / LEASE_SHARE))) : 1;
      let outcome: { error?: unknown } = {};
      const next: Lease = current ?? { left: 0, until: 0, remaining: 0, refused: false };
      next.pending = this.limiter.consume(key, size).then(
        (res) => {
          Object.assign(next, { left: next.left + size, until: Date.now() + res.msBeforeNext, remaining: res.remainingPoints, refused: false });
        },
        (rejection: unknown) => {
          if (rejection instanceof RateLimiterRes) Object.assign(next, { left: 0, until: Date.now() + rejection.msBeforeNext, remaining: 0, refused: true });
          else outcome = { error: rejection };
        },
      );
      this.leases.set(key, next);
      if (this.leases.size > 10_000) this.sweep(now);
      await next.pending;
      delete next.pending;
      if (outcome.error !== undefined) {
        // The store failed: the request is let through (it needs the database anyway).
        this.onStoreError(outcome.error);
        return;
      }
    }
  }

  private sweep(now: number): void {
    for (const [key, lease] of this.leases) if (lease.until <= now && !lease.pending) this.leases.delete(key);
  }
}

/**
 * Rate limits per key and per client address, with failed authentications counted apart, in a
 * PostgreSQL table so that they hold across every server process. Requests spend points of
 * leases taken from that table (LeasedLimiter), so that a busy key or address costs the
 * database one write per lease rather than one per request (an address's failures are still
 * read on each request, so that they count at once on every process). A limiter whose store fails (the database is away) lets the
 * request through: the request needs the database anyway and fails on its own.
 */
export class RateLimits {
  private readonly perKey: LeasedLimiter | undefined;
  private readonly perAddress: LeasedLimiter | undefined;
  private readonly authFailures: RateLimiterAbstract | undefined;

  constructor(
    dataSource: DataSource,
    readonly settings: RateLimitSettings,
    private readonly onStoreError: (error: unknown) => void = () => undefined,
  ) {
    const limiter = (keyPrefix: string, points: number): RateLimiterAbstract | undefined =>
      points > 0
        ? new RateLimiterPostgres({
            storeClient: dataSource,
            storeType: 'typeorm',
            tableName: RATE_LIMIT_TABLE,
            tableCreated: true,
            // Rows expired an hour ago are deleted every five minutes (an unref'd timer).
            clearExpiredByTimeout: true,
            keyPrefix,
            points,
            duration: 60,
            // Once a key is over its limit, it is refused from memory until the minute ends.
            inMemoryBlockOnConsumed: points,
            inMemoryBlockDuration: 60,
          })
        : undefined;
    const leased = (store: RateLimiterAbstract | undefined) => (store ? new LeasedLimiter(store, onStoreError) : undefined);
    this.perKey = leased(limiter('key', settings.perKeyPerMinute));
    this.perAddress = leased(limiter('address', settings.perAddressPerMinute));
    this.authFailures = limiter('auth-failure', settings.authFailuresPerMinute);
  }

  get enabled(): boolean {
    return Boolean(this.perKey ?? this.perAddress ?? this.authFailures);
  }

  /** Before authentication: the address is under its limit and has not failed too often. */
  async admitAddress(address: string): Promise<void> {
    if (this.authFailures) {
      const failures = await this.guard(() => this.authFailures!.get(address));
      if (failures instanceof RateLimiterRes && failures.remainingPoints <= 0) throw new RateLimitedError(secondsOf(failures));
    }
    if (this.perAddress) await this.perAddress.consume(address);
  }

  /** After authentication: the key is under its limit. */
  async admitKey(keyId: string): Promise<void> {
    if (this.perKey) await this.perKey.consume(keyId);
  }

  /** Counts a failed authentication; throws once the address has failed too often. */
  async failedAuthentication(address: string): Promise<void> {
    if (this.authFailures) await this.consume(this.authFailures, address);
  }

  private async consume(limiter: RateLimiterAbstract, key: string): Promise<void> {
    try {
      await limiter.consume(key, 1);
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) throw new RateLimitedError(secondsOf(rejection));
      this.onStoreError(rejection);
    }
  }

  private async guard<T>(read: () => Promise<T>): Promise<T | undefined> {
    try {
      return await read();
    } catch (error) {
      this.onStoreError(error);
      return undefined;
    }
  }
}

function secondsOf(res: RateLimiterRes): number {
  return Math.max(1, Math.ceil(res.msBeforeNext / 1000));
}
