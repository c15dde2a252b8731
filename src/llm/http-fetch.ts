/**
 * The `fetch` the openai SDK is given: node:http(s) with keep-alive agents instead of the global
 * fetch. A run makes one request per report, thousands per second at times; Node's global fetch
 * (undici behind WHATWG streams) cost more CPU per request than everything else the worker does
 * for that report (bench/RESULTS.md). The contract the SDK relies on is kept: a Response with
 * status, headers and body (streamed for server-sent events, buffered otherwise), an AbortError
 * when the signal aborts, a TypeError-like error with a `cause` when the connection fails.
 *
 * What an endpoint answers is bounded and goes nowhere it was not sent:
 * - redirects are not followed: an endpoint answering 3xx gets that status back, so a request
 *   never lands on a host nobody registered;
 * - a body larger than `maxBodyBytes` (streamed or not) ends the request with ResponseTooLarge;
 * - with an egress policy, every connection is checked after DNS resolution (and IP literals
 *   before connecting), with the port it is for: an address the policy refuses is never
 *   connected to (EgressDenied).
 */
import type { LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { Readable, Transform } from 'node:stream';
import { EgressDenied, normaliseHost, portOf, type EgressPolicy } from './egress';

/** Largest answer read from an endpoint unless the caller sets less. */
export const MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

export class ResponseTooLarge extends Error {
  readonly code = 'ERESPONSETOOLARGE';
  constructor(readonly limitBytes: number) {
    super(`response larger than ${limitBytes} bytes`);
    this.name = 'ResponseTooLarge';
  }
}

export interface HttpFetchOptions {
  egress?: EgressPolicy | undefined;
  /** Default MAX_RESPONSE_BYTES. */
  maxBodyBytes?: number;
}

interface Agents {
  'http:': http.Agent;
  'https:': https.Agent;
}

function createAgents(): Agents {
  return {
    'http:': new http.Agent({ keepAlive: true, maxSockets: Infinity, scheduling: 'lifo' }),
    'https:': new https.Agent({ keepAlive: true, maxSockets: Infinity, scheduling: 'lifo' }),
  };
}

// Kept-alive sockets are reused by host and port: a policy gets agents of its own, so a socket
// opened without (or under another) policy is never reused under it.
const unrestricted = createAgents();
const restricted = new WeakMap<EgressPolicy, Agents>();

function agentsFor(egress: EgressPolicy | undefined): Agents {
  if (!egress) return unrestricted;
  let agents = restricted.get(egress);
  if (!agents) {
    agents = createAgents();
    restricted.set(egress, agents);
  }
  return agents;
}

/** net's `lookup` hook for connections to `port`: the policy resolves, only allowed addresses are offered to connect. */
function policyLookup(egress: EgressPolicy, port: number): LookupFunction {
  return (hostname, options, callback) => {
    egress.resolve(hostname, port).then(
      (addresses: LookupAddress[]) => {
        const wanted = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
        if (wanted.length === 0) {
          callback(new EgressDenied('NOT_ALLOWED'), options.all ? [] : '', 0);
          return;
        }
        if (options.all) (callback as unknown as (error: null, addresses: LookupAddress[]) => void)(null, wanted);
        else callback(null, wanted[0]!.address, wanted[0]!.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, options.all ? [] : '', 0),
    );
  };
}

function abortError(signal: AbortSignal): Error {
  const reason = signal.reason as unknown;
  if (reason instanceof Error && reason.name === 'AbortError') return reason;
  const error = new Error('This operation was aborted', { cause: reason });
  error.name = 'AbortError';
  return error;
}

function headerObject(headers: HeadersInit | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!headers) return out;
  new Headers(headers).forEach((value, key) => {
    out[key] = value;
  });
  return out;
}

function bodyOf(body: unknown): string | Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string' || Buffer.isBuffer(body)) return body;
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  throw new TypeError('this fetch sends string or byte bodies only');
}

/** Response headers as node:http parsed them (names lower-case), read-only. */
export class PlainHeaders implements Iterable<[string, string]> {
  private readonly map = new Map<string, string>();

  constructor(raw: http.IncomingHttpHeaders) {
    for (const [key, value] of Object.entries(raw)) {
      if (Array.isArray(value)) this.map.set(key, value.join(', '));
      else if (value !== undefined) this.map.set(key, value);
    }
  }

  get(name: string): string | null {
    return this.map.get(name.toLowerCase()) ?? null;
  }

  has(name: string): boolean {
    return this.map.has(name.toLowerCase());
  }

  forEach(callback: (value: string, key: string) => void): void {
    for (const [key, value] of this.map) callback(value, key);
  }

  entries(): IterableIterator<[string, string]> {
    return this.map.entries();
  }

  keys(): IterableIterator<string> {
    return this.map.keys();
  }

  values(): IterableIterator<string> {
    return this.map.values();
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.map.entries();
  }
}

const utf8 = new TextDecoder('utf-8');

/**
 * A fully read answer: what `fetch`'s Response offers for reading it once. The body is decoded
 * as UTF-8 with a byte-order mark dropped and malformed bytes replaced, as Response.text() does.
 */
export class BufferedResponse {
  readonly ok: boolean;
  readonly redirected = false;
  readonly type = 'basic';
  private used = false;

