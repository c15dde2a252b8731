import 'reflect-metadata';
import { lexicographicSortSchema, printSchema, type GraphQLSchema } from 'graphql';
import { buildSchema } from 'type-graphql';
import { checkArgument } from './input-guard';
import { RESOLVERS } from './resolvers';

let built: Promise<GraphQLSchema> | undefined;

/**
 * Every subscription has its own `subscribe` over the PostgreSQL event bus (pubsub.ts), which
 * reaches every process; type-graphql's topic-based pubSub is not used, but must be given.
 */
const NO_TOPICS = {
  publish(): void {
    throw new Error('subscriptions publish through the PostgreSQL event bus, not through topics');
  },
  subscribe(): AsyncIterable<unknown> {
    throw new Error('subscriptions subscribe through the PostgreSQL event bus, not through topics');
  },
};

/** The executable schema; built once per process (type-graphql metadata is global). */
export function buildReportQlSchema(): Promise<GraphQLSchema> {
  built ??= buildSchema({ resolvers: RESOLVERS, validate: false, validateFn: checkArgument, emitSchemaFile: false, pubSub: NO_TOPICS });
  return built;
}

/** The SDL committed as schema/schema.graphql: sorted, so diffs show real changes only. */
export async function printSortedSchema(): Promise<string> {
  return `${printSchema(lexicographicSortSchema(await buildReportQlSchema()))}\n`;
}
