import { planGraph } from '../../../src/extraction/prompt-graph-plan';
import { runStrategy } from '../../../src/extraction/strategies';
import type { ChatRequest, ExtractionVariable, StrategyContext } from '../../../src/extraction/types';
import { ANSWER_PRIMARY, EXAMPLES, MELANOMA, REPORT, answerFor, scriptedChat, templateKeys } from './support';

function ctx(over: Partial<StrategyContext> & Pick<StrategyContext, 'chat'>): StrategyContext {
  return { model: 'm', variables: MELANOMA, examples: EXAMPLES, exampleSelection: { names: ['ex-primary'] }, report: REPORT, ...over };
}

function previousAnswers(req: ChatRequest): Record<string, unknown> | null {
  const m = req.messages.find((x) => x.content.startsWith('Values already extracted'));
  if (!m) return null;
  return JSON.parse(/```json\n([\s\S]*?)\n```/.exec(m.content)![1]!) as Record<string, unknown>;
}

describe('planGraph', () => {
  it('builds steps, conditional edges and joins', () => {
    const plan = planGraph(MELANOMA);
    expect(plan.steps.map((s) => [s.step, s.keys, s.after])).toEqual([
      [1, ['Primary melanoma', 'Organs'], []],
      [2, ['Breslow thickness', 'Ulceration', 'Mitosis described'], [1]],
      [3, ['Mitosis count'], [2]],
      [4, ['Specimen type'], [1]],
      [99, ['Quality Check'], [1, 2, 3, 4]],
    ]);
    expect(plan.steps[2]!.ancestors).toEqual([1, 2]);
  });

  it('derives steps from dependsOn when no graph steps are given', () => {
    const vars: ExtractionVariable[] = [
      { key: 'a', type: 'FREE_TEXT' },
      { key: 'b', type: 'FREE_TEXT', dependsOn: { key: 'a', values: ['x'] } },
      { key: 'c', type: 'FREE_TEXT', dependsOn: { key: 'b', values: ['y'] } },
      { key: 'd', type: 'FREE_TEXT' },
    ];
    expect(planGraph(vars).steps.map((s) => [s.step, s.keys])).toEqual([[1, ['a', 'd']], [2, ['b']], [3, ['c']]]);
  });

  it('rejects conditions on the same or a later step', () => {
    const bad: ExtractionVariable[] = [
      { key: 'a', type: 'FREE_TEXT', graphStep: 2 },
      { key: 'b', type: 'FREE_TEXT', graphStep: 2, dependsOn: { key: 'a', values: ['x'] } },
    ];
    expect(() => planGraph(bad)).toThrow(expect.objectContaining({ code: 'BAD_GRAPH' }));
    expect(() => planGraph([{ key: 'a', type: 'FREE_TEXT', dependsOn: { key: 'zz', values: ['x'] } }])).toThrow(
      expect.objectContaining({ code: 'BAD_VARIABLES' }),
    );
  });
});

