import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import { pinoHttp } from 'pino-http';
import type { Logger } from '../logger';

const PROBES = new Set(['/healthz', '/livez', '/readyz', '/metrics']);
const OPERATION_NAME = /^[_A-Za-z][_0-9A-Za-z]{0,63}$/;

type Request = IncomingMessage & { originalUrl?: string; body?: unknown; id?: unknown };

function pathOf(req: Request): string {
  return (req.originalUrl ?? req.url ?? '').split('?')[0]!.slice(0, 200);
}

/**
 * One access log line per answered request (pino-http): method, path without its query string,
 * status, time, the client address, the id of the API key and a well-formed operation name. No
 * header, body, query text or variable is logged: they may carry keys and report text.
 */
export function accessLog(logger: Logger): RequestHandler {
  return pinoHttp({
    logger,
    wrapSerializers: false,
    quietReqLogger: true,
    serializers: {
      req: (req: Request) => ({ id: req.id, method: req.method, path: pathOf(req), remoteAddress: req.socket?.remoteAddress }),
      res: (res: ServerResponse) => ({ statusCode: res.statusCode }),
      err: (err: Error) => ({ type: err?.constructor?.name ?? 'Error' }),
    },
    customProps: (req: Request, res: ServerResponse) => {
      const props: Record<string, unknown> = {};
      const keyId = (res as ServerResponse & { locals?: { keyId?: string } }).locals?.keyId;
      if (keyId) props['keyId'] = keyId;
      const body = req.body as { operationName?: unknown } | undefined;
      if (typeof body?.operationName === 'string' && OPERATION_NAME.test(body.operationName)) props['operationName'] = body.operationName;
      return props;
    },
    customLogLevel: (req: Request, res: ServerResponse, error?: Error) => {
      if (error || res.statusCode >= 500) return 'error';
      if (PROBES.has(pathOf(req)) && res.statusCode < 400) return 'debug';
      return 'info';
    },
  }) as unknown as RequestHandler;
}
