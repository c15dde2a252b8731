import { startTestApp, type TestApp } from '../support/test-app';

describe('server', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('answers /healthz without a key', async () => {
    const response = await fetch(`http://127.0.0.1:${t.port}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok', database: 'up' });
  });

  it('refuses GraphQL without a key', async () => {
    const result = await t.gql('{ viewer { serverAdmin } }', {}, null);
    expect(result.status).toBe(401);
    expect(result.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('knows the server admin key', async () => {
    const result = await t.gql('{ viewer { serverAdmin role project { id } } }');
    expect(result.errors).toBeUndefined();
    expect(result.data?.viewer).toEqual({ serverAdmin: true, role: null, project: null });
  });
});
