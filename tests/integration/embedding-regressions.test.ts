import { startFakeLlm, type FakeLlm } from '../support/fake-llm/fake-llm-server';
import { createApiKey, createLoadedDataset, createProject, csv, importAnnotations, importPredictions, jsonl, ok } from '../support/graphql-fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

const REGISTER = `mutation($i: RegisterEndpointInput!) { registerEndpoint(input: $i) { endpoint { id } models { id servedName } } }`;

describe('embedding models in statistics: errors and access', () => {
  let t: TestApp;
  let fake: FakeLlm;
  beforeAll(async () => {
    t = await startTestApp();
    fake = await startFakeLlm({ models: ['qwen3-8b', 'med-embed'] });
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });

  it('scores with an embeddingModelId the endpoint cannot embed with is a client error, not INTERNAL_SERVER_ERROR', async () => {
    const project = await createProject(t, 'Embedder refuses');
    const { datasetId } = await createLoadedDataset(t, project.id);
    await importAnnotations(t, datasetId, 'Consensus', 'CSV', csv([['id', 'site'], ['R1', 'upper back'], ['R2', 'lung']]), { isReference: true });
    const run = await importPredictions(t, datasetId, {
      format: 'JSONL',
      layout: 'JSON_COLUMN',
      modelName: 'm',
      content: jsonl([{ id: 'R1', extracted_data: { site: 'back' } }, { id: 'R2', extracted_data: { site: 'lungs' } }]),
    });
    const registered = ok(await t.gql(REGISTER, { i: { projectId: project.id, name: 'chat only', baseUrl: fake.baseUrl } })).registerEndpoint;
    const chatModel = registered.models.find((m: { servedName: string }) => m.servedName === 'qwen3-8b').id;
    // vLLM answers 400 when the served model is a chat model without an embedding task.
    fake.scriptEmbeddings(() => ({ status: 400, error: 'The model does not support Embeddings API' }));
    const result = await t.gql(`query ($id: ID!, $e: ID!) { node(id: $id) { ... on Run { scores(options: { resamples: 0, embeddingModelId: $e }) { macroAverage { value } } } } }`, {
      id: run.run.id,
      e: chatModel,
    });
    fake.scriptEmbeddings(null);
    expect(result.errors?.[0]?.extensions?.code).not.toBe('INTERNAL_SERVER_ERROR');
  });

  it('a cached score computed with another project’s embedding model is not served to a key of this project', async () => {
    const a = await createProject(t, 'Embedder tenant A');
    const b = await createProject(t, 'Embedder tenant B');
    const { datasetId } = await createLoadedDataset(t, a.id);
    await importAnnotations(t, datasetId, 'Consensus', 'CSV', csv([['id', 'site'], ['R1', 'upper back'], ['R2', 'lung'], ['R3', 'lower leg']]), { isReference: true });
    const run = await importPredictions(t, datasetId, {
      format: 'JSONL',
      layout: 'JSON_COLUMN',
      modelName: 'm',
      content: jsonl([
        { id: 'R1', extracted_data: { site: 'back' } },
        { id: 'R2', extracted_data: { site: 'lungs' } },
        { id: 'R3', extracted_data: { site: 'leg' } },
      ]),
    });
    const registered = ok(await t.gql(REGISTER, { i: { projectId: b.id, name: 'B embedder', baseUrl: fake.baseUrl } })).registerEndpoint;
    const embedderOfB = registered.models.find((m: { servedName: string }) => m.servedName === 'med-embed').id;
    const viewerOfA = await createApiKey(t, a.id, 'VIEWER', a.adminKey);
    const query = `query ($id: ID!, $e: ID!) { node(id: $id) { ... on Run { scores(options: { resamples: 0, embeddingModelId: $e }) {
      embedder { provider model } macroAverage { value } } } } }`;
    // Before anything is cached, A's key is refused B's model.
    expect((await t.gql(query, { id: run.run.id, e: embedderOfB }, viewerOfA.secret)).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    // A server admin (allowed to use any model) computes the same statistic once…
    ok(await t.gql(query, { id: run.run.id, e: embedderOfB }));
    // …and from then on A's key gets scores made with B's endpoint and model.
    const again = await t.gql(query, { id: run.run.id, e: embedderOfB }, viewerOfA.secret);
    expect(again.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });
});
