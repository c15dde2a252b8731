import { ExtractionError } from '../../../src/extraction/errors';
import { breakerSignal, describeFailure, ExecutorAbort, redact } from '../../../src/jobs/failure';
import { LlmError } from '../../../src/llm/llm-error';

describe('failures as data', () => {
  it('codes transport failures in our own words, without what the endpoint said', () => {
    const upstream = 'Forbidden: see http://10.0.0.3/admin, key sk-live-123';
    expect(describeFailure(new LlmError('HTTP_ERROR', upstream, { status: 503, attempts: 4 }), 1000, 1)).toEqual({
      code: 'HTTP_503',
      message: 'the endpoint answered HTTP 503 (after 4 attempts)',
      attempts: 4,
      transient: true,
    });
    expect(describeFailure(new LlmError('RATE_LIMITED', upstream, { status: 429, attempts: 2 }), 1000, 1).code).toBe('HTTP_429');
    expect(describeFailure(new LlmError('BAD_RESPONSE', upstream, { attempts: 3 }), 1000, 1)).toMatchObject({ code: 'UNREADABLE', attempts: 3 });
    expect(describeFailure(new LlmError('CONNECTION', 'connection failed: read ECONNRESET (ECONNRESET)', { attempts: 1 }), 1000, 1).message).toBe(
      'connection to the endpoint failed (ECONNRESET) (after 1 attempt)',
    );
    expect(describeFailure(new ExecutorAbort('DEADLINE'), 1500, 2)).toMatchObject({ code: 'DEADLINE', attempts: 2 });
    expect(describeFailure(new ExtractionError('ALL_CALLS_FAILED', 'x', new LlmError('TIMEOUT', upstream, { attempts: 2 })), 1000, 1).code).toBe('TIMEOUT');
    for (const code of ['HTTP_ERROR', 'RATE_LIMITED', 'BAD_RESPONSE', 'TIMEOUT'] as const) {
      expect(describeFailure(new LlmError(code, upstream, { status: 500, attempts: 1 }), 1000, 1).message).not.toMatch(/10\.0\.0\.3|sk-live/);
    }
  });

  it('codes an egress refusal, a redirect and a too large answer in its own words', () => {
    expect(describeFailure(new LlmError('CONNECTION', 'x', { attempts: 1, reason: 'EGRESS_DENIED' }), 1000, 1)).toEqual({
      code: 'EGRESS_DENIED',
      message: "the endpoint's address is outside the egress policy (ENDPOINT_ALLOW) (after 1 attempt)",
      attempts: 1,
      transient: false,
    });
    expect(describeFailure(new LlmError('CONNECTION', 'x', { attempts: 2, reason: 'CERT_HAS_EXPIRED' }), 1000, 1).message).toBe(
      'connection to the endpoint failed (CERT_HAS_EXPIRED) (after 2 attempts)',
    );
    expect(describeFailure(new LlmError('HTTP_ERROR', 'x', { status: 302, attempts: 1 }), 1000, 1)).toMatchObject({
      code: 'HTTP_302',
      message: 'the endpoint answered HTTP 302, a redirect, which is not followed (after 1 attempt)',
      transient: false,
    });
    expect(describeFailure(new LlmError('BAD_RESPONSE', 'x', { attempts: 1, reason: 'TOO_LARGE' }), 1000, 1).message).toBe(
      "the endpoint's answer is larger than the limit (after 1 attempt)",
    );
  });

  it("tells the breaker only the endpoint's own failures; a report it answered badly is a sign of life", () => {
    const signal = (error: unknown) => breakerSignal(describeFailure(error, 1000, 1));
    for (const error of [
      new LlmError('CONNECTION', 'x', { attempts: 1, reason: 'ECONNREFUSED' }),
      new LlmError('CONNECTION', 'x', { attempts: 1, reason: 'ECONNRESET' }),
      new LlmError('HTTP_ERROR', 'x', { status: 502, attempts: 1 }),
      new LlmError('RATE_LIMITED', 'x', { status: 429, attempts: 1 }),
      new LlmError('TIMEOUT', 'x', { attempts: 1 }),
      new ExecutorAbort('DEADLINE'),
    ]) {
      expect(signal(error)).toBe('FAILED');
    }
    for (const error of [
      // context length exceeded, a refused parameter: about this request
      new LlmError('HTTP_ERROR', 'x', { status: 400, attempts: 1 }),
      new LlmError('BAD_RESPONSE', 'x', { attempts: 3, reason: 'NOT_JSON' }),
      new LlmError('BAD_RESPONSE', 'x', { attempts: 1, reason: 'TOO_LARGE' }),
    ]) {
      expect(signal(error)).toBe('ANSWERED');
    }
    expect(signal(new LlmError('CONNECTION', 'x', { attempts: 1, reason: 'EGRESS_DENIED' }))).toBe('NO_SIGN');
    expect(signal(new ExtractionError('BAD_CONFIG', 'x'))).toBe('NO_SIGN');
    expect(signal(new Error('a bug of ours'))).toBe('NO_SIGN');
  });

  it('redacts every secret and keeps messages short', () => {
    expect(redact('key sk-abcdef and sk-abcdef again', ['sk-abcdef', null, ''])).toBe('key [redacted] and [redacted] again');
    expect(redact('x'.repeat(500), []).length).toBe(200);
  });
});
