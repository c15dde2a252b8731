import cors from 'cors';
import type { RequestHandler } from 'express';

/** Headers a browser front-end may read from an answer (rate limits, schema changes, an export's file name). */
const EXPOSED = ['Retry-After', 'X-ReportQL-Schema', 'Content-Disposition'];

/**
 * CORS for browser front-ends on the origins of CORS_ORIGINS (exact matches): preflights are
 * answered with the methods and headers the API takes. Keys travel as Bearer headers, never as
 * cookies, so credentials stay off. Any other origin gets no CORS header: its browser refuses
 * the answer, and Apollo's CSRF check still refuses its simple requests.
 */
export function corsMiddleware(origins: readonly string[]): RequestHandler {
  const allowed = new Set(origins);
  return cors({
    origin: (origin, callback) => callback(null, origin !== undefined && allowed.has(origin)),
    methods: ['GET', 'POST', 'OPTIONS'],
    allowedHeaders: ['Authorization', 'Content-Type'],
    exposedHeaders: EXPOSED,
    credentials: false,
    maxAge: 600,
    optionsSuccessStatus: 204,
  });
}
