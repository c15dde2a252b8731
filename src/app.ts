import 'reflect-metadata';
import { createServer, type Server } from 'node:http';
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import { ApolloServerPluginCacheControlDisabled, ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { expressMiddleware } from '@as-integrations/express5';
import express from 'express';
import { GraphQLError, parse } from 'graphql';
import { checkQueryCost, MAX_QUERY_TOKENS } from './graphql/query-cost';
import { useServer } from 'graphql-ws/use/ws';
import type { DataSource } from 'typeorm';
import { WebSocketServer } from 'ws';
import { createContext, type GraphQLContext } from './graphql/context';
import { createErrorFormatter, DomainException } from './graphql/errors';
import { graphiqlPage } from './graphql/graphiql';
import { buildReportQlSchema } from './graphql/schema';
import { libraryLogger, type Logger } from './logger';
import { createServices, type ServiceOptions, type Services } from './services';

export const MAX_REQUEST_BYTES = 64 * 1024 * 1024;

export interface App {
  server: Server;
  services: Services;
  /** Starts listening; resolves with the bound port. */
  listen(port: number, host?: string): Promise<number>;
  close(): Promise<void>;
}

function unauthenticated(error: unknown): GraphQLError {
  const message = error instanceof DomainException ? error.message : 'Authentication failed';
  return new GraphQLError(message, { extensions: { code: 'UNAUTHENTICATED', http: { status: 401 } } });
}

/**
 * The HTTP server: POST /graphql (Apollo), GET /graphql (GraphiQL for browsers), graphql-ws on
 * the same path, GET /healthz without a key.
 */
export async function createApp(dataSource: DataSource, logger: Logger, options: ServiceOptions): Promise<App> {
  const schema = await buildReportQlSchema();
  const services = createServices(dataSource, {
    ...options,
    onEventError: options.onEventError ?? ((error) => logger.warn({ err: error }, 'publishing an event failed')),
  });
  await services.bus.start();
  await services.queue.start();
  const app = express();
  const server = createServer(app);

  const formatError = createErrorFormatter((correlationId, error) => logger.error({ correlationId, err: error }, 'unexpected error'));
  const wsServer = new WebSocketServer({ server, path: '/graphql' });
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
  const wsCleanup = useServer<Record<string, unknown>>(
    {
      schema,
      context: async (ctx, _id, payload): Promise<GraphQLContext> => {
        const principal = await services.apiKeys.authenticate(wsKey(ctx.connectionParams, payload.extensions));
        return createContext(dataSource, services, logger, principal);
      },
      onSubscribe: async (ctx, _id, payload) => {
        try {
          await services.apiKeys.authenticate(wsKey(ctx.connectionParams, payload.extensions));
        } catch (error) {
          return [unauthenticated(error)];
        }
        try {
          let document;
          try {
            document = parse(payload.query, { maxTokens: MAX_QUERY_TOKENS });
          } catch (error) {
            const message = error instanceof GraphQLError ? error.message : 'The query is not valid GraphQL';
            return [new GraphQLError(message, { extensions: { code: 'GRAPHQL_PARSE_FAILED' } })];
          }
          // Over WebSocket every operation must fit the limit before it runs (no CostMeter).
          checkQueryCost(schema, document, payload.operationName, payload.variables ?? {}, { metered: false });
        } catch (error) {
          if (error instanceof GraphQLError) return [error];
          throw error;
        }
        return undefined;
      },
      // Subscriptions and operations over WebSocket keep the error contract of HTTP: fixed codes, masked internals.
      onNext: (_ctx, _id, _payload, _args, result) => {
        if (!result.errors) return undefined;
        return { ...result, errors: result.errors.map((error) => formatError(error.toJSON(), error)) };
      },
      onError: (_ctx, _id, _payload, errors) => errors.map((error) => formatError(error.toJSON(), error)),
      // A connection may come without a key (GraphiQL sends it with each operation); a key that
      // is given must be valid.
      onConnect: async (ctx) => {
        const params = ctx.connectionParams ?? {};
        const key = params['Authorization'] ?? params['authorization'];
        if (key === undefined) return true;
        try {
          await services.apiKeys.authenticate(key as string);
          return true;
        } catch {
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
    parseOptions: { maxTokens: MAX_QUERY_TOKENS },
    plugins: [
      ApolloServerPluginLandingPageDisabled(),
      // No cache hints are used; without the plugin no field carries a per-resolve hook.
      ApolloServerPluginCacheControlDisabled(),
      ApolloServerPluginDrainHttpServer({ httpServer: server }),
      {
        async requestDidStart() {
          return {
            async didResolveOperation(request) {
              const meter = checkQueryCost(schema, request.document, request.operationName, request.request.variables ?? {});
              if (meter) request.contextValue.costMeter = meter;
            },
          };
        },
        async serverWillStart() {
          return {
            async drainServer() {
              await wsCleanup.dispose();
            },
          };
        },
      },
    ],
  });
  await apollo.start();

  app.disable('x-powered-by');
  app.get('/healthz', async (_req, res) => {
    try {
      await dataSource.query('SELECT 1');
      res.json({ status: 'ok', database: 'up' });
    } catch {
      res.status(503).json({ status: 'unavailable', database: 'down' });
    }
  });
  app.get('/graphql', (req, res, next) => {
    if (!req.accepts('html') || req.query.query !== undefined) return next();
    const page = graphiqlPage();
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    res.setHeader('Cache-Control', 'no-cache');
    if (/\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''))) {
      res.setHeader('Content-Encoding', 'gzip');
      res.setHeader('Vary', 'Accept-Encoding');
      res.end(page.gzipped);
    } else {
      res.end(page.html);
    }
  });
  app.use(
    '/graphql',
    express.json({ limit: MAX_REQUEST_BYTES }),
    expressMiddleware(apollo, {
      context: async ({ req, res }) => {
        try {
          const principal = await services.apiKeys.authenticate(req.headers.authorization);
          // Aborted when the client goes away before the answer is sent (extract stops its calls).
          const gone = new AbortController();
          res.on('close', () => {
            if (!res.writableFinished) gone.abort();
          });
          return createContext(dataSource, services, logger, principal, gone.signal);
        } catch (error) {
          if (error instanceof DomainException) throw unauthenticated(error);
          throw error;
        }
      },
    }),
  );

  // Body parsing failures (malformed JSON, too large) answer as GraphQL errors, not HTML pages.
  app.use((error: unknown, _req: express.Request, res: express.Response, next: express.NextFunction) => {
    const status = (error as { status?: number; statusCode?: number }).status ?? (error as { statusCode?: number }).statusCode;
    if (res.headersSent || !status || status < 400 || status >= 500) return next(error);
    const message = status === 413 ? `The request body is larger than ${MAX_REQUEST_BYTES / 1024 / 1024} MB` : 'The request body is not valid JSON';
    res.status(status).json({ errors: [{ message, extensions: { code: 'BAD_USER_INPUT' } }] });
  });

  return {
    server,
    services,
    listen: (port, host) =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          const address = server.address();
          resolve(typeof address === 'object' && address ? address.port : port);
        });
      }),
    close: async () => {
      await apollo.stop();
      await services.queue.stop().catch(() => undefined);
      await services.bus.close();
      if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
