/**
 * The openai SDK configured for self-hosted OpenAI-compatible servers: no SDK retries (ours are in
 * retry.ts), a dummy key when none is set (the SDK throws without one, even for local servers),
 * and node:http under it (http-fetch.ts). Error bodies are dropped before the SDK sees them:
 * what an endpoint says about its failure is never shown or stored (llm-error.ts), only its
 * status and our own words.
 */
import OpenAI, {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
} from 'openai';
import { EgressDenied, type EgressPolicy } from './egress';
import { createHttpFetch, ResponseTooLarge } from './http-fetch';
import { egressDeniedMessage, httpErrorMessage, LlmError } from './llm-error';
import { CallerAbort, parseRetryAfter } from './retry';

/** What vLLM's docs use for "no key"; servers started without --api-key ignore the header. */
export const DUMMY_API_KEY = 'EMPTY';

export function normaliseBaseUrl(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, '');
}

export interface TransportOptions {
  egress?: EgressPolicy | undefined;
}

/**
 * The SDK's fetch: a failed answer keeps its status and headers (Retry-After) and loses its body
 * and reason phrase, so no upstream text reaches an SDK error.
 */
function sdkFetch(options: TransportOptions): typeof fetch {
  const httpFetch = createHttpFetch({ egress: options.egress });
  return async (input, init) => {
    let response: Response;
    try {
      response = await httpFetch(input, init);
    } catch (err) {
      throw sameRealmError(err);
    }
    if (response.ok) {
      const type = response.headers.get('content-type') ?? '';
      return type.includes('text/event-stream') && response.body
        ? new Response(response.body.pipeThrough(withoutEventNames()), { status: response.status, headers: response.headers })
        : response;
    }
    // The body is discarded: a cancel that fails (the stream already ended or broke) changes nothing.
    await response.body?.cancel().catch(() => undefined);
    const headers = new Headers(response.headers);
    headers.delete('content-length');
    headers.delete('content-encoding');
    headers.delete('content-type');
    return new Response(null, { status: response.status, headers });
  };
}

/**
 * Drops the `event:` lines of a server-sent event stream. Chat completion streams name no
 * events; the SDK prints the data of an unparsable named event to the console (the upstream
 * text, outside our log), while unnamed events go through its logger, which is off.
 */
function withoutEventNames(): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let rest = '';
  const keep = (line: string): boolean => !/^event\s*:/.test(line);
  return new TransformStream({
    transform(chunk, controller) {
      const lines = (rest + decoder.decode(chunk, { stream: true })).split('\n');
      rest = lines.pop() ?? '';
      const kept = lines.filter(keep);
      if (kept.length > 0) controller.enqueue(encoder.encode(kept.map((l) => `${l}\n`).join('')));
    },
    flush(controller) {
      rest += decoder.decode();
      if (rest.length > 0 && keep(rest)) controller.enqueue(encoder.encode(rest));
    },
  });
}

/**
 * The SDK recognises a timeout by `name === 'AbortError'` after `instanceof Error`; a DOMException
 * from another realm (Jest's sandbox, worker threads) fails that test and was being reported as a
 * connection error, so it is copied into an Error of this realm with name and cause kept.
 */
function sameRealmError(err: unknown): unknown {
  if (err instanceof Error || err === null || typeof err !== 'object') return err;
  const source = err as { message?: unknown; name?: unknown; cause?: unknown };
  const copy = new Error(typeof source.message === 'string' ? source.message : String(err), {
    cause: source.cause ?? err,
  });
  if (typeof source.name === 'string') copy.name = source.name;
  return copy;
}

export function createOpenAi(baseUrl: string, apiKey: string | null | undefined, timeoutMs: number, options: TransportOptions = {}): OpenAI {
  return new OpenAI({
    baseURL: normaliseBaseUrl(baseUrl),
    apiKey: apiKey && apiKey.length > 0 ? apiKey : DUMMY_API_KEY,
    maxRetries: 0,
    timeout: toSdkTimeout(timeoutMs),
    fetch: sdkFetch(options),
    // The SDK logs what it could not parse, i.e. upstream text; our own errors say what failed.
    logLevel: 'off',
  });
}

