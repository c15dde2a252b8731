import {
  GraphQLError,
  getNamedType,
  getNullableType,
  isCompositeType,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isListType,
  isObjectType,
  isUnionType,
  Kind,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValueNode,
  SchemaMetaFieldDef,
  TypeMetaFieldDef,
  TypeNameMetaFieldDef,
} from 'graphql';
import { badInput } from '../domain/errors';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../db/pagination';
import { toGraphQLError } from './errors';

/**
 * Fields that compute statistics: each costs as much as loading this many objects per 1000
 * bootstrap resamples (options.resamples, default 1000), whether or not a cached result exists.
 */
export const STATISTICS_FIELDS: ReadonlySet<string> = new Set([
  'scores',
  'leaderboard',
  'consensusRanking',
  'groupSummary',
  'interRaterAgreement',
  'varianceDecomposition',
  'comparison',
  'strategyEffects',
  'contrast',
  'stratifiedResults',
  'chanceCorrectedAgreement',
  'heatmapChart',
  'leaderboardChart',
  'rankingChart',
  'throughputChart',
  'modelSizeChart',
]);
/**
 * Fields that take arguments and yet cost what a plain field costs: they read or format one
 * object. Every other field with arguments outside Mutation and Subscription is a statistics
 * field or a connection (priced by `first`): a test walks the schema, so a new computation gets
 * a price when it is added.
 */
export const PLAIN_FIELDS_WITH_ARGUMENTS: ReadonlySet<string> = new Set(['Query.node', 'Query.project', 'Query.backgroundTask', 'Query.chartImageUrl', 'UseCase.exportConfig']);
/** Statistics fields that draw no bootstrap resamples: their cost does not grow with `resamples`. */
const UNRESAMPLED_FIELDS = new Set(['contrast']);
export const STATISTICS_COST = 5_000;

export const MAX_QUERY_COST = 500_000;
export const MAX_QUERY_DEPTH = 15;
/** Aliased fields in one document (200,000 aliases of one field would build 200,000 answers). */
export const MAX_QUERY_ALIASES = 1_000;
/** Lexical tokens in one document: parsing stops at the first token past the limit. */
export const MAX_QUERY_TOKENS = 20_000;

/**
 * The lengths assumed for each list field that is not a connection: `typical`, what it holds in
 * practice, and `max`, the most the server stores. A query is priced with the typical lengths
 * and runs with a CostMeter, which replaces each by the real length as the list loads; a
 * mutation or subscription, which runs without a meter, is priced with the maxima. Every list
 * field of the schema must be listed here (a test walks the schema), so a new list is priced
 * when it is added.
 */
