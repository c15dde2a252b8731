import {
  CREATE_API_KEY,
  CREATE_PROJECT,
  createApiKey,
  createProjectWithKeys,
  createUseCase,
  expectAccessErrors,
  failure,
  MALFORMED_ID,
  ok,
  REVOKE_API_KEY,
  rowId,
  unknownId,
  type ProjectKeys,
} from '../support/graphql-fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

const VIEWER = '{ viewer { serverAdmin role project { id name } apiKey { id name prefix role serverAdmin lastUsedAt } } }';

async function rawRequest(t: TestApp, authorization: string | undefined) {
  const response = await fetch(t.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(authorization !== undefined ? { authorization } : {}) },
    body: JSON.stringify({ query: '{ viewer { serverAdmin } }' }),
  });
  return { status: response.status, body: (await response.json()) as { errors?: { extensions?: { code?: string } }[] } };
}

describe('projects and API keys', () => {
  let t: TestApp;
  let a: ProjectKeys;
  let b: ProjectKeys;

  beforeAll(async () => {
    t = await startTestApp();
    a = await createProjectWithKeys(t, 'Project A');
    b = await createProjectWithKeys(t, 'Project B');
  });
  afterAll(() => t.close());

  describe('createProject', () => {
    it('creates a project with a working ADMIN key shown once', async () => {
      const data = ok(await t.gql(CREATE_PROJECT, { input: { name: '  Pathology NL  ' } }));
      const { project, adminKey } = data.createProject;
      expect(project.name).toBe('Pathology NL');
      expect(adminKey.apiKey).toMatchObject({ role: 'ADMIN', serverAdmin: false });
      expect(adminKey.secret).toMatch(/^rql_/);
      expect(adminKey.secret.startsWith(adminKey.apiKey.prefix)).toBe(true);
      expect(adminKey.apiKey.prefix.length).toBeLessThan(adminKey.secret.length);

      const viewer = ok(await t.gql(VIEWER, {}, adminKey.secret)).viewer;
      expect(viewer).toMatchObject({ serverAdmin: false, role: 'ADMIN', project: { id: project.id, name: 'Pathology NL' } });
      expect(viewer.apiKey.id).toBe(adminKey.apiKey.id);
      expect(viewer.apiKey.lastUsedAt).not.toBeNull();
    });

    it('stores only a hash of the secret', async () => {
      const data = ok(await t.gql(CREATE_PROJECT, { input: { name: 'Hash check' } }));
      const secret: string = data.createProject.adminKey.secret;
      const rows = (await t.dataSource.query('SELECT * FROM api_keys WHERE id = $1', [rowId(data.createProject.adminKey.apiKey.id)])) as Record<
        string,
        unknown
      >[];
      expect(rows).toHaveLength(1);
      for (const value of Object.values(rows[0]!)) {
        expect(String(value)).not.toContain(secret);
      }
    });

    it('has no field that returns the secret again', async () => {
      const result = await t.gql('query ($id: ID!) { node(id: $id) { ... on ApiKey { secret } } }', { id: a.adminKeyId });
      expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', reason: 'GRAPHQL_VALIDATION_FAILED' });
    });

    it('is for server admins only', async () => {
      failure(await t.gql(CREATE_PROJECT, { input: { name: 'nope' } }, a.admin), 'FORBIDDEN');
      failure(await t.gql(CREATE_PROJECT, { input: { name: 'nope' } }, a.editor), 'FORBIDDEN');
      failure(await t.gql(CREATE_PROJECT, { input: { name: 'nope' } }, a.viewer), 'FORBIDDEN');
      const anonymous = await t.gql(CREATE_PROJECT, { input: { name: 'nope' } }, null);
      expect(anonymous.status).toBe(401);
      failure(anonymous, 'UNAUTHENTICATED');
      const names = ok(await t.gql('{ projects(first: 200) { nodes { name } } }')).projects.nodes.map((p: { name: string }) => p.name);
      expect(names).not.toContain('nope');
    });

    it('rejects an empty name', async () => {
      const error = failure(await t.gql(CREATE_PROJECT, { input: { name: '   ' } }), 'BAD_USER_INPUT');
      expect(error.extensions?.field).toBe('name');
    });
  });

  describe('projects and viewer', () => {
    it('a project key sees only its own project', async () => {
      const own = ok(await t.gql('{ projects { totalCount nodes { id } } }', {}, a.viewer)).projects;
      expect(own).toEqual({ totalCount: 1, nodes: [{ id: a.id }] });
      const all = ok(await t.gql('{ projects(first: 200) { totalCount nodes { id } } }')).projects;
      expect(all.nodes.map((p: { id: string }) => p.id)).toEqual(expect.arrayContaining([a.id, b.id]));
      expect(all.totalCount).toBe(all.nodes.length);
    });

    it('project(id) answers null for another project', async () => {
      const query = 'query ($id: ID!) { project(id: $id) { id name } }';
      expect(ok(await t.gql(query, { id: a.id }, a.viewer)).project).toEqual({ id: a.id, name: 'Project A' });
      expect(ok(await t.gql(query, { id: b.id }, a.viewer)).project).toBeNull();
      expect(ok(await t.gql(query, { id: b.id })).project).toEqual({ id: b.id, name: 'Project B' });
    });

    it('viewer tells each role', async () => {
      for (const [key, role] of [
        [a.admin, 'ADMIN'],
        [a.editor, 'EDITOR'],
        [a.viewer, 'VIEWER'],
      ] as const) {
        const viewer = ok(await t.gql(VIEWER, {}, key)).viewer;
        expect(viewer).toMatchObject({ serverAdmin: false, role, project: { id: a.id } });
        expect(viewer.apiKey.role).toBe(role);
      }
    });
  });

  describe('createApiKey', () => {
    it('an ADMIN issues keys of its project; the secret works as a bearer token', async () => {
      const data = ok(await t.gql(CREATE_API_KEY, { input: { projectId: a.id, role: 'EDITOR', name: 'ci pipeline' } }, a.admin)).createApiKey;
      expect(data.apiKey).toMatchObject({ name: 'ci pipeline', role: 'EDITOR', serverAdmin: false, revokedAt: null, project: { id: a.id } });
      expect(data.secret.startsWith(data.apiKey.prefix)).toBe(true);
      const viewer = ok(await t.gql(VIEWER, {}, data.secret)).viewer;
      expect(viewer).toMatchObject({ role: 'EDITOR', project: { id: a.id } });
      // The new key can do what an EDITOR does.
      await createUseCase(t, a.id, {}, data.secret);
    });

    it('each call issues a different secret', async () => {
      const one = await createApiKey(t, a.id, 'VIEWER', a.admin);
      const two = await createApiKey(t, a.id, 'VIEWER', a.admin);
      expect(one.secret).not.toBe(two.secret);
      expect(one.id).not.toBe(two.id);
    });

    it('EDITOR and VIEWER keys may not issue keys', async () => {
      for (const key of [a.editor, a.viewer]) {
        failure(await t.gql(CREATE_API_KEY, { input: { projectId: a.id, role: 'VIEWER', name: 'x' } }, key), 'FORBIDDEN');
      }
    });

    it('a server admin key is issued only by a server admin', async () => {
      failure(await t.gql(CREATE_API_KEY, { input: { serverAdmin: true, name: 'root' } }, a.admin), 'FORBIDDEN');
      const data = ok(await t.gql(CREATE_API_KEY, { input: { serverAdmin: true, name: 'second root' } })).createApiKey;
      expect(data.apiKey).toMatchObject({ serverAdmin: true, role: null, project: null });
      const viewer = ok(await t.gql(VIEWER, {}, data.secret)).viewer;
      expect(viewer).toMatchObject({ serverAdmin: true, role: null, project: null });
      ok(await t.gql(CREATE_PROJECT, { input: { name: 'made by second root' } }, data.secret));
    });

    it('validates the combination of project, role and server admin', async () => {
      failure(await t.gql(CREATE_API_KEY, { input: { serverAdmin: true, projectId: a.id, name: 'x' } }), 'BAD_USER_INPUT');
      failure(await t.gql(CREATE_API_KEY, { input: { serverAdmin: true, role: 'ADMIN', name: 'x' } }), 'BAD_USER_INPUT');
      expect(failure(await t.gql(CREATE_API_KEY, { input: { role: 'ADMIN', name: 'x' } }), 'BAD_USER_INPUT').extensions?.field).toBe('projectId');
      expect(failure(await t.gql(CREATE_API_KEY, { input: { projectId: a.id, name: 'x' } }), 'BAD_USER_INPUT').extensions?.field).toBe('role');
      expect(failure(await t.gql(CREATE_API_KEY, { input: { projectId: a.id, role: 'ADMIN', name: ' ' } }), 'BAD_USER_INPUT').extensions?.field).toBe(
        'name',
      );
      failure(await t.gql(CREATE_API_KEY, { input: { projectId: a.id, role: 'OWNER', name: 'x' } }), 'BAD_USER_INPUT');
    });

    it('answers NOT_FOUND for another project, BAD_USER_INPUT for a malformed id', async () => {
      failure(await t.gql(CREATE_API_KEY, { input: { projectId: b.id, role: 'ADMIN', name: 'x' } }, a.admin), 'NOT_FOUND');
      failure(await t.gql(CREATE_API_KEY, { input: { projectId: unknownId('Project'), role: 'ADMIN', name: 'x' } }), 'NOT_FOUND');
      failure(await t.gql(CREATE_API_KEY, { input: { projectId: unknownId('UseCase'), role: 'ADMIN', name: 'x' } }, a.admin), 'NOT_FOUND');
      const malformed = failure(await t.gql(CREATE_API_KEY, { input: { projectId: MALFORMED_ID, role: 'ADMIN', name: 'x' } }, a.admin), 'BAD_USER_INPUT');
      expect(malformed.extensions?.field).toBe('projectId');
      const keysOfB = ok(await t.gql('{ viewer { project { id } } }', {}, b.admin)).viewer.project.id;
      expect(keysOfB).toBe(b.id);
    });
  });

  describe('access errors of key mutations', () => {
    it('createApiKey', async () => {
      await expectAccessErrors(
        t,
        CREATE_API_KEY,
        { projectId: a.id, role: 'VIEWER', name: 'guarded key' },
        { keys: a, forbiddenKeys: [a.editor, a.viewer], idField: 'projectId', foreignId: b.id, unknownType: 'Project' },
      );
      const [{ n }] = (await t.dataSource.query("SELECT count(*)::int AS n FROM api_keys WHERE name = 'guarded key'")) as [{ n: number }];
      expect(n).toBe(0);
    });

    it('revokeApiKey', async () => {
      const key = await createApiKey(t, a.id, 'VIEWER', a.admin);
      await expectAccessErrors(
        t,
        REVOKE_API_KEY,
        { id: key.id },
        { keys: a, forbiddenKeys: [a.editor, a.viewer], idField: 'id', foreignId: b.adminKeyId, unknownType: 'ApiKey' },
      );
      ok(await t.gql(VIEWER, {}, key.secret));
      ok(await t.gql(VIEWER, {}, b.admin));
    });
  });

  describe('revokeApiKey', () => {
    it('a revoked key is refused from the next request on', async () => {
      const key = await createApiKey(t, a.id, 'EDITOR', a.admin);
      ok(await t.gql(VIEWER, {}, key.secret));
      const revoked = ok(await t.gql(REVOKE_API_KEY, { input: { id: key.id } }, a.admin)).revokeApiKey.apiKey;
      expect(revoked.id).toBe(key.id);
      expect(revoked.revokedAt).not.toBeNull();

      const read = await t.gql(VIEWER, {}, key.secret);
      expect(read.status).toBe(401);
      failure(read, 'UNAUTHENTICATED');
      failure(await t.gql(CREATE_PROJECT, { input: { name: 'x' } }, key.secret), 'UNAUTHENTICATED');
      failure(await t.gql(CREATE_API_KEY, { input: { projectId: a.id, role: 'VIEWER', name: 'x' } }, key.secret), 'UNAUTHENTICATED');

      // Revoking again keeps the first revocation time.
      const again = ok(await t.gql(REVOKE_API_KEY, { input: { id: key.id } }, a.admin)).revokeApiKey.apiKey;
      expect(again.revokedAt).toBe(revoked.revokedAt);
    });

    it('a server admin revokes any project key; an admin key can revoke itself', async () => {
      const project = await createProjectWithKeys(t, 'Self revocation');
      ok(await t.gql(REVOKE_API_KEY, { input: { id: project.adminKeyId } }, project.admin));
      failure(await t.gql(VIEWER, {}, project.admin), 'UNAUTHENTICATED');
      const key = await createApiKey(t, project.id, 'VIEWER');
      ok(await t.gql(REVOKE_API_KEY, { input: { id: key.id } }));
      failure(await t.gql(VIEWER, {}, key.secret), 'UNAUTHENTICATED');
    });

    it('needs the ADMIN role of the key project', async () => {
      const key = await createApiKey(t, a.id, 'VIEWER', a.admin);
      failure(await t.gql(REVOKE_API_KEY, { input: { id: key.id } }, a.editor), 'FORBIDDEN');
      failure(await t.gql(REVOKE_API_KEY, { input: { id: key.id } }, a.viewer), 'FORBIDDEN');
      failure(await t.gql(REVOKE_API_KEY, { input: { id: key.id } }, b.admin), 'NOT_FOUND');
      ok(await t.gql(VIEWER, {}, key.secret));
    });

    it('a project key cannot revoke a server admin key, and learns nothing of it: the answer is that of an unknown id', async () => {
      const root = ok(await t.gql(CREATE_API_KEY, { input: { serverAdmin: true, name: 'root to keep' } })).createApiKey;
      for (const key of [a.admin, a.editor, a.viewer]) {
        const result = await t.gql(REVOKE_API_KEY, { input: { id: root.apiKey.id } }, key);
        const unknown = await t.gql(REVOKE_API_KEY, { input: { id: unknownId('ApiKey') } }, key);
        expect(failure(result, 'NOT_FOUND').message).toBe('API key not found');
        expect(result).toEqual(unknown);
      }
      // The server's own key of the test app too.
      const own = ok(await t.gql('{ viewer { apiKey { id } } }')).viewer.apiKey.id;
      expect(await t.gql(REVOKE_API_KEY, { input: { id: own } }, a.admin)).toEqual(await t.gql(REVOKE_API_KEY, { input: { id: unknownId('ApiKey') } }, a.admin));
      ok(await t.gql(VIEWER, {}, root.secret));
      ok(await t.gql(VIEWER));
    });

    it('answers BAD_USER_INPUT for a malformed id and NOT_FOUND for an unknown one', async () => {
      expect(failure(await t.gql(REVOKE_API_KEY, { input: { id: MALFORMED_ID } }, a.admin), 'BAD_USER_INPUT').extensions?.field).toBe('id');
      failure(await t.gql(REVOKE_API_KEY, { input: { id: unknownId('ApiKey') } }, a.admin), 'NOT_FOUND');
      failure(await t.gql(REVOKE_API_KEY, { input: { id: a.id } }, a.admin), 'NOT_FOUND');
    });
  });

  describe('authentication', () => {
    it('refuses requests without a usable bearer key', async () => {
      for (const header of [undefined, '', 'Bearer', 'Bearer rql_unknown', `Basic ${t.adminKey}`, `Token ${t.adminKey}`]) {
        const { status, body } = await rawRequest(t, header);
        expect(status).toBe(401);
        expect(body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
      }
      const { status } = await rawRequest(t, `bearer ${t.adminKey}`);
      expect(status).toBe(200);
    });

    it('node(id) shows keys of the own project only', async () => {
      const query = 'query ($id: ID!) { node(id: $id) { id ... on ApiKey { name role } } }';
      expect(ok(await t.gql(query, { id: a.adminKeyId }, a.viewer)).node).toMatchObject({ id: a.adminKeyId, role: 'ADMIN' });
      expect(ok(await t.gql(query, { id: b.adminKeyId }, a.admin)).node).toBeNull();
      expect(ok(await t.gql(query, { id: b.adminKeyId })).node).toMatchObject({ id: b.adminKeyId });
    });
  });
});
