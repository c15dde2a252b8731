import { startFakeLlm, type FakeLlm } from '../../support/fake-llm/fake-llm-server';
import { createChatClient } from '../../../src/llm/chat-client';
import { listModels, measureHealth, probeJsonSchema, probeThinkingToggle } from '../../../src/llm/probe';
import type { EndpointKind } from '../../../src/llm/types';

describe('endpoint probes', () => {
  let fake: FakeLlm;
  beforeAll(async () => {
    fake = await startFakeLlm({ models: [{ id: 'qwen3-8b', maxModelLen: 40960, root: 'Qwen/Qwen3-8B' }, 'medgemma'] });
  });
  afterAll(async () => {
    await fake.close();
  });
  beforeEach(() => {
    fake.reset();
    fake.configure({ rejectParams: [], apiKey: null });
  });

  const chat = (kind: EndpointKind = 'VLLM') =>
    createChatClient({ baseUrl: fake.baseUrl, kind, timeoutMs: 3000, retry: { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1 } });

  it('lists models with max_model_len and root', async () => {
    const { models, warnings } = await listModels(fake.baseUrl, null, 3000);
    expect(warnings).toEqual([]);
    expect(models).toEqual([
      { id: 'qwen3-8b', maxModelLen: 40960, ownedBy: 'vllm', root: 'Qwen/Qwen3-8B' },
      { id: 'medgemma', maxModelLen: 32768, ownedBy: 'vllm', root: 'medgemma' },
    ]);
    expect(fake.requests[0]).toMatchObject({ method: 'GET', path: '/v1/models' });
  });

  it('reports null max_model_len when the server does not send it', async () => {
    fake.setModels([{ id: 'llama', maxModelLen: null }]);
    expect((await listModels(`${fake.baseUrl}/`, undefined, 3000)).models[0]).toMatchObject({ id: 'llama', maxModelLen: null });
    fake.setModels([{ id: 'qwen3-8b', maxModelLen: 40960, root: 'Qwen/Qwen3-8B' }, 'medgemma']);
  });

  it('throws a coded error on a wrong key', async () => {
    fake.configure({ apiKey: 'k' });
    await expect(listModels(fake.baseUrl, 'wrong', 3000)).rejects.toMatchObject({ code: 'HTTP_ERROR', status: 401 });
    expect((await listModels(fake.baseUrl, 'k', 3000)).models).toHaveLength(2);
  });

  it('measures health: latency, timestamp, models; errors as data', async () => {
    const at = new Date('2026-01-02T03:04:05Z');
    const healthy = await measureHealth(fake.baseUrl, null, 3000, { now: () => at });
    expect(healthy).toMatchObject({ ok: true, error: null, errorCode: null, checkedAt: at });
    expect(healthy.latencyMs).toBeGreaterThanOrEqual(0);
    expect(healthy.models.map((m) => m.id)).toEqual(['qwen3-8b', 'medgemma']);

    const gone = await startFakeLlm();
    const url = gone.baseUrl;
    await gone.close();
    const down = await measureHealth(url, null, 2000);
    expect(down).toMatchObject({ ok: false, errorCode: 'CONNECTION', models: [] });
    expect(down.error).toEqual(expect.any(String));
  });

  it('finds json_schema support when the server answers JSON', async () => {
    expect(await probeJsonSchema(chat(), 'qwen3-8b')).toEqual({ supported: true, detail: null });
    const sent = fake.chatRequests()[0];
    expect(sent?.['response_format']).toMatchObject({ type: 'json_schema', json_schema: { name: 'probe' } });
  });

  it('finds json_schema unsupported on a 400 or a prose answer, unknown on a 5xx', async () => {
    fake.configure({ rejectParams: ['response_format'] });
    expect(await probeJsonSchema(chat(), 'qwen3-8b')).toMatchObject({ supported: false });
    fake.configure({ rejectParams: [] });
    fake.enqueue({ content: 'Sure! Here is the JSON you asked for.' });
    expect(await probeJsonSchema(chat(), 'qwen3-8b')).toMatchObject({ supported: false });
    fake.enqueue({ status: 503 });
    expect(await probeJsonSchema(chat(), 'qwen3-8b')).toMatchObject({ supported: null });
  });

  it('finds the thinking toggle accepted, refused, or ignored', async () => {
    expect(await probeThinkingToggle(chat(), 'qwen3-8b')).toEqual({ supported: true, detail: null });
    expect(fake.chatRequests()[0]?.['chat_template_kwargs']).toEqual({ enable_thinking: false });

    fake.configure({ rejectParams: ['chat_template_kwargs'] });
    expect(await probeThinkingToggle(chat(), 'qwen3-8b')).toMatchObject({ supported: false });

    fake.configure({ rejectParams: [] });
    fake.enqueue({ content: 'OK', reasoning: 'I think anyway' });
    expect(await probeThinkingToggle(chat(), 'qwen3-8b')).toMatchObject({ supported: false });
  });

  it('sends Ollama its own thinking switch', async () => {
    await probeThinkingToggle(chat('OLLAMA'), 'qwen3-8b');
    expect(fake.chatRequests()[0]).toMatchObject({ reasoning_effort: 'none' });
  });
});