export const LIST_SIZES: Readonly<Record<string, { typical: number; max: number }>> = {
  // Annotators of a dataset, and one annotation per annotator of a report.
  'AgreementSummary.annotators': { typical: 3, max: 50 },
  'Dataset.annotators': { typical: 3, max: 50 },
  'Report.annotations': { typical: 3, max: 50 },
  // Variables of a use case, and what is listed per variable.
  'UseCase.variables': { typical: 20, max: 200 },
  'AgreementSummary.variables': { typical: 20, max: 200 },
  'RunScores.variables': { typical: 20, max: 200 },
  'Prediction.fields': { typical: 20, max: 200 },
  'ExtractPayload.fields': { typical: 20, max: 200 },
  // A field's quotes (the parser keeps at most MAX_QUOTES per variable).
  'PredictedField.evidence': { typical: 2, max: 20 },
  'ExtractPayload.skipped': { typical: 5, max: 200 },
  'VariableAgreement.pairs': { typical: 3, max: 1_225 },
  'RunScores.invalid': { typical: 6, max: 6 },
  'VariableScore.invalid': { typical: 6, max: 6 },
  'Variable.options': { typical: 10, max: 1_000 },
  'Variable.missingTokens': { typical: 5, max: 100 },
  'UseCase.missingTokens': { typical: 5, max: 100 },
  'UseCase.tags': { typical: 5, max: 100 },
  'VariableCondition.values': { typical: 5, max: 1_000 },
  // Models an endpoint serves (the probe keeps at most 1,000).
  'Endpoint.models': { typical: 20, max: 1_000 },
  'RegisterEndpointPayload.models': { typical: 20, max: 1_000 },
  'RefreshEndpointPayload.models': { typical: 20, max: 1_000 },
  'RegisterEndpointPayload.warnings': { typical: 3, max: 10 },
  'RefreshEndpointPayload.warnings': { typical: 3, max: 10 },
  'GroupSummary.models': { typical: 10, max: 1_000 },
  // Runs of a ranking or of an experiment's grid.
  'Ranking.entries': { typical: 50, max: 10_000 },
  'ExperimentPayload.runs': { typical: 50, max: 1_000 },
  'StartExperimentPayload.runs': { typical: 50, max: 1_000 },
  'Project.groupSummary': { typical: 5, max: 100 },
  'Project.apiKeys': { typical: 10, max: 1_000 },
  'Prompt.examples': { typical: 5, max: 100 },
  // Texts and notes.
  'ExtractPayload.raw': { typical: 5, max: 20 },
  'ExtractPayload.reasoning': { typical: 5, max: 20 },
  'ExtractPayload.warnings': { typical: 5, max: 100 },
  'Run.warnings': { typical: 5, max: 100 },
  'ImportAnnotationsPayload.unknownColumns': { typical: 10, max: 1_000 },
  'ImportUseCaseConfigPayload.warnings': { typical: 10, max: 1_000 },
  'ImportProjectBundlePayload.warnings': { typical: 2, max: 2 },
  'ImportProjectBundlePayload.tables': { typical: 20, max: 40 },
  'VarianceDecomposition.components': { typical: 5, max: 10 },
  // Chance-corrected agreement, paired comparisons, strategy effects, contrasts, strata.
  'ChanceCorrectedAgreement.annotators': { typical: 3, max: 50 },
  'ChanceCorrectedAgreement.variables': { typical: 20, max: 200 },
  'VariableChanceAgreement.pairs': { typical: 3, max: 1_225 },
  'RunComparison.variables': { typical: 20, max: 200 },
  'StrategyEffectTable.rows': { typical: 100, max: 10_000 },
  'StrategyEffectTable.topRanked': { typical: 6, max: 20 },
  'StrategyEffect.bestStrategies': { typical: 1, max: 20 },
  'ContrastTable.groupA': { typical: 10, max: 1_000 },
  'ContrastTable.groupB': { typical: 10, max: 1_000 },
  'ContrastTable.strata': { typical: 10, max: 1_000 },
  'Project.stratifiedResults': { typical: 10, max: 1_000 },
  'StratifiedResult.invalid': { typical: 6, max: 6 },
  'AuditEvent.targets': { typical: 2, max: 20 },
  'VarianceDecomposition.warnings': { typical: 5, max: 20 },
};

/** How a list field of the query is priced: its assumed length and the cost of one item. */
export interface ListPrice {
  assumed: number;
  perItem: number;
}

export interface QueryCostPlan {
  /** Upper estimate of the objects the request makes the server build. */
  cost: number;
  depth: number;
  aliases: number;
  /** Cost of everything outside lists: what is built whatever the lists turn out to hold. */
  outsideLists: number;
  /** The price of every list and connection field node of the document. */
  lists: Map<FieldNode, ListPrice>;
}

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

/** Page size of a connection as its resolver will use it (an invalid `first` is refused there). */
function pageSizeOf(field: FieldNode, variables: Record<string, unknown>): number {
  const first = field.arguments?.find((a) => a.name.value === 'first');
  const value = first ? argumentValue(first.value, variables) : undefined;
  if (typeof value !== 'number' || !Number.isFinite(value)) return DEFAULT_PAGE_SIZE;
  return Math.min(Math.max(Math.floor(value), 0), MAX_PAGE_SIZE);
}

