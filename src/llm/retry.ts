import { LlmError } from './llm-error';
import type { RetryEvent, RetryPolicy } from './types';

export const DEFAULT_RETRY_POLICY: Readonly<Required<RetryPolicy>> = {
  maxRetries: 3,
  baseDelayMs: 500,
  maxDelayMs: 20_000,
  maxRetryAfterMs: 60_000,
};

/** Statuses worth another try: overload, rate limit, gateway trouble. 501/505 will not change. */
const RETRYABLE_STATUSES = new Set([408, 429, 500, 502, 503, 504]);

export function isRetryable(error: LlmError): boolean {
  // The deployment's policy and our size limit will answer the same the next time.
  if (error.reason === 'EGRESS_DENIED' || error.reason === 'TOO_LARGE') return false;
  switch (error.code) {
    case 'TIMEOUT':
    case 'CONNECTION':
    case 'RATE_LIMITED':
    // A 200 whose body is not a chat completion: a proxy's page or a server cut mid-answer.
    case 'BAD_RESPONSE':
      return true;
    case 'HTTP_ERROR':
      return error.status !== undefined && RETRYABLE_STATUSES.has(error.status);
  }
}

/**
 * Parses `retry-after-ms` (OpenAI's extension) or `Retry-After` (delta-seconds or HTTP-date,
 * RFC 9110 §10.2.3) into milliseconds; undefined when absent or unparsable.
 */
export function parseRetryAfter(
  headers: { get(name: string): string | null } | undefined,
  now: number = Date.now(),
): number | undefined {
  if (!headers) return undefined;
  const ms = headers.get('retry-after-ms');
  if (ms !== null && ms.trim() !== '' && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const value = headers.get('retry-after');
  if (value === null || value.trim() === '') return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(value)) return Math.max(0, Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * Wait before retry number `retryIndex` (0-based): the server's Retry-After when given (clamped),
 * else "full jitter" exponential backoff, uniform in [0, min(maxDelay, base·2^retryIndex)]
 * (AWS Architecture Blog, "Exponential Backoff and Jitter", 2015), which spreads out the retries
 * of many concurrent extraction calls hitting the same overloaded endpoint.
 */
export function retryDelayMs(
  policy: RetryPolicy,
  retryIndex: number,
  retryAfterMs: number | undefined,
  random: () => number = Math.random,
): { delayMs: number; fromRetryAfter: boolean } {
  if (retryAfterMs !== undefined) {
    const cap = policy.maxRetryAfterMs ?? DEFAULT_RETRY_POLICY.maxRetryAfterMs;
    return { delayMs: Math.min(retryAfterMs, cap), fromRetryAfter: true };
  }
  const cap = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retryIndex);
  return { delayMs: Math.floor(random() * cap), fromRetryAfter: false };
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortReason(signal));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortReason(signal as AbortSignal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Thrown inside an attempt when the caller aborted: never retried, rethrown as the signal's reason. */
export class CallerAbort extends Error {
  constructor(readonly reason: unknown) {
    super('aborted by caller');
    this.name = 'CallerAbort';
  }
}

/**
 * Runs `attempt` until it succeeds, fails with a non-retryable LlmError, or retries run out.
 * `attempt` must throw LlmError (or CallerAbort); the error finally thrown carries the attempt count.
 */
export async function withRetry<T>(
  attempt: (attemptNumber: number) => Promise<T>,
  options: {
    policy: RetryPolicy;
    signal?: AbortSignal | undefined;
    onRetry?: ((event: RetryEvent) => void) | undefined;
    random?: () => number;
  },
): Promise<{ value: T; attempts: number }> {
  const { policy, signal } = options;
  for (let n = 1; ; n += 1) {
    try {
      return { value: await attempt(n), attempts: n };
    } catch (err) {
      if (err instanceof CallerAbort) throw err.reason;
      if (!(err instanceof LlmError)) throw err;
      const error = err.withAttempts(n);
      if (n > policy.maxRetries || !isRetryable(error)) throw error;
      const { delayMs, fromRetryAfter } = retryDelayMs(policy, n - 1, error.retryAfterMs, options.random);
      try {
        options.onRetry?.({ attempt: n, delayMs, fromRetryAfter, error });
      } catch (observerError) {
        // An observer's bug must not turn a retry into a failure; it is reported where it can be seen.
        process.emitWarning(`a retry observer failed: ${observerError instanceof Error ? observerError.name : 'error'}`);
      }
      await sleep(delayMs, signal);
    }
  }
}
