import { getIntrospectionQuery, getNullableType, isListType, isObjectType, parse, validate, type GraphQLSchema } from 'graphql';
import { buildReportQlSchema } from '../../../src/graphql/schema';
import {
  checkQueryCost,
  CostMeter,
  isConnectionType,
  LIST_SIZES,
  MAX_QUERY_ALIASES,
  MAX_QUERY_COST,
  MAX_QUERY_TOKENS,
  planQueryCost,
} from '../../../src/graphql/query-cost';

let schema: GraphQLSchema;
beforeAll(async () => {
  schema = await buildReportQlSchema();
});

const plan = (query: string, variables: Record<string, unknown> = {}) => planQueryCost(schema, parse(query), null, variables);
/** The price of a query that must be valid against the schema. */
const validCost = (query: string) => {
  expect(validate(schema, parse(query)).map((e) => e.message)).toEqual([]);
  return plan(query).cost;
};
const cost = (query: string, variables: Record<string, unknown> = {}) => plan(query, variables).cost;

/** A query with `n` fragments, each spreading the previous one twice: 2^n paths through them. */
function doublingFragments(n: number): string {
  const fragments = [`fragment F0 on UseCase { id name }`];
  for (let k = 1; k <= n; k += 1) fragments.push(`fragment F${k} on UseCase { ...F${k - 1} a${k}: runs(first: 1) { nodes { useCase { ...F${k - 1} } } } }`);
  return `{ projects(first: 1) { nodes { useCases(first: 1) { nodes { ...F${n} } } } } } ${fragments.join(' ')}`;
}

