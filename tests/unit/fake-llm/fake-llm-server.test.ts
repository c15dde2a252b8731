import { exampleFromSchema, fakeEmbedding, startFakeLlm, type FakeLlm } from '../../support/fake-llm/fake-llm-server';

async function post(fake: FakeLlm, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${fake.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

const chat = (content: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  model: 'm1',
  messages: [
    { role: 'system', content: 'sys' },
    { role: 'user', content },
  ],
  ...extra,
});

describe('fake LLM server', () => {
  let fake: FakeLlm;
  beforeAll(async () => {
    fake = await startFakeLlm({ models: ['m1', { id: 'm2', maxModelLen: 4096, root: 'org/m2' }] });
  });
  afterAll(async () => {
    await fake.close();
  });
  beforeEach(() => {
    fake.reset();
    fake.configure({ errorStyle: 'vllm', apiKey: null, rejectParams: [], reasoningField: 'reasoning_content' });
  });

  it('serves vLLM model cards', async () => {
    expect(fake.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    const res = await fetch(`${fake.baseUrl}/models`);
    const body = (await res.json()) as { object: string; data: Array<Record<string, unknown>> };
    expect(body.object).toBe('list');
    expect(body.data.map((m) => m['id'])).toEqual(['m1', 'm2']);
    expect(body.data[1]).toMatchObject({ object: 'model', owned_by: 'vllm', root: 'org/m2', parent: null, max_model_len: 4096 });
    expect(Array.isArray(body.data[0]?.['permission'])).toBe(true);
    fake.setModels(['x']);
    const again = (await (await fetch(`${fake.baseUrl}/models`)).json()) as { data: Array<{ id: string }> };
    expect(again.data.map((m) => m.id)).toEqual(['x']);
    fake.setModels(['m1', { id: 'm2', maxModelLen: 4096, root: 'org/m2' }]);
  });

  it('answers a non-streaming chat completion in vLLM shape', async () => {
    fake.enqueue({ content: '{"a":1}', reasoning: 'because', usage: { promptTokens: 11, completionTokens: 7 } });
    const res = await post(fake, '/chat/completions', chat('hello'));
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      object: 'chat.completion',
      model: 'm1',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: '{"a":1}', reasoning_content: 'because', tool_calls: [] },
          logprobs: null,
          finish_reason: 'stop',
          stop_reason: null,
        },
      ],
      usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18, prompt_tokens_details: null },
      prompt_logprobs: null,
    });
    expect(String(body['id'])).toMatch(/^chatcmpl-/);
  });

  it('sends reasoning_content null when there is no reasoning, and the newer `reasoning` field on request', async () => {
    const plain = (await (await post(fake, '/chat/completions', chat('x'))).json()) as {
      choices: Array<{ message: Record<string, unknown> }>;
    };
    expect(plain.choices[0]?.message['reasoning_content']).toBeNull();
    fake.configure({ reasoningField: 'reasoning' });
    fake.enqueue({ content: 'c', reasoning: 'r' });
    const newer = (await (await post(fake, '/chat/completions', chat('x'))).json()) as {
      choices: Array<{ message: Record<string, unknown> }>;
    };
    expect(newer.choices[0]?.message['reasoning']).toBe('r');
    expect(newer.choices[0]?.message).not.toHaveProperty('reasoning_content');
  });

  it('streams SSE chunks with reasoning, content, finish reason, usage and [DONE]', async () => {
    fake.enqueue({ content: 'the answer is 42', reasoning: 'think hard', finishReason: 'length' });
    const res = await post(fake, '/chat/completions', chat('q', { stream: true, stream_options: { include_usage: true } }));
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const text = await res.text();
    const events = text.split('\n\n').filter((e) => e.startsWith('data: ')).map((e) => e.slice(6));
    expect(events[events.length - 1]).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e) as Record<string, any>);
    expect(chunks.every((c) => c['object'] === 'chat.completion.chunk')).toBe(true);
    const reasoning = chunks.map((c) => c['choices'][0]?.delta?.reasoning_content ?? '').join('');
    const content = chunks.map((c) => c['choices'][0]?.delta?.content ?? '').join('');
    expect(reasoning).toBe('think hard');
    expect(content).toBe('the answer is 42');
    const finish = chunks.find((c) => c['choices'][0]?.finish_reason);
    expect(finish?.['choices'][0].finish_reason).toBe('length');
    const last = chunks[chunks.length - 1];
    expect(last?.['choices']).toEqual([]);
    expect(last?.['usage'].completion_tokens).toBeGreaterThan(0);
  });

  it('answers with a JSON object built from the response_format schema by default', async () => {
    const schema = {
      type: 'object',
      properties: {
        stage: { type: 'string', enum: ['I', 'II'] },
        size: { type: ['number', 'null'] },
        nested: { type: 'object', properties: { ok: { type: 'boolean' } } },
        list: { type: 'array', items: { type: 'string' } },
        text: { type: 'string' },
      },
      required: ['stage', 'size', 'nested', 'list', 'text'],
    };
    const res = await post(
      fake,
      '/chat/completions',
      chat('x', { response_format: { type: 'json_schema', json_schema: { name: 'out', schema } } }),
    );
    const body = (await res.json()) as { choices: Array<{ message: { content: string } }> };
    expect(JSON.parse(body.choices[0]?.message.content ?? '')).toEqual({
      stage: 'I',
      size: 0,
      nested: { ok: false },
      list: [],
      text: '',
    });
    const plain = (await (await post(fake, '/chat/completions', chat('x'))).json()) as {
      choices: Array<{ message: { content: string } }>;
    };
    expect(plain.choices[0]?.message.content).toBe('{}');
    expect(exampleFromSchema({ anyOf: [{ type: 'integer', minimum: 3 }, { type: 'null' }] })).toBe(3);
  });

  it('resolves queue before rules before handler, with rule arrays and times', async () => {
    fake.setHandler((_body, ctx) => ({ content: `handler ${ctx.index}` }));
    fake.addRule({ match: 'tumour', respond: [{ content: 'r1' }, { content: 'r2' }] });
    fake.addRule({ match: /^lesion/m, respond: { content: 'lesion' }, times: 1 });
    fake.addRule({ match: (body) => body.temperature === 0.9, respond: (_b, ctx) => ({ content: `hot ${ctx.index}` }) });
    fake.enqueue({ content: 'queued' });
    const contents: string[] = [];
    for (const [text, extra] of [
      ['tumour', {}],
      ['tumour', {}],
      ['tumour', {}],
      ['lesion here', {}],
      ['lesion here', {}],
      ['other', { temperature: 0.9 }],
    ] as Array<[string, Record<string, unknown>]>) {
      const body = (await (await post(fake, '/chat/completions', chat(text, extra))).json()) as {
        choices: Array<{ message: { content: string } }>;
      };
      contents.push(body.choices[0]?.message.content ?? '');
    }
    expect(contents).toEqual(['queued', 'r1', 'r2', 'lesion', 'handler 4', 'hot 5']);
  });

  it('script() dispatches on its argument', async () => {
    fake.script([{ content: 'q1' }]);
    fake.script({ match: 'abc', respond: { content: 'rule' } });
    fake.script(() => ({ content: 'fn' }));
    const read = async (text: string): Promise<string> =>
      ((await (await post(fake, '/chat/completions', chat(text))).json()) as { choices: Array<{ message: { content: string } }> })
        .choices[0]?.message.content ?? '';
    expect(await read('abc')).toBe('q1');
    expect(await read('abc')).toBe('rule');
    expect(await read('zzz')).toBe('fn');
  });

  it('records requests with headers, parsed body and timestamps', async () => {
    await post(fake, '/chat/completions', chat('x', { temperature: 0.3, top_k: 20 }), { 'X-Custom': 'yes' });
    expect(fake.requests).toHaveLength(1);
    const rec = fake.requests[0];
    expect(rec).toMatchObject({ index: 0, method: 'POST', path: '/v1/chat/completions' });
    expect(rec?.headers['x-custom']).toBe('yes');
    expect(rec?.receivedAt).toBeGreaterThan(0);
    expect(fake.chatRequests()[0]).toMatchObject({ temperature: 0.3, top_k: 20 });
  });

  it('sends vLLM error bodies: unknown model 404, scripted 429 with Retry-After, 503, bad JSON 400', async () => {
    const unknown = await post(fake, '/chat/completions', { ...chat('x'), model: 'nope' });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({
      object: 'error',
      message: 'The model `nope` does not exist.',
      type: 'NotFoundError',
      param: null,
      code: 404,
    });
    fake.enqueue({ status: 429, error: 'slow down', retryAfter: 2 }, { status: 503 }, { error: 'bad schema' });
    const limited = await post(fake, '/chat/completions', chat('x'));
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('2');
    expect(await limited.json()).toMatchObject({ message: 'slow down', code: 429 });
    expect((await post(fake, '/chat/completions', chat('x'))).status).toBe(503);
    const bad = await post(fake, '/chat/completions', chat('x'));
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ object: 'error', message: 'bad schema', type: 'BadRequestError', param: null, code: 400 });
    const broken = await fetch(`${fake.baseUrl}/chat/completions`, { method: 'POST', body: '{nope' });
    expect(broken.status).toBe(400);
    fake.configure({ errorStyle: 'openai' });
    fake.enqueue({ status: 500, error: 'boom' });
    const nested = await post(fake, '/chat/completions', chat('x'));
    expect(await nested.json()).toEqual({ error: { message: 'boom', type: 'InternalServerError', param: null, code: 500 } });
  });

  it('rejects configured parameters with 400', async () => {
    fake.configure({ rejectParams: ['response_format'] });
    const res = await post(fake, '/chat/completions', chat('x', { response_format: { type: 'json_object' } }));
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toContain('response_format');
  });

  it('checks the API key when configured', async () => {
    fake.configure({ apiKey: 'sekret' });
    expect((await fetch(`${fake.baseUrl}/models`)).status).toBe(401);
    expect((await fetch(`${fake.baseUrl}/models`, { headers: { authorization: 'Bearer sekret' } })).status).toBe(200);
  });

  it('drops the connection when asked', async () => {
    fake.enqueue({ dropConnection: true });
    await expect(post(fake, '/chat/completions', chat('x'))).rejects.toThrow();
  });

  it('returns deterministic, order-preserving embeddings as floats or base64', async () => {
    const texts = ['melanoma of the skin', 'melanoma skin', 'kidney cyst'];
    const res = await post(fake, '/embeddings', { model: 'm1', input: texts, encoding_format: 'float' });
    const body = (await res.json()) as { object: string; data: Array<{ index: number; object: string; embedding: number[] }> };
    expect(body.object).toBe('list');
    expect(body.data.map((d) => d.index)).toEqual([0, 1, 2]);
    body.data.forEach((d, i) => expect(d.embedding).toEqual(fakeEmbedding(texts[i] ?? '', 64)));
    const b64 = (await (await post(fake, '/embeddings', { model: 'm1', input: 'kidney cyst', encoding_format: 'base64' })).json()) as {
      data: Array<{ embedding: string }>;
    };
    const buf = Buffer.from(b64.data[0]?.embedding ?? '', 'base64');
    const decoded = Array.from(new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4));
    decoded.forEach((v, i) => expect(v).toBeCloseTo(fakeEmbedding('kidney cyst')[i] ?? NaN, 6));
  });

  it('gives similar texts closer embeddings than unrelated ones', () => {
    const dot = (a: number[], b: number[]): number => a.reduce((s, v, i) => s + v * (b[i] ?? 0), 0);
    const a = fakeEmbedding('superficial spreading melanoma, Breslow 1.2 mm');
    const b = fakeEmbedding('superficial spreading melanoma, Breslow 1.3 mm');
    const c = fakeEmbedding('renal cell carcinoma clear cell type');
    expect(dot(a, b)).toBeGreaterThan(dot(a, c));
    expect(dot(a, a)).toBeCloseTo(1, 10);
  });

  it('lets tests script embedding failures', async () => {
    fake.scriptEmbeddings((_inputs, ctx) => (ctx.index === 0 ? { status: 503 } : undefined));
    expect((await post(fake, '/embeddings', { model: 'm1', input: ['a'] })).status).toBe(503);
    expect((await post(fake, '/embeddings', { model: 'm1', input: ['a'] })).status).toBe(200);
  });

  it('serves /health and FastAPI-style 404/405', async () => {
    expect((await fetch(`http://127.0.0.1:${fake.port}/health`)).status).toBe(200);
    const missing = await fetch(`${fake.baseUrl}/nothing`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ detail: 'Not Found' });
    expect((await fetch(`${fake.baseUrl}/chat/completions`)).status).toBe(405);
  });
});
