import pino from 'pino';
import { createLogger } from '../../src/logger';
import { startTestApp, type TestApp } from '../support/test-app';

const FRONT_END = 'http://localhost:5173';
const OTHER = 'https://evil.example';

describe('CORS for browser front-ends', () => {
  let t: TestApp;
  const lines: Record<string, unknown>[] = [];
  beforeAll(async () => {
    const logger = createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) } as pino.DestinationStream);
    t = await startTestApp({ logger, http: { corsOrigins: [FRONT_END, 'https://app.example.org'] } });
  });
  afterAll(() => t.close());

  const preflight = (origin: string) =>
    fetch(t.url, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' },
    });
  const post = (origin: string, headers: Record<string, string> = {}) =>
    fetch(t.url, {
      method: 'POST',
      headers: { origin, 'content-type': 'application/json', authorization: `Bearer ${t.adminKey}`, ...headers },
      body: JSON.stringify({ query: '{ viewer { serverAdmin } }' }),
    });

  it('answers the preflight of an allowed origin with the methods and headers the API takes, without credentials', async () => {
    const response = await preflight(FRONT_END);
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe(FRONT_END);
    expect(response.headers.get('access-control-allow-methods')?.split(',')).toEqual(expect.arrayContaining(['GET', 'POST']));
    expect(response.headers.get('access-control-allow-headers')?.toLowerCase().split(',')).toEqual(expect.arrayContaining(['authorization', 'content-type']));
    expect(response.headers.get('access-control-allow-credentials')).toBeNull();
    expect(response.headers.get('vary')).toMatch(/Origin/);
  });

  it('lets an allowed origin read the answer of its request', async () => {
    const response = await post(FRONT_END);
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBe(FRONT_END);
    expect(response.headers.get('access-control-expose-headers')).toContain('Retry-After');
    expect(await response.json()).toEqual({ data: { viewer: { serverAdmin: true } } });
  });

  it('gives another origin no CORS header, for the preflight and the request', async () => {
    for (const origin of [OTHER, 'http://localhost:5174', 'https://app.example.org.evil.example']) {
      const pre = await preflight(origin);
      expect(pre.headers.get('access-control-allow-origin')).toBeNull();
      expect(pre.headers.get('access-control-allow-headers') ?? '').not.toContain('Authorization');
      const response = await post(origin);
      expect(response.headers.get('access-control-allow-origin')).toBeNull();
    }
  });

  it('refuses the preflight of another origin with a 403 that names CORS_ORIGINS, and logs the origin once', async () => {
    const response = await preflight('http://localhost:5174');
    expect(response.status).toBe(403);
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
    const body = (await response.json()) as { errors: { message: string; extensions: { code: string } }[] };
    expect(body.errors[0]!.extensions.code).toBe('FORBIDDEN');
    expect(body.errors[0]!.message).toContain('CORS_ORIGINS');
    expect(body.errors[0]!.message).not.toContain('5174');
    await preflight('http://localhost:5174');
    const refusals = lines.filter((l) => String(l.msg).includes('CORS_ORIGINS') && l.origin === 'http://localhost:5174');
    expect(refusals).toEqual([expect.objectContaining({ origin: 'http://localhost:5174', level: 40 })]);
  });

  it('logs no origin that is not one (the header is the client\'s text)', async () => {
    const before = lines.length;
    const response = await preflight('http://x.example/<script>');
    expect(response.status).toBe(403);
    expect(lines.slice(before).filter((l) => JSON.stringify(l).includes('script'))).toEqual([]);
  });

  it('keeps the CSRF check: a simple request, which needs no preflight, is refused from any origin', async () => {
    for (const origin of [OTHER, FRONT_END]) {
      const form = await fetch(t.url, { method: 'POST', headers: { origin, 'content-type': 'text/plain' }, body: JSON.stringify({ query: 'mutation { createProject(input: { name: "csrf" }) { project { id } } }' }) });
      expect(form.status).toBe(400);
      const get = await fetch(`${t.url}?query=${encodeURIComponent('{ __typename }')}`, { headers: { origin } });
      expect(get.status).toBe(400);
    }
    const projects = await t.gql('{ projects { nodes { name } } }');
    expect(projects.data!.projects.nodes.map((p: { name: string }) => p.name)).not.toContain('csrf');
  });
});

describe('CORS by default', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('allows no other origin when CORS_ORIGINS is unset', async () => {
    const response = await fetch(t.url, { method: 'OPTIONS', headers: { origin: FRONT_END, 'access-control-request-method': 'POST' } });
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
    expect(response.status).toBe(403);
    const body = (await response.json()) as { errors: { message: string }[] };
    expect(body.errors[0]!.message).toContain('CORS_ORIGINS is unset');
  });
});
