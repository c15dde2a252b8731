/**
 * The `fetch` the openai SDK is given: node:http(s) with keep-alive agents instead of the global
 * fetch. A run makes one request per report, thousands per second at times; Node's global fetch
 * (undici behind WHATWG streams) cost more CPU per request than everything else the worker does
 * for that report (bench/RESULTS.md). The contract the SDK relies on is kept: a Response with
 * status, headers and body (streamed for server-sent events, buffered otherwise), an AbortError
 * when the signal aborts, a TypeError-like error with a `cause` when the connection fails.
 * Redirects are not followed: an endpoint answering 3xx gets that status back, so a request
 * never lands on a host nobody registered.
 */
import http from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';

const agents = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: Infinity, scheduling: 'lifo' }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: Infinity, scheduling: 'lifo' }),
};

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

export const httpFetch: typeof fetch = (input, init) => {
  const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
  const agent = agents[url.protocol as 'http:' | 'https:'];
  if (!agent) return Promise.reject(new TypeError(`unsupported protocol ${url.protocol}`));
  const signal = init?.signal ?? undefined;
  if (signal?.aborted) return Promise.reject(abortError(signal));
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
    const request = (url.protocol === 'https:' ? https : http).request(url, { method: init?.method ?? 'GET', headers, agent }, (response) => {
      const responseHeaders = new Headers();
      for (const [key, value] of Object.entries(response.headers)) {
        if (Array.isArray(value)) for (const v of value) responseHeaders.append(key, v);
        else if (value !== undefined) responseHeaders.set(key, value);
      }
      const status = response.statusCode ?? 500;
      const statusText = response.statusMessage ?? '';
      const nullBody = status === 204 || status === 304 || init?.method === 'HEAD';
      if ((response.headers['content-type'] ?? '').includes('text/event-stream') && !nullBody) {
        // Server-sent events: the SDK reads them as they come.
        settled = true;
        response.once('close', finish);
        resolve(new Response(Readable.toWeb(response) as ReadableStream<Uint8Array>, { status, statusText, headers: responseHeaders }));
        return;
      }
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.once('end', () => {
        finish();
        settled = true;
        resolve(new Response(nullBody ? null : Buffer.concat(chunks), { status, statusText, headers: responseHeaders }));
      });
      response.once('error', (error) => {
        finish();
        if (!settled) {
          settled = true;
          reject(signal?.aborted ? abortError(signal) : Object.assign(new TypeError('fetch failed'), { cause: error }));
        }
      });
    });
    request.once('error', (error) => {
      finish();
      if (settled) return;
      settled = true;
      reject(signal?.aborted ? abortError(signal) : Object.assign(new TypeError('fetch failed'), { cause: error }));
    });
    signal?.addEventListener('abort', onAbort, { once: true });
    request.end(body);
  });
};
