/**
 * The server side of the import benchmark, in a process of its own so that its memory is only
 * the server's: the real server on a fresh embedded PostgreSQL. Prints one JSON line with the
 * port and the server admin key, then serves until it is sent SIGTERM.
 */
import { startBenchServer } from '../support/bench-server';

async function main(): Promise<void> {
  const server = await startBenchServer();
  process.stdout.write(`${JSON.stringify({ port: server.port, key: server.key })}\n`);
  // With --heap: the largest heap seen every 10 ms since the last SIGUSR2.
  let largest = { heapUsed: 0, external: 0, rss: 0 };
  if (process.argv.includes('--heap')) {
    setInterval(() => {
      const m = process.memoryUsage();
      if (m.rss > largest.rss) largest = { heapUsed: m.heapUsed, external: m.external, rss: m.rss };
    }, 10).unref();
  }
  // SIGUSR2: a full garbage collection, then the heap's size on stderr (is anything retained?).
  process.on('SIGUSR2', () => {
    process.stderr.write(`at the largest RSS since the last report: rss ${(largest.rss / 1e6).toFixed(0)} MB, heap used ${(largest.heapUsed / 1e6).toFixed(0)} MB, external ${(largest.external / 1e6).toFixed(0)} MB\n`);
    largest = { heapUsed: 0, external: 0, rss: 0 };
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
