import { DomainException } from '../domain/errors';

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
 * the server hold (and reload on every event) an unbounded number of subscriptions.
 */
export class WebSocketOperationLimits {
  private readonly byKey = new Map<string, Set<object>>();
  /** Operation ids admitted per connection (graphql-ws's own table also holds the refused ones until they are answered). */
  private readonly byConnection = new WeakMap<object, Set<string>>();
  private readonly refusals = new WeakMap<object, number>();
  /** One refusal for all: a flood of thousands of operations must not cost an error (and its stack) each. */
  private readonly connectionRefusal: DomainException;

  constructor(private readonly limits: WebSocketLimits) {
    this.connectionRefusal = tooMany('TOO_MANY_OPERATIONS', limits.perConnection, 'on one connection');
  }

  /**
   * Before any other work on a new operation: counts it against its connection, or the refusal
   * when the connection already runs as many as it may (the error is the same object every time)
   * and whether to close the connection now: it went on sending as many again after being refused.
   */
  admitOnConnection(connection: { subscriptions: Record<string, unknown> }, id: string): { error: DomainException; close: boolean } | undefined {
    const limit = this.limits.perConnection;
    let running = this.byConnection.get(connection);
    if (!running) this.byConnection.set(connection, (running = new Set()));
    if (limit > 0 && running.size >= limit) {
      // A client's `complete` leaves graphql-ws's table at once but reaches onComplete later.
      for (const admitted of running) if (!(admitted in connection.subscriptions)) running.delete(admitted);
    }
    if (limit <= 0 || running.size < limit) {
      running.add(id);
      return undefined;
    }
    const refused = (this.refusals.get(connection) ?? 0) + 1;
    this.refusals.set(connection, refused);
    return { error: this.connectionRefusal, close: refused === limit };
  }

  /** Counts `operation` against its key, or throws RATE_LIMITED when the key already runs as many as it may. */
  admitForKey(keyId: string, operation: object): void {
    let running = this.byKey.get(keyId);
    if (!running) this.byKey.set(keyId, (running = new Set()));
    if (this.limits.perKey > 0 && running.size >= this.limits.perKey) throw tooMany('TOO_MANY_OPERATIONS_PER_KEY', this.limits.perKey, 'for one API key');
    running.add(operation);
  }

  /** The operation ended on its connection (completed, failed, refused later); releasing twice is harmless. */
  releaseOnConnection(connection: object, id: string): void {
    this.byConnection.get(connection)?.delete(id);
  }

  /** The operation ended (completed, failed or its connection closed); releasing twice is harmless. */
  release(keyId: string, operation: object): void {
    const running = this.byKey.get(keyId);
    if (!running?.delete(operation)) return;
    if (running.size === 0) this.byKey.delete(keyId);
  }
}
