import { createApp, type App } from '../../src/app';
import { openDatabase } from '../../src/db/data-source';
import { createLogger } from '../../src/logger';
import { Role } from '../../src/modules/api-key/api-key.entity';
import { ApiKeyService } from '../../src/modules/api-key/api-key.service';
import type { DataSource } from 'typeorm';
import { createApiKey, createProject, ok, REVOKE_API_KEY, rowId } from '../support/graphql-fixtures';
import { startTestApp, TEST_SECRET_KEY, type TestApp } from '../support/test-app';

const VIEWER = '{ viewer { apiKey { id } } }';

async function ask(url: string, key: string): Promise<{ status: number; code?: string }> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify({ query: VIEWER }) });
  const body = (await response.json()) as { errors?: { extensions?: { code?: string } }[] };
  return { status: response.status, ...(body.errors?.[0]?.extensions?.code ? { code: body.errors[0].extensions.code } : {}) };
}

describe('API keys looked up once and trusted briefly', () => {
  let t: TestApp;
  let other: { app: App; dataSource: DataSource; url: string };

  beforeAll(async () => {
    t = await startTestApp();
    // A second server process on the same database.
    const dataSource = await openDatabase({ url: t.databaseUrl });
    const app = await createApp(dataSource, createLogger('silent'), { secretKey: TEST_SECRET_KEY });
    const port = await app.listen(0, '127.0.0.1');
    other = { app, dataSource, url: `http://127.0.0.1:${port}/graphql` };
  });
  afterAll(async () => {
    await other.app.close();
    await other.dataSource.destroy();
    await t.close();
  });

  it('a key used on another process is refused there as soon as its revocation is announced', async () => {
    const project = await createProject(t, 'revocation across processes');
    const key = await createApiKey(t, project.id, 'VIEWER', project.adminKey);
    // Both processes have the key in their cache.
    expect(await ask(other.url, key.secret)).toEqual({ status: 200 });
    expect(await ask(t.url, key.secret)).toEqual({ status: 200 });
    const announced = new Promise<void>((resolve) => {
      const off = other.app.services.bus.on((event) => {
        if (event.kind === 'keyRevoked' && event.keyId === rowId(key.id)) {
          off();
          resolve();
        }
      });
    });
    ok(await t.gql(REVOKE_API_KEY, { input: { id: key.id } }, project.adminKey));
    // The revoking process refuses it from the next request on.
    expect(await ask(t.url, key.secret)).toEqual({ status: 401, code: 'UNAUTHENTICATED' });
    await announced;
    expect(await ask(other.url, key.secret)).toEqual({ status: 401, code: 'UNAUTHENTICATED' });
  });

  it('a revocation whose event is missed still takes effect once the cached lookup expires', async () => {
    const project = await createProject(t, 'missed revocation');
    const key = await createApiKey(t, project.id, 'EDITOR', project.adminKey);
    const service = new ApiKeyService(t.dataSource, 200);
    const principal = await service.authenticate(`Bearer ${key.secret}`);
    expect(principal.keyId).toBe(rowId(key.id));
    // Revoked behind the server's back: no event.
    await t.dataSource.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [rowId(key.id)]);
    // Within the cache period the lookup is not repeated …
    await expect(service.authenticate(`Bearer ${key.secret}`)).resolves.toEqual(principal);
    await new Promise((resolve) => setTimeout(resolve, 250));
    // … after it, the database is asked again.
    await expect(service.authenticate(`Bearer ${key.secret}`)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
  });

  it('unknown keys are not cached: a key created afterwards works at once', async () => {
    const project = await createProject(t, 'new keys');
    const service = new ApiKeyService(t.dataSource, 60_000);
    const secret = 'rql_not_yet_issued_0123456789abcdefghijklmnopqrstuvwxyz';
    await expect(service.authenticate(`Bearer ${secret}`)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    await service.issue(t.dataSource.manager, { projectId: rowId(project.id), role: Role.VIEWER, serverAdmin: false, name: 'late', secret });
    await expect(service.authenticate(`Bearer ${secret}`)).resolves.toMatchObject({ projectId: rowId(project.id) });
  });
});
