import { importFrameworkConfig } from '../../../src/extraction/config-yaml';
import { ExtractionError } from '../../../src/extraction/errors';
import { MAX_MISSING_TOKENS, MAX_OPTIONS, MAX_PROMPT_EXAMPLES, MAX_TAGS, MAX_VARIABLES } from '../../../src/extraction/limits';
import { checkArgument } from '../../../src/graphql/input-guard';
import { LIST_SIZES } from '../../../src/graphql/query-cost';
import { MAX_ANNOTATORS_PER_DATASET } from '../../../src/modules/annotation/annotation.service';
import { parseRecords } from '../../../src/modules/imports';
import { readExternalId } from '../../../src/modules/imports/parse-records';
import { BOM_REASON, characterCount, nameProblem, TOO_LONG_REASON } from '../../../src/modules/imports/text-checks';
import { CreateDatasetInput } from '../../../src/modules/dataset/dataset.input';
import { validateVariables } from '../../../src/modules/use-case/variable-rules';
import { VariableType } from '../../../src/modules/use-case/variable.entity';
import type { VariableInput } from '../../../src/modules/use-case/use-case.input';

const deep = (depth: number, leaf = '1') => '{"a":'.repeat(depth) + leaf + '}'.repeat(depth);

describe('imported records: values refused rather than altered', () => {
  it('a lone surrogate in a JSON, JSONL or CSV value or key is a row error naming the field', () => {
    const jsonl = parseRecords('{"id":"R1","text":"ok"}\n{"id":"R2","text":"cut \\ud800"}\n{"id":"R3","meta":{"k\\udc00":1}}\n', 'JSONL');
    expect(jsonl.rows.map((r) => r.row)).toEqual([1]);
    expect(jsonl.errors).toEqual([
      { row: 2, line: 2, field: 'text', reason: expect.stringMatching(/^field 'text' contains a lone UTF-16 surrogate/) },
      { row: 3, line: 3, field: 'meta', reason: expect.stringMatching(/^field 'meta' has a key that contains a lone UTF-16 surrogate/) },
    ]);
    const json = parseRecords('[{"id":"R1","text":"\\udfff"}]', 'JSON');
    expect(json.errors).toEqual([{ row: 1, field: 'text', reason: expect.stringMatching(/lone UTF-16 surrogate/) }]);
    // A GraphQL string carries lone surrogates into CSV content as they are; the CSV reader
    // would turn them into U+FFFD, so the file is refused, naming the line.
    const csv = parseRecords('id,text\nR0,fine 🧬\nR1,"half \ud83d"\n', 'CSV');
    expect(csv.errors).toEqual([{ row: 0, line: 3, reason: expect.stringMatching(/^the file contains a lone UTF-16 surrogate/) }]);
    expect(csv.rows).toEqual([]);
    expect(parseRecords('id,text\nR0,fine 🧬\n', 'CSV').errors).toEqual([]);
  });

  it('numbers no double holds (1e400, -1e400, 1e-400) are row errors, not null or 0', () => {
    const jsonl = parseRecords('{"id":"R1","size":1e400}\n{"id":"R2","size":-1e400}\n{"id":"R3","size":1e-400}\n{"id":"R4","size":1e308}\n', 'JSONL');
    expect(jsonl.errors.map((e) => [e.row, e.reason])).toEqual([
      [1, expect.stringMatching(/number out of range/)],
      [2, expect.stringMatching(/number out of range/)],
      [3, expect.stringMatching(/number out of range/)],
    ]);
    expect(jsonl.rows.map((r) => r.record.size)).toEqual([1e308]);
    const json = parseRecords('[\n{"id":"R1","size":2},\n{"id":"R2","meta":{"x":[1e999]}}\n]', 'JSON');
    expect(json.errors).toEqual([{ row: 2, line: 3, reason: expect.stringMatching(/number out of range/) }]);
    expect(json.rows.map((r) => r.record.id)).toEqual(['R1']);
    // In a string it is text.
    expect(parseRecords('{"id":"R1","size":"1e400"}', 'JSONL').errors).toEqual([]);
  });

  it('a record nested deeper than 64 levels is a row error (the record is level 1)', () => {
    const ok = parseRecords(`{"id":"R1","m":${deep(63)}}`, 'JSONL');
    expect(ok.errors).toEqual([]);
    const tooDeep = parseRecords(`{"id":"R1","m":${deep(64)}}\n{"id":"R2","m":${deep(100_000)}}`, 'JSONL');
    expect(tooDeep.errors.map((e) => [e.row, e.reason])).toEqual([
      [1, expect.stringMatching(/nested deeper than 64 levels/)],
      [2, expect.stringMatching(/nested deeper than 64 levels/)],
    ]);
  });
});

