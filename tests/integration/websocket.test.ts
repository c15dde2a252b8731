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

  it('refuses a connection without a valid key', async () => {
    await expect(query(`ws://127.0.0.1:${t.port}/graphql`, 'rql_not_a_key', '{ viewer { serverAdmin } }')).rejects.toBeDefined();
    await expect(query(`ws://127.0.0.1:${t.port}/graphql`, null, '{ viewer { serverAdmin } }')).rejects.toBeDefined();
  });
});
