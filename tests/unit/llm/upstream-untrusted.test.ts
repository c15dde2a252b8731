import { startFakeLlm, type FakeLlm } from '../../support/fake-llm/fake-llm-server';
import { readMetrics } from '../../../src/jobs/telemetry';
import { createChatClient, type ChatClientOptions } from '../../../src/llm/chat-client';
import { parseEgressPolicy } from '../../../src/llm/egress';
import { createEmbeddingClient } from '../../../src/llm/embedding-client';
import { createHttpFetch } from '../../../src/llm/http-fetch';
import { LlmError } from '../../../src/llm/llm-error';
import { listModels, MAX_LISTED_MODELS, measureHealth, probeJsonSchema, probeThinkingToggle, readModelCards } from '../../../src/llm/probe';
import type { ChatRequest } from '../../../src/llm/types';

const KEY = 'sk-upstream-secret-4242';
const NO_RETRY = { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1 };
/** What an internal service's error page looks like, with the caller's key echoed back. */
const page = (authorization: string | undefined) =>
  `<html><body><h1>403 Forbidden</h1><p>intranet-admin.corp.local denied ${authorization ?? ''}</p></body></html>`;
const UPSTREAM_TEXT = /Forbidden|intranet|corp\.local|html|sk-upstream|denied/;

const request: ChatRequest = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };

async function rejection(promise: Promise<unknown>): Promise<LlmError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof LlmError) return err;
    throw err;
  }
  throw new Error('expected a rejection');
}

/** Everything an error would show or log: message, own properties, cause chain. */
function everything(err: LlmError): string {
  return JSON.stringify({ ...err, text: err.message, cause: (err as { cause?: unknown }).cause, stack: err.stack });
}

