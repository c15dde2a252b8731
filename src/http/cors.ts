import cors from 'cors';
import type { RequestHandler } from 'express';
import { forbidden } from '../domain/errors';
import type { Logger } from '../logger';
import { sendFailure } from './route-auth';

/** Headers a browser front-end may read from an answer (rate limits, schema changes, an export's file name). */
const EXPOSED = ['Retry-After', 'X-ReportQL-Schema', 'Content-Disposition'];

/** Origins already logged as refused: one line per origin, not one per request. */
const LOGGED_LIMIT = 100;

/** The Origin header as scheme://host[:port] when it is one, else null (it is the client's text). */
function wellFormedOrigin(value: string | undefined): string | null {
  if (!value || value.length > 300) return null;
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === value ? url.origin : null;
  } catch {
    return null;
  }
}

/**
 * CORS for browser front-ends on the origins of CORS_ORIGINS (exact matches): preflights are
 * answered with the methods and headers the API takes. Keys travel as Bearer headers, never as
 * cookies, so credentials stay off. Any other origin gets no CORS header: its browser refuses
 * the answer, and Apollo's CSRF check still refuses its simple requests. Its preflight is
 * answered 403 with a body naming CORS_ORIGINS (what the front-end developer sees in the
 * browser's network panel), and the server logs the refused origin once (what the operator adds).
 */
export function corsMiddleware(origins: readonly string[], logger: Logger): RequestHandler {
  const allowed = new Set(origins);
  const logged = new Set<string>();
  const headers = cors({
    origin: (origin, callback) => callback(null, origin !== undefined && allowed.has(origin)),
    methods: ['GET', 'POST', 'OPTIONS'],
    allowedHeaders: ['Authorization', 'Content-Type'],
    exposedHeaders: EXPOSED,
    credentials: false,
    maxAge: 600,
    optionsSuccessStatus: 204,
  });
  return (req, res, next) => {
    const origin = req.headers.origin;
    const preflight = req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;
    if (!preflight || origin === undefined || allowed.has(origin)) {
      headers(req, res, next);
      return;
    }
    const shown = wellFormedOrigin(origin);
    if (shown && !logged.has(shown) && logged.size < LOGGED_LIMIT) {
      logged.add(shown);
      logger.warn({ origin: shown }, `a browser on ${shown} was refused (CORS): add it to CORS_ORIGINS to let it call the API`);
    }
    res.vary('Origin');
    sendFailure(
      res,
      logger,
      forbidden(
        allowed.size === 0
          ? 'This origin may not call the API from a browser: CORS_ORIGINS is unset on the server. Set CORS_ORIGINS to a comma-separated list of origins, e.g. CORS_ORIGINS=http://localhost:5173'
          : 'This origin is not in the server\'s CORS_ORIGINS: add it there (a comma-separated list of exact origins, e.g. https://app.example.org,http://localhost:5173)',
      ),
    );
  };
}
