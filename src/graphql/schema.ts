import 'reflect-metadata';
import { lexicographicSortSchema, printSchema, type GraphQLSchema } from 'graphql';
import { buildSchema } from 'type-graphql';
import { checkArgument } from './input-guard';
import { RESOLVERS } from './resolvers';

let built: Promise<GraphQLSchema> | undefined;

/** The executable schema; built once per process (type-graphql metadata is global). */
export function buildReportQlSchema(): Promise<GraphQLSchema> {
  built ??= buildSchema({ resolvers: RESOLVERS, validate: false, validateFn: checkArgument, emitSchemaFile: false });
  return built;
}

/** The SDL committed as schema/schema.graphql: sorted, so diffs show real changes only. */
export async function printSortedSchema(): Promise<string> {
  return `${printSchema(lexicographicSortSchema(await buildReportQlSchema()))}\n`;
}
