/**
 * End to end over HTTP against the fake OpenAI-compatible server: what the strategies send is
 * checked on the wire (snake_case bodies), and vLLM's response shapes (reasoning_content, usage,
 * finish_reason) come back through a minimal ChatFn written here to the chat contract.
 */
import { runStrategy } from '../../../src/extraction/strategies';
import type { ChatFn, EmbedFn } from '../../../src/extraction/types';
import { startFakeLlm, type FakeLlm } from '../../support/fake-llm/fake-llm-server';
import { ANSWER_PRIMARY, EXAMPLES, MELANOMA, REPORT } from './support';

function httpChat(baseUrl: string): ChatFn {
  return async (req) => {
    const body: Record<string, unknown> = { model: req.model, messages: req.messages };
    const map: Array<[unknown, string]> = [
      [req.temperature, 'temperature'], [req.topP, 'top_p'], [req.topK, 'top_k'], [req.maxTokens, 'max_tokens'],
      [req.seed, 'seed'], [req.frequencyPenalty, 'frequency_penalty'], [req.presencePenalty, 'presence_penalty'],
      [req.repetitionPenalty, 'repetition_penalty'], [req.responseFormat, 'response_format'],
    ];
    for (const [v, k] of map) if (v !== undefined) body[k] = v;
    if (req.thinking !== undefined) body['chat_template_kwargs'] = { enable_thinking: req.thinking };
    const t0 = performance.now();
    const res = await fetch(`${baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: req.signal ?? null,
    });
    if (!res.ok) throw Object.assign(new Error(`HTTP ${res.status}`), { code: 'HTTP_ERROR', status: res.status, attempts: 1 });
    const json = (await res.json()) as {
      choices: Array<{ message: { content: string | null; reasoning_content?: string | null; reasoning?: string | null }; finish_reason: string | null }>;
      usage?: { prompt_tokens?: number; completion_tokens?: number };
    };
    const choice = json.choices[0]!;
    return {
      content: choice.message.content ?? '',
      reasoning: choice.message.reasoning_content ?? choice.message.reasoning ?? null,
      finishReason: choice.finish_reason,
      promptTokens: json.usage?.prompt_tokens ?? null,
      completionTokens: json.usage?.completion_tokens ?? null,
      latencyMs: performance.now() - t0,
      attempts: 1,
    };
  };
}

function httpEmbed(baseUrl: string): EmbedFn {
  return async (texts) => {
    const res = await fetch(`${baseUrl}/embeddings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'fake-model', input: texts }),
    });
    const json = (await res.json()) as { data: Array<{ embedding: number[] }> };
    return json.data.map((d) => Float32Array.from(d.embedding));
  };
}

function jsonTemplateKeys(messages: unknown[]): string[] {
  const all = (messages as Array<{ content: string }>).map((m) => m.content).join('\n');
  const at = all.indexOf('Extract information');
  return Object.keys(JSON.parse(/```json\n([\s\S]*?)\n```/.exec(all.slice(at))![1]!) as object);
}

