import 'reflect-metadata';
import {
  defaultFieldResolver,
  getNamedType,
  getNullableType,
  isListType,
  isObjectType,
  lexicographicSortSchema,
  printSchema,
  type GraphQLFieldResolver,
  type GraphQLResolveInfo,
  type GraphQLSchema,
} from 'graphql';
import { buildSchema } from 'type-graphql';
import type { GraphQLContext } from './context';
import { checkArgument } from './input-guard';
import { isConnectionType } from './query-cost';
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
  built ??= buildSchema({ resolvers: RESOLVERS, validate: false, validateFn: checkArgument, emitSchemaFile: false, pubSub: NO_TOPICS }).then(meterLists);
  return built;
}

function insideList(path: GraphQLResolveInfo['path']): boolean {
  for (let at = path.prev; at; at = at.prev) if (typeof at.key === 'number') return true;
  return false;
}

function lengthOf(value: unknown, connection: boolean): number {
  if (connection) return (value as { nodes?: unknown[] } | null | undefined)?.nodes?.length ?? 0;
  return Array.isArray(value) ? value.length : 0;
}

/**
 * Gives every list and connection field to the request's CostMeter, if it has one: the real
 * length of the list, known once it has loaded, replaces the length the estimate assumed.
 * Without a meter (every request whose estimate is within the limit) the resolver runs as it is.
 */
function meterLists(schema: GraphQLSchema): GraphQLSchema {
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__') || isConnectionType(type)) continue;
    for (const field of Object.values(type.getFields())) {
      const connection = isConnectionType(getNamedType(field.type));
      if (!connection && !isListType(getNullableType(field.type))) continue;
      const resolve: GraphQLFieldResolver<unknown, GraphQLContext> = field.resolve ?? defaultFieldResolver;
      field.resolve = (source, args, context: GraphQLContext, info) => {
        const meter = context?.costMeter;
        if (!meter) return resolve(source, args, context, info);
        const settle = (value: unknown): unknown => {
          meter.settle(info.fieldNodes, insideList(info.path), lengthOf(value, connection));
          return value;
        };
        const result = resolve(source, args, context, info);
        return result instanceof Promise ? result.then(settle) : settle(result);
      };
    }
  }
  return schema;
}

/** The SDL committed as schema/schema.graphql: sorted, so diffs show real changes only. */
export async function printSortedSchema(): Promise<string> {
  return `${printSchema(lexicographicSortSchema(await buildReportQlSchema()))}\n`;
}
