import { randomUUID } from 'node:crypto';
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { AnalyticsError } from '../analytics/errors';
import { loggableError } from '../logger';

/** The fixed set of request-level error codes (DESIGN.md "API conventions"). */
export type ErrorCode =
  | 'BAD_USER_INPUT'
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'RATE_LIMITED'
  | 'INTERNAL_SERVER_ERROR';

/** Thrown by services; turned into a GraphQL error with `extensions.code` in one place. */
export class DomainException extends Error {
  constructor(
    readonly code: Exclude<ErrorCode, 'INTERNAL_SERVER_ERROR'>,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'DomainException';
  }
}

export const badInput = (message: string, details?: Record<string, unknown>) =>
  new DomainException('BAD_USER_INPUT', message, details);
export const notFound = (what: string) => new DomainException('NOT_FOUND', `${what} not found`);
export const forbidden = (message: string) => new DomainException('FORBIDDEN', message);
export const conflict = (message: string, details?: Record<string, unknown>) =>
  new DomainException('CONFLICT', message, details);

function httpStatusOf(code: ErrorCode): number {
  switch (code) {
    case 'BAD_USER_INPUT':
      return 400;
    case 'UNAUTHENTICATED':
      return 401;
    case 'FORBIDDEN':
      return 403;
    case 'NOT_FOUND':
      return 404;
    case 'CONFLICT':
      return 409;
    case 'RATE_LIMITED':
      return 429;
    case 'INTERNAL_SERVER_ERROR':
      return 500;
  }
}

export function toGraphQLError(exception: DomainException): GraphQLError {
  return new GraphQLError(exception.message, {
    extensions: { code: exception.code, ...(exception.details ?? {}), http: { status: httpStatusOf(exception.code) } },
  });
}

const PASS_THROUGH_CODES = new Set<string>(['BAD_USER_INPUT', 'UNAUTHENTICATED', 'FORBIDDEN', 'NOT_FOUND', 'CONFLICT', 'RATE_LIMITED']);

/**
 * Apollo's and GraphQL's own failures of a request (parsing, validation, a missing or ambiguous
 * operation) are the caller's fault: BAD_USER_INPUT, with the original code as `reason`, so
 * clients only ever see the fixed set of codes.
 */
const CALLER_FAULT_CODES = new Set<string>([
  'GRAPHQL_VALIDATION_FAILED',
  'GRAPHQL_PARSE_FAILED',
  'BAD_REQUEST',
  'PERSISTED_QUERY_NOT_FOUND',
  'PERSISTED_QUERY_NOT_SUPPORTED',
  'OPERATION_RESOLUTION_FAILURE',
]);

/**
 * Apollo's formatError: domain exceptions keep their code; argument coercion errors become
 * BAD_USER_INPUT; everything else is masked behind a correlation id that the log carries
 * (as {@link loggableError}, never with the error's data).
 */
export function createErrorFormatter(log: (correlationId: string, error: unknown) => void) {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const original = error instanceof GraphQLError ? (error.originalError ?? error) : error;
    if (original instanceof DomainException) {
      return { ...formatted, extensions: { ...toGraphQLError(original).extensions, http: undefined } };
    }
    if (original instanceof AnalyticsError) {
      return { ...formatted, message: original.message, extensions: { code: 'BAD_USER_INPUT', reason: original.code } };
    }
    const code = formatted.extensions?.code;
    if (typeof code === 'string' && PASS_THROUGH_CODES.has(code)) {
      const { stacktrace: _stacktrace, http: _http, ...extensions } = formatted.extensions ?? {};
      return { ...formatted, extensions: { ...extensions, code } };
    }
    if (typeof code === 'string' && CALLER_FAULT_CODES.has(code)) {
      return { ...formatted, extensions: { code: 'BAD_USER_INPUT', reason: code } };
    }
    if (error instanceof GraphQLError && !error.originalError) {
      // Variable and argument coercion errors carry no original error and no code.
      return { ...formatted, extensions: { code: 'BAD_USER_INPUT' } };
    }
    const correlationId = randomUUID();
    log(correlationId, loggableError(original));
    return {
      message: `Internal server error (correlation id ${correlationId})`,
      locations: formatted.locations,
      path: formatted.path,
      extensions: { code: 'INTERNAL_SERVER_ERROR', correlationId },
    };
  };
}
