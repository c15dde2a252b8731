import 'reflect-metadata';
import {
  defaultFieldResolver,
  getNamedType,
  getNullableType,
  isCompositeType,
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
import type { ExecutionPacer } from './execution-pacer';
import { isConnectionType } from './query-cost';
import { AuditOutcome } from '../modules/audit/audit-event.entity';
import type { ReadCategory } from '../modules/audit/audit.service';
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
  built ??= buildSchema({ resolvers: RESOLVERS, validate: false, validateFn: checkArgument, emitSchemaFile: false, pubSub: NO_TOPICS }).then(meterLists).then(auditAccess).then(paceObjects);
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

/**
 * Every object of an answer passes the request's ExecutionPacer before its fields run, so that a
 * large answer is built in slices and other requests get the event loop in between. (Interfaces
 * and unions resolve their types with resolveType, so isTypeOf decides no type here.)
 */
function paceObjects(schema: GraphQLSchema): GraphQLSchema {
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__') || type.isTypeOf) continue;
    // Objects of scalars only (a prediction's field, a count) are cheap: their parents are paced.
    if (!Object.values(type.getFields()).some((field) => isCompositeType(getNamedType(field.type)))) continue;
    type.isTypeOf = (_source, context: { pacer?: ExecutionPacer } | undefined) => context?.pacer?.admit() ?? true;
  }
  return schema;
}

/** The SDL committed as schema/schema.graphql: sorted, so diffs show real changes only. */
export async function printSortedSchema(): Promise<string> {
  return `${printSchema(lexicographicSortSchema(await buildReportQlSchema()))}\n`;
}

/** Fields whose values are patient data or carry it: each value read counts in the audit log. */
export const AUDITED_READS: Readonly<Record<string, ReadCategory>> = {
  'Report.text': 'REPORT_TEXTS',
  'Report.metadata': 'REPORT_TEXTS',
  'Annotation.value': 'ANNOTATIONS',
  'Annotation.raw': 'ANNOTATIONS',
  'Prediction.values': 'PREDICTIONS',
  'Prediction.parsed': 'PREDICTIONS',
  'Prediction.raw': 'PREDICTIONS',
  'Prediction.reasoning': 'PREDICTIONS',
  'Prediction.samples': 'PREDICTIONS',
  'Prediction.fields': 'PREDICTIONS',
  'UseCase.exportConfig': 'CONFIG_EXPORTS',
};

/** The global IDs a mutation's arguments name: `id`, `…Id` and `…Ids` fields, nothing else. */
function targetsOf(value: unknown, found: string[] = [], depth = 0): string[] {
  if (depth > 3 || typeof value !== 'object' || value === null) return found;
  for (const [key, inner] of Object.entries(value)) {
    if (found.length >= 20) break;
    const named = key === 'id' || key.endsWith('Id') || key.endsWith('Ids');
    if (!named) {
      targetsOf(inner, found, depth + 1);
    } else if (typeof inner === 'string' && inner.length <= 200) {
      found.push(inner);
    } else if (Array.isArray(inner)) {
      for (const id of inner) if (typeof id === 'string' && id.length <= 200 && found.length < 20) found.push(id);
    }
  }
  return found;
}

/** The project a mutation's payload belongs to: the `projectId` of an entity in it, or a created project. */
function projectOf(payload: unknown): string | null {
  if (typeof payload !== 'object' || payload === null) return null;
  for (const value of Object.values(payload)) {
    if (typeof value !== 'object' || value === null) continue;
    const { projectId } = value as { projectId?: unknown };
    if (typeof projectId === 'string') return projectId;
    if (value.constructor?.name === 'Project' && typeof (value as { id?: unknown }).id === 'string') return (value as { id: string }).id;
  }
  return null;
}

/**
 * Records every mutation (with the IDs its input names, never its values) and every read of an
 * audited field in the request's AuditRecorder; requests without one (none today) are not recorded.
 */
function auditAccess(schema: GraphQLSchema): GraphQLSchema {
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields())) {
      const category = AUDITED_READS[`${type.name}.${field.name}`];
      const resolve: GraphQLFieldResolver<unknown, GraphQLContext> = field.resolve ?? defaultFieldResolver;
      if (category) {
        field.resolve = (source, args, context: GraphQLContext, info) => {
          context?.audit?.read(category, (source as { projectId?: string | null } | null)?.projectId);
          return resolve(source, args, context, info);
        };
      } else if (type === schema.getMutationType()) {
        field.resolve = async (source, args, context: GraphQLContext, info) => {
          const targets = targetsOf(args);
          try {
            const result = await resolve(source, args, context, info);
            context?.audit?.change(info.fieldName, projectOf(result), AuditOutcome.OK, targets);
            return result;
          } catch (error) {
            context?.audit?.change(info.fieldName, null, AuditOutcome.FAILED, targets);
            throw error;
          }
        };
      }
    }
  }
  return schema;
}
