import { AnalyticsError } from '../analytics/errors';
import { ExtractionError } from '../extraction/errors';

/** The fixed set of request-level error codes clients see (DESIGN.md "API conventions"). */
export const API_ERROR_CODES = [
  'BAD_USER_INPUT',
  'UNAUTHENTICATED',
  'FORBIDDEN',
  'NOT_FOUND',
  'CONFLICT',
  'RATE_LIMITED',
  'SERVICE_UNAVAILABLE',
  'INTERNAL_SERVER_ERROR',
] as const;
export type ApiErrorCode = (typeof API_ERROR_CODES)[number];

/**
 * What services and the request pipeline can refuse with. Most codes are also API codes; a
 * domain code that is not (DEADLINE_EXCEEDED) is a refusal clients see under an API code with
 * a `reason`, and a status of its own.
 */
export type DomainErrorCode = Exclude<ApiErrorCode, 'INTERNAL_SERVER_ERROR'> | 'DEADLINE_EXCEEDED';

/** Thrown by services; turned into an API error by {@link apiErrorOf}, in one place. */
export class DomainException extends Error {
  constructor(
    readonly code: DomainErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'DomainException';
  }
}

/** A rate limit refused the request; the caller may try again after `retryAfterSeconds`. */
export class RateLimitedError extends DomainException {
  constructor(readonly retryAfterSeconds: number) {
    super('RATE_LIMITED', `Too many requests: try again in ${retryAfterSeconds} s`, { retryAfterSeconds });
    this.name = 'RateLimitedError';
  }
}

export const badInput = (message: string, details?: Record<string, unknown>) =>
  new DomainException('BAD_USER_INPUT', message, details);
export const notFound = (what: string) => new DomainException('NOT_FOUND', `${what} not found`);
export const forbidden = (message: string) => new DomainException('FORBIDDEN', message);
export const conflict = (message: string, details?: Record<string, unknown>) =>
  new DomainException('CONFLICT', message, details);
/** The server cannot answer now (its database is away, it is overloaded): the same request may succeed later. */
export const unavailable = (message: string, details?: Record<string, unknown>) =>
  new DomainException('SERVICE_UNAVAILABLE', message, details);
/** What a request that needed the database answers while the database cannot be reached. */
export const databaseUnavailable = () =>
  unavailable('The database is unavailable: try again in a few seconds', { reason: 'DATABASE_UNAVAILABLE' });

/**
 * An extraction engine's refusal of its configuration as bad input, naming the input it is in
 * (the error's own field, else `field`) and, unless the engine's code is its plain BAD_INPUT
 * (a setting out of range, which the field says), the engine's code as `reason`.
 */
export function fromExtractionError(error: ExtractionError, field?: string): DomainException {
  const at = error.field ?? field;
  return badInput(error.message, { ...(error.code !== 'BAD_INPUT' ? { reason: error.code } : {}), ...(at !== undefined ? { field: at } : {}) });
}

/** A statistic's refusal of its input (analytics/ throws only these) as bad input. */
export function fromAnalyticsError(error: AnalyticsError): DomainException {
  return badInput(error.message, { reason: error.code });
}

/** The domain exception an error thrown by our layers stands for; null for anything unexpected. */
export function domainExceptionOf(error: unknown): DomainException | null {
  if (error instanceof DomainException) return error;
  if (error instanceof AnalyticsError) return fromAnalyticsError(error);
  return null;
}

/** How a refusal is answered: the API code with its extensions, the HTTP status and headers. */
export interface ApiError {
  code: ApiErrorCode;
  /** `extensions` of the GraphQL error (and of an HTTP route's error body), `code` first. */
  extensions: Record<string, unknown>;
  status: number;
  headers: Record<string, string>;
}

function unmapped(code: never): never {
  throw new Error(`no API error for domain code ${String(code)}`);
}

/** The one mapping from domain codes to API codes and HTTP statuses. */
export function apiErrorOf(exception: DomainException): ApiError {
  const details = exception.details ?? {};
  const answer = (code: ApiErrorCode, status: number, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}): ApiError => ({
    code,
    extensions: { code, ...extra, ...details },
    status,
    headers,
  });
  const code = exception.code;
  switch (code) {
    case 'BAD_USER_INPUT':
      return answer(code, 400);
    case 'UNAUTHENTICATED':
      return answer(code, 401);
    case 'FORBIDDEN':
      return answer(code, 403);
    case 'NOT_FOUND':
      return answer(code, 404);
    case 'CONFLICT':
      return answer(code, 409);
    case 'RATE_LIMITED': {
      const retryAfter = details['retryAfterSeconds'];
      return answer(code, 429, {}, typeof retryAfter === 'number' ? { 'retry-after': String(retryAfter) } : {});
    }
    case 'SERVICE_UNAVAILABLE':
      return answer(code, 503);
    case 'DEADLINE_EXCEEDED':
      // The server, not the request, ran out of time: 503 tells HTTP clients and proxies to retry.
      return answer('BAD_USER_INPUT', 503, { reason: 'DEADLINE_EXCEEDED' }, { 'retry-after': '1' });
    default:
      return unmapped(code);
  }
}