describe('what an endpoint answers is never repeated', () => {
  let fake: FakeLlm;
  let elsewhere: FakeLlm;
  const client = (extra: Partial<ChatClientOptions> = {}) =>
    createChatClient({ baseUrl: fake.baseUrl, apiKey: KEY, kind: 'VLLM', timeoutMs: 3000, retry: NO_RETRY, ...extra });

  beforeAll(async () => {
    fake = await startFakeLlm({ models: ['m'] });
    elsewhere = await startFakeLlm({ models: ['m'] });
  });
  afterAll(async () => {
    await fake.close();
    await elsewhere.close();
  });
  beforeEach(() => {
    fake.reset();
    elsewhere.reset();
  });

  it.each([
    ['an HTML page', 'text/html'],
    ['a JSON error', 'application/json'],
  ])('keeps the status of %s and none of its text, the key it echoes included', async (_what, contentType) => {
    fake.scriptRoutes((r) => ({
      status: 403,
      contentType,
      body: contentType === 'text/html' ? page(r.headers['authorization']) : JSON.stringify({ object: 'error', message: page(r.headers['authorization']) }),
    }));
    const err = await rejection(client()(request));
    expect(err).toMatchObject({ code: 'HTTP_ERROR', status: 403, message: 'HTTP 403 from the endpoint' });
    expect(everything(err)).not.toMatch(UPSTREAM_TEXT);
    expect((err as { cause?: unknown }).cause).toBeUndefined();
  });

  it('says a 200 that is not a chat completion is unreadable, in its own words', async () => {
    fake.scriptRoutes(() => ({ status: 200, contentType: 'text/html', body: page(KEY) }));
    const html = await rejection(client()(request));
    expect(html.code).toBe('BAD_RESPONSE');
    expect(everything(html)).not.toMatch(UPSTREAM_TEXT);
    fake.scriptRoutes(() => ({ status: 200, body: `{"choices": [${page(KEY)}` }));
    const broken = await rejection(client()(request));
    expect(broken).toMatchObject({ code: 'BAD_RESPONSE', message: 'the answer is not JSON', reason: 'NOT_JSON' });
    expect(everything(broken)).not.toMatch(UPSTREAM_TEXT);
  });

  it('says a stream of garbage is not JSON, without quoting it, nor printing it to the console', async () => {
    const printed = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      for (const event of ['', 'event: thread.message\n']) {
        fake.scriptRoutes(() => ({ status: 200, contentType: 'text/event-stream', body: `${event}data: ${page(KEY)}\n\n` }));
        const err = await rejection(client({ stream: true })(request));
        expect(err).toMatchObject({ code: 'BAD_RESPONSE', message: 'the answer is not JSON' });
        expect(everything(err)).not.toMatch(UPSTREAM_TEXT);
      }
      expect(printed).not.toHaveBeenCalled();
    } finally {
      printed.mockRestore();
    }
  });

  it('does not follow a redirect to another host: chat, model listing and /metrics', async () => {
    const location = { location: `${elsewhere.baseUrl}/chat/completions` };
    fake.scriptRoutes(() => ({ status: 302, headers: location, body: '' }));
    const err = await rejection(client()(request));
    expect(err).toMatchObject({ code: 'HTTP_ERROR', status: 302, message: 'HTTP 302 from the endpoint (redirects are not followed)' });
    fake.scriptRoutes(() => ({ status: 307, headers: { location: `${elsewhere.baseUrl}/models` }, body: '' }));
    await expect(listModels(fake.baseUrl, KEY, 3000)).rejects.toMatchObject({ code: 'HTTP_ERROR', status: 307 });
    fake.scriptRoutes(() => ({ status: 301, headers: { location: `http://127.0.0.1:${elsewhere.port}/metrics` }, body: '' }));
    expect(await readMetrics(fake.baseUrl, KEY)).toBeNull();
    expect(elsewhere.requests).toHaveLength(0);
  });

  it('reads at most the body limit, with or without a content-length, streamed or not', async () => {
    const fetch = createHttpFetch({ maxBodyBytes: 1000 });
    for (const chunked of [false, true]) {
      fake.scriptRoutes(() => ({ status: 200, body: 'x'.repeat(200_000), chunked }));
      await expect(fetch(`${fake.baseUrl}/models`)).rejects.toMatchObject({ cause: { name: 'ResponseTooLarge' } });
    }
    fake.scriptRoutes(() => ({ status: 200, contentType: 'text/event-stream', body: `data: ${'x'.repeat(200_000)}\n\n`, chunked: true }));
    const response = await fetch(`${fake.baseUrl}/chat/completions`);
    await expect(response.text()).rejects.toMatchObject({ name: 'ResponseTooLarge' });
    fake.scriptRoutes(() => ({ status: 200, body: 'x'.repeat(1000) }));
    expect(await (await fetch(`${fake.baseUrl}/models`)).text()).toHaveLength(1000);
  });

  it('never puts upstream text into capability details', async () => {
    const chat = client();
    fake.enqueue({ content: `Sure! ${page(KEY)}` });
    const prose = await probeJsonSchema(chat, 'm');
    expect(prose).toEqual({ supported: false, detail: 'the answer to a json_schema request is not JSON' });
    fake.enqueue({ status: 400, error: page(KEY) });
    const refused = await probeThinkingToggle(chat, 'm');
    expect(refused).toEqual({ supported: false, detail: 'HTTP 400 from the endpoint: the request was refused' });
    fake.enqueue({ status: 503, error: page(KEY) });
    expect(await probeJsonSchema(chat, 'm')).toEqual({ supported: null, detail: 'HTTP_ERROR: HTTP 503 from the endpoint' });
  });

  it('keeps the health error of a listing in our words', async () => {
    fake.scriptRoutes((r) => ({ status: 403, contentType: 'text/html', body: page(r.headers['authorization']) }));
    const health = await measureHealth(fake.baseUrl, KEY, 3000);
    expect(health).toMatchObject({ ok: false, errorCode: 'HTTP_ERROR', error: 'HTTP 403 from the endpoint' });
    fake.scriptRoutes(() => ({ status: 200, contentType: 'text/html', body: page(KEY) }));
    expect(await measureHealth(fake.baseUrl, KEY, 3000)).toMatchObject({ ok: false, errorCode: 'BAD_RESPONSE', error: 'the answer is not JSON' });
    fake.scriptRoutes(() => ({ status: 200, body: JSON.stringify({ object: 'error', message: page(KEY) }) }));
    expect(await measureHealth(fake.baseUrl, KEY, 3000)).toMatchObject({ ok: false, error: 'the answer has no list of models (data)' });
  });

  it("does not repeat an embedding answer's index", async () => {
    fake.scriptEmbeddings(() => ({ rawBody: JSON.stringify({ data: [{ index: page(KEY), embedding: [1] }, { index: 0, embedding: [1] }] }) }));
    const embed = createEmbeddingClient({ baseUrl: fake.baseUrl, model: 'm', timeoutMs: 3000, retry: NO_RETRY }).embed;
    const err = await rejection(embed(['a', 'b']));
    expect(err.code).toBe('BAD_RESPONSE');
    expect(everything(err)).not.toMatch(UPSTREAM_TEXT);
  });
});

