import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { startTestApp, type TestApp } from '../support/test-app';

function query(url: string, key: string | null, document: string): Promise<{ data?: any; errors?: any[] }> {
  const client = createClient({
    url,
    webSocketImpl: WebSocket,
    connectionParams: key ? { Authorization: `Bearer ${key}` } : {},
    retryAttempts: 0,
    lazy: true,
  });
  return new Promise((resolve, reject) => {
    let result: { data?: any; errors?: any[] } = {};
    client.subscribe(
      { query: document },
      {
        next: (value) => {
          result = value as typeof result;
        },
        error: (error) => {
          void client.dispose();
          reject(error);
        },
        complete: () => {
          void client.dispose();
          resolve(result);
        },
      },
    );
  });
}

describe('graphql-ws on /graphql', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('answers operations with the key given as a connection parameter', async () => {
    const result = await query(`ws://127.0.0.1:${t.port}/graphql`, t.adminKey, '{ viewer { serverAdmin } }');
    expect(result.data).toEqual({ viewer: { serverAdmin: true } });
  });

  it("takes the key from the operation's extensions.headers, as GraphiQL sends it from its Headers tab", async () => {
    const client = createClient({ url: `ws://127.0.0.1:${t.port}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0, lazy: true });
    const run = (extensions: Record<string, unknown>) =>
      new Promise<{ data?: any; errors?: any[] }>((resolve) => {
        let result: { data?: any; errors?: any[] } = {};
        client.subscribe(
          { query: '{ viewer { serverAdmin } }', extensions },
          { next: (value) => void (result = value as typeof result), error: (errors) => resolve({ errors: errors as any[] }), complete: () => resolve(result) },
        );
      });
    expect(await run({ headers: { Authorization: `Bearer ${t.adminKey}` } })).toEqual({ data: { viewer: { serverAdmin: true } } });
    const refused = await run({});
    expect(refused.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect((await run({ headers: { Authorization: 'Bearer rql_not_a_key' } })).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    await client.dispose();
  });

  it('refuses a connection without a valid key', async () => {
    // A key that is not valid closes the connection with 4403 (Forbidden) ...
    await expect(query(`ws://127.0.0.1:${t.port}/graphql`, 'rql_not_a_key', '{ viewer { serverAdmin } }')).rejects.toMatchObject({ code: 4403 });
    // ... an operation without any key is answered UNAUTHENTICATED.
    const refused = await query(`ws://127.0.0.1:${t.port}/graphql`, null, '{ viewer { serverAdmin } }').then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(Array.isArray(refused)).toBe(true);
    expect((refused as { extensions?: { code?: string } }[]).map((e) => e.extensions?.code)).toEqual(['UNAUTHENTICATED']);
  });
});
