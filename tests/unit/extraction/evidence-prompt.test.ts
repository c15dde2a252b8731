import { parseOutput } from '../../../src/extraction/output-parser';
import { buildMessages } from '../../../src/extraction/prompt-builder';
import { buildResponseSchema } from '../../../src/extraction/response-schema';
import { runStrategy } from '../../../src/extraction/strategies';
import type { ExtractionVariable, StrategyContext } from '../../../src/extraction/types';
import { MELANOMA, scriptedChat, templateKeys } from './support';

const VARS: ExtractionVariable[] = [
  { key: 'grade', type: 'CATEGORICAL', options: ['G1', 'G2', 'G3'] },
  { key: 'size', type: 'NUMERIC' },
];
const REPORT = { id: 'r1', text: 'Grade G2 tumour, 14 mm.' };

function ctx(over: Partial<StrategyContext> & Pick<StrategyContext, 'chat'>): StrategyContext {
  return { model: 'm', variables: VARS, report: REPORT, ...over };
}

describe('evidence QUOTES in the prompt and the schema', () => {
  it('asks for quotes in the field instructions and the JSON template; without evidence the prompt is as before', () => {
    const plain = buildMessages({ variables: VARS, family: 'DIRECT', report: REPORT });
    const off = buildMessages({ variables: VARS, family: 'DIRECT', report: REPORT, evidence: false });
    const on = buildMessages({ variables: VARS, family: 'DIRECT', report: REPORT, evidence: true });
    expect(off).toEqual(plain);
    expect(JSON.stringify(plain)).not.toContain('verbatim');
    const fields = on.find((m) => m.content.startsWith('1. "grade"'))!.content;
    expect(fields.match(/Evidence: under "evidence", "(grade|size)": a list of zero or more quotes copied verbatim/g)).toHaveLength(2);
    const task = on.find((m) => m.content.includes('Extract information'))!.content;
    const template = JSON.parse(/```json\n([\s\S]*?)\n```/.exec(task)![1]!) as Record<string, unknown>;
    expect(Object.keys(template)).toEqual(['grade', 'size', 'evidence']);
    expect(template.evidence).toEqual({ grade: [], size: [] });
    // Only the template and the field instructions change.
    expect(on.filter((m, i) => m.content !== plain[i]!.content).map((m) => m.content.slice(0, 10))).toEqual([fields.slice(0, 10), task.slice(0, 10)]);
  });

  it('requires an evidence object of string arrays per variable in the constrained-decoding schema only when asked', () => {
    const off = buildResponseSchema(VARS);
    expect(off.required).toEqual(['grade', 'size']);
    expect(Object.keys(off.properties as object)).toEqual(['grade', 'size']);
    const on = buildResponseSchema(VARS, true);
    expect(on.required).toEqual(['grade', 'size', 'evidence']);
    expect((on.properties as Record<string, unknown>).evidence).toEqual({
      type: 'object',
      properties: { grade: { type: 'array', items: { type: 'string' } }, size: { type: 'array', items: { type: 'string' } } },
      required: ['grade', 'size'],
      additionalProperties: false,
    });
  });
});

