import vm from 'node:vm';
import { GRAPHIQL_KEY_STORAGE, graphiqlPage, graphiqlPageScript, SCHEMA_HASH_HEADER } from '../../../src/graphql/graphiql';
import { GRAPHIQL_EXAMPLES } from '../../../src/graphql/graphiql-examples';

const KEY = 'Bearer rql_0123456789abcdef';

interface Sent {
  url: string;
  headers: Headers;
}

/** The page script in a minimal browser: storage, fetch, WebSocket, events, location, history. */
function browser(href = 'http://localhost:4000/graphql', answer: (url: string) => Response = () => new Response('{"data":{}}', { status: 200 })) {
  const storage = new Map<string, string>();
  const sent: Sent[] = [];
  const dispatched: { type: string; key: string; ctrlKey: boolean }[] = [];
  const listeners: Record<string, (event: unknown) => void> = {};
  let url = new URL(href);
  class FakeWebSocket {
    sent: string[] = [];
    constructor(readonly url: string) {}
    send(data: string) {
      this.sent.push(data);
    }
  }
  class KeyboardEvent {
    constructor(readonly type: string, readonly init: { key: string; ctrlKey: boolean }) {}
  }
  const window: Record<string, any> = {
    URL,
    Headers,
    Response,
    Request,
    KeyboardEvent,
    JSON,
    Promise,
    WebSocket: FakeWebSocket,
    localStorage: {
      getItem: (k: string) => storage.get(k) ?? null,
      setItem: (k: string, v: string) => void storage.set(k, v),
      removeItem: (k: string) => void storage.delete(k),
    },
    get location() {
      return { href: url.href, origin: url.origin, pathname: url.pathname, assign: (to: string) => (url = new URL(to, url)) };
    },
    history: { replaceState: (_s: unknown, _t: string, to: URL | string) => (url = new URL(String(to), url)) },
    fetch: async (input: string, init?: RequestInit) => {
      const target = new URL(input, url).href;
      sent.push({ url: target, headers: new Headers(init?.headers) });
      return answer(target);
    },
    addEventListener: (type: string, fn: (event: unknown) => void) => void (listeners[`window:${type}`] = fn),
    dispatchEvent: (event: KeyboardEvent) => void dispatched.push({ type: event.type, key: event.init.key, ctrlKey: event.init.ctrlKey }),
    prompt: () => null,
    document: {
      addEventListener: (type: string, fn: (event: unknown) => void) => void (listeners[`document:${type}`] = fn),
      getElementById: () => null,
    },
  };
  window.window = window;
  const context = vm.createContext(window);
  vm.runInContext(graphiqlPageScript(), context);
  return {
    window,
    storage,
    sent,
    dispatched,
    url: () => url,
    fetch: (input: string, init?: RequestInit) => (window.fetch as typeof fetch)(input, init),
    socket: (socketUrl: string) => new (window.WebSocket as typeof FakeWebSocket)(socketUrl),
  };
}