export function isConnectionType(type: GraphQLNamedType): boolean {
  if (!isObjectType(type) || !type.name.endsWith('Connection')) return false;
  const fields = type.getFields();
  return 'edges' in fields && 'nodes' in fields;
}

/**
 * Lengths of introspection lists, from the schema itself: the number of types and directives,
 * and the mean length of each per-type list (the total over the schema spread over the types
 * that have one), so that `types { fields { … } }` costs the fields the schema has, while every
 * further level of `type { fields }` multiplies again.
 */
function introspectionSizes(schema: GraphQLSchema): Record<string, number> {
  const lists = { fields: [0, 0], args: [0, 0], interfaces: [0, 0], possibleTypes: [0, 0], enumValues: [0, 0], inputFields: [0, 0] };
  const add = (list: keyof typeof lists, length: number): void => {
    lists[list][0]! += length;
    lists[list][1]! += 1;
  };
  for (const type of Object.values(schema.getTypeMap())) {
    if (isObjectType(type) || isInterfaceType(type)) {
      const fields = Object.values(type.getFields());
      add('fields', fields.length);
      for (const field of fields) add('args', field.args.length);
      add('interfaces', type.getInterfaces().length);
    }
    if (isInterfaceType(type) || isUnionType(type)) add('possibleTypes', schema.getPossibleTypes(type).length);
    if (isEnumType(type)) add('enumValues', type.getValues().length);
    if (isInputObjectType(type)) add('inputFields', Object.keys(type.getFields()).length);
  }
  for (const directive of schema.getDirectives()) add('args', directive.args.length);
  const mean = (list: keyof typeof lists): number => Math.max(1, Math.ceil(lists[list][0]! / Math.max(1, lists[list][1]!)));
  return {
    '__Schema.types': Object.keys(schema.getTypeMap()).length,
    '__Schema.directives': schema.getDirectives().length,
    '__Type.fields': mean('fields'),
    '__Type.inputFields': mean('inputFields'),
    '__Type.interfaces': mean('interfaces'),
    '__Type.possibleTypes': mean('possibleTypes'),
    '__Type.enumValues': mean('enumValues'),
    '__Field.args': mean('args'),
    '__Directive.args': mean('args'),
    '__Directive.locations': 19,
  };
}

const introspectionCache = new WeakMap<GraphQLSchema, Record<string, number>>();

/**
 * Prices a request in one pass over its document (each fragment once, whatever the number of
 * places it is spread in): every field counts 1, every statistics field STATISTICS_COST, and a
 * list multiplies what is below it by its length (a connection's `first`, default 50; any other
 * list its LIST_SIZES entry, typical or maximal).
 */