describe('strategies over HTTP (fake vLLM server)', () => {
  let fake: FakeLlm;
  beforeAll(async () => {
    fake = await startFakeLlm({ models: ['fake-model'] });
  });
  afterAll(async () => {
    await fake.close();
  });
  beforeEach(() => fake.reset());

  it('SELF_CONSISTENCY: the three temperatures reach the server; reasoning_content is kept per sample', async () => {
    fake.script((b) => ({
      reasoning: `thinking at ${String(b.temperature)}`,
      content: JSON.stringify({ ...ANSWER_PRIMARY, 'Breslow thickness': b.temperature === 0.7 ? 9 : 1.8, 'Quality Check': `t=${String(b.temperature)}` }),
    }));
    const res = await runStrategy('SELF_CONSISTENCY', {
      chat: httpChat(fake.baseUrl),
      embed: httpEmbed(fake.baseUrl),
      model: 'fake-model',
      variables: MELANOMA,
      examples: EXAMPLES,
      report: REPORT,
      seed: 42,
      thinking: true,
      sampling: { temperature: 0.6, topP: 0.95, topK: 50, repetitionPenalty: 1.2 },
    });
    const sent = fake.chatRequests();
    expect(sent.map((b) => b.temperature).sort()).toEqual([0.5, 0.6, 0.7]);
    expect(sent.map((b) => b['seed']).sort()).toEqual([42, 43, 44]);
    expect(sent.every((b) => b['top_k'] === 50 && b['top_p'] === 0.95 && b['repetition_penalty'] === 1.2)).toBe(true);
    expect(sent.every((b) => JSON.stringify(b['chat_template_kwargs']) === '{"enable_thinking":true}')).toBe(true);
    expect(res.values['Breslow thickness']).toBe(1.8);
    expect(res.samples!.map((s) => s.reasoning)).toEqual(['thinking at 0.5', 'thinking at 0.6', 'thinking at 0.7']);
    expect(typeof res.values['Quality Check']).toBe('string');
    expect(res.promptTokens).toBeGreaterThan(0);
  });

  it('PROMPT_GRAPH: later steps carry earlier answers on the wire; the skipped branch is never requested', async () => {
    fake.script((b) => {
      const out: Record<string, unknown> = {};
      for (const k of jsonTemplateKeys(b.messages ?? [])) out[k] = (ANSWER_PRIMARY as Record<string, unknown>)[k];
      return { content: '<think>ok</think>\n```json\n' + JSON.stringify(out) + '\n```' };
    });
    const res = await runStrategy('PROMPT_GRAPH', {
      chat: httpChat(fake.baseUrl),
      model: 'fake-model',
      variables: MELANOMA,
      examples: EXAMPLES,
      exampleSelection: { count: 1 },
      report: REPORT,
    });
    const steps = fake.chatRequests().map((b) => jsonTemplateKeys(b.messages ?? []));
    expect(steps).not.toContainEqual(['Specimen type']);
    expect(steps).toHaveLength(4);
    const last = fake.chatRequests().find((b) => jsonTemplateKeys(b.messages ?? [])[0] === 'Quality Check')!;
    const text = (last.messages as Array<{ content: string }>).map((m) => m.content).join('\n');
    expect(text).toContain('"Mitosis count": 2');
    expect(text).toContain('"Breslow thickness": 1.8');
    expect(res.skipped).toEqual(['Specimen type']);
    expect(res.values['Mitosis count']).toBe(2);
  });

  it('constrained ZERO_SHOT: response_format reaches the server and its schema-shaped answer parses', async () => {
    const res = await runStrategy('ZERO_SHOT', {
      chat: httpChat(fake.baseUrl),
      model: 'fake-model',
      variables: MELANOMA,
      report: REPORT,
      constrained: true,
    });
    const body = fake.chatRequests()[0]!;
    expect((body['response_format'] as { type: string }).type).toBe('json_schema');
    // the fake answers with the first enum value of each categorical and 0 / "" / [] otherwise
    expect(res.values['Primary melanoma']).toBe('Yes');
    expect(res.cells['Specimen type']).toEqual({ status: 'VALUE', value: 'Both' });
    expect(res.parseError).toBeNull();
  });

  it('truncation reported by the server is recorded', async () => {
    fake.enqueue({ content: '{"Primary melanoma": "Yes", "Breslow thickness": 1', finishReason: 'length' });
    const res = await runStrategy('ZERO_SHOT', { chat: httpChat(fake.baseUrl), model: 'fake-model', variables: MELANOMA, report: REPORT });
    expect(res.truncated).toBe(true);
    expect(res.values['Primary melanoma']).toBe('Yes');
    expect(res.cells['Breslow thickness']).toMatchObject({ status: 'INVALID', category: 'MISSING' });
  });
});
