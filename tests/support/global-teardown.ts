import { rmSync } from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';

export default async function globalTeardown(): Promise<void> {
  const serverUrl = process.env.REPORTQL_TEST_SERVER_URL;
  const template = process.env.REPORTQL_TEST_TEMPLATE;
  if (serverUrl && template) {
    const admin = new Client({ connectionString: serverUrl });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${template}" WITH (FORCE)`).catch(() => undefined);
    await admin.end();
  }
  if (globalThis.__reportqlEmbedded) {
    await globalThis.__reportqlEmbedded.stop();
    rmSync(path.dirname(globalThis.__reportqlEmbedded.clusterDirectory), { recursive: true, force: true });
  }
}
