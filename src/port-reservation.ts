import { createServer } from 'node:net';

/** The port cannot be had: in use by another process, or not allowed to this user. */
export class PortUnavailableError extends Error {
  readonly code = 'PORT_UNAVAILABLE';
  constructor(
    readonly port: number,
    readonly host: string | undefined,
    readonly reason: 'in-use' | 'denied' | 'address',
  ) {
    const where = `port ${port}${host ? ` on ${host}` : ''}`;
    const why =
      reason === 'in-use'
        ? `${where} is already in use (is another ReportQL running?). Stop that process, or choose another port: PORT=${port === 0 ? 4001 : port + 1} npm start`
        : reason === 'denied'
          ? `${where} may not be opened by this user (ports below 1024 need privileges). Choose another port, such as PORT=4000`
          : `${host} is not an address of this machine. Set HOST to one of its addresses, 127.0.0.1 (this machine only) or 0.0.0.0 (every interface)`;
    super(`ReportQL cannot start: ${why}.`);
  }
}

export interface PortReservation {
  /** The port held (the chosen one when 0 was asked for). */
  port: number;
  /** Frees the port for the real server, which binds it right after. */
  release(): Promise<void>;
}

/**
 * Binds the port before anything else happens at start (database, keys), so a busy port ends
 * the start at once with a clear message instead of after the database was created.
 */
export function reservePort(port: number, host: string | undefined): Promise<PortReservation> {
  return new Promise((resolve, reject) => {
    // A client that connects meanwhile (a readiness probe) is closed at once: it retries, and no
    // open connection keeps release() waiting.
    const server = createServer((socket) => socket.destroy());
    server.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') reject(new PortUnavailableError(port, host, 'in-use'));
      else if (error.code === 'EACCES' || error.code === 'EPERM') reject(new PortUnavailableError(port, host, 'denied'));
      else if (error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND' || error.code === 'EAI_AGAIN') reject(new PortUnavailableError(port, host, 'address'));
      else reject(error);
    });
    server.listen({ port, host, exclusive: true }, () => {
      const address = server.address();
      resolve({
        port: typeof address === 'object' && address ? address.port : port,
        release: () => new Promise<void>((done) => server.close(() => done())),
      });
    });
  });
}
