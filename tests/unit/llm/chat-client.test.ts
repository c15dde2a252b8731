import { startFakeLlm, type FakeLlm } from '../../support/fake-llm/fake-llm-server';
import { buildChatBody, createChatClient, type ChatClientOptions } from '../../../src/llm/chat-client';
import { LlmError } from '../../../src/llm/llm-error';
import type { ChatRequest, EndpointKind, RetryEvent } from '../../../src/llm/types';

const MODEL = 'qwen3-8b';
const FAST_RETRY = { maxRetries: 2, baseDelayMs: 5, maxDelayMs: 20 };

const request = (extra: Partial<ChatRequest> = {}): ChatRequest => ({
  model: MODEL,
  messages: [
    { role: 'system', content: 'You extract data.' },
    { role: 'user', content: 'Report: melanoma, Breslow 1.2 mm.' },
  ],
  ...extra,
});

async function rejection(promise: Promise<unknown>): Promise<LlmError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof LlmError) return err;
    throw err;
  }
  throw new Error('expected a rejection');
}

describe('createChatClient against the fake vLLM server', () => {
  let fake: FakeLlm;
  const client = (extra: Partial<ChatClientOptions> = {}) =>
    createChatClient({ baseUrl: fake.baseUrl, kind: 'VLLM', timeoutMs: 5000, retry: FAST_RETRY, ...extra });

  beforeAll(async () => {
    fake = await startFakeLlm({ models: [MODEL] });
  });
  afterAll(async () => {
    await fake.close();
  });
  beforeEach(() => {
    fake.reset();
    fake.configure({ apiKey: null, reasoningField: 'reasoning_content', errorStyle: 'vllm' });
  });

  it('parses content, reasoning_content, finish reason and usage', async () => {
    fake.enqueue({ content: '{"stage":"II"}', reasoning: 'Breslow > 1 mm', usage: { promptTokens: 120, completionTokens: 30 } });
    const out = await client()(request());
    expect(out).toMatchObject({
      content: '{"stage":"II"}',
      reasoning: 'Breslow > 1 mm',
      finishReason: 'stop',
      promptTokens: 120,
      completionTokens: 30,
      attempts: 1,
    });
    expect(out.latencyMs).toBeGreaterThanOrEqual(0);
    expect(fake.requests[0]?.path).toBe('/v1/chat/completions');
  });

  it('reads the newer `reasoning` field and reports null when there is none', async () => {
    fake.configure({ reasoningField: 'reasoning' });
    fake.enqueue({ content: 'a', reasoning: 'thought' }, { content: 'b' });
    const chat = client();
    expect((await chat(request())).reasoning).toBe('thought');
    expect((await chat(request())).reasoning).toBeNull();
  });

  it('passes finish_reason length through', async () => {
    fake.enqueue({ content: '{"stage":', finishReason: 'length' });
    const out = await client()(request({ maxTokens: 5 }));
    expect(out.finishReason).toBe('length');
    expect(out.content).toBe('{"stage":');
  });

  it('sends the sampling parameters and the vLLM extras in the body', async () => {
    const responseFormat = {
      type: 'json_schema' as const,
      json_schema: { name: 'report', schema: { type: 'object', properties: { stage: { type: 'string' } } }, strict: true },
    };
    await client()(
      request({
        temperature: 0.7,
        topP: 0.9,
        topK: 20,
        maxTokens: 256,
        seed: 42,
        frequencyPenalty: 0.1,
        presencePenalty: 0.2,
        repetitionPenalty: 1.05,
        responseFormat,
        thinking: false,
      }),
    );
    const sent = fake.chatRequests()[0];
    expect(sent).toMatchObject({
      model: MODEL,
      temperature: 0.7,
      top_p: 0.9,
      top_k: 20,
      max_tokens: 256,
      seed: 42,
      frequency_penalty: 0.1,
      presence_penalty: 0.2,
      repetition_penalty: 1.05,
      response_format: responseFormat,
      chat_template_kwargs: { enable_thinking: false },
      stream: false,
    });
    expect(sent?.['messages']).toEqual(request().messages);
  });

  it('omits parameters that were not set, leaving server defaults', async () => {
    await client()(request());
    const sent = fake.chatRequests()[0] ?? {};
    for (const key of ['temperature', 'top_k', 'seed', 'repetition_penalty', 'chat_template_kwargs', 'reasoning_effort', 'response_format']) {
      expect(sent).not.toHaveProperty(key);
    }
  });

  it.each<[EndpointKind, Record<string, unknown>, string[]]>([
    ['VLLM', { top_k: 5, repetition_penalty: 1.1, chat_template_kwargs: { enable_thinking: true } }, ['reasoning_effort']],
    ['SGLANG', { top_k: 5, repetition_penalty: 1.1, chat_template_kwargs: { enable_thinking: true } }, ['reasoning_effort']],
    ['OTHER', { top_k: 5, repetition_penalty: 1.1, chat_template_kwargs: { enable_thinking: true } }, ['reasoning_effort']],
    // Ollama's OpenAI layer ignores `think`; it honours reasoning_effort.
    ['OLLAMA', { top_k: 5, reasoning_effort: 'medium' }, ['chat_template_kwargs', 'think']],
    ['LLAMA_CPP', { top_k: 5, repeat_penalty: 1.1, chat_template_kwargs: { enable_thinking: true } }, ['repetition_penalty']],
    ['OPENAI', { temperature: 0.3 }, ['top_k', 'repetition_penalty', 'chat_template_kwargs', 'reasoning_effort']],
  ])('spells extras for %s', async (kind, present, absent) => {
    await client({ kind })(request({ temperature: 0.3, topK: 5, repetitionPenalty: 1.1, thinking: true }));
    const sent = fake.chatRequests()[0] ?? {};
    expect(sent).toMatchObject(present);
    for (const key of absent) expect(sent).not.toHaveProperty(key);
  });

  it('records temperature per request, as self-consistency needs', async () => {
    const chat = client();
    await Promise.all([0.1, 0.5, 0.9].map((temperature) => chat(request({ temperature }))));
    expect(fake.chatRequests().map((b) => b.temperature).sort()).toEqual([0.1, 0.5, 0.9]);
  });

  it('sends a dummy bearer key when none is configured, and the real one otherwise', async () => {
    await client({ apiKey: null })(request());
    expect(fake.requests[0]?.headers['authorization']).toBe('Bearer EMPTY');
    fake.configure({ apiKey: 'sekret' });
    await client({ apiKey: 'sekret' })(request());
    expect(fake.requests[1]?.headers['authorization']).toBe('Bearer sekret');
  });

  it('fails with HTTP_ERROR 401 on a wrong key, without retrying', async () => {
    fake.configure({ apiKey: 'sekret' });
    const err = await rejection(client({ apiKey: 'wrong' })(request()));
    expect(err).toMatchObject({ code: 'HTTP_ERROR', status: 401, attempts: 1 });
    expect(fake.requests).toHaveLength(1);
  });

  it('retries a 503 and succeeds on the second attempt', async () => {
    fake.enqueue({ status: 503, error: 'overloaded' }, { content: '{"ok":true}' });
    const events: RetryEvent[] = [];
    const out = await client({ onRetry: (e) => events.push(e) })(request());
    expect(out.attempts).toBe(2);
    expect(out.content).toBe('{"ok":true}');
    expect(fake.chatRequests()).toHaveLength(2);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ attempt: 1, fromRetryAfter: false });
    expect(events[0]?.error).toMatchObject({ code: 'HTTP_ERROR', status: 503 });
    expect(events[0]?.delayMs).toBeLessThanOrEqual(FAST_RETRY.baseDelayMs);
  });

  it('retries 500, 502 and 504 too', async () => {
    fake.enqueue({ status: 500 }, { status: 502 }, { status: 504 }, { content: 'done' });
    const out = await client({ retry: { ...FAST_RETRY, maxRetries: 3 } })(request());
    expect(out).toMatchObject({ content: 'done', attempts: 4 });
  });

  it('gives up after maxRetries with the last error and the attempt count', async () => {
    fake.enqueue({ status: 503 }, { status: 503 }, { status: 503 }, { content: 'too late' });
    const err = await rejection(client()(request()));
    expect(err).toMatchObject({ code: 'HTTP_ERROR', status: 503, attempts: 3 });
    expect(fake.chatRequests()).toHaveLength(3);
  });

  it('honours Retry-After on 429 (the gap between attempts is at least the requested wait)', async () => {
    fake.enqueue({ status: 429, error: 'rate limited', retryAfter: 1 }, { content: 'ok' });
    const events: RetryEvent[] = [];
    // base delay far below Retry-After, so only the header can explain a long gap
    const out = await client({ retry: { maxRetries: 2, baseDelayMs: 1, maxDelayMs: 2 }, onRetry: (e) => events.push(e) })(
      request(),
    );
    expect(out.attempts).toBe(2);
    expect(events[0]).toMatchObject({ delayMs: 1000, fromRetryAfter: true });
    expect(events[0]?.error).toMatchObject({ code: 'RATE_LIMITED', status: 429, retryAfterMs: 1000 });
    const [first, second] = fake.requests;
    expect((second?.receivedAt ?? 0) - (first?.receivedAt ?? 0)).toBeGreaterThanOrEqual(995);
  });

  it('reports RATE_LIMITED when 429 persists', async () => {
    fake.setHandler(() => ({ status: 429, error: 'slow down' }));
    const err = await rejection(client({ retry: { maxRetries: 1, baseDelayMs: 1, maxDelayMs: 2 } })(request()));
    expect(err).toMatchObject({ code: 'RATE_LIMITED', status: 429, attempts: 2 });
  });

  it.each([400, 404, 422])('does not retry a %i', async (status) => {
    fake.enqueue({ status, error: `refused with ${status}` }, { content: 'never' });
    const err = await rejection(client()(request()));
    expect(err).toMatchObject({ code: 'HTTP_ERROR', status, attempts: 1, message: `HTTP ${status} from the endpoint` });
    expect(fake.chatRequests()).toHaveLength(1);
  });

  it("keeps the status of an unknown model's 404, not the server's text (flat and nested error bodies)", async () => {
    const err = await rejection(client()(request({ model: 'nope' })));
    expect(err).toMatchObject({ code: 'HTTP_ERROR', status: 404, attempts: 1, message: 'HTTP 404 from the endpoint' });
    expect(err.message).not.toContain('nope');
    fake.configure({ errorStyle: 'openai' });
    const nested = await rejection(client()(request({ model: 'nope' })));
    expect(nested).toMatchObject({ status: 404, message: 'HTTP 404 from the endpoint' });
  });

  it('turns a slow answer into TIMEOUT, retrying it', async () => {
    fake.setHandler(() => ({ content: 'late', delayMs: 1500 }));
    const err = await rejection(
      client({ timeoutMs: 100, retry: { maxRetries: 1, baseDelayMs: 1, maxDelayMs: 2 } })(request()),
    );
    expect(err).toMatchObject({ code: 'TIMEOUT', attempts: 2 });
    expect(fake.chatRequests()).toHaveLength(2);
  });

  it('recovers when a retry after a timeout is fast', async () => {
    fake.enqueue({ content: 'late', delayMs: 1500 }, { content: 'fast' });
    const out = await client({ timeoutMs: 100 })(request());
    expect(out).toMatchObject({ content: 'fast', attempts: 2 });
  });

  it('retries dropped connections and reports CONNECTION when they persist', async () => {
    fake.enqueue({ dropConnection: true }, { content: 'back' });
    expect(await client()(request())).toMatchObject({ content: 'back', attempts: 2 });
    fake.setHandler(() => ({ dropConnection: true }));
    const err = await rejection(client({ retry: { maxRetries: 1, baseDelayMs: 1, maxDelayMs: 2 } })(request()));
    expect(err).toMatchObject({ code: 'CONNECTION', attempts: 2 });
  });

  it('reports CONNECTION for a closed port', async () => {
    const gone = await startFakeLlm();
    const baseUrl = gone.baseUrl;
    await gone.close();
    const err = await rejection(
      createChatClient({ baseUrl, kind: 'VLLM', timeoutMs: 2000, retry: { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1 } })(
        request(),
      ),
    );
    expect(err).toMatchObject({ code: 'CONNECTION', attempts: 1 });
  });

  it('reports BAD_RESPONSE for a body without choices or with a non-JSON 200, after retrying it', async () => {
    fake.enqueue({ rawBody: '{"object":"chat.completion","choices":[]}' }, { rawBody: 'this is not json' });
    const once = client({ retry: { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1 } });
    expect(await rejection(once(request()))).toMatchObject({ code: 'BAD_RESPONSE', attempts: 1 });
    expect(await rejection(once(request()))).toMatchObject({ code: 'BAD_RESPONSE', attempts: 1 });
    expect(fake.chatRequests()).toHaveLength(2);

    // A garbage 200 is transient (a proxy's page, a cut connection): the next attempt may answer.
    fake.clearRequests();
    fake.enqueue({ rawBody: 'this is not json' }, { content: '{"a": 1}' });
    const retrying = client({ retry: { maxRetries: 2, baseDelayMs: 1, maxDelayMs: 1 } });
    expect(await retrying(request())).toMatchObject({ content: '{"a": 1}', attempts: 2 });
    expect(fake.chatRequests()).toHaveLength(2);
  });

  it('treats null content (all budget spent on reasoning) as empty', async () => {
    fake.enqueue({
      rawBody: JSON.stringify({
        id: 'chatcmpl-1',
        object: 'chat.completion',
        choices: [{ index: 0, message: { role: 'assistant', content: null, reasoning_content: 'long…' }, finish_reason: 'length' }],
        usage: { prompt_tokens: 3, completion_tokens: 9, total_tokens: 12 },
      }),
    });
    expect(await client()(request())).toMatchObject({ content: '', reasoning: 'long…', finishReason: 'length', completionTokens: 9 });
  });

  it("rethrows the caller's abort without retrying", async () => {
    fake.setHandler(() => ({ content: 'slow', delayMs: 1000 }));
    const controller = new AbortController();
    const pending = client()(request({ signal: controller.signal }));
    setTimeout(() => controller.abort(), 50);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    expect(fake.chatRequests()).toHaveLength(1);
  });

  it('rejects a non-positive timeout at construction', () => {
    expect(() => createChatClient({ baseUrl: fake.baseUrl, kind: 'VLLM', timeoutMs: 0 })).toThrow(RangeError);
  });
});