describe('framework config YAML: values refused rather than altered', () => {
  const prompt = (extra: string) => `field_instructions:\n  - name: grade\n    type: string\n${extra}task: "Extract {json_template}"\n`;
  const failure = (yaml: string, model?: string) => {
    try {
      importFrameworkConfig(yaml, model ?? null);
    } catch (error) {
      expect(error).toBeInstanceOf(ExtractionError);
      return { code: (error as ExtractionError).code, field: (error as ExtractionError).field, message: (error as Error).message };
    }
    throw new Error('expected the config to be refused');
  };

  it('a NUL written as "\\0", a lone surrogate escape, an infinite number or deep nesting is BAD_CONFIG with its path', () => {
    expect(failure(prompt('    default: "a\\0b"\n'))).toEqual({ code: 'BAD_CONFIG', field: undefined, message: 'prompt config: field_instructions[0].default contains a NUL character' });
    expect(failure(prompt('    description: "cut \\ud800"\n')).message).toMatch(/field_instructions\[0\]\.description contains a lone UTF-16 surrogate/);
    expect(failure(prompt('    default: 1e400\n')).message).toMatch(/field_instructions\[0\]\.default holds a number out of range/);
    expect(failure(prompt('    default: .inf\n')).message).toMatch(/out of range/);
    expect(failure(prompt(`    default: ${'['.repeat(70)}${']'.repeat(70)}\n`)).message).toMatch(/nested deeper than 64 levels/);
    const model = failure(prompt(''), 'temperature: 0\nextra: "x\\0"\n');
    expect(model).toMatchObject({ code: 'BAD_CONFIG', field: 'modelYaml' });
  });

  it('a NUL decoded from the JSON of an example output is refused too', () => {
    const examples = 'examples:\n  - input: "report"\n    output: \'{"grade": "G1\\u0000"}\'\n';
    expect(failure(prompt('') + examples).message).toMatch(/examples\[0\]\.output\.grade contains a NUL character/);
  });

  it('an alias bomb is refused', () => {
    const bomb = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
    for (let i = 1; i < 10; i++) bomb.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9).fill(`*${String.fromCharCode(96 + i)}`).join(',')}]`);
    expect(failure(`${bomb.join('\n')}\n${prompt('')}`).code).toBe('BAD_CONFIG');
  });

  it(`more than ${MAX_VARIABLES} fields or ${MAX_PROMPT_EXAMPLES} examples is BAD_CONFIG`, () => {
    const fields = Array.from({ length: MAX_VARIABLES + 1 }, (_, i) => `  - name: v${i}\n    type: string\n`).join('');
    expect(failure(`field_instructions:\n${fields}`).message).toMatch(/at most 200 variables/);
    const examples = Array.from({ length: MAX_PROMPT_EXAMPLES + 1 }, () => '  - input: r\n    output: \'{"grade": "G1"}\'\n').join('');
    expect(failure(`${prompt('')}examples:\n${examples}`).message).toMatch(/at most 100/);
  });
});

describe('GraphQL arguments: checkArgument', () => {
  const data = { info: { fieldName: 'createUseCase' } } as never;
  /** An input object, as type-graphql hands it over. */
  class SomeInput {}
  const refused = (value: Record<string, unknown>) => {
    try {
      checkArgument(Object.assign(new SomeInput(), value), undefined, data);
      return null;
    } catch (error) {
      return { code: (error as { code: string }).code, field: (error as { details?: { field?: string } }).details?.field, message: (error as Error).message };
    }
  };

  it('refuses lone surrogates anywhere, non-finite numbers and JSON nested deeper than 64 levels', () => {
    expect(refused({ name: 'cut \ud800' })).toMatchObject({ code: 'BAD_USER_INPUT', field: 'name', message: expect.stringMatching(/lone UTF-16 surrogate/) });
    expect(refused({ config: { 'k\udc00': 1 } })).toMatchObject({ field: 'config' });
    expect(refused({ config: { a: [Number.POSITIVE_INFINITY] } })).toMatchObject({ field: 'config.a[0]', message: expect.stringMatching(/out of range/) });
    expect(refused({ config: JSON.parse(deep(64)) })).toBeNull();
    expect(refused({ config: JSON.parse(deep(65)) })).toMatchObject({ field: expect.stringMatching(/^config(\.a)+$/), message: expect.stringMatching(/nested deeper than 64/) });
    expect(refused({ config: JSON.parse(deep(100_000)) })).toMatchObject({ code: 'BAD_USER_INPUT' });
    expect(refused({ name: 'pair 𝔸 fine', n: 1e308 })).toBeNull();
  });
});

describe('names: counted in characters, never changed silently', () => {
  const emoji = (n: number) => '🧬'.repeat(n);

  it('counts code points, a surrogate pair as one character', () => {
    expect(characterCount('')).toBe(0);
    expect(characterCount('abc')).toBe(3);
    expect(characterCount(emoji(251))).toBe(251);
    expect(emoji(251).length).toBe(502);
    expect(characterCount('Ča\u0301slav 𝔸')).toBe(9);
    // Half a pair is a character of its own (it is refused elsewhere).
    expect(characterCount('\ud800x')).toBe(2);
  });

  it('takes up to 500 characters, however many UTF-16 units, and refuses a byte-order mark anywhere', () => {
    expect(nameProblem(emoji(500))).toBeNull();
    expect(nameProblem(`  ${emoji(500)}  `)).toBeNull();
    expect(nameProblem(emoji(501))).toBe(TOO_LONG_REASON);
    expect(nameProblem('\ufeffname')).toBe(BOM_REASON);
    expect(nameProblem('na\ufeffme')).toBe(BOM_REASON);
    expect(nameProblem(`${'x'.repeat(300)}`, 300)).toBeNull();
    expect(nameProblem(`${'x'.repeat(301)}`, 300)).toBe('is longer than 300 characters');
  });

  it('holds for GraphQL names, variable keys and options, and imported ids', () => {
    const data = { info: { fieldName: 'createDataset' } } as never;
    const dataset = (name: string) => Object.assign(new CreateDatasetInput(), { useCaseId: 'x', name });
    expect(() => checkArgument(dataset(emoji(251)), undefined, data)).not.toThrow();
    expect(() => checkArgument(dataset(emoji(501)), undefined, data)).toThrow(TOO_LONG_REASON);
    expect(() => checkArgument(dataset('\ufeffname'), undefined, data)).toThrow(BOM_REASON);

    const variable = (v: Partial<VariableInput>) => validateVariables([{ key: 'grade', type: VariableType.CATEGORICAL, options: ['G1', 'G2'], ...v } as VariableInput]).problems;
    expect(variable({ key: emoji(500) })).toEqual([]);
    expect(variable({ key: '\ufeffgrade' })).toEqual([{ field: 'variables[0].key', reason: BOM_REASON }]);
    expect(variable({ options: ['\ufeffG1', 'G2'] })).toEqual([{ field: 'variables[0].options', reason: `an option ${BOM_REASON}` }]);

    const ids = parseRecords(JSON.stringify([{ id: '\ufeffR1', text: 't' }, { id: emoji(500), text: 't' }, { id: emoji(501), text: 't' }]), 'JSON');
    expect(readExternalId(ids.rows[0]!.record, 'id')).toEqual({ ok: false, reason: `id in field 'id' ${BOM_REASON}` });
    expect(readExternalId(ids.rows[1]!.record, 'id')).toEqual({ ok: true, id: emoji(500) });
    expect(readExternalId(ids.rows[2]!.record, 'id')).toEqual({ ok: false, reason: `id in field 'id' ${TOO_LONG_REASON}` });
  });
});

describe('caps on what a use case and a prompt hold', () => {
  const variable = (i: number, extra: Partial<VariableInput> = {}): VariableInput => ({ key: `v${i}`, type: VariableType.FREE_TEXT, ...extra });

  it(`at most ${MAX_VARIABLES} variables, ${MAX_OPTIONS} options and condition values, ${MAX_MISSING_TOKENS} missing tokens per variable`, () => {
    expect(validateVariables(Array.from({ length: MAX_VARIABLES }, (_, i) => variable(i))).problems).toEqual([]);
    expect(validateVariables(Array.from({ length: 5000 }, (_, i) => variable(i))).problems).toEqual([{ field: 'variables', reason: 'a use case has at most 200 variables, got 5000' }]);
    const options = Array.from({ length: MAX_OPTIONS + 1 }, (_, i) => `o${i}`);
    expect(validateVariables([variable(0, { type: VariableType.CATEGORICAL, options })]).problems).toEqual([{ field: 'variables[0].options', reason: 'at most 1000 options, got 1001' }]);
    expect(validateVariables([variable(0, { type: VariableType.CATEGORICAL, options: options.slice(0, MAX_OPTIONS) })]).problems).toEqual([]);
    const tokens = Array.from({ length: MAX_MISSING_TOKENS + 1 }, (_, i) => `t${i}`);
    expect(validateVariables([variable(0, { missingTokens: tokens })]).problems.map((p) => p.field)).toEqual(['variables[0].missingTokens']);
    const values = Array.from({ length: MAX_OPTIONS + 1 }, (_, i) => `x${i}`);
    const conditioned = [variable(0, { graphStep: 1 }), variable(1, { graphStep: 2, dependsOn: { key: 'v0', values } })];
    expect(validateVariables(conditioned).problems.map((p) => p.field)).toEqual(['variables[1].dependsOn.values']);
  });

  it('are the maxima request pricing assumes', () => {
    expect(LIST_SIZES['UseCase.variables']!.max).toBe(MAX_VARIABLES);
    expect(LIST_SIZES['Variable.options']!.max).toBe(MAX_OPTIONS);
    expect(LIST_SIZES['VariableCondition.values']!.max).toBe(MAX_OPTIONS);
    expect(LIST_SIZES['UseCase.tags']!.max).toBe(MAX_TAGS);
    expect(LIST_SIZES['UseCase.missingTokens']!.max).toBe(MAX_MISSING_TOKENS);
    expect(LIST_SIZES['Variable.missingTokens']!.max).toBe(MAX_MISSING_TOKENS);
    expect(LIST_SIZES['Dataset.annotators']!.max).toBe(MAX_ANNOTATORS_PER_DATASET);
    expect(LIST_SIZES['Prompt.examples']!.max).toBe(MAX_PROMPT_EXAMPLES);
  });
});
