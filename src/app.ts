import 'reflect-metadata';
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import { ApolloServerPluginCacheControlDisabled, ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { expressMiddleware } from '@as-integrations/express5';
import express from 'express';
import type { IncomingMessage } from 'node:http';
import { execute, getOperationAST, GraphQLError, parse, printSchema, subscribe } from 'graphql';
import type { Context as GraphQLWsContext } from 'graphql-ws';
import { checkQueryCost, MAX_QUERY_TOKENS } from './graphql/query-cost';
import { useServer } from 'graphql-ws/use/ws';
import type { DataSource } from 'typeorm';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Principal } from './modules/api-key/principal';
import { createContext, type GraphQLContext } from './graphql/context';
import { deadlinePassed, RequestDeadline } from './graphql/request-deadline';
import { DEFAULT_WAITED_LIMITS, type WaitedLimits } from './db/work-control';
import { apiErrorOf, badInput, DomainException, RateLimitedError } from './domain/errors';
import { createErrorFormatter, toGraphQLError } from './graphql/errors';
import { graphiqlPage, SCHEMA_HASH_HEADER } from './graphql/graphiql';
import { inlineFileVariables } from './graphql/inline-files';
import { INVALID_UTF8_TYPE, verifyUtf8Body } from './graphql/input-guard';
import { jsonBody } from './http/json-body';
import { accessLog } from './http/access-log';
import { corsMiddleware } from './http/cors';
import { registerChartRoutes } from './http/charts';
import { registerExportRoutes } from './http/exports';
import { DatabaseProbe, readiness } from './http/health';
import { DEFAULT_CONNECTION_LIMITS, LoadShedder, SHED_RETRY_AFTER_SECONDS, type ConnectionLimits } from './http/load-shedding';
import { DEFAULT_WEBSOCKET_LIMITS, TOO_MANY_REQUESTS_CLOSE, WebSocketOperationLimits, type WebSocketLimits } from './graphql/operation-limits';
import { Metrics } from './http/metrics';
import { RateLimits, type RateLimitSettings } from './graphql/rate-limits';
import { buildReportQlSchema } from './graphql/schema';
import { multipartUploads } from './modules/imports/upload';
import { libraryLogger, loggableError, type Logger } from './logger';
import { analyticsRevisions, ReplayableAuditRecorder, ResponseCache } from './graphql/response-cache';
import { createServices, type ServiceOptions, type Services } from './services';

export const MAX_REQUEST_BYTES = 64 * 1024 * 1024;
export const DEFAULT_REQUEST_DEADLINE_MS = 120_000;
/**
 * JSON bodies from this size on keep the files of import inputs (`content`) as bytes of the body
 * instead of strings (src/http/json-body.ts); string values from this size on are the candidates.
 */
export const INLINE_FILE_MIN_BYTES = 1024 * 1024;

/** How the server meets its clients: limits per key and address, and how long a request may take. */
export interface AppOptions extends ServiceOptions {
  /** Unset: no rate limits. */
  rateLimits?: RateLimitSettings;
  /** An HTTP request or a WebSocket query or mutation is answered within this time (default 120 s). */
  requestDeadlineMs?: number;
  /** The most work a request does while its client waits (default DEFAULT_WAITED_LIMITS); more is refused, pointing to the background tasks. */
  waitedLimits?: Partial<WaitedLimits>;
  /** Proxies in front of the server whose X-Forwarded-For is believed (express `trust proxy`); 0: none. */
  trustProxyHops?: number;
  /** Browser origins allowed to call /graphql (CORS_ORIGINS). */
  corsOrigins?: readonly string[];
  /** Bearer token /metrics asks for (METRICS_TOKEN); unset: /metrics answers loopback clients only. */
  metricsToken?: string;
  /**
   * How long an answer is built before the rest waits for a later turn of the event loop
   * (execution-pacer.ts; default 20 ms). Tests that count statements set it high: pacing splits
   * DataLoader batches by time.
   */
  executionSliceMs?: number;
  /** Connections, requests in flight and requests per connection past which requests are shed with 503. */
  connectionLimits?: ConnectionLimits;
  /** Operations running at once over WebSocket, per connection and per key. */
  webSocketLimits?: WebSocketLimits;
}

