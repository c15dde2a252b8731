import { randomUUID } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import { AnalyticsError } from '../analytics/errors';
import { DomainException, type ErrorCode } from '../graphql/errors';
import { RateLimitedError, type RateLimits } from '../graphql/rate-limits';
import { loggableError, type Logger } from '../logger';
import type { Principal } from '../modules/api-key/principal';
import type { Services } from '../services';

const STATUS: Record<ErrorCode, number> = {
  BAD_USER_INPUT: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  RATE_LIMITED: 429,
  INTERNAL_SERVER_ERROR: 500,
};

/** What the routes outside /graphql need: the key check and rate limits of GraphQL, and a log. */
export interface RouteDependencies {
  services: Services;
  limits: RateLimits | undefined;
  logger: Logger;
}

/** An answer in the API's error shape: `{ errors: [{ message, extensions: { code, … } }] }`. */
export function sendError(res: Response, code: ErrorCode, message: string, extensions: Record<string, unknown> = {}): void {
  if (res.headersSent) {
    // A stream already under way cannot change its status: it is cut short instead.
    res.destroy();
    return;
  }
  res.status(STATUS[code]).setHeader('Cache-Control', 'no-store');
  res.json({ errors: [{ message, extensions: { code, ...extensions } }] });
}

/**
 * Turns what a route threw into the error contract of GraphQL: domain exceptions keep their
 * code and message (messages never carry request text), statistics refusals are
 * BAD_USER_INPUT, anything else is masked behind a correlation id that only the log carries.
 */
export function sendFailure(res: Response, logger: Logger, error: unknown): void {
  if (error instanceof RateLimitedError) {
    if (!res.headersSent) res.setHeader('Retry-After', String(error.retryAfterSeconds));
    sendError(res, 'RATE_LIMITED', error.message, { retryAfterSeconds: error.retryAfterSeconds });
  } else if (error instanceof DomainException) {
    sendError(res, error.code, error.message, error.details ?? {});
  } else if (error instanceof AnalyticsError) {
    sendError(res, 'BAD_USER_INPUT', error.message, { reason: error.code });
  } else {
    const correlationId = randomUUID();
    logger.error({ correlationId, err: loggableError(error) }, 'unexpected error');
    sendError(res, 'INTERNAL_SERVER_ERROR', `Internal server error (correlation id ${correlationId})`, { correlationId });
  }
}

/**
 * The caller of an HTTP route, checked exactly like a GraphQL request: rate limits per address,
 * `Authorization: Bearer <key>`, failed attempts counted per address, then limits per key.
 */
export async function authenticateRequest(deps: RouteDependencies, req: Request): Promise<Principal> {
  const address = req.ip ?? req.socket.remoteAddress ?? 'unknown';
  await deps.limits?.admitAddress(address);
  let principal: Principal;
  try {
    principal = await deps.services.apiKeys.authenticate(req.headers.authorization);
  } catch (error) {
    if (error instanceof DomainException) await deps.limits?.failedAuthentication(address);
    throw error;
  }
  await deps.limits?.admitKey(principal.keyId);
  return principal;
}

/**
 * The caller of a request that carries a signed URL's `token` instead of an Authorization header
 * (an <img>): the signature must hold for this path and query and the key must still be valid.
 */
async function authenticateSigned(deps: RouteDependencies, req: Request): Promise<Principal> {
  const address = req.ip ?? req.socket.remoteAddress ?? 'unknown';
  await deps.limits?.admitAddress(address);
  const keyId = deps.services.chartUrls.verify(req.originalUrl);
  let principal: Principal;
  try {
    if (!keyId) throw new DomainException('UNAUTHENTICATED', 'The signed URL is invalid, expired or its key was revoked');
    principal = await deps.services.apiKeys.principalOf(keyId);
  } catch (error) {
    if (error instanceof DomainException) await deps.limits?.failedAuthentication(address);
    throw error;
  }
  await deps.limits?.admitKey(principal.keyId);
  return principal;
}

/**
 * An authenticated GET route: the handler gets the principal; every failure answers in the error
 * shape. With `signedUrls`, a request without an Authorization header may carry a signed `token`.
 */
export function authenticated(
  deps: RouteDependencies,
  handler: (req: Request, res: Response, principal: Principal) => Promise<void>,
  options: { signedUrls?: boolean } = {},
): RequestHandler {
  return async (req, res) => {
    try {
      const signed = options.signedUrls === true && req.headers.authorization === undefined && new URL(req.originalUrl, 'http://localhost').searchParams.has('token');
      const principal = signed ? await authenticateSigned(deps, req) : await authenticateRequest(deps, req);
      res.locals['keyId'] = principal.keyId;
      await handler(req, res, principal);
    } catch (error) {
      sendFailure(res, deps.logger, error);
    }
  };
}
