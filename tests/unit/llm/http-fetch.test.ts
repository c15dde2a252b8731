import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { defaultEgressPolicy } from '../../../src/llm/egress';
import { createHttpFetch } from '../../../src/llm/http-fetch';

describe('http fetch: buffered answers', () => {
  let server: http.Server;
  let base: string;
  let answer: (res: http.ServerResponse) => void = (res) => res.end();

  beforeAll(async () => {
    server = http.createServer((_req, res) => answer(res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  const fetch = createHttpFetch();

  it('reads like a Response: status, headers by any case, json with a byte-order mark dropped', async () => {
    answer = (res) => {
      res.setHeader('Content-Type', 'application/json');
      res.setHeader('X-Request-Id', 'req-1');
      res.setHeader('Set-Cookie', ['a=1', 'b=2']);
      res.end(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"answer":"ö"}')]));
    };
    const response = await fetch(`${base}/x`);
    expect(response.ok).toBe(true);
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe('req-1');
    expect(response.headers.get('X-REQUEST-ID')).toBe('req-1');
    expect(response.headers.get('set-cookie')).toBe('a=1, b=2');
    expect(response.headers.get('absent')).toBeNull();
    expect([...response.headers.entries()].map(([k]) => k)).toContain('content-type');
    expect(await response.json()).toEqual({ answer: 'ö' });
    expect(response.bodyUsed).toBe(true);
    await expect(response.text()).rejects.toThrow(TypeError);
  });

  it('replaces malformed UTF-8 as Response.text() does, and copies into Headers', async () => {
    const bytes = Buffer.from([0x61, 0xff, 0x62]);
    answer = (res) => {
      res.statusCode = 503;
      res.setHeader('Retry-After', '2');
      res.end(bytes);
    };
    const response = await fetch(`${base}/y`);
    expect(response.ok).toBe(false);
    expect(await response.text()).toBe(await new Response(bytes).text());
    expect(new Headers(response.headers).get('retry-after')).toBe('2');
  });

  it('has no body for 204 and a cancellable one otherwise', async () => {
    answer = (res) => {
      res.statusCode = 204;
      res.end();
    };
    const empty = await fetch(`${base}/z`);
    expect(empty.body).toBeNull();
    answer = (res) => res.end('abc');
    const full = await fetch(`${base}/z`);
    await expect(full.body!.cancel()).resolves.toBeUndefined();
    expect(await new Response(full.body).text()).toBe('abc');
  });
});

describe('http fetch: the default egress policy at connect time', () => {
  let server: http.Server;
  let port: number;
  let requests = 0;

  beforeAll(async () => {
    server = http.createServer((_req, res) => {
      requests += 1;
      res.end('{}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  const refusalOf = async (promise: Promise<unknown>): Promise<unknown> => {
    const error = await promise.then(
      () => null,
      (e: unknown) => e,
    );
    return (error as { cause?: { refusal?: unknown } } | null)?.cause?.refusal;
  };

  it('never connects to a metadata service or a link-local address given as an address', async () => {
    const fetch = createHttpFetch({ egress: defaultEgressPolicy() });
    expect(await refusalOf(fetch('http://169.254.169.254/latest/meta-data/'))).toBe('CLOUD_METADATA');
    expect(await refusalOf(fetch('http://[fe80::1]:8000/v1/models'))).toBe('LINK_LOCAL');
  });

  it("never connects to this server's own port, by address or by a name resolving to this machine", async () => {
    const policy = defaultEgressPolicy(async (name) => (name === 'self.example.net' ? [{ address: '127.0.0.1', family: 4 }] : []));
    const fetch = createHttpFetch({ egress: policy });
    expect((await fetch(`http://127.0.0.1:${port}/v1/models`)).status).toBe(200);
    expect(requests).toBe(1);
    policy.protectPort(port);
    expect(await refusalOf(fetch(`http://127.0.0.1:${port}/v1/models`))).toBe('OWN_PORT');
    expect(await refusalOf(fetch(`http://self.example.net:${port}/v1/models`))).toBe('OWN_PORT');
    expect(requests).toBe(1);
  });
});