export interface App {
  server: Server;
  services: Services;
  metrics: Metrics;
  /** Starts listening; resolves with the bound port. */
  listen(port: number, host?: string): Promise<number>;
  close(): Promise<void>;
}

const REVOCATION_SWEEP_MS = 30_000;

function withoutHttp(error: GraphQLError): GraphQLError {
  const { http: _http, ...extensions } = error.extensions;
  return new GraphQLError(error.message, { extensions });
}

/**
 * Resolves with the operation's result, or with a deadline error once the deadline passed
 * before the operation's writes claimed their commit (then they roll back).
 */
async function withDeadline<T>(work: Promise<T>, deadline: RequestDeadline): Promise<T | { errors: GraphQLError[] }> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<{ errors: GraphQLError[] }>((resolve) => {
    timer = setTimeout(() => {
      if (deadline.expire()) resolve({ errors: [toGraphQLError(deadlinePassed(deadline.ms))] });
    }, deadline.ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A subscription's stream whose exception ends it with one error result instead of closing the
 * socket. Not an async generator: a generator's return() waits for the next() in progress, which
 * waits for the next event, so a closed connection's subscriptions would stay until their run changed.
 */
function guardedStream<T>(stream: AsyncIterable<T>, refusal: (error: unknown) => GraphQLError): AsyncIterableIterator<T | { errors: GraphQLError[] }> {
  const inner = stream[Symbol.asyncIterator]();
  let over = false;
  const guarded: AsyncIterableIterator<T | { errors: GraphQLError[] }> = {
    next: async () => {
      if (over) return { value: undefined, done: true };
      try {
        const result = await inner.next();
        if (result.done) over = true;
        return result;
      } catch (error) {
        over = true;
        return { value: { errors: [refusal(error)] }, done: false };
      }
    },
    return: async () => {
      over = true;
      await inner.return?.();
      return { value: undefined, done: true };
    },
    [Symbol.asyncIterator]: () => guarded,
  };
  return guarded;
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}

function unauthenticated(error: unknown): GraphQLError {
  const message = error instanceof DomainException ? error.message : 'Authentication failed';
  return toGraphQLError(new DomainException('UNAUTHENTICATED', message));
}

/**
 * The HTTP server: POST /graphql (Apollo), GET /graphql (GraphiQL for browsers), graphql-ws on
 * the same path, GET /healthz without a key.
 */
export async function createApp(dataSource: DataSource, logger: Logger, options: AppOptions): Promise<App> {
  const schema = await buildReportQlSchema();
  const schemaHash = createHash('sha256').update(printSchema(schema)).digest('hex').slice(0, 16);
  const services = createServices(dataSource, {
    ...options,
    onEventError: options.onEventError ?? ((error) => logger.warn({ err: error }, 'publishing an event failed')),
    onColumnStoreError: (error) => logger.warn({ err: loggableError(error) }, "storing runs' cell columns failed; the next read groups them again"),
  });
  await services.bus.start();
  await services.queue.start();
  // Statistics revisions are learnt by notification from the first request on.
  void services.scoring.revisions.ready().catch(() => undefined);
  const deadlineMs = options.requestDeadlineMs ?? DEFAULT_REQUEST_DEADLINE_MS;
  const waitedLimits: WaitedLimits = { ...DEFAULT_WAITED_LIMITS, ...options.waitedLimits };
  const limits = options.rateLimits
    ? new RateLimits(dataSource, options.rateLimits, (error) => logger.warn({ err: loggableError(error) }, 'the rate-limit store failed; the request was let through'))
    : undefined;
  const metrics = new Metrics({ dataSource, queue: services.queue });
  const responseCache = new ResponseCache(schema, { revision: analyticsRevisions(services.scoring.revisions) });
  const app = express();
  if (options.trustProxyHops) app.set('trust proxy', options.trustProxyHops);
  const server = createServer(app);
  const shedder = new LoadShedder(options.connectionLimits ?? DEFAULT_CONNECTION_LIMITS);
  shedder.attach(server);
  const databaseProbe = new DatabaseProbe({ connectionString: (dataSource.options as { url?: string }).url }, () => dataSource.isInitialized);
  const operationLimits = new WebSocketOperationLimits(options.webSocketLimits ?? DEFAULT_WEBSOCKET_LIMITS);

  const formatError = createErrorFormatter((correlationId, error) => logger.error({ correlationId, err: error }, 'unexpected error'));
  const wsServer = new WebSocketServer({
    server,
    path: '/graphql',
    verifyClient: (_info, accept) => {
      if (shedder.admitsWebSocket()) accept(true);
      else accept(false, 503, 'Service Unavailable', { 'Retry-After': String(SHED_RETRY_AFTER_SECONDS) });
    },
  });
  /**
   * The key of a WebSocket operation: the connection's `Authorization` parameter, or the
   * operation's own `extensions.headers.Authorization` (what GraphiQL sends from its Headers tab).
   */
  const wsKey = (connectionParams: Record<string, unknown> | undefined, extensions: Record<string, unknown> | undefined | null): string | undefined => {
    const params = connectionParams ?? {};
    const fromConnection = params['Authorization'] ?? params['authorization'];
    if (typeof fromConnection === 'string') return fromConnection;
    const headers = (extensions?.['headers'] ?? {}) as Record<string, unknown>;
    const fromOperation = headers['Authorization'] ?? headers['authorization'];
    return typeof fromOperation === 'string' ? fromOperation : undefined;
  };
  type WsContext = GraphQLWsContext<Record<string, unknown>, { socket: WebSocket; request: IncomingMessage }>;
  /** The context of each operation, made when it is admitted (onSubscribe) and used by `context`. */
  const wsOperations = new WeakMap<WsContext, Map<string, GraphQLContext>>();
  /** Open sockets by the keys they used: a revoked key closes its sockets with 4403. */
  const socketsByKey = new Map<string, Set<WebSocket>>();
  const closeSocketsOf = (keyId: string): void => {
    for (const socket of socketsByKey.get(keyId) ?? []) socket.close(4403, 'Forbidden: the API key was revoked');
    socketsByKey.delete(keyId);
  };
  const track = (socket: WebSocket, keyId: string): void => {
    let sockets = socketsByKey.get(keyId);
    if (!sockets) socketsByKey.set(keyId, (sockets = new Set()));
    if (sockets.has(socket)) return;
    sockets.add(socket);
    socket.once('close', () => {
      sockets.delete(socket);
      if (sockets.size === 0 && socketsByKey.get(keyId) === sockets) socketsByKey.delete(keyId);
    });
  };
  const offRevoked = services.bus.on((event) => {
    if (event.kind !== 'keyRevoked') return;
    services.apiKeys.forget(event.keyId);
    closeSocketsOf(event.keyId);
  });
  // A revocation whose notification was missed (the bus reconnecting) still closes within this period.
  const revocationSweep = setInterval(() => {
    const keyIds = [...socketsByKey.keys()];
    if (keyIds.length === 0) return;
    void dataSource
      .query('SELECT id FROM api_keys WHERE id = ANY($1::uuid[]) AND revoked_at IS NOT NULL', [keyIds])
      .then((rows: { id: string }[]) => rows.forEach((row) => closeSocketsOf(row.id)))
      .catch((error: unknown) => logger.warn({ err: loggableError(error) }, 'checking the keys of open sockets failed'));
  }, REVOCATION_SWEEP_MS);
  revocationSweep.unref();

  /** Writes a request's audit events; a failure to write is logged, the answer still goes out. */
  const flushAudit = async (context: GraphQLContext | undefined): Promise<void> => {
    try {
      await context?.audit?.flush();
    } catch (error) {
      logger.error({ err: loggableError(error) }, 'writing the audit log failed');
    }
  };

  /** Authenticates a WebSocket key, counting failures and rate limits per address and key. */
  const admitWs = async (ctx: WsContext, authorization: string | undefined): Promise<Principal> => {
    const address = ctx.extra.request.socket.remoteAddress ?? 'unknown';
    await limits?.admitAddress(address);
    let principal: Principal;
    try {
      principal = await services.apiKeys.authenticate(authorization);
    } catch (error) {
      if (error instanceof DomainException) await limits?.failedAuthentication(address);
      throw error;
    }
    await limits?.admitKey(principal.keyId);
    track(ctx.extra.socket, principal.keyId);
    return principal;
  };
  /** What a refused or failed WebSocket operation answers: the HTTP error contract. */
  const wsRefusal = (error: unknown): GraphQLError => {
    if (error instanceof RateLimitedError) return withoutHttp(toGraphQLError(error));
    if (error instanceof DomainException && error.code === 'UNAUTHENTICATED') return unauthenticated(error);
    if (error instanceof GraphQLError && !error.originalError) return error;
    return new GraphQLError('', { originalError: error instanceof Error ? error : new Error(String(error)) });
  };
  /** What every operation over its connection's bound is answered: formatted once. */
  let connectionRefusal: GraphQLError[] | undefined;
  /** Closes with 4429 once the refusal being returned has been sent: the client learns why. */
  const closeAfterAnswer = (socket: WebSocket, reason: string): void => {
    setImmediate(() => socket.close(TOO_MANY_REQUESTS_CLOSE, reason));
  };
  const formatted = (errors: readonly GraphQLError[]): GraphQLError[] =>
    errors.map((error) => {
      const out = formatError(error.toJSON(), error);
      return new GraphQLError(out.message, { extensions: out.extensions ?? {}, ...(out.path ? { path: out.path } : {}) });
    });

  const wsCleanup = useServer<Record<string, unknown>, { socket: WebSocket; request: IncomingMessage }>(
    {
      schema,
      // Close reasons never carry an error's message.
      isProd: true,
      context: (ctx, id) => {
        const context = wsOperations.get(ctx)?.get(id);
        // onSubscribe admitted every operation that reaches here and made its context.
        if (!context) throw new Error('a WebSocket operation without its context');
        return context;
      },
      onSubscribe: async (ctx, id, payload) => {
        // Counted before anything else is done for it: a flood of operations is refused almost for free.
        const refusal = operationLimits.admitOnConnection(ctx, id);
        if (refusal) {
          if (refusal.close) closeAfterAnswer(ctx.extra.socket, 'Too many operations at once on one connection');
          return (connectionRefusal ??= formatted([wsRefusal(refusal.error)]));
        }
        try {
          const principal = await admitWs(ctx, wsKey(ctx.connectionParams, payload.extensions));
          let document;
          try {
            document = parse(payload.query, { maxTokens: MAX_QUERY_TOKENS });
          } catch (error) {
            const message = error instanceof GraphQLError ? error.message : 'The query is not valid GraphQL';
            return formatted([toGraphQLError(badInput(message, { reason: 'GRAPHQL_PARSE_FAILED' }))]);
          }
          // Over WebSocket every operation must fit the limit before it runs (no CostMeter).
          checkQueryCost(schema, document, payload.operationName, payload.variables ?? {}, { metered: false });
          let operations = wsOperations.get(ctx);
          if (!operations) wsOperations.set(ctx, (operations = new Map()));
          const context = createContext(dataSource, services, logger, principal, undefined, options.executionSliceMs);
          operationLimits.admitForKey(principal.keyId, context);
          context.audit = services.audit.recorder(principal, 'WEBSOCKET');
          operations.set(id, context);
        } catch (error) {
          // As documented: a connection whose key is over its rate limit is closed.
          if (error instanceof RateLimitedError) closeAfterAnswer(ctx.extra.socket, `Too many requests: try again in ${error.retryAfterSeconds} s`);
          return formatted([wsRefusal(error)]);
        }
        return undefined;
      },
      onComplete: async (ctx, id) => {
        operationLimits.releaseOnConnection(ctx, id);
        const context = wsOperations.get(ctx)?.get(id);
        if (context) operationLimits.release(context.principal.keyId, context);
        await flushAudit(context);
        wsOperations.get(ctx)?.delete(id);
      },
      // Queries and mutations end by the request deadline; an exception is an error result, never a closed socket.
      execute: async (args) => {
        try {
          const deadline = new RequestDeadline(deadlineMs, waitedLimits);
          const context = args.contextValue as GraphQLContext;
          context.deadline = deadline;
          context.signal = deadline.signal;
          const work = Promise.resolve(execute(args));
          const result = await withDeadline(work, deadline);
          // The client has the deadline error; what the operation did when it ended (rolled back) goes to the audit log then.
          if (deadline.signal.aborted) void work.finally(() => flushAudit(context));
          return result;
        } catch (error) {
          return { errors: [wsRefusal(error)] };
        } finally {
          if (getOperationAST(args.document, args.operationName)?.operation === 'mutation') services.scoring.revisions.afterWrite();
        }
      },
      subscribe: async (args) => {
        try {
          const result = await subscribe(args);
          return isAsyncIterable(result) ? guardedStream(result, wsRefusal) : result;
        } catch (error) {
          return { errors: [wsRefusal(error)] };
        }
      },
      // Subscriptions and operations over WebSocket keep the error contract of HTTP: fixed codes, masked internals.
      onNext: async (ctx, id, _payload, _args, result) => {
        await flushAudit(wsOperations.get(ctx)?.get(id));
        if (!result.errors) return undefined;
        return { ...result, errors: formatted(result.errors as GraphQLError[]) };
      },
      onError: (ctx, id, _payload, errors) => {
        if (errors === connectionRefusal) return connectionRefusal;
        // A document that fails validation, or an operation refused after its connection admitted it, ends here without onComplete.
        operationLimits.releaseOnConnection(ctx, id);
        const context = wsOperations.get(ctx)?.get(id);
        if (context) operationLimits.release(context.principal.keyId, context);
        return formatted(errors);
      },
      // A connection may come without a key (GraphiQL sends it with each operation); a key that
      // is given must be valid.
      onConnect: async (ctx) => {
        const params = ctx.connectionParams ?? {};
        const key = params['Authorization'] ?? params['authorization'];
        try {
          if (key === undefined) await limits?.admitAddress(ctx.extra.request.socket.remoteAddress ?? 'unknown');
          else await admitWs(ctx, typeof key === 'string' ? key : undefined);
          return true;
        } catch (error) {
          if (error instanceof RateLimitedError) {
            ctx.extra.socket.close(TOO_MANY_REQUESTS_CLOSE, `Too many requests: try again in ${error.retryAfterSeconds} s`);
            return false;
          }
          if (!(error instanceof DomainException)) logger.warn({ err: loggableError(error) }, 'a WebSocket connection could not be admitted');
          return false;
        }
      },
    },
    wsServer,
  );

  const apollo = new ApolloServer<GraphQLContext>({
    schema,
    formatError,
    logger: libraryLogger(logger, 'apollo'),
    introspection: true,
    // The processes stop Apollo themselves on SIGTERM/SIGINT. Apollo's own handler (on unless
    // NODE_ENV=test) would race that stop(), and a stop() called during another never returns.
    stopOnTerminationSignals: false,
    parseOptions: { maxTokens: MAX_QUERY_TOKENS },
    plugins: [
      ApolloServerPluginLandingPageDisabled(),
      // No cache hints are used; without the plugin no field carries a per-resolve hook.
      ApolloServerPluginCacheControlDisabled(),
      ApolloServerPluginDrainHttpServer({ httpServer: server }),
      metrics.apolloPlugin<GraphQLContext>(),
      responseCache.plugin(),
      {
        async requestDidStart() {
          return {
            async willSendResponse(request) {
              if (request.operation?.operation === 'mutation') services.scoring.revisions.afterWrite();
              await flushAudit(request.contextValue);
            },
            async didResolveOperation(request) {
              // Over HTTP a subscription would run once as a query, and its root field has no
              // resolver for that: the answer would be an internal null error.
              if (request.operation?.operation === 'subscription') {
                throw toGraphQLError(badInput('Subscriptions need the graphql-ws protocol: open a WebSocket on this same path (/graphql) instead of sending them by HTTP'));
              }
              const meter = checkQueryCost(schema, request.document, request.operationName, request.request.variables ?? {});
              if (meter) request.contextValue.costMeter = meter;
            },
          };
        },
        async serverWillStart() {
          return {
            async drainServer() {
              offRevoked();
              clearInterval(revocationSweep);
              await wsCleanup.dispose();
            },
          };
        },
      },
    ],
  });
  await apollo.start();

  app.disable('x-powered-by');
  app.use(accessLog(logger));
  app.use(metrics.http());
  app.get('/livez', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const state = await readiness(dataSource, services);
    res.status(state.status === 'ready' ? 200 : 503).json(state);
  });
  app.get('/metrics', metrics.handler(options.metricsToken));
  app.get('/healthz', async (_req, res) => {
    if (await databaseProbe.check()) res.json({ status: 'ok', database: 'up' });
    else res.status(503).json({ status: 'unavailable', database: 'down' });
  });
  // Everything below is shed when the process is over its bounds; the health checks above are not.
  app.use(shedder.middleware());
  app.use('/graphql', corsMiddleware(options.corsOrigins ?? [], logger));
  app.all('/graphql', (_req, res, next) => {
    res.setHeader(SCHEMA_HASH_HEADER, schemaHash);
    next();
  });
  app.get('/graphql', (req, res, next) => {
    // A browser's navigation (reload, shared link) prefers HTML, and may carry ?query= for GraphiQL
    // to open; a GET query from a client that asks for JSON goes on to Apollo.
    const html = req.query.query === undefined ? Boolean(req.accepts('html')) : req.accepts(['application/json', 'application/graphql-response+json', 'text/html']) === 'text/html';
    if (!html) return next();
    const page = graphiqlPage();
    const gzip = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    // Kept, but asked about every time: a new server version is seen at once, and an unchanged
    // page costs a 304 instead of 9 MB.
    res.setHeader('Cache-Control', 'no-cache');
    res.setHeader('ETag', gzip ? page.gzippedEtag : page.etag);
    // The same address answers JSON to other clients: caches keep the two apart.
    res.vary('Accept');
    res.vary('Accept-Encoding');
    if (req.fresh) {
      res.status(304).end();
      return;
    }
    if (gzip) res.setHeader('Content-Encoding', 'gzip');
    res.end(gzip ? page.gzipped : page.html);
  });
  const graphqlOverHttp = expressMiddleware(apollo, {
    context: async ({ req, res }) => {
      const address = req.ip ?? req.socket.remoteAddress ?? 'unknown';
      let principal: Principal;
      try {
        await limits?.admitAddress(address);
        try {
          principal = await services.apiKeys.authenticate(req.headers.authorization);
        } catch (error) {
          if (error instanceof DomainException) await limits?.failedAuthentication(address);
          throw error;
        }
        await limits?.admitKey(principal.keyId);
        res.locals['keyId'] = principal.keyId;
      } catch (error) {
        if (error instanceof RateLimitedError) throw toGraphQLError(error);
        if (error instanceof DomainException) throw unauthenticated(error);
        throw error;
      }
      // Aborted when the client goes away before the answer is sent (extract stops its calls),
      // or when the request deadline passes.
      const gone = new AbortController();
      res.on('close', () => {
        if (!res.writableFinished) gone.abort();
      });
      const deadline = (res.locals as { deadline?: RequestDeadline }).deadline;
      const context = createContext(dataSource, services, logger, principal, deadline ? AbortSignal.any([gone.signal, deadline.signal]) : gone.signal, options.executionSliceMs);
      if (deadline) context.deadline = deadline;
      context.audit = new ReplayableAuditRecorder(services.audit, principal, 'HTTP');
      const inlineFiles = (res.locals as { inlineFiles?: GraphQLContext['inlineFiles'] }).inlineFiles;
      if (inlineFiles) context.inlineFiles = inlineFiles;
      return context;
    },
  });
  app.all(
    '/graphql',
    // The deadline counts from the request's arrival, body included.
    (_req, res, next) => {
      const deadline = new RequestDeadline(deadlineMs, waitedLimits);
      const timer = setTimeout(() => {
        // A write that claimed its commit first answers itself, a little late.
        if (!deadline.expire() || res.headersSent) return;
        const error = deadlinePassed(deadlineMs);
        const answer = apiErrorOf(error);
        for (const [name, value] of Object.entries(answer.headers)) res.setHeader(name, value);
        res.status(answer.status).json({ errors: [{ message: error.message, extensions: answer.extensions }] });
      }, deadlineMs);
      timer.unref();
      res.on('close', () => clearTimeout(timer));
      res.locals['deadline'] = deadline;
      next();
    },
    // Imported files may come as multipart uploads, read by the import as they arrive.
    multipartUploads({ maxFileSize: MAX_REQUEST_BYTES, maxFiles: 1 }),
    // A large body keeps an import's inline file as bytes, never as one string; others as always.
    jsonBody(
      {
        limit: MAX_REQUEST_BYTES,
        threshold: INLINE_FILE_MIN_BYTES,
        verify: (req, body) => verifyUtf8Body(req, undefined, body, null),
        rule: (query, operationName) => inlineFileVariables(schema, query, operationName),
      },
      express.json({ limit: MAX_REQUEST_BYTES, verify: verifyUtf8Body }),
    ),
    async (req, res, next) => {
      const deadline = (res.locals['deadline'] as RequestDeadline).signal;
      // Past the deadline the client has its answer: what Apollo writes afterwards goes nowhere.
      const late = new Set<PropertyKey>(['setHeader', 'send', 'write', 'end', 'flush', 'status']);
      const guarded = new Proxy(res, {
        get: (target, property) => {
          if (deadline.aborted && late.has(property)) return () => guarded;
          const value = Reflect.get(target, property, target) as unknown;
          return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
        },
        set: (target, property, value) => (deadline.aborted && property === 'statusCode' ? true : Reflect.set(target, property, value, target)),
      });
      await graphqlOverHttp(req, guarded, next);
    },
  );

  // Downloads for R and Python, and charts for an <img>: the same keys and limits as /graphql.
  app.use(['/exports', '/charts'], corsMiddleware(options.corsOrigins ?? [], logger));
  registerExportRoutes(app, { services, limits, logger });
  registerChartRoutes(app, { services, limits, logger });

  app.get('/', (_req, res) => res.redirect(302, '/graphql'));
  // Unknown paths answer in the API's error shape, not with an HTML page.
  app.use((_req, res) => {
    const unknownPath = new DomainException('NOT_FOUND', 'Not found: ReportQL answers at /graphql (GraphQL and GraphiQL), /exports, /charts, /healthz, /livez, /readyz and /metrics');
    const answer = apiErrorOf(unknownPath);
    res.status(answer.status).json({ errors: [{ message: unknownPath.message, extensions: answer.extensions }] });
  });

  // Body parsing failures (malformed JSON, too large) answer as GraphQL errors, not HTML pages.
  app.use((error: unknown, _req: express.Request, res: express.Response, next: express.NextFunction) => {
    const status = (error as { status?: number; statusCode?: number }).status ?? (error as { statusCode?: number }).statusCode;
    if (res.headersSent || !status || status < 400 || status >= 500) return next(error);
    const invalidUtf8 = (error as { type?: string }).type === INVALID_UTF8_TYPE;
    const message = status === 413 ? `The request body is larger than ${MAX_REQUEST_BYTES / 1024 / 1024} MB` : invalidUtf8 ? 'The request body is not valid UTF-8' : 'The request body is not valid JSON';
    // The body parser's status stays (413 says the body is too large, which 400 would not).
    res.status(status).json({ errors: [{ message, extensions: apiErrorOf(badInput(message)).extensions }] });
  });

  return {
    server,
    services,
    metrics,
    listen: (port, host) =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          const address = server.address();
          const bound = typeof address === 'object' && address ? address.port : port;
          services.egress.protectPort(bound);
          resolve(bound);
        });
      }),
    close: async () => {
      await apollo.stop();
      await services.queue.stop().catch(() => undefined);
      await services.scoring.close();
      await services.bus.close();
      await databaseProbe.close();
      if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
