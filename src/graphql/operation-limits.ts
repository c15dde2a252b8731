import { DomainException } from './errors';

/** How many operations (subscriptions, queries, mutations) run at once over WebSocket. 0: no bound. */
export interface WebSocketLimits {
  /** On one connection (WS_OPERATIONS_PER_CONNECTION). */
  perConnection: number;
  /** Per API key over all connections of this process (WS_OPERATIONS_PER_KEY). */
  perKey: number;
}

export const DEFAULT_WEBSOCKET_LIMITS: WebSocketLimits = { perConnection: 100, perKey: 500 };

/** WebSocket close code of a connection over a limit (the HTTP status 429 in the 4xxx range). */
export const TOO_MANY_REQUESTS_CLOSE = 4429;

const tooMany = (reason: string, limit: number, what: string) =>
  new DomainException('RATE_LIMITED', `Too many operations at once ${what} (at most ${limit}): complete some first`, { reason, limit });

/**
 * Counts the operations running over WebSocket, so that one connection or one key cannot make
 * the server hold (and reload on every event) an unbounded number of subscriptions. The count of
 * a connection is what graphql-ws itself holds for it; a key's is kept here.
 */
export class WebSocketOperationLimits {
  private readonly byKey = new Map<string, Set<object>>();
  private readonly refusals = new WeakMap<object, number>();

  constructor(private readonly limits: WebSocketLimits) {}

  /**
   * Before any other work on a new operation: the refusal when its connection already runs as
   * many as it may (`running` counts the new one), and whether the connection should be closed
   * because it went on sending as many again after being refused.
   */
  refusalOnConnection(connection: object, running: number): { error: DomainException; close: boolean } | undefined {
    const limit = this.limits.perConnection;
    if (limit <= 0 || running <= limit) return undefined;
    const refused = (this.refusals.get(connection) ?? 0) + 1;
    this.refusals.set(connection, refused);
    return { error: tooMany('TOO_MANY_OPERATIONS', limit, 'on one connection'), close: refused >= limit };
  }

  /** Counts `operation` against its key, or throws RATE_LIMITED when the key already runs as many as it may. */
  admitForKey(keyId: string, operation: object): void {
    let running = this.byKey.get(keyId);
    if (!running) this.byKey.set(keyId, (running = new Set()));
    if (this.limits.perKey > 0 && running.size >= this.limits.perKey) throw tooMany('TOO_MANY_OPERATIONS_PER_KEY', this.limits.perKey, 'for one API key');
    running.add(operation);
  }

  /** The operation ended (completed, failed or its connection closed); releasing twice is harmless. */
  release(keyId: string, operation: object): void {
    const running = this.byKey.get(keyId);
    if (!running?.delete(operation)) return;
    if (running.size === 0) this.byKey.delete(keyId);
  }
}
