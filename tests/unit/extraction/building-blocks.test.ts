import fc from 'fast-check';
import { exportFrameworkPromptYaml, importFrameworkConfig } from '../../../src/extraction/config-yaml';
import { applyContextLimit } from '../../../src/extraction/context-limit';
import { drawIndices, selectExamples } from '../../../src/extraction/example-selection';
import { buildMessages, mergeConsecutive, renderFieldInstructions, scopeReasoning } from '../../../src/extraction/prompt-builder';
import { buildResponseSchema, variableSchema } from '../../../src/extraction/response-schema';
import { renderTemplate, templatePlaceholders } from '../../../src/extraction/template';
import type { ExtractionVariable } from '../../../src/extraction/types';
import { conditionHolds, mapFrameworkType, sortVariables } from '../../../src/extraction/variables';
import { EXAMPLES, MELANOMA } from './support';

describe('templates', () => {
  it('renders in one pass and leaves unknown placeholders', () => {
    expect(renderTemplate('{{ a }} {{b}} {{c}}', { a: '{{b}}', b: 'B' })).toBe('{{b}} B {{c}}');
    expect(templatePlaceholders('{{x}} and {{ y }} and {{x}}')).toEqual(['x', 'y']);
  });
});

describe('variables', () => {
  it('sorts by order, stable for ties and missing orders', () => {
    const vs: ExtractionVariable[] = [
      { key: 'c', type: 'FREE_TEXT' },
      { key: 'b', type: 'FREE_TEXT', order: 2 },
      { key: 'a', type: 'FREE_TEXT', order: 1 },
      { key: 'd', type: 'FREE_TEXT', order: 2 },
    ];
    expect(sortVariables(vs).map((v) => v.key)).toEqual(['a', 'b', 'd', 'c']);
  });

  it('evaluates conditions on normalised values, case-insensitively and numerically', () => {
    const cond = { key: 'p', values: ['YES', '1.0'] };
    expect(conditionHolds(cond, { status: 'VALUE', value: 'Yes' })).toBe(true);
    expect(conditionHolds(cond, { status: 'VALUE', value: 1 })).toBe(true);
    expect(conditionHolds(cond, { status: 'VALUE', value: 'No' })).toBe(false);
    expect(conditionHolds(cond, { status: 'INVALID', category: 'OTHER' })).toBe(false);
    expect(conditionHolds({ key: 'p', values: ['Not specified'] }, { status: 'MISSING' })).toBe(true);
    expect(conditionHolds({ key: 'p', values: ['liver'] }, { status: 'VALUE', value: ['lung', 'Liver'] })).toBe(true);
  });

  it('maps framework type names', () => {
    expect(mapFrameworkType('float', null).type).toBe('NUMERIC');
    expect(mapFrameworkType('int_or_missing', null)).toMatchObject({ type: 'NUMERIC', orMissing: true });
    expect(mapFrameworkType('string', ['Ja', 'Nee']).type).toBe('BINARY');
    expect(mapFrameworkType('string', ['Ja', 'Nee', 'Onbekend']).type).toBe('CATEGORICAL'); // not a default missing token
    expect(mapFrameworkType('string', ['Ano', 'Ne', 'missing']).type).toBe('BINARY');
    expect(mapFrameworkType('categorical', ['Yes', 'No']).type).toBe('CATEGORICAL');
    expect(mapFrameworkType('string', ['G1', 'G2']).type).toBe('CATEGORICAL');
    expect(mapFrameworkType('list of dictionaries', null).type).toBe('FREE_TEXT');
    expect(mapFrameworkType('weird', null)).toMatchObject({ type: 'FREE_TEXT', warning: expect.stringMatching(/unknown type/) });
  });
});

