import 'reflect-metadata';
import { parse, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import { cacheableDocument, coveredObjects } from '../../../src/graphql/response-cache';
import { buildReportQlSchema } from '../../../src/graphql/schema';

describe('which answers a project revision fixes', () => {
  let schema: GraphQLSchema;
  beforeAll(async () => {
    schema = await buildReportQlSchema();
  });
  const cacheable = (query: string): boolean => {
    const document = parse(query);
    return cacheableDocument(schema, document, document.definitions[0] as OperationDefinitionNode);
  };

  it('statistics, runs, predictions and reports are fixed by the revision', () => {
    expect(cacheable(`query($u: ID!, $d: ID!) { node(id: $u) { ... on UseCase { leaderboard(datasetId: $d) { exact entries { rank run { id name model { servedName endpoint { id } } } macroAverage { value } } } } } }`)).toBe(true);
    expect(cacheable(`query($r: ID!) { node(id: $r) { ... on Run { __typename predictions(first: 50) { totalCount pageInfo { hasNextPage endCursor } edges { cursor node { id values report { externalId text } } } } } } }`)).toBe(true);
    expect(cacheable(`query($d: ID!) { node(id: $d) { ... on Dataset { id reportCount interRaterAgreement { __typename } } } }`)).toBe(true);
    expect(cacheable(`query($u: ID!) { node(id: $u) { ... on UseCase { name runs(first: 10) { totalCount nodes { id prompt { id } dataset { id } } } } } }`)).toBe(true);
  });

  it('__typename on node(id:) is answered from the cache only for objects the revision covers', () => {
    expect(cacheable(`query($x: ID!) { node(id: $x) { __typename ... on Run { name } } }`)).toBe(true);
    expect(cacheable(`query($x: ID!) { node(id: $x) { __typename id } }`)).toBe(true);
    // without its __typename, the object behind the id is not known when the answer is kept
    expect(cacheable(`query($x: ID!) { node(id: $x) { kind: __typename id } }`)).toBe(false);
    expect(coveredObjects({ node: { __typename: 'Run', name: 'a' } })).toBe(true);
    expect(coveredObjects({ a: null, b: [{ __typename: 'Prediction' }, null] })).toBe(true);
    expect(coveredObjects({ node: { __typename: 'Prompt' } })).toBe(false);
    expect(coveredObjects({ a: { __typename: 'Run' }, b: [{ __typename: 'Dataset' }] })).toBe(false);
  });

  it('anything else is not: other objects, the clock, the endpoints, mutations, introspection', () => {
    // the names of prompts, datasets and projects do not move the revision on
    expect(cacheable(`query($r: ID!) { node(id: $r) { ... on Run { prompt { id name } } } }`)).toBe(false);
    expect(cacheable(`query($d: ID!) { node(id: $d) { ... on Dataset { name } } }`)).toBe(false);
    expect(cacheable(`query($u: ID!) { node(id: $u) { ... on UseCase { prompts(first: 5) { totalCount } } } }`)).toBe(false);
    expect(cacheable(`query($p: ID!) { project(id: $p) { name } }`)).toBe(false);
    // whatever object the id names
    expect(cacheable(`query($x: ID!) { node(id: $x) { id } }`)).toBe(false);
    // elapsed time, endpoint health and metrics, exports that include the prompts
    expect(cacheable(`query($r: ID!) { node(id: $r) { ... on Run { progress { etaMs } } } }`)).toBe(false);
    expect(cacheable(`query($r: ID!) { node(id: $r) { ... on Run { model { available } } } }`)).toBe(false);
    expect(cacheable(`query($u: ID!) { node(id: $u) { ... on UseCase { exportConfig } } }`)).toBe(false);
    expect(cacheable(`mutation { createProject(input: { name: "x" }) { project { id } } }`)).toBe(false);
    expect(cacheable(`{ __schema { queryType { name } } }`)).toBe(false);
    expect(cacheable(`{ viewer { role } }`)).toBe(false);
  });
});
