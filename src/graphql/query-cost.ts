import {
  GraphQLError,
  Kind,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValueNode,
} from 'graphql';
import { DEFAULT_PAGE_SIZE } from './connection';

/**
 * Fields that compute statistics: each costs as much as loading this many objects per 1000
 * bootstrap resamples (options.resamples, default 1000), whether or not a cached result exists.
 */
const STATISTICS_FIELDS = new Set(['scores', 'leaderboard', 'consensusRanking', 'groupSummary', 'interRaterAgreement', 'varianceDecomposition']);
export const STATISTICS_COST = 5_000;

export const MAX_QUERY_COST = 500_000;
export const MAX_QUERY_DEPTH = 15;

function argumentValue(value: ValueNode, variables: Record<string, unknown>): unknown {
  if (value.kind === Kind.VARIABLE) return variables[value.name.value];
  if (value.kind === Kind.INT) return Number(value.value);
  return undefined;
}

function resamplesOf(field: FieldNode, variables: Record<string, unknown>): number {
  const options = field.arguments?.find((a) => a.name.value === 'options')?.value;
  let resamples: unknown;
  if (options?.kind === Kind.VARIABLE) resamples = (variables[options.name.value] as { resamples?: unknown } | null | undefined)?.resamples;
  else if (options?.kind === Kind.OBJECT) {
    const value = options.fields.find((f) => f.name.value === 'resamples')?.value;
    if (value) resamples = argumentValue(value, variables);
  }
  return typeof resamples === 'number' && Number.isFinite(resamples) ? resamples : 1000;
}

/**
 * An upper estimate of how much a request makes the server load: every object counts 1, every
 * statistics field STATISTICS_COST, and a connection multiplies what is below it by its page size
 * (`first`, default 50). Introspection fields (`__schema`, `__type`) are free.
 */
export function estimateQueryCost(
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown>,
): { cost: number; depth: number } {
  const fragments = new Map<string, FragmentDefinitionNode>();
  let operation: OperationDefinitionNode | undefined;
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
    if (definition.kind === Kind.OPERATION_DEFINITION && (!operationName || definition.name?.value === operationName)) operation ??= definition;
  }
  if (!operation) return { cost: 0, depth: 0 };

  let maxDepth = 0;
  const visit = (selectionSet: SelectionSetNode, depth: number, seen: Set<string>): number => {
    maxDepth = Math.max(maxDepth, depth);
    let total = 0;
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) total += fieldCost(selection, depth, seen);
      else if (selection.kind === Kind.INLINE_FRAGMENT) total += visit(selection.selectionSet, depth, seen);
      else {
        const fragment = fragments.get(selection.name.value);
        if (fragment && !seen.has(fragment.name.value)) total += visit(fragment.selectionSet, depth, new Set([...seen, fragment.name.value]));
      }
    }
    return total;
  };
  const fieldCost = (field: FieldNode, depth: number, seen: Set<string>): number => {
    if (field.name.value.startsWith('__')) return 0;
    const own = STATISTICS_FIELDS.has(field.name.value) ? STATISTICS_COST * Math.max(1, resamplesOf(field, variables) / 1000) : 1;
    const below = field.selectionSet ? visit(field.selectionSet, depth + 1, seen) : 0;
    const first = field.arguments?.find((a) => a.name.value === 'first');
    const isConnection = first !== undefined || field.selectionSet?.selections.some((s) => s.kind === Kind.FIELD && (s.name.value === 'edges' || s.name.value === 'nodes'));
    const size = first ? Number(argumentValue(first.value, variables) ?? DEFAULT_PAGE_SIZE) : DEFAULT_PAGE_SIZE;
    return own + (isConnection ? Math.max(size, 1) * below : below);
  };
  const cost = visit(operation.selectionSet, 1, new Set());
  return { cost, depth: maxDepth };
}

/** BAD_USER_INPUT when a request is deeper or larger than the server answers in one go. */
export function checkQueryCost(document: DocumentNode, operationName: string | null | undefined, variables: Record<string, unknown>): void {
  const { cost, depth } = estimateQueryCost(document, operationName, variables);
  if (depth > MAX_QUERY_DEPTH) {
    throw new GraphQLError(`The query is ${depth} levels deep; at most ${MAX_QUERY_DEPTH} are answered`, {
      extensions: { code: 'BAD_USER_INPUT', depth, maxDepth: MAX_QUERY_DEPTH, http: { status: 400 } },
    });
  }
  if (cost > MAX_QUERY_COST) {
    throw new GraphQLError(
      `The query may load about ${cost} objects; at most ${MAX_QUERY_COST} are answered in one request: ask for smaller pages (first) or page with after`,
      { extensions: { code: 'BAD_USER_INPUT', cost, maxCost: MAX_QUERY_COST, http: { status: 400 } } },
    );
  }
}
