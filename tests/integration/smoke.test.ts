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
    const result = await t.gql('mutation { createProject(input: { name: "x" }) { project { useCases(first: 200) { nodes { runs(first: 200) { nodes { predictions(first: 200) { nodes { id } } } } } } } } }');
    expect(result.status).toBe(400);
    expect(result.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(result.errors?.[0]?.extensions?.cost).toBeGreaterThan(500_000);
    expect(result.data).toBeUndefined();
  });

  it('answers a query whose pages are large but whose lists are short', async () => {
    const result = await t.gql('{ projects(first: 200) { nodes { useCases(first: 200) { nodes { runs(first: 200) { nodes { name } } } } } } }');
    expect(result.errors).toBeUndefined();
    expect(Array.isArray(result.data?.projects?.nodes)).toBe(true);
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

  it('answers a malformed or oversized body with a JSON error, not an HTML page', async () => {
    const malformed = await fetch(`http://127.0.0.1:${t.port}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${t.adminKey}` },
      body: '{"query": "{ viewer { role } }",',
    });
    expect(malformed.status).toBe(400);
    const body = (await malformed.json()) as { errors: { extensions: { code: string } }[] };
    expect(body.errors[0]!.extensions.code).toBe('BAD_USER_INPUT');
  });

  it('lists a project\'s API keys to its ADMIN only', async () => {
    const created = await t.gql('mutation { createProject(input: { name: "keys" }) { project { id } adminKey { secret apiKey { id } } } }');
    const { project, adminKey } = created.data!.createProject;
    const viewer = await t.gql('mutation($p: ID!) { createApiKey(input: { projectId: $p, name: "viewer", role: VIEWER }) { secret } }', { p: project.id }, adminKey.secret);
    const listed = await t.gql('query($p: ID!) { project(id: $p) { apiKeys { name role prefix revokedAt } } }', { p: project.id }, adminKey.secret);
    expect(listed.errors).toBeUndefined();
    expect(listed.data!.project.apiKeys.map((k: { role: string }) => k.role).sort()).toEqual(['ADMIN', 'VIEWER']);
    expect(JSON.stringify(listed.data)).not.toContain(viewer.data!.createApiKey.secret);
    const denied = await t.gql('query($p: ID!) { project(id: $p) { apiKeys { name } } }', { p: project.id }, viewer.data!.createApiKey.secret);
    expect(denied.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });
});