  constructor(
    private readonly bytes: Buffer | null,
    readonly status: number,
    readonly statusText: string,
    readonly headers: PlainHeaders,
    readonly url: string,
  ) {
    this.ok = status >= 200 && status <= 299;
  }

  get bodyUsed(): boolean {
    return this.used;
  }

  /** A stream of the bytes, made only when asked for (the SDK cancels it on failures). */
  get body(): ReadableStream<Uint8Array> | null {
    if (this.bytes === null) return null;
    const bytes = this.bytes;
    return new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
        controller.close();
      },
    });
  }

  private take(): Buffer {
    if (this.used) throw new TypeError('Body is unusable: Body has already been read');
    this.used = true;
    return this.bytes ?? Buffer.alloc(0);
  }

  text(): Promise<string> {
    try {
      return Promise.resolve(utf8.decode(this.take()));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text()) as unknown;
  }

  arrayBuffer(): Promise<ArrayBuffer> {
    try {
      const bytes = this.take();
      return Promise.resolve(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer);
    } catch (error) {
      return Promise.reject(error);
    }
  }
}

const connectionError = (cause: unknown): TypeError => Object.assign(new TypeError('fetch failed'), { cause });

export function createHttpFetch(options: HttpFetchOptions = {}): typeof fetch {
  const { egress } = options;
  const maxBodyBytes = options.maxBodyBytes ?? MAX_RESPONSE_BYTES;
  const agents = agentsFor(egress);

  return (input, init) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    const agent = agents[url.protocol as 'http:' | 'https:'];
    if (!agent) return Promise.reject(new TypeError(`unsupported protocol ${url.protocol}`));
    const signal = init?.signal ?? undefined;
    if (signal?.aborted) return Promise.reject(abortError(signal));
    // net.connect does not look IP literals up, so the policy sees them here.
    const host = normaliseHost(url.hostname);
    const port = portOf(url);
    const refusal = egress && isIP(host) !== 0 ? egress.connectionRefusal(host, host, port) : null;
    if (refusal) return Promise.reject(connectionError(new EgressDenied(refusal)));
    const lookup = egress ? policyLookup(egress, port) : undefined;
    let body: string | Buffer | undefined;
    try {
      body = bodyOf(init?.body);
    } catch (error) {
      return Promise.reject(error);
    }
    const headers = headerObject(init?.headers);
    if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));

    return new Promise<Response>((resolve, reject) => {
      let settled = false;
      const onAbort = (): void => {
        request.destroy(abortError(signal!));
      };
      const finish = (): void => signal?.removeEventListener('abort', onAbort);
      const fail = (error: unknown): void => {
        finish();
        if (settled) return;
        settled = true;
        reject(signal?.aborted ? abortError(signal) : connectionError(error));
      };
      const request = (url.protocol === 'https:' ? https : http).request(
        url,
        { method: init?.method ?? 'GET', headers, agent, ...(lookup ? { lookup } : {}) },
        (response) => {
          const status = response.statusCode ?? 500;
          const statusText = response.statusMessage ?? '';
          const nullBody = status === 204 || status === 304 || init?.method === 'HEAD';
          const declared = Number(response.headers['content-length']);
          if (Number.isFinite(declared) && declared > maxBodyBytes) {
            response.destroy();
            fail(new ResponseTooLarge(maxBodyBytes));
            return;
          }
          if ((response.headers['content-type'] ?? '').includes('text/event-stream') && !nullBody) {
            // Server-sent events: the SDK reads them as they come, up to maxBodyBytes in all.
            settled = true;
            let seen = 0;
            const bounded = new Transform({
              transform(chunk: Buffer, _encoding, done) {
                seen += chunk.length;
                if (seen > maxBodyBytes) {
                  response.destroy();
                  done(new ResponseTooLarge(maxBodyBytes));
                } else done(null, chunk);
              },
            });
            response.once('error', (error) => bounded.destroy(error));
            // The reader gave up (cancelled the stream): the rest of the answer is not wanted.
            bounded.once('close', () => {
              if (!response.complete) response.destroy();
            });
            response.once('close', finish);
            const responseHeaders = new Headers();
            for (const [key, value] of Object.entries(response.headers)) {
              if (Array.isArray(value)) for (const v of value) responseHeaders.append(key, v);
              else if (value !== undefined) responseHeaders.set(key, value);
            }
            resolve(new Response(Readable.toWeb(response.pipe(bounded)) as ReadableStream<Uint8Array>, { status, statusText, headers: responseHeaders }));
            return;
          }
          const chunks: Buffer[] = [];
          let seen = 0;
          response.on('data', (chunk: Buffer) => {
            seen += chunk.length;
            if (seen > maxBodyBytes) {
              response.destroy();
              fail(new ResponseTooLarge(maxBodyBytes));
              return;
            }
            chunks.push(chunk);
          });
          response.once('end', () => {
            finish();
            if (settled) return;
            settled = true;
            const bytes = nullBody ? null : chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
            resolve(new BufferedResponse(bytes, status, statusText, new PlainHeaders(response.headers), url.href) as unknown as Response);
          });
          response.once('error', fail);
        },
      );
      request.once('error', fail);
      signal?.addEventListener('abort', onAbort, { once: true });
      request.end(body);
    });
  };
}

/** Without an egress policy, with the default body limit. */
export const httpFetch: typeof fetch = createHttpFetch();