describe('prompt builder details', () => {
  it('renders structure, list defaults and the missing-token fallback', () => {
    const text = renderFieldInstructions(
      [
        { key: 'm', type: 'FREE_TEXT', frameworkType: 'dictionary', structure: [{ key: 'Value', type: 'number' }, { key: 'Unit', options: ['mm'] }] },
        { key: 'l', type: 'LIST' },
        { key: 'n', type: 'NUMERIC' },
      ],
      ['missing', 'n/a'],
    );
    expect(text).toBe(
      [
        '1. "m":',
        '   - Type: dictionary',
        '   - Expected structure keys: "Value", "Unit"',
        '     - Key "Value": Type: number',
        '     - Key "Unit": Type: string; Options: ["mm"]',
        '   - Default: "missing"',
        '2. "l":',
        '   - Type: list',
        '   - Default: empty list ([])',
        '3. "n":',
        '   - Type: number',
        '   - Default: "missing"',
      ].join('\n'),
    );
  });

  it('keeps the whole example reasoning when its lines do not match the fields', () => {
    expect(scopeReasoning('one line only', MELANOMA, ['Organs'])).toBe('one line only');
    expect(scopeReasoning(EXAMPLES[0]!.reasoning!, MELANOMA, ['Organs', 'Primary melanoma'])).toBe(
      '- Primary melanoma - "ex-primary evidence" implies "Yes"\n- Organs - "ex-primary evidence" implies ["skin"]',
    );
  });

  it('merges same-role neighbours only', () => {
    expect(
      mergeConsecutive([
        { role: 'system', content: 'a' },
        { role: 'user', content: 'b' },
        { role: 'user', content: 'c' },
        { role: 'assistant', content: 'd' },
      ]),
    ).toEqual([
      { role: 'system', content: 'a' },
      { role: 'user', content: 'b\n\nc' },
      { role: 'assistant', content: 'd' },
    ]);
  });

  it('field instructions and template follow variable order, not list order', () => {
    const vars = [{ ...MELANOMA[1]!, order: 2 }, { ...MELANOMA[0]!, order: 1 }];
    const m = buildMessages({ variables: vars, family: 'DIRECT', report: { id: 'r', text: 't' } });
    expect(m[1]!.content.indexOf('Primary melanoma')).toBeLessThan(m[1]!.content.indexOf('Breslow thickness'));
    expect(m[2]!.content).toContain('{\n  "Primary melanoma": "",\n  "Breslow thickness": ""\n}');
  });
});

describe('response schema', () => {
  it('per type', () => {
    expect(variableSchema({ key: 'a', type: 'CATEGORICAL', options: ['G1', 'G2'] })).toEqual({ enum: ['G1', 'G2', null] });
    expect(variableSchema({ key: 'a', type: 'NUMERIC' })).toEqual({ type: ['number', 'null'] });
    expect(variableSchema({ key: 'a', type: 'NUMERIC', default: 'missing' })).toEqual({ anyOf: [{ type: 'number' }, { enum: ['missing', null] }] });
    expect(variableSchema({ key: 'a', type: 'EXACT_STRING' })).toEqual({ type: ['string', 'null'] });
    expect(variableSchema({ key: 'a', type: 'BINARY', options: ['Yes'], default: '' })).toEqual({ enum: ['Yes', null] });
    const dict = variableSchema({ key: 'a', type: 'FREE_TEXT', structure: [{ key: 'Unit', options: ['mm'] }] });
    expect(dict).toEqual({ anyOf: [{ type: 'object', properties: { Unit: { enum: ['mm', null] } } }, { type: ['string', 'null'] }] });
    const s = buildResponseSchema(MELANOMA) as { additionalProperties: boolean; required: string[] };
    expect(s.additionalProperties).toBe(false);
    expect(s.required).toHaveLength(MELANOMA.length);
  });
});

describe('example selection', () => {
  it('draws distinct indices deterministically for a seed', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 30 }), fc.integer({ min: 0, max: 40 }), fc.integer(), (n, k, seed) => {
        const a = drawIndices(n, k, seed);
        expect(a).toEqual(drawIndices(n, k, seed));
        expect(a).toHaveLength(Math.min(n, k));
        expect(new Set(a).size).toBe(a.length);
        expect(a.every((i) => i >= 0 && i < n)).toBe(true);
      }),
    );
  });
  it('every example can be drawn', () => {
    const seen = new Set<number>();
    for (let s = 0; s < 50; s++) seen.add(drawIndices(4, 1, s)[0]!);
    expect([...seen].sort()).toEqual([0, 1, 2, 3]);
  });
  it('named examples keep the named order', () => {
    expect(selectExamples(EXAMPLES, { names: ['ex-insitu', 'ex-primary'], count: 3 }).map((e) => e.name)).toEqual(['ex-insitu', 'ex-primary']);
  });
});

