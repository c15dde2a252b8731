import { getIntrospectionQuery } from 'graphql';
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

  it('refuses a request that would load too much, with BAD_USER_INPUT naming the cost', async () => {
    const result = await t.gql('{ projects(first: 200) { nodes { useCases(first: 200) { nodes { runs(first: 200) { nodes { name } } } } } } }');
    expect(result.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(result.errors?.[0]?.extensions?.cost).toBeGreaterThan(500_000);
    expect(result.data).toBeUndefined();
  });

  it('answers the GraphiQL introspection query', async () => {
    const result = await t.gql(getIntrospectionQuery());
    expect(result.errors).toBeUndefined();
    expect(result.data?.__schema?.queryType?.name).toBe('Query');
  });

  it('serves GraphiQL from the server itself, with no external resource', async () => {
    const response = await fetch(`http://127.0.0.1:${t.port}/graphql`, { headers: { accept: 'text/html' } });
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain('GraphiQL');
    expect(html).not.toMatch(/<script[^>]+src="https?:\/\//);
    expect(html).not.toMatch(/<link[^>]+href="https?:\/\//);
  });
});
