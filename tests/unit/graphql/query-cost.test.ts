import { getIntrospectionQuery, parse } from 'graphql';
import { estimateQueryCost, MAX_QUERY_COST } from '../../../src/graphql/query-cost';

const cost = (query: string, variables: Record<string, unknown> = {}) => estimateQueryCost(parse(query), null, variables);

describe('query cost', () => {
  it('counts objects, multiplying by the page size of each connection', () => {
    expect(cost('{ viewer { serverAdmin } }').cost).toBe(2);
    // projects(first: 5): 1 + 5 × (nodes 1 + name 1)
    expect(cost('{ projects(first: 5) { nodes { name } } }').cost).toBe(1 + 5 * 2);
    // nested: useCases default page 50
    expect(cost('{ projects(first: 2) { nodes { useCases { nodes { id } } } } }').cost).toBe(1 + 2 * (1 + (1 + 50 * 2)));
  });

  it('reads page sizes from variables', () => {
    const query = 'query($n: Int) { projects(first: $n) { nodes { name } } }';
    expect(cost(query, { n: 10 }).cost).toBe(1 + 10 * 2);
    expect(cost(query, {}).cost).toBe(1 + 50 * 2);
  });

  it('weighs statistics fields and follows fragments', () => {
    const query = `query { node(id: "x") { ...U } } fragment U on UseCase { runs(first: 10) { nodes { scores { validity } } } }`;
    expect(cost(query).cost).toBe(1 + 1 + 10 * (1 + (5000 + 1)));
  });

  it('makes statistics with more resamples cost more, also through variables', () => {
    const literal = '{ node(id: "x") { ... on Run { scores(options: { resamples: 10000 }) { validity } } } }';
    expect(cost(literal).cost).toBe(1 + 50_000 + 1);
    const variable = 'query($o: StatsOptions) { node(id: "x") { ... on Run { scores(options: $o) { validity } } } }';
    expect(cost(variable, { o: { resamples: 2000 } }).cost).toBe(1 + 10_000 + 1);
    // ten aliased expensive computations in one request are refused
    const aliased = `{ ${Array.from({ length: 10 }, (_, k) => `a${k}: node(id: "x") { ... on Run { scores(options: { resamples: 10000, seed: ${k} }) { validity } } }`).join(' ')} }`;
    expect(cost(aliased).cost).toBeGreaterThan(MAX_QUERY_COST);
  });

  it('lets introspection through and stops an exploding nesting', () => {
    expect(cost(getIntrospectionQuery()).cost).toBeLessThan(100);
    const exploding = '{ projects(first: 200) { nodes { useCases(first: 200) { nodes { runs(first: 200) { nodes { name } } } } } } }';
    expect(cost(exploding).cost).toBeGreaterThan(MAX_QUERY_COST);
  });

  it('measures depth', () => {
    expect(cost('{ a { b { c { d } } } }').depth).toBe(4);
  });
});