describe('query cost', () => {
  it('counts objects, multiplying by the page size of each connection', () => {
    expect(cost('{ viewer { serverAdmin } }')).toBe(2);
    // projects(first: 5): 1 + 5 × (nodes 1 + name 1)
    expect(cost('{ projects(first: 5) { nodes { name } } }')).toBe(1 + 5 * 2);
    // nested: useCases default page 50
    expect(cost('{ projects(first: 2) { nodes { useCases { nodes { id } } } } }')).toBe(1 + 2 * (1 + (1 + 50 * 2)));
    // pageInfo and totalCount are built once per connection, not once per row
    expect(cost('{ projects(first: 5) { totalCount pageInfo { hasNextPage } nodes { name } } }')).toBe(1 + 1 + 2 + 5 * 2);
  });

  it('reads page sizes from variables and takes them as the resolver will', () => {
    const query = 'query($n: Int) { projects(first: $n) { nodes { name } } }';
    expect(cost(query, { n: 10 })).toBe(1 + 10 * 2);
    expect(cost(query, {})).toBe(1 + 50 * 2);
    // first above 200 is refused by the resolver; it is priced as 200
    expect(cost(query, { n: 1e9 })).toBe(1 + 200 * 2);
  });

  it('weighs statistics fields and follows fragments', () => {
    const query = `query { node(id: "x") { ...U } } fragment U on UseCase { runs(first: 10) { nodes { scores { validity } } } }`;
    expect(cost(query)).toBe(1 + 1 + 10 * (1 + (5000 + 1)));
  });

  it('weighs the paired comparison, strategy effects, contrasts, strata and chance-corrected agreement as statistics', () => {
    const comparison = '{ node(id: "x") { ... on Run { comparison(baselineRunId: "y", options: { resamples: 2000 }) { macroAverage { value } } } } }';
    expect(validCost(comparison)).toBe(1 + 10_000 + 1 + 1);
    const project = (field: string) => validCost(`{ project(id: "p") { ${field} } }`);
    expect(project('strategyEffects(useCaseIds: ["u"]) { rows { model { id } } }')).toBeGreaterThan(5_000);
    expect(project('stratifiedResults(useCaseIds: ["u"], groupBy: { by: FAMILY }) { group }')).toBeGreaterThan(5_000 * LIST_SIZES['Project.stratifiedResults']!.typical);
    expect(validCost('{ node(id: "d") { ... on Dataset { chanceCorrectedAgreement { variables { __typename } } } } }')).toBeGreaterThan(5_000);
    // contrasts draw no resamples: more of them cost nothing more
    const contrast = (resamples: number) => project(`contrast(useCaseIds: ["u"], groupA: { guided: true }, options: { resamples: ${resamples} }) { strata { __typename } }`);
    expect(contrast(10_000)).toBe(contrast(1000));
  });

  it('makes statistics with more resamples cost more, also through variables', () => {
    const literal = '{ node(id: "x") { ... on Run { scores(options: { resamples: 10000 }) { validity } } } }';
    expect(cost(literal)).toBe(1 + 50_000 + 1);
    const variable = 'query($o: StatsOptions) { node(id: "x") { ... on Run { scores(options: $o) { validity } } } }';
    expect(cost(variable, { o: { resamples: 2000 } })).toBe(1 + 10_000 + 1);
    // ten aliased expensive computations in one request are refused before anything runs
    const aliased = `{ ${Array.from({ length: 10 }, (_, k) => `a${k}: node(id: "x") { ... on Run { scores(options: { resamples: 10000, seed: ${k} }) { validity } } }`).join(' ')} }`;
    expect(() => checkQueryCost(schema, parse(aliased), null, {})).toThrow(/objects/);
  });

  it('prices plain lists by their assumed length, so lists that point at each other multiply', () => {
    // Endpoint.models ↔ Model.endpoint: each level of models multiplies by 1,000
    const cyclic = '{ node(id: "x") { ... on Endpoint { models { endpoint { models { endpoint { models { id } } } } } } } }';
    expect(cost(cyclic)).toBeGreaterThan(LIST_SIZES['Endpoint.models']!.typical ** 3);
    expect(planQueryCost(schema, parse(cyclic), null, {}, 'max').cost).toBeGreaterThan(1e9);
    // a list of scalars counts each value
    expect(cost('{ node(id: "x") { ... on Run { warnings } } }')).toBe(1 + 1 + LIST_SIZES['Run.warnings']!.typical);
  });

  it('prices introspection by the size of the schema: the standard query passes, nesting does not', () => {
    const standard = plan(getIntrospectionQuery());
    expect(standard.cost).toBeGreaterThan(1_000);
    expect(standard.cost).toBeLessThan(MAX_QUERY_COST);
    const nested = '{ __schema { types { fields { type { fields { type { fields { type { fields { name } } } } } } } } } }';
    expect(cost(nested)).toBeGreaterThan(MAX_QUERY_COST);
  });

  it('counts __typename, also under an alias', () => {
    expect(cost('{ a: __typename b: __typename }')).toBe(2);
  });

  it('measures depth, also through fragments', () => {
    expect(plan('{ viewer { serverAdmin } }').depth).toBe(2);
    expect(plan('{ projects { nodes { ...P } } } fragment P on Project { useCases { nodes { id } } }').depth).toBe(5);
  });

  it('visits each fragment once: doubling fragments are priced in linear time', () => {
    // 2^40 paths: walking them would never end; the price is still exact
    const fortyDeep = plan(doublingFragments(40));
    expect(fortyDeep.cost).toBeGreaterThan(MAX_QUERY_COST);
    // F0 = id + name = 2; F_k = F_{k−1} + useCases 1 + nodes 1 + project 1 + F_{k−1}; the query adds projects, nodes, useCases, nodes
    const small = (n: number) => cost(doublingFragments(n));
    expect(small(1)).toBe(4 + (2 * 2 + 3));
    for (const n of [2, 3, 10]) expect(small(n) - 4).toBe(2 * (small(n - 1) - 4) + 3);
    expect(fortyDeep.cost - 4).toBe(2 ** 40 * (2 + 3) - 3);
  });

  it('survives fragment cycles (validation refuses them)', () => {
    expect(() => plan('{ projects { nodes { ...A } } } fragment A on Project { ...B } fragment B on Project { ...A }')).not.toThrow();
  });

  it('refuses more aliases than the limit', () => {
    const many = `{ ${Array.from({ length: MAX_QUERY_ALIASES + 1 }, (_, k) => `a${k}: __typename`).join(' ')} }`;
    expect(() => checkQueryCost(schema, parse(many), null, {})).toThrow(/aliases/);
    const allowed = `{ ${Array.from({ length: MAX_QUERY_ALIASES }, (_, k) => `a${k}: __typename`).join(' ')} }`;
    expect(checkQueryCost(schema, parse(allowed), null, {})?.cost).toBe(MAX_QUERY_ALIASES);
  });

  it('stops parsing past the token limit', () => {
    const huge = `{ ${'__typename '.repeat(MAX_QUERY_TOKENS)} }`;
    expect(() => parse(huge, { maxTokens: MAX_QUERY_TOKENS })).toThrow(/tokens/);
  });

  it('runs every query with a meter, and refuses a mutation that may build too much', () => {
    expect(checkQueryCost(schema, parse('{ viewer { serverAdmin } }'), null, {})).toBeInstanceOf(CostMeter);
    expect(checkQueryCost(schema, parse('mutation { createProject(input: { name: "x" }) { project { id } } }'), null, {})).toBeUndefined();
    const query = 'query { node(id: "x") { ... on UseCase { runs(first: 200) { nodes { scores { validity } } } } } }';
    expect(cost(query)).toBeGreaterThan(MAX_QUERY_COST);
    expect(checkQueryCost(schema, parse(query), null, {})).toBeInstanceOf(CostMeter);
    // what is built outside lists must fit before anything runs
    const outside = `{ ${Array.from({ length: 101 }, (_, k) => `a${k}: node(id: "x") { ... on Run { scores { validity } } }`).join(' ')} }`;
    expect(() => checkQueryCost(schema, parse(outside), null, {})).toThrow(/objects/);
    expect(() => checkQueryCost(schema, parse(query), null, {}, { metered: false })).toThrow(/objects/);
    const mutation = 'mutation { refreshEndpoint(id: "x") { models { endpoint { models { endpoint { models { id } } } } } } }';
    expect(() => checkQueryCost(schema, parse(mutation), null, {})).toThrow(/objects/);
  });

  it('refines the estimate with the real lengths of lists', () => {
    const document = parse('query { node(id: "x") { ... on UseCase { runs(first: 200) { nodes { scores { validity } warnings } } } } }');
    const meter = checkQueryCost(schema, document, null, {})!;
    const found = planQueryCost(schema, document, null, {}, 'typical');
    const [runsNode] = [...found.lists.entries()].find(([, price]) => price.assumed === 200)!;
    const warningsNode = [...found.lists.keys()].find((node) => node.name.value === 'warnings')!;
    expect(meter.cost).toBe(2); // node + the connection itself
    meter.settle([runsNode], false, 6);
    // per run: the node 1, scores 5000 + validity 1, warnings 1 + 20 strings
    const perRun = 1 + 5001 + 1 + LIST_SIZES['Run.warnings']!.typical;
    expect(meter.cost).toBe(2 + 6 * perRun);
    // inside a run, warnings with 1 entry instead of the assumed 20
    meter.settle([warningsNode], true, 1);
    expect(meter.cost).toBe(2 + 6 * perRun - (LIST_SIZES['Run.warnings']!.typical - 1));
    // a page of 200 runs really there passes the limit
    const full = checkQueryCost(schema, document, null, {})!;
    expect(() => full.settle([runsNode], false, 200)).toThrow(/objects/);
  });

  it('has a length for every list field of the schema', () => {
    const unpriced: string[] = [];
    for (const type of Object.values(schema.getTypeMap())) {
      if (!isObjectType(type) || type.name.startsWith('__') || isConnectionType(type)) continue;
      for (const field of Object.values(type.getFields())) {
        if (isListType(getNullableType(field.type)) && LIST_SIZES[`${type.name}.${field.name}`] === undefined) unpriced.push(`${type.name}.${field.name}`);
      }
    }
    expect(unpriced).toEqual([]);
  });
});