export function planQueryCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown>,
  lengths: 'typical' | 'max' = 'typical',
): QueryCostPlan {
  const fragments = new Map<string, FragmentDefinitionNode>();
  let operation: OperationDefinitionNode | undefined;
  let aliases = 0;
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
    if (definition.kind === Kind.OPERATION_DEFINITION && (!operationName || definition.name?.value === operationName)) operation ??= definition;
  }
  const lists = new Map<FieldNode, ListPrice>();
  if (!operation) return { cost: 0, depth: 0, aliases: 0, outsideLists: 0, lists };
  let introspection = introspectionCache.get(schema);
  if (!introspection) {
    introspection = introspectionSizes(schema);
    introspectionCache.set(schema, introspection);
  }
  const sizes = introspection;

  /** cost: everything; outside: the part not below any list; depth: levels below the set. */
  interface Price {
    cost: number;
    outside: number;
    depth: number;
  }
  const fragmentPrices = new Map<string, Price | 'visiting'>();
  const countedAliases = new Set<FieldNode>();

  const visit = (selectionSet: SelectionSetNode, parent: GraphQLCompositeType | undefined, spread: Set<string>): Price => {
    const price: Price = { cost: 0, outside: 0, depth: 0 };
    for (const selection of selectionSet.selections) {
      let part: Price;
      if (selection.kind === Kind.FIELD) part = fieldPrice(selection, parent);
      else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const condition = selection.typeCondition ? schema.getType(selection.typeCondition.name.value) : parent;
        part = visit(selection.selectionSet, condition && isCompositeType(condition) ? condition : undefined, spread);
      } else {
        // A fragment spread twice in one selection is executed once, as graphql-js collects fields.
        const name = selection.name.value;
        if (spread.has(name)) continue;
        spread.add(name);
        part = fragmentPrice(name);
      }
      price.cost += part.cost;
      price.outside += part.outside;
      price.depth = Math.max(price.depth, part.depth);
    }
    return price;
  };

  const fragmentPrice = (name: string): Price => {
    const known = fragmentPrices.get(name);
    // A cycle of fragments is refused by validation; it adds nothing here.
    if (known === 'visiting') return { cost: 0, outside: 0, depth: 0 };
    if (known) return known;
    const fragment = fragments.get(name);
    if (!fragment) return { cost: 0, outside: 0, depth: 0 };
    fragmentPrices.set(name, 'visiting');
    const condition = schema.getType(fragment.typeCondition.name.value);
    const price = visit(fragment.selectionSet, condition && isCompositeType(condition) ? condition : undefined, new Set());
    fragmentPrices.set(name, price);
    return price;
  };

  const fieldPrice = (node: FieldNode, parent: GraphQLCompositeType | undefined): Price => {
    if (node.alias && !countedAliases.has(node)) {
      countedAliases.add(node);
      aliases += 1;
    }
    const name = node.name.value;
    const definition: GraphQLField<unknown, unknown> | undefined =
      name === '__schema'
        ? SchemaMetaFieldDef
        : name === '__type'
          ? TypeMetaFieldDef
          : name === '__typename'
            ? TypeNameMetaFieldDef
            : parent && 'getFields' in parent
              ? parent.getFields()[name]
              : undefined;
    const type = definition ? getNullableType(definition.type) : undefined;
    const named = definition ? getNamedType(definition.type) : undefined;
    const childParent = named && isCompositeType(named) ? named : undefined;
    const own =
      STATISTICS_FIELDS.has(name) && parent && !parent.name.startsWith('__')
        ? STATISTICS_COST * (UNRESAMPLED_FIELDS.has(name) ? 1 : Math.max(1, resamplesOf(node, variables) / 1000))
        : 1;

    if (named && isConnectionType(named) && node.selectionSet) {
      // edges and nodes hold one item per row of the page; pageInfo and totalCount are built once.
      let perItem = 0;
      let once = 0;
      let outside = 0;
      let depth = 0;
      const connection = named as GraphQLCompositeType;
      const spread = new Set<string>();
      const collect = (selectionSet: SelectionSetNode): void => {
        for (const selection of selectionSet.selections) {
          if (selection.kind === Kind.FIELD) {
            const inner = fieldPrice(selection, connection);
            depth = Math.max(depth, inner.depth);
            if (selection.name.value === 'edges' || selection.name.value === 'nodes') perItem += inner.cost;
            else {
              once += inner.cost;
              outside += inner.outside;
            }
          } else if (selection.kind === Kind.INLINE_FRAGMENT) collect(selection.selectionSet);
          else if (!spread.has(selection.name.value)) {
            spread.add(selection.name.value);
            const fragment = fragments.get(selection.name.value);
            if (fragment) collect(fragment.selectionSet);
          }
        }
      };
      collect(node.selectionSet);
      const assumed = pageSizeOf(node, variables);
      lists.set(node, { assumed, perItem });
      return { cost: own + once + assumed * perItem, outside: own + outside, depth: depth + 1 };
    }

    const below = node.selectionSet ? visit(node.selectionSet, childParent, new Set()) : { cost: 0, outside: 0, depth: 0 };
    const itemCost = own + below.cost;
    if (type && isListType(type) && parent && !isConnectionType(parent)) {
      const key = `${parent.name}.${name}`;
      const assumed = LIST_SIZES[key]?.[lengths] ?? sizes[key] ?? DEFAULT_PAGE_SIZE;
      // Each item counts: a list of 1,000 scalars builds 1,000 values.
      lists.set(node, { assumed, perItem: itemCost });
      return { cost: 1 + assumed * itemCost, outside: 1, depth: below.depth + 1 };
    }
    if (type && isListType(type)) {
      // edges / nodes of a connection: priced by the connection field.
      return { cost: itemCost, outside: 0, depth: below.depth + 1 };
    }
    return { cost: itemCost, outside: own + below.outside, depth: below.depth + 1 };
  };

  const root =
    operation.operation === 'mutation' ? schema.getMutationType() : operation.operation === 'subscription' ? schema.getSubscriptionType() : schema.getQueryType();
  const price = visit(operation.selectionSet, root ?? undefined, new Set());
  return { cost: price.cost, depth: price.depth, aliases, outsideLists: price.outside, lists };
}

