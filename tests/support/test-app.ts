import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import type { DataSource } from 'typeorm';
import { createApp, type App, type AppOptions } from '../../src/app';
import { openDatabase } from '../../src/db/data-source';
import type { QueueOptions } from '../../src/jobs/queue';
import type { RateLimitSettings } from '../../src/graphql/rate-limits';
import type { Principal } from '../../src/modules/api-key/principal';
import type { EgressPolicy } from '../../src/llm/egress';
import type { Logger } from '../../src/logger';
import type { ServiceOptions, Services } from '../../src/services';
import { withDatabase } from './global-setup';
import { LOG_MARKER, testLogger } from './test-log';

export const TEST_SECRET_KEY = 'test-secret-key-of-reportql';

/** A server administrator, for calling services directly (no API key behind it). */
export const SERVER_ADMIN: Principal = { keyId: 'test', projectId: null, role: null, serverAdmin: true };

export interface GraphQLResponse<T = Record<string, any>> {
  status: number;
  data?: T;
  errors?: { message: string; path?: string[]; extensions?: Record<string, any> }[];
}

export interface TestApp {
  url: string;
  port: number;
  /** postgresql:// URL of this test's own database (for worker processes). */
  databaseUrl: string;
  app: App;
  dataSource: DataSource;
  services: Services;
  adminKey: string;
  /** SQL statements run since the last reset (for query-count tests). */
  queries: string[];
  gql<T = Record<string, any>>(query: string, variables?: Record<string, unknown>, key?: string | null): Promise<GraphQLResponse<T>>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  queue?: QueueOptions;
  /** ENDPOINT_ALLOW of the server. */
  egress?: EgressPolicy;
  /** Rate limits and request deadline (default: no limits, the server's default deadline). */
  rateLimits?: RateLimitSettings;
  requestDeadlineMs?: number;
  /** HTTP settings of the app (CORS origins, …). */
  http?: Omit<AppOptions, keyof ServiceOptions>;
  /** The app's logger (default: silent). */
  logger?: Logger;
}

/** A fresh database cloned from the migrated template, and the real HTTP server on a free port. */
export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const serverUrl = process.env.REPORTQL_TEST_SERVER_URL;
  const template = process.env.REPORTQL_TEST_TEMPLATE;
  if (!serverUrl || !template) throw new Error('the jest global setup did not run');
  const database = `reportql_test_${randomBytes(6).toString('hex')}`;
  const admin = new Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${database}" TEMPLATE "${template}"`);
  await admin.end();

  const queries: string[] = [];
  const databaseUrl = withDatabase(serverUrl, database);
  const dataSource = await openDatabase({ url: databaseUrl, onQuery: (sql) => queries.push(sql) });
  const logger = options.logger ?? testLogger();
  const app = await createApp(dataSource, logger, {
    secretKey: TEST_SECRET_KEY,
    ...(options.queue ? { queue: options.queue } : {}),
    ...(options.egress ? { egress: options.egress } : {}),
    ...(options.rateLimits ? { rateLimits: options.rateLimits } : {}),
    ...(options.requestDeadlineMs ? { requestDeadlineMs: options.requestDeadlineMs } : {}),
    ...options.http,
  });
  const port = await app.listen(0, '127.0.0.1');
  const adminKey = `rql_test_admin_${LOG_MARKER}_${randomBytes(16).toString('hex')}`;
  await app.services.apiKeys.ensureServerAdmin(adminKey);
  const url = `http://127.0.0.1:${port}/graphql`;

  return {
    url,
    port,
    databaseUrl,
    app,
    dataSource,
    services: app.services,
    adminKey,
    queries,
    async gql(query, variables, key = adminKey) {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
        body: JSON.stringify({ query, variables }),
      });
      const body = (await response.json()) as GraphQLResponse;
      return { ...body, status: response.status } as GraphQLResponse<any>;
    },
    async close() {
      await app.close();
      await dataSource.destroy();
      const cleanup = new Client({ connectionString: serverUrl });
      await cleanup.connect();
      await cleanup.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`).catch(() => undefined);
      await cleanup.end();
    },
  };
}
