import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import {
  exportFrameworkModelYaml,
  exportFrameworkPromptYaml,
  importFrameworkConfig,
  type FrameworkImport,
} from '../../../src/extraction/config-yaml';
import { runStrategy } from '../../../src/extraction/strategies';
import type { ExtractionVariable } from '../../../src/extraction/types';
import { scriptedChat, templateKeys } from './support';

const dir = join(__dirname, '../../fixtures/extraction/framework');
const read = (f: string): string => readFileSync(join(dir, f), 'utf8');

function roundTrip(imp: FrameworkImport): FrameworkImport {
  const prompt = exportFrameworkPromptYaml({
    variables: imp.variables,
    parts: imp.prompt.parts,
    examples: imp.prompt.examples,
    reportType: imp.reportType,
  });
  const model = imp.model ? exportFrameworkModelYaml(imp.model) : null;
  return importFrameworkConfig(prompt, model);
}

function structure(imp: FrameworkImport): unknown {
  return { reportType: imp.reportType, variables: imp.variables, graph: imp.graph, prompt: imp.prompt, model: imp.model };
}

describe('importFrameworkConfig: melanoma prompt + model', () => {
  const imp = importFrameworkConfig(read('melanoma-prompt.yaml'), read('gemma-model.yaml'));

  it('maps fields to variables', () => {
    expect(imp.variables.map((v) => [v.key, v.type, v.graphStep])).toEqual([
      ['Primary melanoma', 'BINARY', 1],
      ['Breslow thickness', 'NUMERIC', 2],
      ['Mitosis described', 'BINARY', 2],
      ['Mitosis count', 'NUMERIC', 3],
      ['Specimen type', 'CATEGORICAL', 4],
      ['SLNB metastases present', 'BINARY', 5],
      ['SLNB tumour burden', 'NUMERIC', 6],
      ['Quality Check', 'FREE_TEXT', 99],
    ]);
    const breslow = imp.variables[1]!;
    expect(breslow).toMatchObject({
      frameworkType: 'float',
      default: 'Not specified',
      instructions: 'Measured thickness of melanoma in millimeters.\nMust be between 0.0 and 400.0 if specified.',
      dependsOn: { key: 'Primary melanoma', values: ['Yes'] },
      order: 1,
    });
    expect(imp.variables[3]!.dependsOn).toEqual({ key: 'Mitosis described', values: ['Yes'] });
    expect(imp.variables[6]!.weight).toBe(2);
    expect(imp.variables[0]!.options).toEqual(['Yes', 'No', 'Not specified']);
  });

  it('turns the task JSON block into the template placeholder', () => {
    expect(imp.prompt.parts.task).toBe('Extract information into this exact JSON structure:\n```json\n{{json_template}}\n```');
    expect(imp.variables.every((v) => v.templateValue === undefined)).toBe(true);
  });

  it('parses examples, trailing commas included', () => {
    expect(imp.prompt.examples).toHaveLength(2);
    expect(imp.prompt.examples[1]).toMatchObject({ name: 'example-2', output: { 'Specimen type': 'SLNB', 'SLNB tumour burden': 0.4 } });
    expect(imp.prompt.examples[0]!.reasoning!.split('\n')).toHaveLength(8);
  });

  it('reads the model config', () => {
    expect(imp.model).toEqual({
      model: 'google/gemma-3-27b-it',
      maxModelLen: 64000,
      sampling: { maxTokens: 4096, temperature: 0.6, topP: 0.95, topK: 50, frequencyPenalty: 0, presencePenalty: 0, repetitionPenalty: 1.2 },
      selfConsistency: { samples: 3, temperatures: [0.5, 0.6, 0.7] },
      mergeConsecutiveMessages: true,
      systemMessagesAllowed: false,
      embeddingModel: 'all-mpnet-base-v2',
      extra: {},
    });
  });

  it('builds the prompt graph', () => {
    expect(imp.graph!.steps.map((s) => [s.step, s.after])).toEqual([[1, []], [2, [1]], [3, [2]], [4, [1]], [5, [4]], [6, [5]], [99, [1, 2, 3, 4, 5, 6]]]);
  });

  it('round-trips: import → export → import gives the same structure', () => {
    const again = roundTrip(imp);
    expect(structure(again)).toEqual(structure(imp));
    expect(structure(roundTrip(again))).toEqual(structure(imp));
  });
});

