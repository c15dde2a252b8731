import { randomUUID } from 'node:crypto';
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { API_ERROR_CODES, apiErrorOf, databaseUnavailable, domainExceptionOf, type DomainException } from '../domain/errors';
import { isConnectionLoss } from '../jobs/prediction-writer';
import { loggableError } from '../logger';

/** A domain exception as the GraphQL error Apollo answers: the mapped code, status and headers. */
export function toGraphQLError(exception: DomainException): GraphQLError {
  const answer = apiErrorOf(exception);
  const headers = Object.entries(answer.headers);
  return new GraphQLError(exception.message, {
    extensions: {
      ...answer.extensions,
      // Apollo takes the status and a Map of headers from here (graphql-yoga's typing says a record).
      http: { status: answer.status, ...(headers.length > 0 ? { headers: new Map(headers) as unknown as Record<string, string> } : {}) },
    },
  });
}

/** Codes of ours that errors built before the formatter (toGraphQLError) already carry. */
const PASS_THROUGH_CODES = new Set<string>(API_ERROR_CODES.filter((code) => code !== 'INTERNAL_SERVER_ERROR'));

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
    const refusal = domainExceptionOf(original);
    if (refusal) {
      return { ...formatted, message: refusal.message, extensions: apiErrorOf(refusal).extensions };
    }
    const code = formatted.extensions?.code;
    if (typeof code === 'string' && PASS_THROUGH_CODES.has(code)) {
      const { stacktrace: _stacktrace, http: _http, ...extensions } = formatted.extensions ?? {};
      return { ...formatted, extensions: { ...extensions, code } };
    }
    if (typeof code === 'string' && CALLER_FAULT_CODES.has(code)) {
      return { ...formatted, extensions: { code: 'BAD_USER_INPUT', reason: code } };
    }
    if (isConnectionLoss(original)) {
      const unavailable = databaseUnavailable();
      return { ...formatted, message: unavailable.message, extensions: apiErrorOf(unavailable).extensions };
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