describe('buildChatBody', () => {
  it('is a pure function of request and kind', () => {
    const body = buildChatBody(request({ thinking: false, topK: 3 }), 'SGLANG');
    expect(body).toEqual({
      model: MODEL,
      messages: request().messages,
      stream: false,
      top_k: 3,
      chat_template_kwargs: { enable_thinking: false },
    });
  });
});

describe('createChatClient with stream: true', () => {
  let fake: FakeLlm;
  const client = (extra: Partial<ChatClientOptions> = {}) =>
    createChatClient({ baseUrl: fake.baseUrl, kind: 'VLLM', timeoutMs: 5000, retry: FAST_RETRY, stream: true, ...extra });

  beforeAll(async () => {
    fake = await startFakeLlm({ models: [MODEL] });
  });
  afterAll(async () => {
    await fake.close();
  });
  beforeEach(() => {
    fake.reset();
    fake.configure({ reasoningField: 'reasoning_content' });
  });

  it('assembles content, reasoning, finish reason and usage from SSE chunks', async () => {
    fake.enqueue({
      content: '{"stage": "II", "site": "back"}',
      reasoning: 'Breslow 1.2 mm means pT2',
      finishReason: 'length',
      usage: { promptTokens: 50, completionTokens: 12 },
    });
    const out = await client()(request({ temperature: 0.2, topK: 4 }));
    expect(out).toMatchObject({
      content: '{"stage": "II", "site": "back"}',
      reasoning: 'Breslow 1.2 mm means pT2',
      finishReason: 'length',
      promptTokens: 50,
      completionTokens: 12,
      attempts: 1,
    });
    expect(fake.chatRequests()[0]).toMatchObject({ stream: true, stream_options: { include_usage: true }, temperature: 0.2, top_k: 4 });
  });

  it('reads streamed `reasoning` deltas', async () => {
    fake.configure({ reasoningField: 'reasoning' });
    fake.enqueue({ content: 'x', reasoning: 'r1 r2' });
    expect((await client()(request())).reasoning).toBe('r1 r2');
  });

  it('retries a 503 before the stream starts', async () => {
    fake.enqueue({ status: 503 }, { content: 'ok' });
    expect(await client()(request())).toMatchObject({ content: 'ok', attempts: 2 });
  });

  it('retries a stream cut mid-answer', async () => {
    fake.enqueue({ content: 'one two three four', dropAfterChunks: 2 }, { content: 'whole' });
    expect(await client()(request())).toMatchObject({ content: 'whole', attempts: 2 });
  });

  it('times out a stream that trickles past the deadline, headers notwithstanding', async () => {
    fake.setHandler(() => ({ content: 'a b c d e f g h i j', chunkDelayMs: 60 }));
    const err = await rejection(client({ timeoutMs: 150, retry: { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1 } })(request()));
    expect(err).toMatchObject({ code: 'TIMEOUT', attempts: 1 });
  });

  it("rethrows the caller's abort mid-stream", async () => {
    fake.setHandler(() => ({ content: 'a b c d e f g h i j', chunkDelayMs: 40 }));
    const controller = new AbortController();
    const pending = client()(request({ signal: controller.signal }));
    setTimeout(() => controller.abort(), 80);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    expect(fake.chatRequests()).toHaveLength(1);
  });
});
