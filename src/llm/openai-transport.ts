/**
 * The openai SDK configured for self-hosted OpenAI-compatible servers: no SDK retries (ours are in
 * retry.ts), a dummy key when none is set (the SDK throws without one, even for local servers),
 * error bodies normalised so the SDK keeps the server's message, and node:http under it
 * (http-fetch.ts).
 */
import OpenAI, {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
} from 'openai';
import { httpFetch } from './http-fetch';
import { LlmError } from './llm-error';
import { CallerAbort, parseRetryAfter } from './retry';

/** What vLLM's docs use for "no key"; servers started without --api-key ignore the header. */
export const DUMMY_API_KEY = 'EMPTY';

export function normaliseBaseUrl(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, '');
}

/**
 * vLLM (≤0.10) and SGLang answer errors with a flat `{object:'error', message, …}` body; the SDK
 * only reads `body.error`, so it would report "400 status code (no body)". Wrapping the flat body
 * as `{error: body}` keeps the server's message (e.g. "The model `x` does not exist.").
 */
const normalisingFetch: typeof fetch = async (input, init) => {
  let response: Response;
  try {
    response = await httpFetch(input, init);
  } catch (err) {
    throw sameRealmError(err);
  }
  if (response.ok) return response;
  const text = await response.text();
  let body = text;
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) && !('error' in parsed)) {
      const flat = parsed as Record<string, unknown>;
      const message = flat['message'] ?? flat['detail'];
      if (message !== undefined) {
        body = JSON.stringify({ error: { ...flat, message: typeof message === 'string' ? message : JSON.stringify(message) } });
      }
    }
  } catch {
    // Not JSON: the SDK reports the raw text itself.
  }
  const headers = new Headers(response.headers);
  // The body was decoded and may have been rewritten: its original length and encoding no longer apply.
  headers.delete('content-length');
  headers.delete('content-encoding');
  return new Response(body, { status: response.status, statusText: response.statusText, headers });
};

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

export function createOpenAi(baseUrl: string, apiKey: string | null | undefined, timeoutMs: number): OpenAI {
  return new OpenAI({
    baseURL: normaliseBaseUrl(baseUrl),
    apiKey: apiKey && apiKey.length > 0 ? apiKey : DUMMY_API_KEY,
    maxRetries: 0,
    timeout: toSdkTimeout(timeoutMs),
    fetch: normalisingFetch,
  });
}

/** The SDK insists on a positive integer. */
export function toSdkTimeout(timeoutMs: number): number {
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new RangeError(`timeoutMs must be a positive number, got ${timeoutMs}`);
  }
  return Math.max(1, Math.round(timeoutMs));
}

/** Maps anything the SDK throws to LlmError (attempts filled in later by withRetry). */
export function toLlmError(err: unknown, signal: AbortSignal | undefined, timeoutMs: number): LlmError | CallerAbort {
  if (err instanceof LlmError || err instanceof CallerAbort) return err;
  if (signal?.aborted || err instanceof APIUserAbortError) return new CallerAbort(signal?.reason ?? err);
  if (err instanceof APIConnectionTimeoutError) {
    return new LlmError('TIMEOUT', `no response within ${timeoutMs} ms`, { attempts: 1, cause: err });
  }
  if (err instanceof APIConnectionError) {
    const cause = (err as { cause?: unknown }).cause;
    const detail = cause instanceof Error ? `${cause.message}${causeCode(cause)}` : err.message;
    return new LlmError('CONNECTION', `connection failed: ${detail}`, { attempts: 1, cause: err });
  }
  if (err instanceof APIError && typeof err.status === 'number') {
    const retryAfterMs = parseRetryAfter(err.headers);
    return new LlmError(err.status === 429 ? 'RATE_LIMITED' : 'HTTP_ERROR', err.message, {
      status: err.status,
      attempts: 1,
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
      cause: err,
    });
  }
  // JSON parse failures of a 2xx body and other surprises from the SDK.
  const message = err instanceof Error ? err.message : String(err);
  return new LlmError('BAD_RESPONSE', `unreadable response: ${message}`, { attempts: 1, cause: err });
}

function causeCode(cause: Error): string {
  const nested = (cause as { cause?: { code?: unknown } }).cause;
  return nested && typeof nested.code === 'string' ? ` (${nested.code})` : '';
}
