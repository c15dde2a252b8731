import { GraphQLError } from 'graphql';
import { RateLimiterPostgres, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { DataSource } from 'typeorm';

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

export function rateLimited(retryAfterSeconds: number): GraphQLError {
  return new GraphQLError(`Too many requests: try again in ${retryAfterSeconds} s`, {
    extensions: {
      code: 'RATE_LIMITED',
      retryAfterSeconds,
      // Apollo takes the status and a Map of headers from here (graphql-yoga's typing says a record).
      http: { status: 429, headers: new Map([['retry-after', String(retryAfterSeconds)]]) as unknown as Record<string, string> },
    },
  });
}

export class RateLimitedError extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super(`Too many requests: try again in ${retryAfterSeconds} s`);
    this.name = 'RateLimitedError';
  }
}

/**
 * Rate limits per key and per client address, with failed authentications counted apart, in a
 * PostgreSQL table so that they hold across every server process. A limiter whose store fails
 * (the database is away) lets the request through: the request needs the database anyway and
 * fails on its own.
 */
export class RateLimits {
  private readonly perKey: RateLimiterAbstract | undefined;
  private readonly perAddress: RateLimiterAbstract | undefined;
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
    this.perKey = limiter('key', settings.perKeyPerMinute);
    this.perAddress = limiter('address', settings.perAddressPerMinute);
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
    if (this.perAddress) await this.consume(this.perAddress, address);
  }

  /** After authentication: the key is under its limit. */
  async admitKey(keyId: string): Promise<void> {
    if (this.perKey) await this.consume(this.perKey, keyId);
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