describe('PROMPT_GRAPH', () => {
  it('primary melanoma branch: later steps see earlier answers, the other branch is skipped', async () => {
    const answer = { ...ANSWER_PRIMARY, 'Primary melanoma': 'yes' };
    const { chat, requests } = scriptedChat((req) => answerFor(req, answer));
    const res = await runStrategy('PROMPT_GRAPH', ctx({ chat }));
    const byStep = requests.map(templateKeys);
    expect(byStep).toContainEqual(['Primary melanoma', 'Organs']);
    expect(byStep).toContainEqual(['Breslow thickness', 'Ulceration', 'Mitosis described']);
    expect(byStep).toContainEqual(['Mitosis count']);
    expect(byStep).toContainEqual(['Quality Check']);
    expect(byStep).not.toContainEqual(['Specimen type']);
    expect(requests).toHaveLength(4);

    const first = requests.find((r) => templateKeys(r)[0] === 'Primary melanoma')!;
    expect(previousAnswers(first)).toBeNull();
    const step3 = requests.find((r) => templateKeys(r)[0] === 'Mitosis count')!;
    expect(previousAnswers(step3)).toEqual({
      'Primary melanoma': 'Yes', Organs: ['skin'], 'Breslow thickness': 1.8, Ulceration: 'No', 'Mitosis described': 'Yes',
    });
    const last = requests.find((r) => templateKeys(r)[0] === 'Quality Check')!;
    expect(Object.keys(previousAnswers(last)!)).toEqual([
      'Primary melanoma', 'Organs', 'Breslow thickness', 'Ulceration', 'Mitosis described', 'Mitosis count',
    ]);
    // the step prompt is restricted to its fields, examples included
    expect(step3.messages.find((m) => m.content.startsWith('1. '))!.content).toMatch(/^1\. "Mitosis count":/);
    expect(step3.messages.filter((m) => m.role === 'assistant').map((m) => m.content)).toEqual([
      '- Mitosis count - "ex-primary evidence" implies 3',
      '```json\n{\n  "Mitosis count": 3\n}\n```',
    ]);

    expect(res.skipped).toEqual(['Specimen type']);
    expect(res.cells['Specimen type']).toEqual({ status: 'MISSING' });
    expect(res.json!['Specimen type']).toBe('Not specified');
    expect(res.values).toMatchObject({ 'Primary melanoma': 'Yes', 'Breslow thickness': 1.8, 'Mitosis count': 2 });
    expect(res.steps!.map((s) => [s.step, s.status])).toEqual([[1, 'COMPLETED'], [2, 'COMPLETED'], [3, 'COMPLETED'], [4, 'SKIPPED'], [99, 'COMPLETED']]);
    expect(res.raw).toHaveLength(4);
    expect(res.reasoning).toEqual(['reading the report', 'reading the report', 'reading the report', 'reading the report']);
    expect(res.calls).toBe(4);
  });

  it('non-primary branch: conditions on normalised values, skipped descendants take defaults', async () => {
    const answer = { 'Primary melanoma': 'NO', 'Specimen type': 'slnb', Organs: 'lymph node', 'Quality Check': 'ok' };
    const { chat, requests } = scriptedChat((req) => answerFor(req, answer));
    const res = await runStrategy('PROMPT_GRAPH', ctx({ chat }));
    expect(requests.map(templateKeys)).toEqual([['Primary melanoma', 'Organs'], ['Specimen type'], ['Quality Check']]);
    expect(res.skipped).toEqual(['Breslow thickness', 'Ulceration', 'Mitosis described', 'Mitosis count']);
    expect(res.values['Specimen type']).toBe('SLNB');
    expect(res.steps!.find((s) => s.step === 2)).toMatchObject({ status: 'SKIPPED', skipped: ['Breslow thickness', 'Ulceration', 'Mitosis described'] });
  });

  it('an invalid parent answer means its children are not asked', async () => {
    const { chat, requests } = scriptedChat((req) => answerFor(req, { 'Primary melanoma': 'Ja', Organs: [], 'Quality Check': 'x' }));
    const res = await runStrategy('PROMPT_GRAPH', ctx({ chat }));
    expect(requests.map(templateKeys)).toEqual([['Primary melanoma', 'Organs'], ['Quality Check']]);
    expect(res.cells['Primary melanoma']).toMatchObject({ status: 'INVALID', category: 'OTHER' });
    expect(previousAnswers(requests[1]!)).toEqual({ 'Primary melanoma': 'Ja', Organs: [] });
  });

  it('independent branches run concurrently', async () => {
    const vars: ExtractionVariable[] = [
      { key: 'tumour', type: 'BINARY', options: ['Yes', 'No'], graphStep: 1 },
      { key: 'size', type: 'NUMERIC', graphStep: 2, dependsOn: { key: 'tumour', values: ['Yes'] } },
      { key: 'grade', type: 'FREE_TEXT', graphStep: 3, dependsOn: { key: 'tumour', values: ['Yes'] } },
    ];
    let inFlight = 0;
    let maxInFlight = 0;
    let release: () => void = () => undefined;
    const bothStarted = new Promise<void>((r) => (release = r));
    const { chat, requests } = scriptedChat(async (req) => {
      const keys = templateKeys(req);
      if (keys[0] === 'tumour') return '{"tumour": "Yes"}';
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      if (inFlight === 2) release();
      // a sequential run would wait here forever; the fallback timer only keeps a failing run from hanging
      await Promise.race([bothStarted, new Promise((r) => setTimeout(r, 2000))]);
      inFlight--;
      return keys[0] === 'size' ? '{"size": 3}' : '{"grade": "G2"}';
    });
    const res = await runStrategy('PROMPT_GRAPH', { model: 'm', variables: vars, report: REPORT, chat });
    expect(maxInFlight).toBe(2);
    expect(requests).toHaveLength(3);
    expect(res.values).toEqual({ tumour: 'Yes', size: 3, grade: 'G2' });
    // parallel branches do not see each other's answers
    const sizeReq = requests.find((r) => templateKeys(r)[0] === 'size')!;
    expect(previousAnswers(sizeReq)).toEqual({ tumour: 'Yes' });
  });

  it('a step that times out leaves its variables and their descendants unanswered', async () => {
    const { chat } = scriptedChat(
      (req) =>
        new Promise((resolve, reject) => {
          const keys = templateKeys(req);
          if (keys[0] !== 'Breslow thickness') {
            resolve(answerFor(req, ANSWER_PRIMARY));
            return;
          }
          req.signal!.addEventListener('abort', () => reject(new Error('aborted')));
        }),
    );
    const res = await runStrategy('PROMPT_GRAPH', ctx({ chat, graph: { stepTimeoutMs: 30 } }));
    expect(res.steps!.find((s) => s.step === 2)).toMatchObject({ status: 'TIMEOUT', error: 'step timed out after 30 ms' });
    expect(res.cells['Breslow thickness']).toMatchObject({ status: 'INVALID', category: 'MISSING', detail: 'step timed out' });
    expect(res.cells['Mitosis count']).toMatchObject({ status: 'INVALID', category: 'MISSING' });
    expect(res.steps!.find((s) => s.step === 3)!.status).toBe('SKIPPED');
    expect(res.values['Quality Check']).toBe('No issues detected');
  });

  it('every step failing throws the first error', async () => {
    const err = Object.assign(new Error('503'), { code: 'HTTP_ERROR' });
    const { chat } = scriptedChat(() => Promise.reject(err));
    await expect(runStrategy('PROMPT_GRAPH', ctx({ chat }))).rejects.toBe(err);
  });

  it('constrained decoding per step uses only the step variables', async () => {
    const { chat, requests } = scriptedChat((req) => answerFor(req, ANSWER_PRIMARY));
    await runStrategy('PROMPT_GRAPH', ctx({ chat, constrained: true }));
    for (const r of requests) {
      expect((r.responseFormat!.json_schema.schema as { required: string[] }).required).toEqual(templateKeys(r));
    }
  });
});
