import { randomUUID } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import { apiErrorOf, DomainException, domainExceptionOf } from '../domain/errors';
import type { RateLimits } from '../graphql/rate-limits';
import { loggableError, type Logger } from '../logger';
import type { Principal } from '../modules/api-key/principal';
import type { Services } from '../services';

/** What the routes outside /graphql need: the key check and rate limits of GraphQL, and a log. */
export interface RouteDependencies {
  services: Services;
  limits: RateLimits | undefined;
  logger: Logger;
}

/** An answer in the API's error shape: `{ errors: [{ message, extensions: { code, … } }] }`. */
function sendError(res: Response, status: number, headers: Record<string, string>, message: string, extensions: Record<string, unknown>): void {
  if (res.headersSent) {
    // A stream already under way cannot change its status: it is cut short instead.
    res.destroy();
    return;
  }
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.status(status).setHeader('Cache-Control', 'no-store');
  res.json({ errors: [{ message, extensions }] });
}

/**
 * Turns what a route threw into the error contract of GraphQL: domain exceptions (and the
 * refusals of our layers that stand for one) answer as the mapping says, with their message
 * (messages never carry request text); anything else is masked behind a correlation id that
 * only the log carries.
 */
export function sendFailure(res: Response, logger: Logger, error: unknown): void {
  const refusal = domainExceptionOf(error);
  if (refusal) {
    const answer = apiErrorOf(refusal);
    sendError(res, answer.status, answer.headers, refusal.message, answer.extensions);
  } else {
    const correlationId = randomUUID();
    logger.error({ correlationId, err: loggableError(error) }, 'unexpected error');
    sendError(res, 500, {}, `Internal server error (correlation id ${correlationId})`, { code: 'INTERNAL_SERVER_ERROR', correlationId });
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