describe('importFrameworkConfig: the field types of the paper', () => {
  const imp = importFrameworkConfig(read('mixed-types-prompt.yaml'));
  const v = (key: string): ExtractionVariable => imp.variables.find((x) => x.key === key)!;

  it('maps types, options and defaults', () => {
    expect(v('Fazekas score')).toMatchObject({ type: 'CATEGORICAL', options: ['0', '0.5', '1', '1.5', '2', '2.5', '3', 'missing'], frameworkType: 'number_or_missing' });
    expect(v('Any brain infarct')).toMatchObject({ type: 'BINARY', options: ['0', '1', 'missing'] });
    expect(v('Was a hemihepatectomy performed?')).toMatchObject({ type: 'BINARY', options: ['Yes'], default: '' });
    expect(v('Tumour size')).toMatchObject({ type: 'NUMERIC', templateValue: 0 });
    expect(v('mitotic hpf').type).toBe('EXACT_STRING');
    expect(v('Organs')).toMatchObject({ type: 'LIST', default: [], instructions: '- in the order mentioned\n- preserve duplicates' });
    expect(v('Steatosis').type).toBe('FREE_TEXT');
    expect(v('Frozen section')).toMatchObject({ type: 'BINARY', options: ['Yes', 'No'], aliases: { true: 'Yes', false: 'No' }, default: false });
    expect(v('Measurement')).toMatchObject({ type: 'FREE_TEXT', frameworkType: 'dictionary', frameworkExtra: { notes: 'kept for export' } });
    expect(v('Measurement').structure!.map((f) => f.key)).toEqual(['Value', 'Unit']);
    expect(v('Grade')).toMatchObject({ type: 'CATEGORICAL', weight: 0.5 });
    expect(imp.graph).toBeNull();
    expect(imp.reportType).toBe('Pathology');
    expect(imp.prompt.parts.system).toBe('You are a careful extraction system. Output JSON only.');
  });

  it('reads the deprecated single example with a Python-literal output, and warns', () => {
    expect(imp.prompt.examples).toEqual([
      { name: 'example-1', input: 'A report.', output: { 'Fazekas score': 1, 'Any brain infarct': 0, Organs: ['liver'], 'Frozen section': true } },
    ]);
    expect(imp.warnings.join('\n')).toMatch(/deprecated "example"/);
    expect(imp.warnings.join('\n')).toMatch(/template key "Unknown field" is not a field/);
    expect(imp.warnings.join('\n')).toMatch(/"Measurement": kept but unused: notes/);
  });

  it('round-trips', () => {
    expect(structure(roundTrip(imp))).toEqual(structure(imp));
  });

  it('exports YAML the framework can read: fields, task with a valid JSON block', () => {
    const doc = YAML.parse(exportFrameworkPromptYaml({ variables: imp.variables, parts: imp.prompt.parts, examples: imp.prompt.examples })) as {
      field_instructions: Array<Record<string, unknown>>;
      task: string;
    };
    expect(doc.field_instructions[0]).toMatchObject({ name: 'Fazekas score', type: 'number_or_missing', options: [0, 0.5, 1, 1.5, 2, 2.5, 3, 'missing'] });
    const block = /```json\n([\s\S]*?)\n```/.exec(doc.task)![1]!;
    expect(Object.keys(JSON.parse(block) as object)).toEqual(imp.variables.map((x) => x.key));
    expect((JSON.parse(block) as Record<string, unknown>)['Tumour size']).toBe(0);
  });

  it('quotes strings that YAML 1.1 (PyYAML, used by the framework) would read as booleans', () => {
    const text = exportFrameworkPromptYaml({ variables: imp.variables });
    const doc = YAML.parse(text, { version: '1.1' }) as { field_instructions: Array<Record<string, unknown>> };
    expect(doc.field_instructions.find((f) => f['name'] === 'Frozen section')!['options']).toEqual(['Yes', 'No']);
    expect(doc.field_instructions.find((f) => f['name'] === 'Was a hemihepatectomy performed?')!['options']).toEqual(['Yes']);
  });
});

describe('importFrameworkConfig errors', () => {
  it.each([
    ['not yaml', 'field_instructions: [\n'],
    ['no fields', 'task: x\n'],
    ['field without name', 'field_instructions:\n  - type: string\n'],
    ['bad depends_on', 'field_instructions:\n  - name: a\n  - name: b\n    depends_on: {values: [x]}\n'],
    ['duplicate options', 'field_instructions:\n  - name: a\n    options: ["Yes", "yes"]\n'],
    ['duplicate names', 'field_instructions:\n  - name: a\n  - name: a\n'],
  ])('%s', (_n, yaml) => {
    expect(() => importFrameworkConfig(yaml)).toThrow(expect.objectContaining({ code: 'BAD_CONFIG' }));
  });
  it('a condition on a later step is a graph error', () => {
    const yaml = 'field_instructions:\n  - name: a\n    chain_order: 2\n  - name: b\n    chain_order: 1\n    depends_on: {field: a, values: [x]}\n';
    expect(() => importFrameworkConfig(yaml)).toThrow(expect.objectContaining({ code: 'BAD_GRAPH' }));
  });
});

