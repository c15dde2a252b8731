import { fakeEmbedding, startFakeLlm, type FakeLlm } from '../../support/fake-llm/fake-llm-server';
import { createEmbeddingClient } from '../../../src/llm/embedding-client';
import { LlmError } from '../../../src/llm/llm-error';

describe('createEmbeddingClient', () => {
  let fake: FakeLlm;
  beforeAll(async () => {
    fake = await startFakeLlm({ models: ['bge-m3'], embeddingDim: 32 });
  });
  afterAll(async () => {
    await fake.close();
  });
  beforeEach(() => fake.reset());

  const client = (batchSize?: number) =>
    createEmbeddingClient({
      baseUrl: fake.baseUrl,
      model: 'bge-m3',
      timeoutMs: 5000,
      ...(batchSize !== undefined ? { batchSize } : {}),
      retry: { maxRetries: 2, baseDelayMs: 1, maxDelayMs: 5 },
    });

  it('returns one Float32Array per text, in input order, across batches', async () => {
    const texts = Array.from({ length: 10 }, (_, i) => `report ${i}: lesion of ${i * 3} mm`);
    const vectors = await client(4).embed(texts);
    expect(vectors).toHaveLength(10);
    vectors.forEach((v, i) => {
      expect(v).toBeInstanceOf(Float32Array);
      expect(Array.from(v)).toEqual(Array.from(Float32Array.from(fakeEmbedding(texts[i] ?? '', 32))));
    });
    const sent = fake.requests.map((r) => (r.body as { input: string[] }).input);
    expect(sent.map((b) => b.length)).toEqual([4, 4, 2]);
    expect(sent.flat()).toEqual(texts);
    expect(fake.requests.every((r) => (r.body as { encoding_format?: string }).encoding_format === 'float')).toBe(true);
  });

  it('defaults to batches of 64', async () => {
    await client().embed(Array.from({ length: 130 }, (_, i) => `t${i}`));
    expect(fake.requests.map((r) => (r.body as { input: string[] }).input.length)).toEqual([64, 64, 2]);
  });

  it('reorders data by index when the server answers out of order', async () => {
    fake.scriptEmbeddings((inputs) => ({
      rawBody: JSON.stringify({
        object: 'list',
        model: 'bge-m3',
        data: inputs.map((t, index) => ({ object: 'embedding', index, embedding: fakeEmbedding(t, 32) })).reverse(),
        usage: { prompt_tokens: 3, total_tokens: 3 },
      }),
    }));
    const texts = ['a', 'b', 'c'];
    const expected = texts.map((t) => Array.from(Float32Array.from(fakeEmbedding(t, 32))));
    const vectors = await client().embed(texts);
    expect(vectors.map((v) => Array.from(v))).toEqual(expected);
  });

  it('sends nothing for an empty list', async () => {
    expect(await client().embed([])).toEqual([]);
    expect(fake.requests).toHaveLength(0);
  });

  it('retries a 503 batch and keeps order', async () => {
    fake.scriptEmbeddings((_inputs, ctx) => (ctx.index === 1 ? { status: 503 } : undefined));
    const texts = ['x1', 'x2', 'x3'];
    const vectors = await client(2).embed(texts);
    expect(vectors.map((v) => Array.from(v))).toEqual(texts.map((t) => Array.from(Float32Array.from(fakeEmbedding(t, 32)))));
    expect(fake.requests).toHaveLength(3);
  });

  it('fails with BAD_RESPONSE when the server returns the wrong number of vectors', async () => {
    fake.scriptEmbeddings(() => ({ vectors: [[1, 2]] }));
    await expect(client().embed(['a', 'b'])).rejects.toMatchObject({ code: 'BAD_RESPONSE' });
  });

  it('fails with HTTP_ERROR for an unknown model', async () => {
    const other = createEmbeddingClient({ baseUrl: fake.baseUrl, model: 'nope', timeoutMs: 2000 });
    const err: unknown = await other.embed(['a']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LlmError);
    expect(err).toMatchObject({ code: 'HTTP_ERROR', status: 404, attempts: 1 });
  });

  it('rejects a bad batch size', () => {
    expect(() => client(0)).toThrow(RangeError);
  });
});
