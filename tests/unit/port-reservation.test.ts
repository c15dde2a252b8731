import { connect, createServer } from 'node:net';
import { PortUnavailableError, reservePort } from '../../src/port-reservation';

describe('reservePort', () => {
  it('holds the port, closes clients that connect meanwhile, and frees it for the server', async () => {
    const reservation = await reservePort(0, '127.0.0.1');
    expect(reservation.port).toBeGreaterThan(0);
    await expect(reservePort(reservation.port, '127.0.0.1')).rejects.toBeInstanceOf(PortUnavailableError);
    // A probe connecting before the server listens is closed, so it retries instead of hanging.
    const closed = await new Promise<boolean>((resolve) => {
      const socket = connect(reservation.port, '127.0.0.1');
      socket.on('close', () => resolve(true));
      socket.on('error', () => undefined);
    });
    expect(closed).toBe(true);
    await reservation.release();
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(reservation.port, '127.0.0.1', () => resolve());
    });
    await new Promise((resolve) => server.close(resolve));
  });

  it('names a busy port', async () => {
    const reservation = await reservePort(0, '127.0.0.1');
    try {
      const error = await reservePort(reservation.port, '127.0.0.1').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(PortUnavailableError);
      expect((error as PortUnavailableError).message).toBe(
        `ReportQL cannot start: port ${reservation.port} on 127.0.0.1 is already in use (is another ReportQL running?). Stop that process, or choose another port: PORT=${reservation.port + 1} npm start.`,
      );
    } finally {
      await reservation.release();
    }
  });
});
