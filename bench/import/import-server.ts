/**
 * The server side of the import benchmark, in a process of its own so that its memory is only
 * the server's: the real server on a fresh embedded PostgreSQL. Prints one JSON line with the
 * port and the server admin key, then serves until it is sent SIGTERM.
 */
import { startBenchServer } from '../support/bench-server';

async function main(): Promise<void> {
  const server = await startBenchServer();
  process.stdout.write(`${JSON.stringify({ port: server.port, key: server.key })}\n`);
  // SIGUSR2: a full garbage collection, then the heap's size on stderr (is anything retained?).
  process.on('SIGUSR2', () => {
    (globalThis as { gc?: () => void }).gc?.();
    const m = process.memoryUsage();
    process.stderr.write(`after gc: rss ${(m.rss / 1e6).toFixed(0)} MB, heap used ${(m.heapUsed / 1e6).toFixed(0)} MB, external ${(m.external / 1e6).toFixed(0)} MB, array buffers ${(m.arrayBuffers / 1e6).toFixed(0)} MB\n`);
  });
  process.once('SIGTERM', () => {
    void server.close().then(() => process.exit(0));
  });
}

void main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