describe('YAML problems are ours, coded, and print nothing', () => {
  const MARKER = 'RQLMARK-yaml-report-text';
  let emitted: unknown[];
  let printed: string[];
  beforeEach(() => {
    emitted = [];
    printed = [];
    jest.spyOn(process, 'emitWarning').mockImplementation((warning: unknown) => void emitted.push(warning));
    jest.spyOn(console, 'warn').mockImplementation((...args: unknown[]) => void printed.push(args.join(' ')));
    jest.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void printed.push(args.join(' ')));
    jest.spyOn(process.stderr, 'write').mockImplementation((chunk: unknown) => (printed.push(String(chunk)), true));
  });
  afterEach(() => jest.restoreAllMocks());

  const FIELDS = 'field_instructions:\n  - name: grade\n    type: string\n';

  it('an unresolved tag is a warning by code and line, without the text', () => {
    const imported = importFrameworkConfig(`${FIELDS}task: !weird Patient ${MARKER}\n`);
    expect(imported.warnings).toContain('prompt config: tag resolve failed at line 4, column 7');
    expect(JSON.stringify(imported.warnings)).not.toContain(MARKER);
    expect(emitted).toEqual([]);
    expect(printed).toEqual([]);
  });

  it('an example that YAML reads as a mapping key is a warning without its text', () => {
    const imported = importFrameworkConfig(`${FIELDS}examples:\n  - ? input: Patient report ${MARKER}\n    : output: "{}"\n`);
    expect(imported.warnings).toEqual(expect.arrayContaining([expect.stringMatching(/^prompt config: the mapping key at line 5, column \d+ is a list or mapping; it is read as text$/)]));
    expect(emitted).toEqual([]);
    expect(printed).toEqual([]);
  });

  it('invalid YAML is BAD_CONFIG naming the problem and its place, not quoting the text', () => {
    let error: unknown;
    try {
      importFrameworkConfig(`${FIELDS}task: x\ntask: ${MARKER}\n`);
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ code: 'BAD_CONFIG', message: 'prompt config: not valid YAML: duplicate key at line 5, column 1' });
    expect(() => importFrameworkConfig(`${FIELDS}task: [${MARKER}\n`)).toThrow(expect.objectContaining({ code: 'BAD_CONFIG', message: expect.not.stringContaining(MARKER) }));
    expect(emitted).toEqual([]);
    expect(printed).toEqual([]);
  });
});

/**
 * The framework's routing (INTEROP.md): depends_on adds an edge parent step → child step per
 * value; a step without conditional out-edges goes to the nearest later step without
 * dependencies; a step with conditional out-edges also has an else edge there; the first
 * matching edge is taken.
 */
function frameworkPath(vars: ExtractionVariable[], answers: Record<string, string>): number[] {
  const steps = [...new Set(vars.map((v) => v.graphStep!))].sort((a, b) => a - b);
  const stepOf = new Map(vars.map((v) => [v.key, v.graphStep!]));
  const independent = steps.filter((s) => !vars.some((v) => v.graphStep === s && v.dependsOn));
  const path: number[] = [];
  let cur: number | undefined = steps[0];
  while (cur !== undefined) {
    path.push(cur);
    const t: number = cur;
    const edges: Array<{ to: number; when: (() => boolean) | null }> = [];
    for (const v of vars) {
      if (!v.dependsOn || stepOf.get(v.dependsOn.key) !== t) continue;
      const dep = v.dependsOn;
      for (const value of dep.values) {
        edges.push({ to: v.graphStep!, when: () => (answers[dep.key] ?? '').trim().toLowerCase() === value.trim().toLowerCase() });
      }
    }
    const next = independent.find((s) => s > t);
    if (next !== undefined) edges.push({ to: next, when: null });
    cur = edges.find((e) => e.when === null || e.when())?.to;
  }
  return path;
}

describe('an imported prompt graph runs the steps the framework would run', () => {
  const imp = importFrameworkConfig(read('melanoma-prompt.yaml'));
  const combos: Array<Record<string, string>> = [];
  for (const pm of ['Yes', 'No', 'Not specified'])
    for (const md of ['Yes', 'No'])
      for (const st of ['Both', 'SLNB', 'WLE', 'Not specified'])
        for (const sm of ['Yes', 'No'])
          combos.push({
            'Primary melanoma': pm, 'Mitosis described': md, 'Specimen type': st, 'SLNB metastases present': sm,
            'Breslow thickness': '1', 'Mitosis count': '2', 'SLNB tumour burden': '3', 'Quality Check': 'ok',
          });

  it.each(combos.map((c) => [JSON.stringify(c), c] as const))('%s', async (_n, answers) => {
    const { chat } = scriptedChat((req) => {
      const out: Record<string, string> = {};
      for (const k of templateKeys(req)) out[k] = answers[k]!;
      return JSON.stringify(out);
    });
    const res = await runStrategy('PROMPT_GRAPH', { chat, model: 'm', variables: imp.variables, parts: imp.prompt.parts, report: { id: 'r', text: 't' } });
    const ran = res.steps!.filter((s) => s.status === 'COMPLETED').map((s) => s.step);
    expect(ran).toEqual(frameworkPath(imp.variables, answers));
  });
});
