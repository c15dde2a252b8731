import type { Server } from 'node:http';
import type { RequestHandler } from 'express';

/** How much one server process takes on at once; past these bounds it answers 503 at once. 0: no bound. */
export interface ConnectionLimits {
  /** Open HTTP and WebSocket connections (MAX_CONNECTIONS). */
  maxConnections: number;
  /** HTTP requests being answered (MAX_REQUESTS_IN_FLIGHT). */
  maxRequestsInFlight: number;
  /** Requests one keep-alive connection carries before it is closed (MAX_REQUESTS_PER_CONNECTION). */
  maxRequestsPerConnection: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = { maxConnections: 1024, maxRequestsInFlight: 128, maxRequestsPerConnection: 1000 };

/** Seconds a shed client is asked to wait: work in flight mostly ends within that. */
export const SHED_RETRY_AFTER_SECONDS = 1;

export const OVERLOADED_MESSAGE = 'The server is busy: try again in a second';

/**
 * Sheds load before it costs anything: a request past the bounds is answered 503 with
 * Retry-After before its body is read, its key checked or the database asked, so that the
 * requests already admitted and the health checks (routed before the shedding) stay fast.
 */
export class LoadShedder {
  private connections = 0;
  private inFlight = 0;
  /** Requests and WebSocket handshakes answered 503, for /metrics and the tests. */
  shed = 0;

  constructor(private readonly limits: ConnectionLimits) {}

  /** Counts the server's connections (WebSocket ones included) and bounds requests per connection. */
  attach(server: Server): void {
    server.on('connection', (socket) => {
      this.connections++;
      socket.once('close', () => this.connections--);
    });
    // Node answers requests past this bound on one connection with 503 and closes it.
    server.maxRequestsPerSocket = this.limits.maxRequestsPerConnection;
  }

  get openConnections(): number {
    return this.connections;
  }

  private get connectionsExceeded(): boolean {
    return this.limits.maxConnections > 0 && this.connections > this.limits.maxConnections;
  }

  /** A new WebSocket is accepted: the process is within its connection bound. */
  admitsWebSocket(): boolean {
    if (!this.connectionsExceeded) return true;
    this.shed++;
    return false;
  }

  middleware(): RequestHandler {
    return (_req, res, next) => {
      const busy = this.limits.maxRequestsInFlight > 0 && this.inFlight >= this.limits.maxRequestsInFlight;
      if (busy || this.connectionsExceeded) {
        this.shed++;
        // Closing the connection gives its socket back; the client reconnects when it retries.
        res.status(503).set({ 'Retry-After': String(SHED_RETRY_AFTER_SECONDS), Connection: 'close' });
        res.json({ errors: [{ message: OVERLOADED_MESSAGE, extensions: { code: 'SERVICE_UNAVAILABLE', reason: 'OVERLOADED', retryAfterSeconds: SHED_RETRY_AFTER_SECONDS } }] });
        return;
      }
      this.inFlight++;
      res.once('close', () => this.inFlight--);
      next();
    };
  }
}
