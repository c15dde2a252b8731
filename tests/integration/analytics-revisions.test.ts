import { Client } from 'pg';
import { AnalyticsCache } from '../../src/modules/scoring/analytics-cache';
import { createProject } from '../support/graphql-fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

/** The database id behind a global id. */
const dbId = (globalId: string) => Buffer.from(globalId, 'base64').toString('utf8').split(':')[1]!;

/** Waits (without asserting a time) until the condition holds. */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe('project revisions learnt by LISTEN/NOTIFY', () => {
  let t: TestApp;
  let project: { id: string; adminKey: string };
  let other: Client;

  beforeAll(async () => {
    t = await startTestApp();
    project = await createProject(t, 'Revisions');
    project = { ...project, id: dbId(project.id) };
    other = new Client({ connectionString: t.databaseUrl });
    await other.connect();
  });
  afterAll(async () => {
    await other.end();
    await t.close();
  });

  /** A change committed by another connection, as another process would. */
  const change = (projectId: string) => other.query('INSERT INTO analytics_changes (project_id) VALUES ($1)', [projectId]);

  it('knows a revision without a query once asked, and moves it on when another connection commits a change', async () => {
    const cache = new AnalyticsCache(t.dataSource);
    try {
      expect(cache.currentRevision(project.id)).toBeUndefined();
      await cache.ready();
      expect(cache.listening).toBe(true);
      const first = await cache.revision(project.id);
      expect(cache.currentRevision(project.id)).toBe(first);

      t.queries.length = 0;
      expect(await cache.revision(project.id)).toBe(first);
      expect(t.queries.filter((q) => q.includes('analytics_changes'))).toEqual([]);

      await change(project.id);
      await until(() => cache.currentRevision(project.id) !== first);
      const second = cache.currentRevision(project.id)!;
      expect(second).not.toBe(first);

      // a change in another project leaves this one's revision alone
      await change('00000000-0000-4000-8000-000000000000');
      await change(project.id);
      await until(() => cache.currentRevision(project.id) !== second);
      expect(cache.currentRevision(project.id)).not.toBe(second);
    } finally {
      await cache.close();
    }
  });

  it('a change inside a transaction is announced at commit only, and a rolled-back one never', async () => {
    const cache = new AnalyticsCache(t.dataSource);
    try {
      await cache.ready();
      const before = await cache.revision(project.id);
      await other.query('BEGIN');
      await change(project.id);
      await other.query('ROLLBACK');
      // a committed change of another project, sent after the rollback, arrives after anything the rollback could have sent
      const marker = { id: dbId((await createProject(t, 'Marker')).id) };
      await cache.revision(marker.id);
      const markerBefore = cache.currentRevision(marker.id);
      await change(marker.id);
      await until(() => cache.currentRevision(marker.id) !== markerBefore);
      expect(cache.currentRevision(project.id)).toBe(before);
    } finally {
      await cache.close();
    }
  });

  it('falls back to a query per request while the listening connection is lost, then listens again', async () => {
    const cache = new AnalyticsCache(t.dataSource);
    try {
      await cache.ready();
      const first = await cache.revision(project.id);
      await other.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'reportql-analytics' AND datname = current_database()`);
      await until(() => !cache.listening);
      expect(cache.currentRevision(project.id)).toBeUndefined();
      // a change made while nothing listens is seen by the query
      await change(project.id);
      const queried = await cache.revision(project.id);
      expect(queried).not.toBe(first);
      await until(() => cache.listening);
      const relearnt = await cache.revision(project.id);
      expect(cache.currentRevision(project.id)).toBe(relearnt);
      expect(relearnt).not.toBe(first);
    } finally {
      await cache.close();
    }
  });

  it("after a write of this process the next revision is queried: a client sees its own write before the write's notification arrives", async () => {
    const cache = new AnalyticsCache(t.dataSource);
    const untouched = { id: dbId((await createProject(t, 'Untouched')).id) };
    try {
      await cache.ready();
      const first = await cache.revision(project.id);
      const untouchedFirst = await cache.revision(untouched.id);
      // The listening connection reads nothing for now: notifications wait in its socket.
      const stream = (cache as unknown as { client: { connection: { stream: NodeJS.ReadableStream } } }).client.connection.stream;
      stream.pause();
      try {
        await change(project.id);
        expect(await cache.revision(project.id)).toBe(first);
        cache.afterWrite();
        const after = await cache.revision(project.id);
        expect(after).not.toBe(first);
        expect(await cache.revision(untouched.id)).toBe(untouchedFirst);
      } finally {
        stream.resume();
      }
    } finally {
      await cache.close();
    }
  });

  it('a revision queried before the listening connection came up is the same token after it, until a change', async () => {
    const cache = new AnalyticsCache(t.dataSource);
    try {
      const before = await cache.revision(project.id);
      await cache.ready();
      expect(cache.listening).toBe(true);
      expect(await cache.revision(project.id)).toBe(before);
      await change(project.id);
      await until(() => cache.currentRevision(project.id) !== before);
      expect(await cache.revision(project.id)).not.toBe(before);
    } finally {
      await cache.close();
    }
  });
});
