import { LlmError } from '../../../src/llm/llm-error';
import { isRetryable, parseRetryAfter, retryDelayMs, withRetry } from '../../../src/llm/retry';

const headers = (h: Record<string, string>) => new Headers(h);

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-03-01T12:00:00Z');
  it('reads delta-seconds, HTTP dates and retry-after-ms', () => {
    expect(parseRetryAfter(headers({ 'retry-after': '3' }), now)).toBe(3000);
    expect(parseRetryAfter(headers({ 'retry-after': 'Sun, 01 Mar 2026 12:00:05 GMT' }), now)).toBe(5000);
    expect(parseRetryAfter(headers({ 'retry-after': 'Sun, 01 Mar 2026 11:00:00 GMT' }), now)).toBe(0);
    expect(parseRetryAfter(headers({ 'retry-after-ms': '250', 'retry-after': '9' }), now)).toBe(250);
  });
  it('ignores absent or unparsable values', () => {
    expect(parseRetryAfter(undefined)).toBeUndefined();
    expect(parseRetryAfter(headers({}))).toBeUndefined();
    expect(parseRetryAfter(headers({ 'retry-after': 'soon' }))).toBeUndefined();
  });
});

describe('retryDelayMs', () => {
  const policy = { maxRetries: 5, baseDelayMs: 100, maxDelayMs: 1000, maxRetryAfterMs: 5000 };
  it('draws full jitter under an exponential cap', () => {
    expect(retryDelayMs(policy, 0, undefined, () => 0.999).delayMs).toBe(99);
    expect(retryDelayMs(policy, 3, undefined, () => 0.5).delayMs).toBe(400);
    expect(retryDelayMs(policy, 10, undefined, () => 0.999).delayMs).toBe(999);
    expect(retryDelayMs(policy, 2, undefined, () => 0).delayMs).toBe(0);
  });
  it('prefers Retry-After, clamped', () => {
    expect(retryDelayMs(policy, 0, 1500)).toEqual({ delayMs: 1500, fromRetryAfter: true });
    expect(retryDelayMs(policy, 0, 60_000)).toEqual({ delayMs: 5000, fromRetryAfter: true });
  });
});

describe('isRetryable', () => {
  const e = (code: LlmError['code'], status?: number) =>
    new LlmError(code, 'x', { attempts: 1, ...(status !== undefined ? { status } : {}) });
  it('retries transient failures only', () => {
    expect([408, 429, 500, 502, 503, 504].map((s) => isRetryable(e('HTTP_ERROR', s)))).toEqual(Array(6).fill(true));
    expect([400, 401, 403, 404, 422, 501].map((s) => isRetryable(e('HTTP_ERROR', s)))).toEqual(Array(6).fill(false));
    expect(isRetryable(e('TIMEOUT'))).toBe(true);
    expect(isRetryable(e('CONNECTION'))).toBe(true);
    expect(isRetryable(e('RATE_LIMITED', 429))).toBe(true);
    expect(isRetryable(e('BAD_RESPONSE'))).toBe(true);
  });
});

describe('withRetry', () => {
  const policy = { maxRetries: 2, baseDelayMs: 1, maxDelayMs: 1 };
  it('counts attempts and stops at the first success', async () => {
    let calls = 0;
    const out = await withRetry(
      async () => {
        calls += 1;
        if (calls < 3) throw new LlmError('CONNECTION', 'down', { attempts: 1 });
        return 'ok';
      },
      { policy },
    );
    expect(out).toEqual({ value: 'ok', attempts: 3 });
  });
  it('does not let an observer failure break the retry', async () => {
    let calls = 0;
    const out = await withRetry(
      async () => {
        calls += 1;
        if (calls === 1) throw new LlmError('TIMEOUT', 'slow', { attempts: 1 });
        return calls;
      },
      {
        policy,
        onRetry: () => {
          throw new Error('observer bug');
        },
      },
    );
    expect(out.attempts).toBe(2);
  });
  it('passes through errors that are not LlmError', async () => {
    await expect(withRetry(async () => Promise.reject(new TypeError('bug')), { policy })).rejects.toBeInstanceOf(TypeError);
  });
});