describe('context limit', () => {
  it('cuts by characters or approximate tokens and never splits a surrogate pair', () => {
    expect(applyContextLimit({ id: 'r', text: 'abcdef' }, { maxChars: 10 })).toEqual({ report: { id: 'r', text: 'abcdef' }, truncated: false });
    expect(applyContextLimit({ id: 'r', text: 'abcdefghij' }, { maxTokens: 1, maxChars: 8 }).report.text).toBe('abcd');
    expect(applyContextLimit({ id: 'r', text: 'ab😀cd' }, { maxChars: 3 }).report.text).toBe('ab');
    expect(() => applyContextLimit({ id: 'r', text: 'x' }, { maxChars: -1 })).toThrow(expect.objectContaining({ code: 'BAD_INPUT' }));
  });
});

describe('framework YAML round trip of generated variables', () => {
  const key = fc.stringMatching(/^[A-Za-z][A-Za-z0-9 ?()-]{0,20}$/).map((s) => s.trim()).filter((s) => s !== '');
  const option = fc.constantFrom('Yes', 'No', 'Not specified', 'G1', 'G2', 'G3', '0', '0.5', '1', 'Ja', 'Nee', 'mm', 'on', 'off', 'y');
  const variable = fc.record({
    key,
    type: fc.constantFrom('CATEGORICAL', 'BINARY', 'NUMERIC', 'FREE_TEXT', 'LIST', 'EXACT_STRING'),
    options: fc.uniqueArray(option, { minLength: 1, maxLength: 5, selector: (o) => o.toLowerCase() }),
    description: fc.option(fc.string({ maxLength: 20 }).filter((s) => s.trim() === s && s !== ''), { nil: undefined }),
    instructions: fc.option(fc.constantFrom('Use mm.', '- first\n- second', 'Line one\nLine two'), { nil: undefined }),
    default: fc.option(fc.constantFrom('Not specified', '', 'missing', 0, null, [], false), { nil: undefined }),
    weight: fc.option(fc.constantFrom(0.5, 1, 2), { nil: undefined }),
    tolerance: fc.option(fc.constantFrom(0, 0.1), { nil: undefined }),
  });

  it('import(export(variables)) reproduces the variables', () => {
    fc.assert(
      fc.property(fc.uniqueArray(variable, { minLength: 1, maxLength: 6, selector: (v) => v.key.toLowerCase() }), (gen) => {
        const vars: ExtractionVariable[] = gen.map((g, i) => {
          const categorical = g.type === 'CATEGORICAL' || g.type === 'BINARY';
          const v: ExtractionVariable = { key: g.key, type: g.type as ExtractionVariable['type'], order: i };
          if (categorical) v.options = g.options;
          if (g.description !== undefined) v.description = g.description;
          if (g.instructions !== undefined) v.instructions = g.instructions;
          if (g.default !== undefined) v.default = g.default;
          if (g.weight !== undefined) v.weight = g.weight;
          if (g.tolerance !== undefined) v.tolerance = g.tolerance;
          return v;
        });
        const imp = importFrameworkConfig(exportFrameworkPromptYaml({ variables: vars }));
        expect(imp.variables.map((v) => v.key)).toEqual(vars.map((v) => v.key));
        imp.variables.forEach((got, i) => {
          const want = vars[i]!;
          expect(got.type).toBe(want.type);
          expect(got.options ?? null).toEqual(want.options ?? null);
          expect(got.description ?? null).toBe(want.description ?? null);
          expect(got.instructions ?? null).toBe(want.instructions ?? null);
          expect(got.default).toEqual(want.default);
          expect(got.weight ?? null).toBe(want.weight ?? null);
          expect(got.tolerance ?? null).toBe(want.tolerance ?? null);
        });
        const again = importFrameworkConfig(exportFrameworkPromptYaml({ variables: imp.variables, parts: imp.prompt.parts }));
        expect(again.variables).toEqual(imp.variables);
      }),
      { numRuns: 200 },
    );
  });
});