describe('the GraphiQL page script', () => {
  it('sends nothing while no key is known, and answers with a coded error instead of a 401', async () => {
    const b = browser();
    const response = await b.fetch('/graphql', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(b.sent).toHaveLength(0);
    const body = (await response.json()) as { errors: { extensions: { code: string } }[] };
    expect(body.errors[0]!.extensions.code).toBe('UNAUTHENTICATED');
  });

  it('keeps the key a tab sends and gives it to every tab without one (placeholders included), then re-fetches the schema', async () => {
    const b = browser();
    await b.fetch('/graphql', { method: 'POST', headers: { Authorization: KEY } });
    expect(b.storage.get(GRAPHIQL_KEY_STORAGE)).toBe(KEY);
    expect(b.dispatched).toEqual([{ type: 'keydown', key: 'R', ctrlKey: true }]);
    await b.fetch('/graphql', { method: 'POST', headers: {} });
    await b.fetch('http://localhost:4000/graphql', { method: 'POST', headers: { Authorization: 'Bearer <your API key>' } });
    expect(b.sent.map((s) => s.headers.get('authorization'))).toEqual([KEY, KEY, KEY]);
    expect(b.dispatched).toHaveLength(1);
  });

  it('leaves requests to other addresses alone', async () => {
    const b = browser();
    b.storage.set(GRAPHIQL_KEY_STORAGE, KEY);
    await b.fetch('http://elsewhere.example/graphql', {});
    await b.fetch('/other', {});
    expect(b.sent.map((s) => s.headers.get('authorization'))).toEqual([null, null]);
  });

  it('forgets a key the server refuses', async () => {
    const b = browser(undefined, () => new Response('{"errors":[]}', { status: 401 }));
    b.storage.set(GRAPHIQL_KEY_STORAGE, KEY);
    await b.fetch('/graphql', {});
    expect(b.storage.has(GRAPHIQL_KEY_STORAGE)).toBe(false);
  });

  it('re-fetches the schema when the server answers with another schema hash', async () => {
    let hash = 'aaaa';
    const b = browser(undefined, () => new Response('{"data":{}}', { headers: { [SCHEMA_HASH_HEADER]: hash } }));
    b.storage.set(GRAPHIQL_KEY_STORAGE, KEY);
    await b.fetch('/graphql', {});
    await b.fetch('/graphql', {});
    expect(b.dispatched).toHaveLength(0);
    hash = 'bbbb';
    await b.fetch('/graphql', {});
    expect(b.dispatched).toHaveLength(1);
  });

  it('adds the key to graphql-ws operations of tabs without one', () => {
    const b = browser();
    b.storage.set(GRAPHIQL_KEY_STORAGE, KEY);
    const socket = b.socket('ws://localhost:4000/graphql');
    socket.send(JSON.stringify({ type: 'connection_init' }));
    socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: 'subscription { x }', extensions: { headers: {} } } }));
    socket.send(JSON.stringify({ id: '2', type: 'subscribe', payload: { query: 'subscription { x }', extensions: { headers: { Authorization: 'Bearer rql_owntabkey123' } } } }));
    const messages = socket.sent.map((s) => JSON.parse(s));
    expect(messages[0]).toEqual({ type: 'connection_init' });
    expect(messages[1].payload.extensions.headers.Authorization).toBe(KEY);
    expect(messages[2].payload.extensions.headers.Authorization).toBe('Bearer rql_owntabkey123');
  });

  it('opens an example with its variables filled from the ids the key can see', async () => {
    const ids = { projects: { nodes: [{ id: 'P1', useCases: { nodes: [{ id: 'U1', datasets: { nodes: [{ id: 'D1' }] }, runs: { nodes: [{ id: 'R1' }] } }] }, models: { nodes: [] }, experiments: { nodes: [] } }] } };
    const b = browser('http://localhost:4000/graphql?example=leaderboard', () => new Response(JSON.stringify({ data: ids })));
    b.storage.set(GRAPHIQL_KEY_STORAGE, KEY);
    const options = await new Promise<Record<string, any>>((resolve) => b.window.reportqlGraphiQL.start(resolve, { endpoint: '/graphql' }));
    const leaderboard = GRAPHIQL_EXAMPLES.find((e) => e.name === 'leaderboard')!;
    expect(options.query).toBe(leaderboard.query);
    expect(JSON.parse(options.variables)).toEqual({ useCaseId: 'U1', datasetId: 'D1' });
    expect(b.sent[0]!.headers.get('authorization')).toBe(KEY);
    expect(b.url().searchParams.get('example')).toBeNull();
    expect(b.url().searchParams.get('query')).toBe(leaderboard.query);
  });

  it('starts a first visit on a welcome tab that links every example', async () => {
    const b = browser();
    const options = await new Promise<Record<string, any>>((resolve) => b.window.reportqlGraphiQL.start(resolve, {}));
    const welcome = options.defaultTabs[0].query as string;
    for (const e of GRAPHIQL_EXAMPLES) expect(welcome).toContain(`http://localhost:4000/graphql?example=${e.name}`);
    expect(options.title).toContain('reportql-key');
    expect(b.sent).toHaveLength(0);
  });

  it('is part of the served page, which loads nothing from elsewhere', () => {
    const { html } = graphiqlPage();
    expect(html).toContain(GRAPHIQL_KEY_STORAGE);
    expect(html).not.toMatch(/<script[^>]+src=/);
    expect(html.match(/reportqlGraphiQL\.start\(/g)).toHaveLength(1);
  });
});