function tooCostly(cost: number): GraphQLError {
  return toGraphQLError(
    badInput(
      `The query may load about ${Math.round(cost)} objects; at most ${MAX_QUERY_COST} are answered in one request: ask for smaller pages (first) or page with after`,
      { cost: Math.round(cost), maxCost: MAX_QUERY_COST },
    ),
  );
}

/** BAD_USER_INPUT when a request is deeper or has more aliases than the server answers. */
function checkShape(plan: QueryCostPlan): void {
  if (plan.depth > MAX_QUERY_DEPTH) {
    throw toGraphQLError(badInput(`The query is ${plan.depth} levels deep; at most ${MAX_QUERY_DEPTH} are answered`, { depth: plan.depth, maxDepth: MAX_QUERY_DEPTH }));
  }
  if (plan.aliases > MAX_QUERY_ALIASES) {
    throw toGraphQLError(badInput(`The query has ${plan.aliases} aliases; at most ${MAX_QUERY_ALIASES} are answered`, { aliases: plan.aliases, maxAliases: MAX_QUERY_ALIASES }));
  }
}

/**
 * Checks a request before it runs. A query is priced with typical list lengths and runs with a
 * CostMeter, which replaces each assumed length by the real one as lists load and stops the
 * query once the known cost passes the limit. A mutation or subscription, and every operation
 * when `metered` is false (WebSocket), must fit with the maximal lengths before it runs: nothing
 * is written for a refusal.
 */
export function checkQueryCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown>,
  { metered = true }: { metered?: boolean } = {},
): CostMeter | undefined {
  const operation = document.definitions.find(
    (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION && (!operationName || d.name?.value === operationName),
  );
  const withMeter = metered && operation?.operation === 'query';
  const plan = planQueryCost(schema, document, operationName, variables, withMeter ? 'typical' : 'max');
  checkShape(plan);
  if (!withMeter) {
    if (plan.cost > MAX_QUERY_COST) throw tooCostly(plan.cost);
    return undefined;
  }
  // What is built whatever the lists hold must fit on its own.
  if (plan.outsideLists > MAX_QUERY_COST) throw tooCostly(plan.cost);
  return new CostMeter(plan);
}

/**
 * The cost of a running query, refined with the lengths of its lists as they load: a list at the
 * top (no list above it) adds its real length times the cost of one item; a list inside an item
 * of another list replaces the length that item assumed for it.
 */
export class CostMeter {
  private known: number;

  constructor(private readonly plan: QueryCostPlan) {
    this.known = plan.outsideLists;
  }

  get cost(): number {
    return this.known;
  }

  /** Accounts for a list of `length` items at `fieldNodes`; throws once the cost passes the limit. */
  settle(fieldNodes: readonly FieldNode[], insideList: boolean, length: number): void {
    for (const node of fieldNodes) {
      const price = this.plan.lists.get(node);
      if (!price) continue;
      this.known += (insideList ? length - price.assumed : length) * price.perItem;
    }
    if (this.known > MAX_QUERY_COST) throw tooCostly(this.known);
  }
}