describe('model listings are bounded', () => {
  let fake: FakeLlm;
  beforeAll(async () => {
    fake = await startFakeLlm();
  });
  afterAll(async () => {
    await fake.close();
  });
  beforeEach(() => fake.reset());

  it('keeps the first 1,000 models and says how many were ignored', async () => {
    const data = Array.from({ length: 5000 }, (_, i) => ({ id: `model-${i}`, object: 'model', max_model_len: 4096 }));
    fake.scriptRoutes(() => ({ body: JSON.stringify({ object: 'list', data }) }));
    const { models, warnings } = await listModels(fake.baseUrl, null, 5000);
    expect(models).toHaveLength(MAX_LISTED_MODELS);
    expect(models[999]?.id).toBe('model-999');
    expect(warnings).toEqual(['the endpoint lists 5000 entries; the first 1000 models are kept, the other 4000 entries are ignored']);
  });

  it('refuses a listing larger than its byte limit, with or without a content-length', async () => {
    const data = Array.from({ length: 300_000 }, (_, i) => ({ id: `model-${i}` }));
    const body = JSON.stringify({ object: 'list', data });
    for (const chunked of [false, true]) {
      fake.scriptRoutes(() => ({ body, chunked }));
      await expect(listModels(fake.baseUrl, null, 5000)).rejects.toMatchObject({
        code: 'BAD_RESPONSE',
        reason: 'TOO_LARGE',
        message: 'the answer is larger than 4194304 bytes',
      });
    }
  });

  it('is bounded in time: a listing that trickles past the timeout fails', async () => {
    fake.scriptRoutes(() => ({ body: '{"data": []}', delayMs: 2000 }));
    await expect(listModels(fake.baseUrl, null, 300)).rejects.toMatchObject({ code: 'TIMEOUT' });
  });

  it('stops when the caller goes away', async () => {
    fake.scriptRoutes(() => ({ body: '{"data": []}', delayMs: 2000 }));
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    await expect(listModels(fake.baseUrl, null, 5000, { signal: controller.signal })).rejects.toMatchObject({ code: 'CONNECTION', reason: 'ABORTED' });
  });

  it('leaves absurd context lengths unknown and skips names that are not plain text', () => {
    const { models, warnings } = readModelCards(
      [
        { id: 'huge', max_model_len: 1e20 },
        { id: 'negative', max_model_len: -5 },
        { id: 'fraction', max_model_len: 4096.5 },
        { id: 'text', max_model_len: '4096' },
        { id: 'gateway', context_length: 131072, owned_by: 'x\u0000y', root: ' padded' },
        { id: 'ok', max_model_len: 32768, root: 'org/ok' },
        { id: 'ok' },
        { id: `has-${KEY}-inside` },
        { id: 'line\nbreak' },
        { id: 'lone\uD800surrogate' },
        { id: 'x'.repeat(1025) },
        { id: 42 },
        null,
        'a string',
      ],
      [KEY],
    );
    expect(models).toEqual([
      { id: 'huge', maxModelLen: null, ownedBy: null, root: null },
      { id: 'negative', maxModelLen: null, ownedBy: null, root: null },
      { id: 'fraction', maxModelLen: null, ownedBy: null, root: null },
      { id: 'text', maxModelLen: null, ownedBy: null, root: null },
      { id: 'gateway', maxModelLen: 131072, ownedBy: null, root: null },
      { id: 'ok', maxModelLen: 32768, ownedBy: null, root: 'org/ok' },
    ]);
    expect(warnings).toEqual([
      '8 listed entries were skipped: no id of 1 to 1024 printable characters, a repeated id, or an id containing a configured secret',
      '4 models report a context length that is not a whole number from 1 to 100000000; it is left unknown',
    ]);
    expect(warnings.join(' ')).not.toContain(KEY);
  });
});

describe('the egress policy holds at connect time', () => {
  let fake: FakeLlm;
  beforeAll(async () => {
    fake = await startFakeLlm({ models: ['m'] });
  });
  afterAll(async () => {
    await fake.close();
  });
  beforeEach(() => fake.reset());

  const chatWith = (baseUrl: string, spec: string) =>
    createChatClient({ baseUrl, kind: 'VLLM', timeoutMs: 3000, retry: { maxRetries: 2, baseDelayMs: 1, maxDelayMs: 1 }, egress: parseEgressPolicy(spec) });

  it('connects to a listed address', async () => {
    expect((await chatWith(fake.baseUrl, '127.0.0.1')(request)).content).toBeDefined();
    expect((await listModels(fake.baseUrl, null, 3000, { egress: parseEgressPolicy('127.0.0.0/8') })).models).toHaveLength(1);
  });

  it('refuses an address outside it before connecting, without retrying', async () => {
    const err = await rejection(chatWith(fake.baseUrl, '10.0.0.0/8,gpu.example.org')(request));
    expect(err).toMatchObject({ code: 'CONNECTION', reason: 'EGRESS_DENIED', attempts: 1 });
    await expect(listModels(fake.baseUrl, null, 3000, { egress: parseEgressPolicy('10.0.0.0/8') })).rejects.toMatchObject({ reason: 'EGRESS_DENIED' });
    expect(await readMetrics(fake.baseUrl, null, parseEgressPolicy('10.0.0.0/8'))).toBeNull();
    expect(fake.requests).toHaveLength(0);
  });

  it('refuses a listed name that resolves to an internal address (DNS rebinding)', async () => {
    const viaName = `http://localhost:${fake.port}/v1`;
    const err = await rejection(chatWith(viaName, 'localhost')(request));
    expect(err).toMatchObject({ code: 'CONNECTION', reason: 'EGRESS_DENIED' });
    expect(err.message).toBe("the endpoint's address is outside the egress policy (ENDPOINT_ALLOW)");
    expect(fake.requests).toHaveLength(0);
    // Listing the internal address too lets the name through.
    expect((await chatWith(viaName, 'localhost,127.0.0.1,::1')(request)).content).toBeDefined();
  });
});
