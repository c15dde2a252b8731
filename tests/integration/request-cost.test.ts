import { startFakeLlm, type FakeLlm } from '../support/fake-llm/fake-llm-server';
import { createApiKey, createLoadedDataset, createProject, importAnnotations, importPredictions, ok, STANDARD_REFERENCE, standardPredictions } from '../support/graphql-fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

const REGISTER = `mutation($i: RegisterEndpointInput!) { registerEndpoint(input: $i) { endpoint { id } models { id } } }`;

/** n fragments, each spreading the previous one twice at the same level: 2^n paths for a walk that follows every spread. */
function flatDoubling(n: number): string {
  const fragments = ['fragment F0 on Project { id name }'];
  for (let k = 1; k <= n; k += 1) fragments.push(`fragment F${k} on Project { ...F${k - 1} ... on Project { ...F${k - 1} } }`);
  return `{ projects(first: 1) { nodes { ...F${n} } } } ${fragments.join(' ')}`;
}

/** The same, one level deeper each time: a cost that really doubles. */
function doublingFragments(n: number): string {
  const fragments = ['fragment F0 on UseCase { id name }'];
  for (let k = 1; k <= n; k += 1) fragments.push(`fragment F${k} on UseCase { ...F${k - 1} a${k}: runs(first: 1) { nodes { useCase { ...F${k - 1} } } } }`);
  return `{ projects(first: 1) { nodes { useCases(first: 1) { nodes { ...F${n} } } } } } ${fragments.join(' ')}`;
}

describe('request cost: what one request may make the server do', () => {
  let t: TestApp;
  let fake: FakeLlm;
  let viewerKey: string;
  let useCaseId: string;
  let endpointId: string;

  beforeAll(async () => {
    t = await startTestApp();
    fake = await startFakeLlm({ models: Array.from({ length: 40 }, (_, k) => `served-${k}`) });
    const project = await createProject(t, 'Request cost');
    viewerKey = (await createApiKey(t, project.id, 'VIEWER', project.adminKey)).secret;
    const { useCase, datasetId } = await createLoadedDataset(t, project.id);
    await importAnnotations(t, datasetId, 'Consensus', 'CSV', STANDARD_REFERENCE, { isReference: true });
    useCaseId = useCase.id;
    for (let k = 0; k < 6; k += 1) {
      await importPredictions(t, datasetId, { format: 'JSONL', layout: 'JSON_COLUMN', modelName: `m${k}`, content: standardPredictions(['G1', 'G2', 'G3', 'G1', 'G2']) });
    }
    endpointId = ok(await t.gql(REGISTER, { i: { projectId: project.id, name: 'forty models', baseUrl: fake.baseUrl } })).registerEndpoint.endpoint.id;
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });

  it('prices a query with doubling fragments without walking their paths, and answers it', async () => {
    // 40 fragments: 2^40 paths through the spreads; the cost check visits each fragment once.
    const healthy = fetch(`http://127.0.0.1:${t.port}/healthz`);
    const flat = ok(await t.gql(flatDoubling(40), {}, viewerKey));
    expect(flat.projects.nodes).toHaveLength(1);
    expect((await healthy).status).toBe(200);
    // when each level goes one level deeper the cost really doubles: refused for its depth
    const deep = await t.gql(doublingFragments(40), {}, viewerKey);
    expect(deep.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', maxDepth: 15 });
    const answered = await t.gql(doublingFragments(3), {}, viewerKey);
    expect(answered.errors).toBeUndefined();
  });

  it('uses the real number of runs: a page of 200 over a use case with 6 runs computes 6 scores', async () => {
    const query = `query ($u: ID!) { node(id: $u) { ... on UseCase { runs(first: 200) { nodes { name scores(options: { resamples: 0 }) { validity } } } } } }`;
    const data = ok(await t.gql(query, { u: useCaseId }, viewerKey));
    expect(data.node.runs.nodes).toHaveLength(6);
    // the six runs hold the same predictions: six equal scores
    const validity = data.node.runs.nodes.map((run: { scores: { validity: number } }) => run.scores.validity);
    expect(new Set(validity).size).toBe(1);
    expect(validity[0]).toBeGreaterThan(0);
  });

  it('stops a query once the runs it really holds cost more than the limit', async () => {
    // 6 runs × 100,000 resamples: 6 × 500,000 objects' worth of statistics.
    const query = `query ($u: ID!) { node(id: $u) { ... on UseCase { runs(first: 200) { nodes { scores(options: { resamples: 100000 }) { validity } } } } } }`;
    const result = await t.gql(query, { u: useCaseId }, viewerKey);
    expect(result.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(result.errors?.[0]?.extensions?.cost).toBeGreaterThan(500_000);
    expect(result.errors?.[0]?.path).toEqual(['node', 'runs']);
    expect(result.data?.node?.runs ?? null).toBeNull();
  });

  it('multiplies lists that point at each other (Endpoint.models ↔ Model.endpoint) by their real lengths', async () => {
    const cyclic = `query ($e: ID!) { node(id: $e) { ... on Endpoint { models { endpoint { models { endpoint { models { endpoint { models { id } } } } } } } } } }`;
    // 40 models: 40^4 = 2,560,000 models would be built
    const refused = await t.gql(cyclic, { e: endpointId }, viewerKey);
    expect(refused.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(refused.errors?.[0]?.extensions?.cost).toBeGreaterThan(500_000);
    // two levels (1,600 models) are answered
    const answered = ok(await t.gql(`query ($e: ID!) { node(id: $e) { ... on Endpoint { models { endpoint { models { id } } } } } }`, { e: endpointId }, viewerKey));
    expect(answered.node.models).toHaveLength(40);
    expect(answered.node.models[0].endpoint.models).toHaveLength(40);
  });

  it('refuses more aliases and more tokens than the limits, before anything runs', async () => {
    const aliases = `{ ${Array.from({ length: 1001 }, (_, k) => `a${k}: __typename`).join(' ')} }`;
    const manyAliases = await t.gql(aliases, {}, viewerKey);
    expect(manyAliases.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(manyAliases.errors?.[0]?.extensions?.maxAliases).toBe(1000);
    const typenames = `{ ${Array.from({ length: 200_000 }, (_, k) => `a${k}: __typename`).join(' ')} }`;
    const manyTokens = await t.gql(typenames, {}, viewerKey);
    expect(manyTokens.status).toBe(400);
    expect(manyTokens.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', reason: 'GRAPHQL_PARSE_FAILED' });
    expect(manyTokens.data).toBeUndefined();
  });

  it('refuses a mutation whose answer would be too large, and writes nothing', async () => {
    const checksum = "SELECT (SELECT md5(string_agg(e::text, ',' ORDER BY e.id)) FROM endpoints e) AS endpoints, (SELECT md5(string_agg(m::text, ',' ORDER BY m.id)) FROM models m) AS models";
    const before = await t.dataSource.query(checksum);
    const mutation = `mutation ($e: ID!) { refreshEndpoint(input: { id: $e }) { models { endpoint { models { endpoint { models { id } } } } } } }`;
    const result = await t.gql(mutation, { e: endpointId });
    expect(result.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(result.data).toBeUndefined();
    expect(await t.dataSource.query(checksum)).toEqual(before);
  });
});