describe('evidence QUOTES in the parser', () => {
  const answer = '```json\n{"grade": "G2", "size": 14, "evidence": {"GRADE": ["Grade G2", 7, "G2"], "size": "14 mm"}}\n```';

  it('takes the quotes out of the answer: the values and cells are those of the answer without them', () => {
    const withQuotes = parseOutput({ content: answer }, VARS, { evidence: true });
    const without = parseOutput({ content: '```json\n{"grade": "G2", "size": 14}\n```' }, VARS, { evidence: true });
    expect(withQuotes.json).toEqual({ grade: 'G2', size: 14 });
    expect(withQuotes.cells).toEqual(without.cells);
    // Keys folded as values' keys are; a lone string is one quote; non-strings dropped.
    expect(withQuotes.quotes).toEqual({ grade: ['Grade G2', 'G2'], size: ['14 mm'] });
    expect(without.quotes).toEqual({ grade: [], size: [] });
  });

  it('leaves the answer whole and gives no quotes when evidence was not asked for', () => {
    const parsed = parseOutput({ content: answer }, VARS);
    expect(parsed.quotes).toBeUndefined();
    expect(parsed.json).toHaveProperty('evidence');
  });

  it('gives every variable an empty list when no answer object was found', () => {
    expect(parseOutput({ content: 'no idea' }, VARS, { evidence: true }).quotes).toEqual({ grade: [], size: [] });
  });

  it('keeps at most 20 quotes per variable', () => {
    const many = Array.from({ length: 30 }, (_, i) => `q${i}`);
    const parsed = parseOutput({ content: JSON.stringify({ grade: 'G1', evidence: { grade: many } }) }, VARS, { evidence: true });
    expect(parsed.quotes!.grade).toEqual(many.slice(0, 20));
  });
});

describe('evidence QUOTES through the strategies', () => {
  it('single call: the call quotes become the result quotes; NONE gives no quotes key', async () => {
    const { chat, requests } = scriptedChat(() => '{"grade": "G2", "size": 14, "evidence": {"grade": ["Grade G2"], "size": []}}');
    const on = await runStrategy('ZERO_SHOT', ctx({ chat, evidence: 'QUOTES', constrained: true }));
    expect(on.quotes).toEqual({ grade: ['Grade G2'], size: [] });
    expect(on.values).toEqual({ grade: 'G2', size: 14 });
    expect(on.json).toEqual({ grade: 'G2', size: 14 });
    const schema = requests[0]!.responseFormat!.json_schema.schema as { required: string[] };
    expect(schema.required).toContain('evidence');
    const off = await runStrategy('ZERO_SHOT', ctx({ chat }));
    expect(off.quotes).toBeUndefined();
    expect(off.values).toEqual(on.values);
  });

  it('self-consistency: each variable keeps the quotes of the sample whose value was chosen', async () => {
    const answers = [
      '{"grade": "G1", "size": 14, "evidence": {"grade": ["from sample 0"], "size": ["size 0"]}}',
      '{"grade": "G2", "size": 15, "evidence": {"grade": ["from sample 1"], "size": ["size 1"]}}',
      '{"grade": "G2", "size": 15, "evidence": {"grade": ["from sample 2"], "size": ["size 2"]}}',
    ];
    const { chat } = scriptedChat((_req, i) => answers[i]!);
    const result = await runStrategy('SELF_CONSISTENCY', ctx({ chat, evidence: 'QUOTES', selfConsistency: { temperatures: [0.1, 0.2, 0.3] } }));
    expect(result.values).toEqual({ grade: 'G2', size: 15 });
    // The vote's winner is the earliest sample with the winning value.
    expect(result.quotes).toEqual({ grade: ['from sample 1'], size: ['size 1'] });
  });

  it('prompt graph: each variable keeps the quotes of its step; a skipped one has none', async () => {
    const { chat, requests } = scriptedChat((req) => {
      const keys = templateKeys(req).filter((k) => k !== 'evidence');
      const answer: Record<string, unknown> = { evidence: {} };
      for (const k of keys) {
        answer[k] = k === 'Primary melanoma' ? 'No' : 'Not specified';
        (answer.evidence as Record<string, string[]>)[k] = [`quote for ${k}`];
      }
      return JSON.stringify(answer);
    });
    const result = await runStrategy('PROMPT_GRAPH', { model: 'm', variables: MELANOMA, report: REPORT, chat, evidence: 'QUOTES' });
    expect(requests.length).toBeGreaterThan(0);
    for (const v of MELANOMA) {
      if (result.skipped.includes(v.key)) expect(result.quotes![v.key]).toEqual([]);
      else expect(result.quotes![v.key]).toEqual([`quote for ${v.key}`]);
    }
    expect(result.skipped.length).toBeGreaterThan(0);
    expect(Object.keys(result.json!)).not.toContain('evidence');
  });
});
