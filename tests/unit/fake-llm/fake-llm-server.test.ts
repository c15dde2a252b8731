import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
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

const contentOf = async (res: Response): Promise<string> =>
  ((await res.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]?.message.content ?? '';

async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Samples keyed by `name{labels}`; fails on any line that is neither a comment nor a sample. */
function parseMetrics(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('# HELP ') || line.startsWith('# TYPE ')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not a Prometheus sample: ${line}`);
    samples.set(`${match[1]}${match[2] ?? ''}`, Number(match[3]));
  }
  return samples;
}

async function scrape(fake: FakeLlm): Promise<Map<string, number>> {
  return parseMetrics(await (await fetch(`http://127.0.0.1:${fake.port}/metrics`)).text());
}

const series = (metric: string, model: string, extra = ''): string => `${metric}{engine="0",${extra}model_name="${model}"}`;

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
    fake.configure({
      errorStyle: 'vllm',
      apiKey: null,
      rejectParams: [],
      reasoningField: 'reasoning_content',
      recordRequests: true,
      maxRunning: 256,
      metrics: true,
      answerFromReport: false,
      faults: null,
    });
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

  it('counts chat requests in flight: peak of N parallel delayed requests is N, streams count until their end', async () => {
    const n = 6;
    fake.script(() => ({ content: 'x', delayMs: 150 }));
    const pending = Array.from({ length: n }, () => post(fake, '/chat/completions', chat('x')).then((r) => r.text()));
    await waitFor(() => fake.stats().inFlight === n);
    await Promise.all(pending);
    await waitFor(() => fake.stats().inFlight === 0);
    expect(fake.stats()).toEqual({ chatRequests: n, inFlight: 0, peakInFlight: n });
    expect(await (await fetch(`http://127.0.0.1:${fake.port}/_fake/stats`)).json()).toEqual(fake.stats());

    fake.resetStats();
    expect(fake.stats()).toEqual({ chatRequests: 0, inFlight: 0, peakInFlight: 0 });
    fake.script(() => ({ content: 'one two three', chunkDelayMs: 40 }));
    const res = await post(fake, '/chat/completions', chat('x', { stream: true }));
    if (!res.body) throw new Error('streaming response without a body');
    const reader = res.body.getReader();
    await reader.read();
    expect(fake.stats().inFlight).toBe(1);
    while (!(await reader.read()).done);
    await waitFor(() => fake.stats().inFlight === 0);
    expect(fake.stats()).toEqual({ chatRequests: 1, inFlight: 0, peakInFlight: 1 });

    const reset = await fetch(`http://127.0.0.1:${fake.port}/_fake/reset-stats`, { method: 'POST' });
    expect(reset.status).toBe(200);
    expect(await reset.json()).toEqual({ chatRequests: 0, inFlight: 0, peakInFlight: 0 });
  });

  it('serves vLLM Prometheus metrics whose counters follow the traffic', async () => {
    const first = await fetch(`http://127.0.0.1:${fake.port}/metrics`);
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = await first.text();
    for (const [metric, type] of [
      ['vllm:num_requests_running', 'gauge'],
      ['vllm:num_requests_waiting', 'gauge'],
      ['vllm:gpu_cache_usage_perc', 'gauge'],
      ['vllm:kv_cache_usage_perc', 'gauge'],
      ['vllm:prefix_cache_queries_total', 'counter'],
      ['vllm:prefix_cache_hits_total', 'counter'],
      ['vllm:prompt_tokens_total', 'counter'],
      ['vllm:generation_tokens_total', 'counter'],
      ['vllm:request_success_total', 'counter'],
    ]) {
      expect(text).toMatch(new RegExp(`^# HELP ${metric} \\S`, 'm'));
      expect(text).toContain(`# TYPE ${metric} ${type}\n`);
    }
    const before = parseMetrics(text);
    expect(before.get(series('vllm:num_requests_running', 'm1'))).toBe(0);
    expect(before.get(series('vllm:kv_cache_usage_perc', 'm2'))).toBe(0);
    expect(before.get(series('vllm:request_success_total', 'm2', 'finished_reason="abort",'))).toBe(0);

    fake.enqueue(
      { content: 'a', usage: { promptTokens: 10, completionTokens: 3 } },
      { content: 'b', usage: { promptTokens: 10, completionTokens: 3 }, finishReason: 'length' },
      { status: 500 },
    );
    for (let i = 0; i < 3; i += 1) await (await post(fake, '/chat/completions', chat('hello'))).text();
    const after = await scrape(fake);
    const grew = (key: string): number => (after.get(key) ?? NaN) - (before.get(key) ?? NaN);
    expect(grew(series('vllm:prompt_tokens_total', 'm1'))).toBe(20);
    expect(grew(series('vllm:generation_tokens_total', 'm1'))).toBe(6);
    expect(grew(series('vllm:request_success_total', 'm1', 'finished_reason="stop",'))).toBe(1);
    expect(grew(series('vllm:request_success_total', 'm1', 'finished_reason="length",'))).toBe(1);
    // 'sys\nhello' is 9 characters: 3 estimated tokens, queried by all three requests.
    expect(grew(series('vllm:prefix_cache_queries_total', 'm1'))).toBe(9);
    expect(grew(series('vllm:prompt_tokens_total', 'm2'))).toBe(0);

    fake.configure({ maxRunning: 2 });
    fake.script(() => ({ content: 'x', delayMs: 200 }));
    const pending = Array.from({ length: 3 }, () => post(fake, '/chat/completions', chat('x')).then((r) => r.text()));
    let busy = new Map<string, number>();
    await waitFor(async () => {
      busy = await scrape(fake);
      return busy.get(series('vllm:num_requests_waiting', 'm1')) === 1;
    });
    expect(busy.get(series('vllm:num_requests_running', 'm1'))).toBe(2);
    expect(busy.get(series('vllm:kv_cache_usage_perc', 'm1'))).toBe(1);
    expect(busy.get(series('vllm:gpu_cache_usage_perc', 'm1'))).toBe(1);
    expect(busy.get(series('vllm:num_requests_running', 'm2'))).toBe(0);
    await Promise.all(pending);
    await waitFor(async () => (await scrape(fake)).get(series('vllm:num_requests_running', 'm1')) === 0);

    fake.enqueue({ content: 'big', usage: { promptTokens: 12_345_678, completionTokens: 1 } });
    await (await post(fake, '/chat/completions', chat('x', { model: 'm2' }))).text();
    expect(await (await fetch(`http://127.0.0.1:${fake.port}/metrics`)).text()).toContain(
      `${series('vllm:prompt_tokens_total', 'm2')} 1.2345678e+07\n`,
    );

    fake.configure({ apiKey: 'sekret' });
    expect((await fetch(`http://127.0.0.1:${fake.port}/metrics`)).status).toBe(200);
    fake.configure({ apiKey: null, metrics: false });
    const off = await fetch(`http://127.0.0.1:${fake.port}/metrics`);
    expect(off.status).toBe(404);
    expect(await off.json()).toEqual({ detail: 'Not Found' });
  });

  it('counts prefix cache hits for prompts sharing a long system prompt, none for the first', async () => {
    const system = 'You extract structured fields from pathology reports. '.repeat(20);
    const ask = (user: string, model = 'm1'): Promise<string> =>
      post(fake, '/chat/completions', {
        model,
        messages: [
          { role: 'system', content: system },
          { role: 'user', content: user },
        ],
      }).then((r) => r.text());
    const hits = async (model = 'm1'): Promise<number> =>
      (await scrape(fake)).get(series('vllm:prefix_cache_hits_total', model)) ?? NaN;
    const queries = async (): Promise<number> =>
      (await scrape(fake)).get(series('vllm:prefix_cache_queries_total', 'm1')) ?? NaN;

    await ask('report one: melanoma');
    expect(await hits()).toBe(0);
    expect(await queries()).toBe(Math.ceil(`${system}\nreport one: melanoma`.length / 4));
    await ask('report two: naevus');
    const shared = `${system}\nreport `.length;
    expect(await hits()).toBe(Math.floor(shared / 4));
    expect(await hits()).toBeGreaterThan(0);
    // Each model is its own engine with its own cache.
    await ask('report one: melanoma', 'm2');
    expect(await hits('m2')).toBe(0);
    fake.reset();
    await ask('report one: melanoma');
    expect(await hits()).toBe(0);
  });

  it("answers from the ANSWER: marker of the report's user message in answer-from-report mode", async () => {
    fake.configure({ answerFromReport: true });
    const report = 'Pathology report\nDiagnosis: melanoma\nANSWER: {"diagnosis":"melanoma"}  \nEnd of report';
    expect(await contentOf(await post(fake, '/chat/completions', chat(report)))).toBe('{"diagnosis":"melanoma"}');
    expect(await contentOf(await post(fake, '/chat/completions', chat('x\nANSWER: not json')))).toBe('not json');
    // The prompt's final instruction follows the report: the last user message with a marker is the report's.
    const reportThenFinal = {
      model: 'm1',
      messages: [
        { role: 'system', content: 'Reply as ANSWER: system' },
        { role: 'user', content: 'ANSWER: example input' },
        { role: 'assistant', content: '{}' },
        { role: 'user', content: 'the report\nANSWER: from the report' },
        { role: 'user', content: 'Answer with the JSON only.' },
      ],
    };
    expect(await contentOf(await post(fake, '/chat/completions', reportThenFinal))).toBe('from the report');
    const systemOnly = { model: 'm1', messages: [{ role: 'system', content: 'ANSWER: system' }, { role: 'user', content: 'no marker here' }] };
    expect(await contentOf(await post(fake, '/chat/completions', systemOnly))).toBe('{}');
    fake.enqueue({ content: 'queued' });
    expect(await contentOf(await post(fake, '/chat/completions', chat(report)))).toBe('queued');
    fake.configure({ answerFromReport: false });
    expect(await contentOf(await post(fake, '/chat/completions', chat(report)))).toBe('{}');
  });

  it('fails and stalls on FAIL: and STALL: markers', async () => {
    fake.configure({ answerFromReport: true });
    const failed = await post(fake, '/chat/completions', chat('Report\nFAIL: 503'));
    expect(failed.status).toBe(503);
    expect(await failed.json()).toEqual({
      object: 'error',
      message: 'ServiceUnavailable',
      type: 'ServiceUnavailable',
      param: null,
      code: 503,
    });
    expect((await post(fake, '/chat/completions', chat('FAIL: 500'))).status).toBe(500);

    let started = performance.now();
    const stalled = await post(fake, '/chat/completions', chat('Report\nSTALL: 150\nANSWER: {"ok":true}'));
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    expect(await contentOf(stalled)).toBe('{"ok":true}');
    started = performance.now();
    const stalledFailure = await post(fake, '/chat/completions', chat('STALL: 100\nFAIL: 429'));
    expect(performance.now() - started).toBeGreaterThanOrEqual(90);
    expect(stalledFailure.status).toBe(429);
    const schema = { type: 'object', properties: { stage: { type: 'string', enum: ['I', 'II'] } } };
    const stalledDefault = await post(
      fake,
      '/chat/completions',
      chat('STALL: 10', { response_format: { type: 'json_schema', json_schema: { name: 'out', schema } } }),
    );
    expect(await contentOf(stalledDefault)).toBe('{"stage":"I"}');
  });

  it('injects a seeded fault mix: 5xx, 429 with Retry-After, stalls and garbage 200s in their proportions', async () => {
    fake.configure({
      answerFromReport: true,
      recordRequests: false,
      faults: { serverError: 0.2, rateLimited: 0.05, stall: 0.05, garbage: 0.1, retryAfterSeconds: 2, stallMs: 20, seed: 7 },
    });
    const classify = async (): Promise<string[]> => {
      const seen: string[] = [];
      for (let i = 0; i < 400; i += 1) {
        const res = await post(fake, '/chat/completions', chat(`Report ${i}\nANSWER: {"n":${i}}`));
        const text = await res.text();
        if ([500, 502, 503].includes(res.status) && res.headers.get('x-fake-fault') === 'serverError') seen.push('5xx');
        else if (res.status === 429) seen.push(res.headers.get('retry-after') === '2' ? '429' : 'bad 429');
        else if (res.status !== 200) seen.push(`status ${res.status}`);
        else {
          let content: string | undefined;
          try {
            content = (JSON.parse(text) as { choices: { message: { content: string } }[] }).choices[0]?.message.content;
          } catch {
            content = undefined;
          }
          if (content !== `{"n":${i}}`) seen.push(res.headers.get('x-fake-fault') === 'garbage' ? 'garbage' : 'wrong answer');
          else seen.push(res.headers.get('x-fake-fault') === 'stall' ? 'stall' : res.headers.get('x-fake-fault') ? 'marked answer' : 'ok');
        }
      }
      return seen;
    };
    const seen = await classify();
    const count = (kind: string) => seen.filter((k) => k === kind).length;
    expect(fake.faults()).toEqual({ drawn: 400, serverError: count('5xx'), rateLimited: count('429'), stall: count('stall'), garbage: count('garbage') });
    expect(count('ok') + count('5xx') + count('429') + count('stall') + count('garbage')).toBe(400);
    // 400 draws: each share within four standard deviations of its probability.
    for (const [kind, p] of [['5xx', 0.2], ['429', 0.05], ['stall', 0.05], ['garbage', 0.1]] as const) {
      expect(Math.abs(count(kind) / 400 - p)).toBeLessThan(4 * Math.sqrt((p * (1 - p)) / 400));
    }
    expect(await (await fetch(`http://127.0.0.1:${fake.port}/_fake/faults`)).json()).toEqual(fake.faults());
    // The same seed draws the same faults again.
    fake.reset();
    expect(await classify()).toEqual(seen);
    expect(() => fake.configure({ faults: { serverError: 0.7, garbage: 0.4 } })).toThrow(RangeError);
  }, 60_000);

  it('keeps no records with recordRequests false, while indexes and stats still count', async () => {
    fake.configure({ recordRequests: false });
    fake.setHandler((_body, ctx) => ({ content: `i${ctx.index}` }));
    const contents: string[] = [];
    for (let i = 0; i < 3; i += 1) contents.push(await contentOf(await post(fake, '/chat/completions', chat('x'))));
    expect(contents).toEqual(['i0', 'i1', 'i2']);
    expect(fake.requests).toHaveLength(0);
    expect(fake.chatRequests()).toEqual([]);
    expect(fake.stats().chatRequests).toBe(3);
    expect((await scrape(fake)).get(series('vllm:request_success_total', 'm1', 'finished_reason="stop",'))).toBe(3);
    fake.configure({ recordRequests: true });
    await post(fake, '/chat/completions', chat('x'));
    // Three chats and the scrape came before, unrecorded.
    expect(fake.requests.map((r) => r.index)).toEqual([4]);
  });

  it('runs standalone: the launcher prints one JSON line, serves /v1/models and stops on SIGTERM', async () => {
    const root = path.resolve(__dirname, '../../..');
    const launcher = ['-r', './bench/kemeny/swc-register.js', 'tests/support/fake-llm/main.ts'];
    const child = spawn(
      process.execPath,
      [...launcher, '--port', '0', '--models', 'a,b', '--answer-from-report', '--no-record', '--max-running', '4'],
      { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    try {
      await waitFor(() => stdout.includes('\n'), 20000);
      const started = JSON.parse(stdout.split('\n')[0] ?? '') as { baseUrl: string; port: number };
      expect(Object.keys(started)).toEqual(['baseUrl', 'port']);
      expect(started.baseUrl).toBe(`http://127.0.0.1:${started.port}/v1`);
      const models = (await (await fetch(`${started.baseUrl}/models`)).json()) as { data: Array<{ id: string }> };
      expect(models.data.map((m) => m.id)).toEqual(['a', 'b']);
      const answer = await fetch(`${started.baseUrl}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'a', messages: [{ role: 'user', content: 'ANSWER: {"diagnosis":"melanoma"}' }] }),
      });
      expect(await contentOf(answer)).toBe('{"diagnosis":"melanoma"}');
      const stats = await (await fetch(`http://127.0.0.1:${started.port}/_fake/stats`)).json();
      expect(stats).toEqual({ chatRequests: 1, inFlight: 0, peakInFlight: 1 });
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toEqual({ code: 0, signal: null });
    expect(stdout.split('\n')).toHaveLength(2);

    const misuse = spawnSync(process.execPath, [...launcher, '--bogus'], { cwd: root, encoding: 'utf8' });
    expect(misuse.status).toBe(2);
    expect(misuse.stdout).toBe('');
    expect(misuse.stderr).toContain('--bogus');
    const badMix = spawnSync(process.execPath, [...launcher, '--fault-mix', '5xx=0.8,429=0.5'], { cwd: root, encoding: 'utf8' });
    expect(badMix.status).toBe(2);
    expect(badMix.stderr).toContain('sum to more than 1');
  });
});
