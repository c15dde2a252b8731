import { AnalyticsError } from '../../../src/analytics/errors';
import { apiErrorOf, badInput, conflict, DomainException, domainExceptionOf, forbidden, fromExtractionError, notFound, RateLimitedError } from '../../../src/domain/errors';
import { ExtractionError } from '../../../src/extraction/errors';
import { createErrorFormatter, toGraphQLError } from '../../../src/graphql/errors';

describe('the mapping of domain codes to API errors', () => {
  it.each([
    [badInput('bad', { field: 'x' }), 'BAD_USER_INPUT', 400, { field: 'x' }],
    [new DomainException('UNAUTHENTICATED', 'who'), 'UNAUTHENTICATED', 401, {}],
    [forbidden('no'), 'FORBIDDEN', 403, {}],
    [notFound('Run'), 'NOT_FOUND', 404, {}],
    [conflict('taken', { field: 'name' }), 'CONFLICT', 409, { field: 'name' }],
    [new RateLimitedError(7), 'RATE_LIMITED', 429, { retryAfterSeconds: 7 }],
  ])('%s answers its code and status', (exception, code, status, extra) => {
    const answer = apiErrorOf(exception);
    expect(answer.code).toBe(code);
    expect(answer.status).toBe(status);
    expect(answer.extensions).toEqual({ code, ...extra });
  });

  it('tells a rate-limited caller when to retry, in a header', () => {
    expect(apiErrorOf(new RateLimitedError(12)).headers).toEqual({ 'retry-after': '12' });
    expect(apiErrorOf(new DomainException('RATE_LIMITED', 'slow down')).headers).toEqual({});
  });

  it('answers a passed deadline as BAD_USER_INPUT with its reason and HTTP 503', () => {
    const answer = apiErrorOf(new DomainException('DEADLINE_EXCEEDED', 'late', { deadlineMs: 1500 }));
    expect(answer).toEqual({
      code: 'BAD_USER_INPUT',
      status: 503,
      extensions: { code: 'BAD_USER_INPUT', reason: 'DEADLINE_EXCEEDED', deadlineMs: 1500 },
      headers: { 'retry-after': '1' },
    });
  });

  it('gives Apollo the status and headers in the GraphQL error', () => {
    const error = toGraphQLError(new RateLimitedError(3));
    expect(error.extensions['code']).toBe('RATE_LIMITED');
    const http = error.extensions['http'] as unknown as { status: number; headers: Map<string, string> };
    expect(http.status).toBe(429);
    expect(http.headers.get('retry-after')).toBe('3');
    expect((toGraphQLError(notFound('Run')).extensions['http'] as { headers?: unknown }).headers).toBeUndefined();
  });

  it('turns an extraction engine refusal into bad input naming its field', () => {
    const plain = fromExtractionError(new ExtractionError('NO_EXAMPLES', 'no such example'), 'exampleNames');
    expect(apiErrorOf(plain).extensions).toEqual({ code: 'BAD_USER_INPUT', reason: 'NO_EXAMPLES', field: 'exampleNames' });
    const located = new ExtractionError('BAD_CONFIG', 'not valid YAML');
    located.field = 'modelYaml';
    expect(fromExtractionError(located, 'promptYaml').details).toEqual({ reason: 'BAD_CONFIG', field: 'modelYaml' });
    expect(fromExtractionError(new ExtractionError('BAD_GRAPH', 'cycle')).details).toEqual({ reason: 'BAD_GRAPH' });
    const outOfRange = Object.assign(new ExtractionError('BAD_INPUT', 'samples must be an integer from 1 to 20'), { field: 'samples' });
    expect(fromExtractionError(outOfRange).details).toEqual({ field: 'samples' });
  });

  it('knows our layers’ refusals and nothing else', () => {
    expect(domainExceptionOf(new AnalyticsError('EMPTY_INPUT', 'nothing'))?.details).toEqual({ reason: 'EMPTY_INPUT' });
    expect(domainExceptionOf(new Error('boom'))).toBeNull();
  });

  it('formats a domain exception as the mapping says and masks anything else', () => {
    const logged: string[] = [];
    const format = createErrorFormatter((id) => logged.push(id));
    const refused = format({ message: 'late' }, new DomainException('DEADLINE_EXCEEDED', 'late', { deadlineMs: 9 }));
    expect(refused.extensions).toEqual({ code: 'BAD_USER_INPUT', reason: 'DEADLINE_EXCEEDED', deadlineMs: 9 });
    const masked = format({ message: 'boom' }, new Error('boom'));
    expect(masked.extensions?.['code']).toBe('INTERNAL_SERVER_ERROR');
    expect(logged).toHaveLength(1);
  });
});
