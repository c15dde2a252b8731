import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startFakeLlm, type FakeLlm } from '../support/fake-llm/fake-llm-server';
import { startTestApp, type TestApp } from '../support/test-app';

const FRAMEWORK = path.resolve(__dirname, '../fixtures/extraction/framework');
const read = (file: string) => readFileSync(path.join(FRAMEWORK, file), 'utf8');

const ANSWER = {
  'Primary melanoma': 'Yes',
  'Breslow thickness': '1,2',
  'Mitosis described': 'Yes',
  'Mitosis count': 3,
  'Specimen type': 'Not specified',
  'SLNB metastases present': 'Not specified',
};

describe('endpoints, extraction and framework configs through GraphQL', () => {
  let t: TestApp;
  let fake: FakeLlm;
  let projectId: string;
  let useCaseId: string;
  let modelId: string;
  let endpointId: string;

  beforeAll(async () => {
    t = await startTestApp();
    fake = await startFakeLlm({ models: ['qwen3-8b', { id: 'med-embed', maxModelLen: 512 }], apiKey: 'sk-endpoint-secret' });
    const project = await t.gql('mutation { createProject(input: { name: "extraction" }) { project { id } } }');
    projectId = project.data!.createProject.project.id;
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });

  it('imports a MedicalRecordLLM prompt and model YAML as a use case with a prompt', async () => {
    const result = await t.gql(
      `mutation($i: ImportUseCaseConfigInput!) { importUseCaseConfig(input: $i) {
        useCase { id name variables { key type options graphStep dependsOn { key values } default } }
        prompt { name examples { input reasoning output } }
        modelConfig warnings } }`,
      { i: { projectId, name: 'Melanoma (framework)', promptYaml: read('melanoma-prompt.yaml'), modelYaml: read('gemma-model.yaml') } },
    );
    expect(result.errors).toBeUndefined();
    const payload = result.data!.importUseCaseConfig;
    useCaseId = payload.useCase.id;
    const variables = payload.useCase.variables as { key: string; type: string; graphStep: number; dependsOn: { key: string; values: string[] } | null }[];
    expect(variables.map((v) => v.key)).toEqual([...Object.keys(ANSWER), 'SLNB tumour burden', 'Quality Check']);
    expect(variables.find((v) => v.key === 'Breslow thickness')).toMatchObject({ type: 'NUMERIC', graphStep: 2, dependsOn: { key: 'Primary melanoma', values: ['Yes'] } });
    expect(payload.modelConfig.sampling).toMatchObject({ temperature: 0.6, topK: 50, repetitionPenalty: 1.2 });
    expect(payload.modelConfig.selfConsistency).toEqual({ samples: 3, temperatures: [0.5, 0.6, 0.7] });
  });

  it('exports the use case as YAML that imports back to the same variables', async () => {
    const exported = await t.gql(`query($id: ID!) { node(id: $id) { ... on UseCase { exportConfig } } }`, { id: useCaseId });
    expect(exported.errors).toBeUndefined();
    const yaml = exported.data!.node.exportConfig as string;
    expect(yaml).toContain('field_instructions');
    const again = await t.gql(
      `mutation($i: ImportUseCaseConfigInput!) { importUseCaseConfig(input: $i) { useCase { variables { key type options aliases graphStep dependsOn { key values } default } } } }`,
      { i: { projectId, name: 'Melanoma (round trip)', promptYaml: yaml } },
    );
    expect(again.errors).toBeUndefined();
    const original = await t.gql(
      `query($id: ID!) { node(id: $id) { ... on UseCase { variables { key type options aliases graphStep dependsOn { key values } default } } } }`,
      { id: useCaseId },
    );
    expect(again.data!.importUseCaseConfig.useCase.variables).toEqual(original.data!.node.variables);
  });

  it('rejects a malformed YAML with BAD_USER_INPUT', async () => {
    const result = await t.gql(`mutation($i: ImportUseCaseConfigInput!) { importUseCaseConfig(input: $i) { warnings } }`, {
      i: { projectId, name: 'broken', promptYaml: 'field_instructions: [' },
    });
    expect(result.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('registers an endpoint: discovers its models and capabilities; the key is stored encrypted and never returned', async () => {
    const result = await t.gql(
      `mutation($i: RegisterEndpointInput!) { registerEndpoint(input: $i) {
        endpoint { id name hasApiKey kind health { status latencyMs lastError } models { servedName available } }
        models { id servedName } } }`,
      { i: { projectId, name: 'fake vLLM', baseUrl: fake.baseUrl, kind: 'VLLM', apiKey: 'sk-endpoint-secret', gpuCount: 2 } },
    );
    expect(result.errors).toBeUndefined();
    const { endpoint, models } = result.data!.registerEndpoint;
    endpointId = endpoint.id;
    expect(endpoint.hasApiKey).toBe(true);
    expect(endpoint.health.status).toBe('UP');
    expect(models.map((m: { servedName: string }) => m.servedName)).toEqual(['med-embed', 'qwen3-8b']);
    modelId = models.find((m: { servedName: string }) => m.servedName === 'qwen3-8b').id;
    expect(JSON.stringify(result)).not.toContain('sk-endpoint-secret');
    const [row] = (await t.dataSource.query('SELECT api_key_encrypted, capabilities FROM endpoints')) as { api_key_encrypted: string; capabilities: Record<string, unknown> }[];
    expect(row!.api_key_encrypted).not.toContain('sk-endpoint-secret');
    expect(row!.capabilities).toMatchObject({ jsonSchema: true, thinkingToggle: true });
    // every request to the endpoint carried the key
    expect(fake.requests.every((r) => r.headers.authorization === 'Bearer sk-endpoint-secret')).toBe(true);
  });

  it('an unreachable endpoint is registered DOWN with the error, and refreshEndpoint brings it UP', async () => {
    const down = await t.gql(
      `mutation($i: RegisterEndpointInput!) { registerEndpoint(input: $i) { endpoint { id health { status lastError } } models { id } } }`,
      { i: { projectId, name: 'not yet up', baseUrl: 'http://127.0.0.1:9/v1', kind: 'OLLAMA', timeoutMs: 2000 } },
    );
    expect(down.errors).toBeUndefined();
    expect(down.data!.registerEndpoint.endpoint.health.status).toBe('DOWN');
    expect(down.data!.registerEndpoint.endpoint.health.lastError).toBeTruthy();
    expect(down.data!.registerEndpoint.models).toEqual([]);
    const refreshed = await t.gql(`mutation($i: RefreshEndpointInput!) { refreshEndpoint(input: $i) { endpoint { health { status } } models { servedName } } }`, {
      i: { id: endpointId },
    });
    expect(refreshed.errors).toBeUndefined();
    expect(refreshed.data!.refreshEndpoint.endpoint.health.status).toBe('UP');
  });

  it('updateModel sets metadata and derives the size class', async () => {
    const result = await t.gql(
      `mutation($i: UpdateModelInput!) { updateModel(input: $i) { model { family parameterCountB sizeClass supportsThinking defaultSampling { temperature topK } } } }`,
      { i: { id: modelId, family: 'Qwen3', parameterCountB: 8, supportsThinking: true, defaultSampling: { temperature: 0.6, topK: 20 } } },
    );
    expect(result.errors).toBeUndefined();
    expect(result.data!.updateModel.model).toEqual({
      family: 'Qwen3',
      parameterCountB: 8,
      sizeClass: 'SMALL',
      supportsThinking: true,
      defaultSampling: { temperature: 0.6, topK: 20 },
    });
    const bad = await t.gql(`mutation($i: UpdateModelInput!) { updateModel(input: $i) { model { id } } }`, { i: { id: modelId, parameterCountB: -1 } });
    expect(bad.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  const EXTRACT = `mutation($i: ExtractInput!) { extract(input: $i) {
    status error errorCode warnings values fields { key value valid invalidCategory skipped } raw reasoning finishReason truncated latencyMs promptTokens completionTokens attempts calls samples steps skipped } }`;

  it.each(['ZERO_SHOT', 'ONE_SHOT', 'FEW_SHOT', 'CHAIN_OF_THOUGHT', 'SELF_CONSISTENCY', 'PROMPT_GRAPH'])('extracts with %s', async (strategy) => {
    fake.reset();
    fake.setHandler((body) => {
      const text = (body.messages as { content: string }[]).map((m) => m.content).join('\n');
      // Each prompt-graph step answers only its own keys; a full answer works for the others.
      const keys = Object.keys(ANSWER).filter((k) => text.includes(`"${k}"`));
      const answer = Object.fromEntries(keys.map((k) => [k, ANSWER[k as keyof typeof ANSWER]]));
      return { content: `<think>reading the report</think>\n\`\`\`json\n${JSON.stringify(answer)}\n\`\`\``, usage: { promptTokens: 100, completionTokens: 20 } };
    });
    const result = await t.gql(EXTRACT, {
      i: { modelId, useCaseId, strategy, text: 'Melanoom, Breslow 1,2 mm, mitosen 3/mm².', exampleCount: strategy === 'ONE_SHOT' ? 1 : null },
    });
    expect(result.errors).toBeUndefined();
    const payload = result.data!.extract;
    expect(payload.status).toBe('SUCCEEDED');
    expect(payload.values['Primary melanoma']).toBe('Yes');
    expect(payload.values['Breslow thickness']).toBe(1.2);
    expect(payload.values['Mitosis count']).toBe(3);
    expect(payload.reasoning.length).toBeGreaterThan(0);
    expect(payload.calls).toBe(fake.chatRequests().length);
    if (strategy === 'SELF_CONSISTENCY') {
      // the temperatures of the imported model YAML's self_consistency_sampling
      const temperatures = fake.chatRequests().map((b) => b.temperature);
      expect(temperatures).toEqual([0.5, 0.6, 0.7]);
      expect(payload.samples).toHaveLength(temperatures.length);
    }
    if (strategy === 'PROMPT_GRAPH') {
      expect(payload.calls).toBeGreaterThan(1);
      expect(payload.skipped).toContain('Specimen type');
      const last = fake.chatRequests().at(-1)!;
      expect(JSON.stringify(last.messages)).toContain('Mitosis described');
    }
  });

  it('sends each self-consistency temperature to the endpoint', async () => {
    fake.reset();
    const result = await t.gql(EXTRACT, { i: { modelId, useCaseId, strategy: 'SELF_CONSISTENCY', text: 'Geen melanoom.', temperatures: [0.2, 0.5, 0.8] } });
    expect(result.errors).toBeUndefined();
    expect(fake.chatRequests().map((b) => b.temperature)).toEqual([0.2, 0.5, 0.8]);
  });

  it('constrained decoding and the thinking switch reach the endpoint with the sampling parameters', async () => {
    fake.reset();
    const result = await t.gql(EXTRACT, {
      i: { modelId, useCaseId, strategy: 'ZERO_SHOT', text: 'Geen melanoom.', constrained: true, thinking: false, sampling: { topP: 0.9, repetitionPenalty: 1.1, seed: 7 } },
    });
    expect(result.errors).toBeUndefined();
    const [body] = fake.chatRequests();
    expect(body!.response_format).toMatchObject({ type: 'json_schema' });
    expect(body!.chat_template_kwargs).toEqual({ enable_thinking: false });
    // model default temperature 0.6 and top_k 20, refined by the imported model YAML (top_k 50), overridden by the request
    expect(body).toMatchObject({ temperature: 0.6, top_k: 50, top_p: 0.9, repetition_penalty: 1.1, seed: 7 });
    // the fake answers a schema request with a schema-valid object: every field valid
    expect(result.data!.extract.fields.every((f: { valid: boolean }) => f.valid)).toBe(true);
  });

  it('a failing endpoint is data, not a request error', async () => {
    fake.reset();
    fake.setHandler(() => ({ status: 400, error: 'This model does not support this request' }));
    const result = await t.gql(EXTRACT, { i: { modelId, useCaseId, text: 'Melanoom.' } });
    expect(result.errors).toBeUndefined();
    expect(result.data!.extract.status).toBe('FAILED');
    expect(result.data!.extract.errorCode).toBe('HTTP_400');
    expect(result.data!.extract.error).toBe('the endpoint answered HTTP 400 (after 1 attempt)');
    // What the endpoint said is untrusted: it is not repeated to the caller.
    expect(result.data!.extract.error).not.toContain('does not support');
    expect(result.data!.extract.latencyMs).toBeGreaterThanOrEqual(0);
  });

  it('a VIEWER key cannot extract, another project cannot see the model', async () => {
    const viewer = await t.gql(`mutation($p: ID!) { createApiKey(input: { projectId: $p, name: "v", role: VIEWER }) { secret } }`, { p: projectId });
    const denied = await t.gql(EXTRACT, { i: { modelId, useCaseId, text: 'x' } }, viewer.data!.createApiKey.secret);
    expect(denied.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const other = await t.gql('mutation { createProject(input: { name: "other" }) { adminKey { secret } } }');
    const hidden = await t.gql(EXTRACT, { i: { modelId, useCaseId, text: 'x' } }, other.data!.createProject.adminKey.secret);
    expect(hidden.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });

  it('a registered embedding model scores free text; its embeddings are cached by (provider, model, text)', async () => {
    const created = await t.gql(
      `mutation($i: CreateUseCaseInput!) { createUseCase(input: $i) { useCase { id } } }`,
      { i: { projectId, name: 'free text', variables: [{ key: 'site', type: 'FREE_TEXT' }, { key: 'organs', type: 'LIST' }] } },
    );
    const freeTextUseCase = created.data!.createUseCase.useCase.id;
    const dataset = (await t.gql(`mutation($u: ID!) { createDataset(input: { useCaseId: $u, name: "d" }) { dataset { id } } }`, { u: freeTextUseCase }))
      .data!.createDataset.dataset.id;
    await t.gql(`mutation($i: ImportReportsInput!) { importReports(input: $i) { inserted } }`, {
      i: { datasetId: dataset, format: 'JSONL', content: '{"id":"A","text":"a"}\n{"id":"B","text":"b"}' },
    });
    await t.gql(`mutation($i: ImportAnnotationsInput!) { importAnnotations(input: $i) { values } }`, {
      i: { datasetId: dataset, annotatorName: 'ref', isReference: true, format: 'JSONL',
        content: '{"id":"A","site":"left upper back","organs":["liver","lung"]}\n{"id":"B","site":"right foot sole","organs":[]}' },
    });
    const run = await t.gql(`mutation($i: ImportPredictionsInput!) { importPredictions(input: $i) { run { id } } }`, {
      i: { datasetId: dataset, modelName: 'm', format: 'JSONL', layout: 'JSON_COLUMN',
        content: '{"id":"A","extracted_data":{"site":"upper back, left","organs":["liver"]}}\n{"id":"B","extracted_data":{"site":"sole of right foot","organs":[]}}' },
    });
    const embedModel = (await t.gql(`query($id: ID!) { node(id: $id) { ... on Endpoint { models { id servedName } } } }`, { id: endpointId }))
      .data!.node.models.find((m: { servedName: string }) => m.servedName === 'med-embed').id;
    fake.reset();
    const query = `query($id: ID!, $m: ID!) { node(id: $id) { ... on Run { scores(options: { embeddingModelId: $m, resamples: 10 }) {
      embedder { provider model } variables { variable { key } metric estimate { value } embedder { model } } } } } }`;
    const first = await t.gql(query, { id: run.data!.importPredictions.run.id, m: embedModel });
    expect(first.errors).toBeUndefined();
    const scores = first.data!.node.scores;
    expect(scores.embedder.model).toBe('med-embed');
    const site = scores.variables.find((v: { variable: { key: string } }) => v.variable.key === 'site');
    expect(site.metric).toBe('COSINE_SIMILARITY');
    expect(site.estimate.value).toBeGreaterThan(0);
    expect(site.estimate.value).toBeLessThan(1);
    const embeddingCalls = fake.requests.filter((r) => r.path.endsWith('/embeddings')).length;
    expect(embeddingCalls).toBeGreaterThan(0);
    const [{ n }] = (await t.dataSource.query(`SELECT count(*)::int AS n FROM embeddings WHERE model = 'med-embed'`)) as { n: number }[];
    expect(n).toBe(6);
    // Another computation (new seed) reads the stored vectors instead of calling the endpoint.
    const second = await t.gql(query.replace('resamples: 10', 'resamples: 10, seed: 5'), { id: run.data!.importPredictions.run.id, m: embedModel });
    expect(second.errors).toBeUndefined();
    expect(fake.requests.filter((r) => r.path.endsWith('/embeddings')).length).toBe(embeddingCalls);
    expect(second.data!.node.scores.variables[0].estimate.value).toBeCloseTo(site.estimate.value, 12);
  });

  it("keeps within the endpoint's maxConcurrency and bounds self-consistency samples", async () => {
    const registered = await t.gql(
      `mutation($i: RegisterEndpointInput!) { registerEndpoint(input: $i) { models { id servedName } } }`,
      { i: { projectId, name: 'narrow', baseUrl: fake.baseUrl, kind: 'VLLM', apiKey: 'sk-endpoint-secret', maxConcurrency: 2 } },
    );
    const narrowModel = registered.data!.registerEndpoint.models.find((m: { servedName: string }) => m.servedName === 'qwen3-8b').id;
    fake.reset();
    let inFlight = 0;
    let most = 0;
    fake.setHandler(async () => {
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 30));
      inFlight--;
      return { content: JSON.stringify(ANSWER) };
    });
    const result = await t.gql(EXTRACT, { i: { modelId: narrowModel, useCaseId, strategy: 'SELF_CONSISTENCY', text: 'Melanoom.', samples: 8 } });
    expect(result.errors).toBeUndefined();
    expect(fake.chatRequests()).toHaveLength(8);
    expect(most).toBe(2);
    const tooMany = await t.gql(EXTRACT, { i: { modelId: narrowModel, useCaseId, strategy: 'SELF_CONSISTENCY', text: 'Melanoom.', samples: 500 } });
    expect(tooMany.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('shows examples to the model with their keys in variable order, though stored as jsonb', async () => {
    fake.reset();
    const result = await t.gql(EXTRACT, { i: { modelId, useCaseId, strategy: 'ONE_SHOT', text: 'Melanoom.' } });
    expect(result.errors).toBeUndefined();
    const messages = fake.chatRequests()[0]!.messages as { role: string; content: string }[];
    const example = messages.find((m) => m.role === 'assistant')!.content;
    const keys = [...example.matchAll(/"([^"]+)":/g)].map((m) => m[1]);
    const order = [...Object.keys(ANSWER), 'SLNB tumour burden', 'Quality Check'];
    expect(keys.length).toBeGreaterThan(2);
    expect(keys).toEqual([...keys].sort((a, b) => order.indexOf(a!) - order.indexOf(b!)));
  });

  it('a model known from imported runs becomes the endpoint model of the same served name', async () => {
    const other = await startFakeLlm({ models: ['imported-then-served'] });
    try {
      const created = await t.gql(`mutation($i: CreateUseCaseInput!) { createUseCase(input: $i) { useCase { id } } }`, {
        i: { projectId, name: 'linking', variables: [{ key: 'x', type: 'FREE_TEXT' }] },
      });
      const dataset = (await t.gql(`mutation($u: ID!) { createDataset(input: { useCaseId: $u, name: "d" }) { dataset { id } } }`, { u: created.data!.createUseCase.useCase.id }))
        .data!.createDataset.dataset.id;
      await t.gql(`mutation($i: ImportReportsInput!) { importReports(input: $i) { inserted } }`, { i: { datasetId: dataset, format: 'JSONL', content: '{"id":"A","text":"a"}' } });
      const imported = await t.gql(`mutation($i: ImportPredictionsInput!) { importPredictions(input: $i) { run { model { id } } } }`, {
        i: { datasetId: dataset, modelName: 'imported-then-served', format: 'JSONL', layout: 'JSON_COLUMN', content: '{"id":"A","extracted_data":{"x":"y"}}' },
      });
      const importedModel = imported.data!.importPredictions.run.model.id;
      const registered = await t.gql(
        `mutation($i: RegisterEndpointInput!) { registerEndpoint(input: $i) { models { id servedName endpoint { name } } } }`,
        { i: { projectId, name: 'later', baseUrl: other.baseUrl, kind: 'VLLM' } },
      );
      expect(registered.errors).toBeUndefined();
      expect(registered.data!.registerEndpoint.models).toEqual([{ id: importedModel, servedName: 'imported-then-served', endpoint: { name: 'later' } }]);
      // a later import under that name is a run of the served model
      const again = await t.gql(`mutation($i: ImportPredictionsInput!) { importPredictions(input: $i) { run { model { id endpoint { name } } } } }`, {
        i: { datasetId: dataset, modelName: 'imported-then-served', format: 'JSONL', layout: 'JSON_COLUMN', content: '{"id":"A","extracted_data":{"x":"z"}}' },
      });
      expect(again.data!.importPredictions.run.model).toEqual({ id: importedModel, endpoint: { name: 'later' } });
    } finally {
      await other.close();
    }
  });
});
