import { runStrategy } from '../../../src/extraction/strategies';
import { ExtractionError } from '../../../src/extraction/errors';
import type { StrategyContext } from '../../../src/extraction/types';
import { ANSWER_PRIMARY, EXAMPLES, MELANOMA, REPORT, allText, answerFor, scriptedChat } from './support';

function ctx(over: Partial<StrategyContext> & Pick<StrategyContext, 'chat'>): StrategyContext {
  return { model: 'm', variables: MELANOMA, examples: EXAMPLES, report: REPORT, ...over };
}

describe('single-call strategies', () => {
  it('ZERO_SHOT sends the Table A3 layout without examples and passes decoding parameters through', async () => {
    const { chat, requests } = scriptedChat((req) => answerFor(req, ANSWER_PRIMARY));
    const res = await runStrategy(
      'ZERO_SHOT',
      ctx({
        chat,
        seed: 7,
        thinking: false,
        sampling: { temperature: 0, topP: 1, topK: 1, maxTokens: 50, frequencyPenalty: 0.1, presencePenalty: 0.2, repetitionPenalty: 1.2 },
      }),
    );
    expect(requests).toHaveLength(1);
    const req = requests[0]!;
    expect(req.messages.map((m) => m.role)).toEqual(['system', 'user', 'user', 'user', 'user']);
    expect(req.messages[0]!.content).toMatch(/^You are a medical data extraction system that ONLY outputs valid JSON/);
    expect(req.messages[3]!.content).toBe(`[file name]: report-001\n${REPORT.text}`);
    expect(req.messages[4]!.content).toMatch(/^Begin the extraction now. Your response must contain only a single valid JSON block/);
    expect(req).toMatchObject({
      model: 'm', temperature: 0, topP: 1, topK: 1, maxTokens: 50, seed: 7,
      frequencyPenalty: 0.1, presencePenalty: 0.2, repetitionPenalty: 1.2, thinking: false,
    });
    expect(req.responseFormat).toBeUndefined();
    expect(res.values).toEqual({
      'Primary melanoma': 'Yes', 'Breslow thickness': 1.8, Ulceration: 'No', 'Mitosis described': 'Yes',
      'Mitosis count': 2, 'Specimen type': null, Organs: ['skin'], 'Quality Check': 'No issues detected',
    });
    expect(res).toMatchObject({ strategy: 'ZERO_SHOT', calls: 1, attempts: 1, promptTokens: 100, completionTokens: 20, truncated: false, skipped: [] });
    expect(res.reasoning).toBe('reading the report');
  });

  it('leaves unset parameters off the request', async () => {
    const { chat, requests } = scriptedChat(() => '{}');
    await runStrategy('ZERO_SHOT', ctx({ chat }));
    expect(Object.keys(requests[0]!).sort()).toEqual(['messages', 'model']);
  });

  it('ONE_SHOT uses a named example as a user/assistant pair', async () => {
    const { chat, requests } = scriptedChat(() => '{}');
    await runStrategy('ONE_SHOT', ctx({ chat, exampleSelection: { names: ['ex-slnb'] } }));
    const m = requests[0]!.messages;
    expect(m.map((x) => x.role)).toEqual(['system', 'user', 'user', 'user', 'user', 'assistant', 'user', 'user']);
    expect(m[3]!.content).toBe('Below is 1 example of expected input and output, followed by a new task.');
    expect(m[4]!.content).toBe(EXAMPLES[1]!.input);
    expect(m[5]!.content).toMatch(/^```json\n\{\n {2}"Primary melanoma": "No"/);
  });

  it('ONE_SHOT and FEW_SHOT need examples; unknown names are errors', async () => {
    const { chat } = scriptedChat(() => '{}');
    await expect(runStrategy('ONE_SHOT', ctx({ chat, examples: [] }))).rejects.toMatchObject({ code: 'NO_EXAMPLES' });
    await expect(runStrategy('FEW_SHOT', ctx({ chat, exampleSelection: { names: ['nope'] } }))).rejects.toBeInstanceOf(ExtractionError);
  });

  it('FEW_SHOT draws three examples deterministically from the seed', async () => {
    const pick = async (seed: number): Promise<string[]> => {
      const { chat, requests } = scriptedChat(() => '{}');
      await runStrategy('FEW_SHOT', ctx({ chat, seed }));
      const inputs = new Set(EXAMPLES.map((e) => e.input));
      return requests[0]!.messages.filter((x) => inputs.has(x.content)).map((x) => x.content);
    };
    const a = await pick(1);
    expect(a).toHaveLength(3);
    expect(await pick(1)).toEqual(a);
    const seen = new Set<string>();
    for (let s = 0; s < 20; s++) seen.add(JSON.stringify(await pick(s)));
    expect(seen.size).toBeGreaterThan(1);
  });

  it('CHAIN_OF_THOUGHT shows example reasoning before the output and asks for <think>', async () => {
    const { chat, requests } = scriptedChat(() => '<think>x</think>{"Primary melanoma": "Yes"}');
    const res = await runStrategy('CHAIN_OF_THOUGHT', ctx({ chat, exampleSelection: { names: ['ex-primary'] } }));
    const m = requests[0]!.messages;
    expect(m[0]!.content).toMatch(/performs structured reasoning before producing output/);
    expect(m[3]!.content).toBe('Below is 1 example of expected input, reasoning and output, followed by a new task.');
    expect(m[5]).toEqual({ role: 'assistant', content: EXAMPLES[0]!.reasoning!.trim() });
    expect(m[6]!.role).toBe('assistant');
    expect(m[m.length - 1]!.content).toMatch(/enclosed within <think>\.\.\.<\/think> tags/);
    expect(res.reasoning).toBe('x');
    expect(res.cells['Breslow thickness']).toMatchObject({ status: 'INVALID', category: 'MISSING' });
  });

  it('GUIDED vs ZERO-SHOT prompting: guided=false sends no system rules', async () => {
    const { chat, requests } = scriptedChat(() => '{}');
    await runStrategy('ZERO_SHOT', ctx({ chat, guided: false }));
    expect(requests[0]!.messages.map((m) => m.role)).toEqual(['user', 'user', 'user', 'user']);
    expect(allText(requests[0]!)).not.toMatch(/ONLY outputs valid JSON/);
  });

  it('systemMessagesAllowed=false and mergeConsecutiveMessages', async () => {
    const { chat, requests } = scriptedChat(() => '{}');
    await runStrategy('FEW_SHOT', ctx({ chat, systemMessagesAllowed: false, mergeConsecutiveMessages: true, exampleSelection: { names: ['ex-primary', 'ex-slnb'] } }));
    const roles = requests[0]!.messages.map((m) => m.role);
    expect(roles).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
    expect(requests[0]!.messages[0]!.content).toMatch(/^You are a medical data extraction system[\s\S]*\n\n1\. "Primary melanoma":/);
  });

  it('constrained decoding sends a JSON schema built from the variables', async () => {
    const { chat, requests } = scriptedChat(() => JSON.stringify(ANSWER_PRIMARY));
    await runStrategy('ZERO_SHOT', ctx({ chat, constrained: true }));
    const rf = requests[0]!.responseFormat!;
    expect(rf.type).toBe('json_schema');
    const schema = rf.json_schema.schema as { required: string[]; properties: Record<string, unknown> };
    expect(schema.required).toEqual(MELANOMA.map((v) => v.key));
    expect(schema.properties['Ulceration']).toEqual({ enum: ['Yes', 'No', 'Not specified', null] });
    expect(schema.properties['Breslow thickness']).toEqual({ anyOf: [{ type: 'number' }, { enum: ['Not specified', null] }] });
    expect(schema.properties['Organs']).toEqual({ type: 'array', items: { type: 'string' } });
  });

  it('records output truncation and input truncation', async () => {
    const { chat, requests } = scriptedChat(() => ({ content: '{"Primary melanoma": "Yes", "Breslow thickness": 1', finishReason: 'length' }));
    const res = await runStrategy('ZERO_SHOT', ctx({ chat, contextLimit: { maxTokens: 5 } }));
    expect(res.truncated).toBe(true);
    expect(res.finishReason).toBe('length');
    expect(res.inputTruncated).toBe(true);
    expect(requests[0]!.messages[3]!.content).toBe(`[file name]: report-001\n${REPORT.text.slice(0, 20)}`);
    expect(res.values['Primary melanoma']).toBe('Yes');
    expect(res.cells['Breslow thickness']).toMatchObject({ status: 'INVALID', category: 'MISSING' });
  });

  it('a transport error of a single call propagates', async () => {
    const err = Object.assign(new Error('boom'), { code: 'HTTP_ERROR', attempts: 3 });
    const { chat } = scriptedChat(() => Promise.reject(err));
    await expect(runStrategy('ZERO_SHOT', ctx({ chat }))).rejects.toBe(err);
  });

  it('stored prompt parts override the built-in text, with placeholders', async () => {
    const { chat, requests } = scriptedChat(() => '{}');
    await runStrategy(
      'ZERO_SHOT',
      ctx({
        chat,
        variables: MELANOMA.slice(0, 2),
        parts: {
          system: 'Rules for {{keys}}.',
          task: 'Fill {{json_template}} for {{report_id}}',
          report: 'REPORT {{report_id}}: {{report}} {{unknown}}',
          final: '',
        },
        report: { id: 'r9', text: 'text with {{report}} inside' },
      }),
    );
    const m = requests[0]!.messages;
    expect(m[0]!.content).toBe('Rules for "Primary melanoma", "Breslow thickness".');
    expect(m[2]!.content).toBe('Fill {\n  "Primary melanoma": "",\n  "Breslow thickness": ""\n} for r9');
    expect(m[3]!.content).toBe('REPORT r9: text with {{report}} inside {{unknown}}');
    expect(m).toHaveLength(4);
  });
});