/** The SDK insists on a positive integer. */
export function toSdkTimeout(timeoutMs: number): number {
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new RangeError(`timeoutMs must be a positive number, got ${timeoutMs}`);
  }
  return Math.max(1, Math.round(timeoutMs));
}

/** The errors an error was caused by, itself first (bounded: cause chains may loop). */
function causes(err: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let e = err; e !== null && e !== undefined && chain.length < 8 && !chain.includes(e); e = (e as { cause?: unknown }).cause) chain.push(e);
  return chain;
}

/** A system or TLS error code (ECONNREFUSED, ENOTFOUND, CERT_HAS_EXPIRED): our vocabulary, no text. */
const SYSTEM_CODE = /^[A-Z][A-Z0-9_]{2,63}$/;

/** Maps a failed connection to LlmError in our words: the system error code at most. */
export function connectionFailure(err: unknown): LlmError {
  const chain = causes(err);
  const tooLarge = chain.find((e): e is ResponseTooLarge => e instanceof ResponseTooLarge);
  if (tooLarge) {
    return new LlmError('BAD_RESPONSE', `the answer is larger than ${tooLarge.limitBytes} bytes`, { attempts: 1, reason: 'TOO_LARGE' });
  }
  const codes = chain.map((e) => (e as { code?: unknown }).code).filter((c): c is string => typeof c === 'string' && SYSTEM_CODE.test(c));
  const denied = chain.find((e): e is EgressDenied => e instanceof EgressDenied);
  if (denied || codes.includes('EGRESS_DENIED')) {
    return new LlmError('CONNECTION', egressDeniedMessage(denied?.refusal ?? 'NOT_ALLOWED'), { attempts: 1, reason: 'EGRESS_DENIED' });
  }
  // The innermost code is the system's (the SDK and fetch wrap it).
  const code = codes[codes.length - 1];
  return new LlmError('CONNECTION', `connection to the endpoint failed${code ? ` (${code})` : ''}`, { attempts: 1, ...(code ? { reason: code } : {}) });
}

/** Maps anything the SDK throws to LlmError (attempts filled in later by withRetry). */
export function toLlmError(err: unknown, signal: AbortSignal | undefined, timeoutMs: number): LlmError | CallerAbort {
  if (err instanceof LlmError || err instanceof CallerAbort) return err;
  if (signal?.aborted || err instanceof APIUserAbortError) return new CallerAbort(signal?.reason ?? err);
  if (err instanceof APIConnectionTimeoutError) {
    return new LlmError('TIMEOUT', `no response within ${timeoutMs} ms`, { attempts: 1 });
  }
  if (err instanceof APIConnectionError) return connectionFailure(err);
  if (err instanceof APIError && typeof err.status === 'number') {
    const retryAfterMs = parseRetryAfter(err.headers);
    return new LlmError(err.status === 429 ? 'RATE_LIMITED' : 'HTTP_ERROR', httpErrorMessage(err.status), {
      status: err.status,
      attempts: 1,
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    });
  }
  // A stream cut by the size limit surfaces from the SDK's iterator as the limit itself.
  if (causes(err).some((e) => e instanceof ResponseTooLarge)) return connectionFailure(err);
  // By name: a SyntaxError of another realm (the body parser's) fails instanceof.
  if (causes(err).some((e) => typeof e === 'object' && e !== null && (e as { name?: unknown }).name === 'SyntaxError')) {
    return new LlmError('BAD_RESPONSE', 'the answer is not JSON', { attempts: 1, reason: 'NOT_JSON' });
  }
  // A connection lost while a stream was read.
  if (causes(err).some((e) => typeof (e as { code?: unknown }).code === 'string' && SYSTEM_CODE.test((e as { code: string }).code))) {
    return connectionFailure(err);
  }
  return new LlmError('BAD_RESPONSE', 'the answer could not be read', { attempts: 1 });
}
