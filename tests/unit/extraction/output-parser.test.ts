import { parseOutput, splitReasoning } from '../../../src/extraction/output-parser';
import { findJsonCandidates, quoteBareValues, stripHashComments } from '../../../src/extraction/json-candidates';
import type { ExtractionVariable } from '../../../src/extraction/types';

const vars: ExtractionVariable[] = [
  { key: 'grade', type: 'CATEGORICAL', options: ['G1', 'G2', 'G3'] },
  { key: 'size', type: 'NUMERIC' },
  { key: 'organs', type: 'LIST' },
];

describe('splitReasoning', () => {
  it('takes closed think blocks, orphan closes and the server field', () => {
    const r = splitReasoning('<think>a {"grade":"G1"}</think>\n{"grade":"G2"}', 'server', false);
    expect(r.reasoning).toBe('server\n\na {"grade":"G1"}');
    expect(r.answerText).not.toContain('G1');
    const o = splitReasoning('I think G1 {"grade":"G1"}</think>{"grade":"G3"}', null, false);
    expect(o.reasoning).toBe('I think G1 {"grade":"G1"}');
    expect(o.answerText).toBe('{"grade":"G3"}');
  });
  it('an unterminated think is reasoning; searched only when the model stopped by itself', () => {
    expect(splitReasoning('<think>draft {"grade":"G1"}', null, true).answerText.trim()).toBe('');
    expect(splitReasoning('<think>draft {"grade":"G1"}', null, false).answerText).toContain('G1');
  });
});

describe('findJsonCandidates', () => {
  it('matches braces aware of strings and escapes', () => {
    const c = findJsonCandidates('x {"a": "}{\\"", "b": {"c": 1}} y {z}');
    expect(c.map((x) => x.text)).toEqual(['{"a": "}{\\"", "b": {"c": 1}}', '{z}']);
    expect(c.every((x) => x.closed)).toBe(true);
  });
  it('ends an open object at its fence and reports unclosed ones', () => {
    const c = findJsonCandidates('```json\n{"a": 1, "b": 2\n```\nthen {"c": 3, "d"');
    expect(c).toHaveLength(2);
    expect(c[0]).toMatchObject({ closed: false, fenced: true });
    expect(c[1]).toMatchObject({ closed: false, fenced: false });
    expect(c[1]!.text.slice(0, c[1]!.lastTopLevelComma)).toBe('{"c": 3');
  });
  it("python single-quoted strings inside objects, prose apostrophes outside", () => {
    const c = findJsonCandidates("it's here: {'a': 'x}y', 'b': \"it's\"}");
    expect(c.map((x) => x.text)).toEqual(["{'a': 'x}y', 'b': \"it's\"}"]);
  });
});

describe('repair helpers', () => {
  it('strips # comments outside strings', () => {
    expect(stripHashComments('{"a": "#1", # note\n"b": 2}')).toBe('{"a": "#1", \n"b": 2}');
  });
  it('quotes bare values verbatim', () => {
    expect(quoteBareValues('{"size": 1.5 mm, "x": 1,5}')).toBe('{"size": "1.5 mm", "x": "1,5"}');
    expect(quoteBareValues('{"a": true, "b": null, "c": -2.5e3}')).toBe('{"a": true, "b": null, "c": -2.5e3}');
  });
});

describe('parseOutput', () => {
  it('takes the last object that parses', () => {
    const p = parseOutput({ content: '```json\n{"grade": "G1"}\n```\nCorrection:\n```json\n{"grade": "G2", "size": "1,5", "organs": ["liver"]}\n```' }, vars);
    expect(p.json).toEqual({ grade: 'G2', size: '1,5', organs: ['liver'] });
    expect(p.cells).toEqual({
      grade: { status: 'VALUE', value: 'G2' },
      size: { status: 'VALUE', value: 1.5 },
      organs: { status: 'VALUE', value: ['liver'] },
    });
  });
  it('no braces → MISSING, braces but unparsable → OUT_OF_FORMAT', () => {
    expect(parseOutput({ content: 'I cannot help with that.' }, vars).cells['grade']).toMatchObject({ status: 'INVALID', category: 'MISSING' });
    const bad = parseOutput({ content: '{{{ :: }' }, vars);
    expect(bad.parseError).toMatch(/no JSON object parsed/);
    expect(bad.cells['size']).toMatchObject({ status: 'INVALID', category: 'OUT_OF_FORMAT' });
  });
  it('drops the incomplete tail of a truncated object', () => {
    const p = parseOutput({ content: '{"grade": "G3", "size": 1', finishReason: 'length' }, vars);
    expect(p.truncated).toBe(true);
    expect(p.json).toEqual({ grade: 'G3' });
    expect(p.cells['size']).toMatchObject({ status: 'INVALID', category: 'MISSING' });
  });
});
