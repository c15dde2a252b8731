import {
  DEFAULT_MISSING_TOKENS,
  cellsEqual,
  collapseValue,
  hasCollapse,
  normaliseRecord,
  normaliseValue,
  parseNumeric,
} from '../../../src/analytics/normalise';
import { AnalyticsError } from '../../../src/analytics/errors';
import type { NormalisedCell, VariableSpec } from '../../../src/analytics/types';

const grade: VariableSpec = { key: 'grade', type: 'CATEGORICAL', options: ['G1', 'G2', 'G3'] };
const fazekas: VariableSpec = { key: 'fazekas', type: 'CATEGORICAL', options: ['0', '0.5', '1', '2', '3'] };
const metastasis: VariableSpec = {
  key: 'metastasis',
  type: 'BINARY',
  options: ['Yes', 'No'],
  aliases: { ja: 'Yes', nee: 'No', ano: 'Yes', ne: 'No' },
};
const birads: VariableSpec = {
  key: 'birads',
  type: 'CATEGORICAL',
  options: ['0', '1', '2', '3', '4A', '4B', '4C', '5', '6'],
  collapseMap: { '4A': '4', '4B': '4', '4C': '4' },
};
const czechAtypia: VariableSpec = {
  key: 'atypia',
  type: 'CATEGORICAL',
  options: ['Mírná', 'Střední', 'Těžká'],
  aliases: { mild: 'Mírná', moderate: 'Střední', severe: 'Těžká' },
};
const dutchProcedure: VariableSpec = {
  key: 'procedure',
  type: 'CATEGORICAL',
  options: ['Resectie', 'Biopsie', 'Excisie met ruime marge'],
};
const breslow: VariableSpec = { key: 'breslow', type: 'NUMERIC' };
const samples: VariableSpec = { key: 'samples', type: 'NUMERIC', tolerance: 0 };
const disease: VariableSpec = { key: 'disease', type: 'FREE_TEXT' };
const organs: VariableSpec = { key: 'organs', type: 'LIST' };
const mitoses: VariableSpec = { key: 'mitoses', type: 'EXACT_STRING' };

const value = (v: string | number | string[]): NormalisedCell => ({ status: 'VALUE', value: v });
const MISSING: NormalisedCell = { status: 'MISSING' };

function category(spec: VariableSpec, raw: unknown): string {
  const c = normaliseValue(spec, raw);
  return c.status === 'INVALID' ? c.category : c.status;
}

describe('parseNumeric', () => {
  it.each([
    ['10', 10],
    ['10.0', 10],
    [' 1,5 ', 1.5],
    ['0,5', 0.5],
    ['-2.25', -2.25],
    ['.5', 0.5],
    ['1e3', 1000],
  ])('%j → %d', (s, x) => expect(parseNumeric(s)).toBe(x));
  it.each(['3-4', '>1', 'about ten', '1 000', '', '1.2.3', 'NaN', 'Infinity', '0x10', '1,2,3'])('%j is not a number', (s) =>
    expect(parseNumeric(s)).toBeUndefined(),
  );
});

describe('missing values', () => {
  it.each([null, undefined, '', '   ', '\t\n', [], ['', '  '], 'Not specified', 'NOT SPECIFIED', '  n/a ', 'None', 'unknown', 'Not   applicable', 'missing'])(
    '%j is MISSING for every type',
    (raw) => {
      for (const spec of [grade, metastasis, breslow, disease, organs, mitoses]) {
        expect(normaliseValue(spec, raw)).toEqual(MISSING);
      }
    },
  );

  it('uses the variable tokens over the use-case tokens over the defaults', () => {
    const custom: VariableSpec = { ...grade, missingTokens: ['niet vermeld'] };
    expect(normaliseValue(custom, 'Niet  vermeld')).toEqual(MISSING);
    // the variable's own list replaces the defaults
    expect(category(custom, 'unknown')).toBe('OTHER');
    expect(normaliseValue(grade, 'neuvedeno', { missingTokens: ['neuvedeno'] })).toEqual(MISSING);
    expect(normaliseValue(custom, 'neuvedeno', { missingTokens: ['neuvedeno'] })).toEqual({
      status: 'INVALID',
      category: 'OTHER',
      detail: 'no matching value',
    });
  });

  it('exports the default tokens of docs/scoring.md §1', () => {
    expect([...DEFAULT_MISSING_TOKENS].sort()).toEqual(
      ['missing', 'n/a', 'none', 'not applicable', 'not specified', 'unknown'].sort(),
    );
  });
});

describe('categorical matching', () => {
  it('case-folds, trims and collapses whitespace', () => {
    expect(normaliseValue(grade, ' g2 ')).toEqual(value('G2'));
    expect(normaliseValue(dutchProcedure, 'excisie   MET\truime marge')).toEqual(value('Excisie met ruime marge'));
  });

  it('keeps diacritics significant but folds their case (Czech, Dutch)', () => {
    expect(normaliseValue(czechAtypia, 'STŘEDNÍ')).toEqual(value('Střední'));
    expect(normaliseValue(czechAtypia, 'těžká')).toEqual(value('Těžká'));
    expect(category(czechAtypia, 'Stredni')).toBe('OTHER');
    expect(normaliseValue(czechAtypia, 'Moderate')).toEqual(value('Střední'));
    // composed and decomposed Unicode spellings are the same text
    expect(normaliseValue(czechAtypia, 'Mi\u0301rna\u0301')).toEqual(value('Mírná'));
    expect(normaliseValue(dutchProcedure, 'resectie')).toEqual(value('Resectie'));
  });

  it('applies aliases', () => {
    expect(normaliseValue(metastasis, 'JA')).toEqual(value('Yes'));
    expect(normaliseValue(metastasis, 'ne')).toEqual(value('No'));
    expect(normaliseValue(metastasis, 'Ano')).toEqual(value('Yes'));
  });

  it('matches numeric-looking options numerically', () => {
    expect(normaliseValue(fazekas, 1)).toEqual(value('1'));
    expect(normaliseValue(fazekas, 1.0)).toEqual(value('1'));
    expect(normaliseValue(fazekas, '1')).toEqual(value('1'));
    expect(normaliseValue(fazekas, '1.0')).toEqual(value('1'));
    expect(normaliseValue(fazekas, '0,5')).toEqual(value('0.5'));
    expect(normaliseValue(fazekas, 0.5)).toEqual(value('0.5'));
    expect(normaliseValue(fazekas, '.5')).toEqual(value('0.5'));
    expect(category(fazekas, 4)).toBe('OTHER');
    expect(category(fazekas, '1.5')).toBe('OTHER');
  });

  it('matches a number against a non-numeric option list by its spelling', () => {
    expect(normaliseValue(birads, 5)).toEqual(value('5'));
    expect(normaliseValue(birads, '4a')).toEqual(value('4A'));
    expect(category(birads, 4)).toBe('OTHER');
  });

  it('never maps to the nearest option', () => {
    expect(category(grade, 'G2 (moderately differentiated)')).toBe('OTHER');
    expect(category(grade, 'Grade 2')).toBe('OTHER');
    expect(category(grade, 'G4')).toBe('OTHER');
    expect(category(grade, 'I cannot determine the grade from this report.')).toBe('OTHER');
  });

  it('classifies several values as MULTI_VALUED', () => {
    expect(category(birads, '4A or 4B')).toBe('MULTI_VALUED');
    expect(category(grade, ['G2', 'G3'])).toBe('MULTI_VALUED');
    expect(category(grade, 'G2/G3')).toBe('MULTI_VALUED');
    expect(category(grade, 'G2, G3')).toBe('MULTI_VALUED');
    expect(category(metastasis, 'ja of nee')).toBe('MULTI_VALUED');
    expect(category(czechAtypia, 'mírná nebo střední')).toBe('MULTI_VALUED');
    expect(category(czechAtypia, 'mírná a střední')).toBe('MULTI_VALUED');
  });

  it('classifies ranges and hedges as AMBIGUOUS', () => {
    expect(category(fazekas, '2-3')).toBe('AMBIGUOUS');
    expect(category(fazekas, '2 – 3')).toBe('AMBIGUOUS');
    expect(category(fazekas, '1 tot 2')).toBe('AMBIGUOUS');
    expect(category(fazekas, '1 až 2')).toBe('AMBIGUOUS');
    expect(category(birads, 'possibly 4')).toBe('AMBIGUOUS');
    expect(category(grade, 'probably G2')).toBe('AMBIGUOUS');
    expect(category(grade, 'waarschijnlijk G2')).toBe('AMBIGUOUS');
    expect(category(czechAtypia, 'pravděpodobně střední')).toBe('AMBIGUOUS');
    expect(category(grade, 'G2?')).toBe('AMBIGUOUS');
    expect(category(fazekas, '>1')).toBe('AMBIGUOUS');
  });

  it('classifies a range as AMBIGUOUS whatever its ends, options or not', () => {
    expect(category(fazekas, '3-4')).toBe('AMBIGUOUS');
    expect(category(fazekas, '7-9')).toBe('AMBIGUOUS');
    expect(category(fazekas, '3 tot 4')).toBe('AMBIGUOUS');
    expect(category(grade, 'G3-G4')).toBe('AMBIGUOUS');
    expect(category(grade, 'G4 - G5')).toBe('AMBIGUOUS');
    expect(category(grade, 'II-III')).toBe('AMBIGUOUS');
    expect(category(birads, '4C-5')).toBe('AMBIGUOUS');
    expect(category(birads, '5 až 7')).toBe('AMBIGUOUS');
    expect(category(breslow, 'T2-T3')).toBe('AMBIGUOUS');
  });

  it('does not take hyphenated words or dates for ranges', () => {
    expect(category(grade, 'low-grade')).toBe('OTHER');
    expect(category(grade, 'well-differentiated')).toBe('OTHER');
    expect(category(dutchProcedure, 'excisie-biopsie')).toBe('OTHER');
    expect(category(grade, '2020-01-05')).toBe('OTHER');
    expect(category(grade, 'not assessable - see comment')).toBe('OTHER');
  });

  it('unwraps one-item arrays and agreeing arrays', () => {
    expect(normaliseValue(grade, ['g2'])).toEqual(value('G2'));
    expect(normaliseValue(grade, ['G2', 'g2'])).toEqual(value('G2'));
    expect(normaliseValue(grade, ['G2', null])).toEqual(value('G2'));
  });

  it('treats wrong JSON types as OUT_OF_FORMAT', () => {
    expect(category(grade, { grade: 'G2' })).toBe('OUT_OF_FORMAT');
    expect(category(grade, true)).toBe('OUT_OF_FORMAT');
    expect(category(grade, [['G2']])).toBe('OUT_OF_FORMAT');
  });

  it('maps booleans only onto yes/no spelled options', () => {
    expect(normaliseValue(metastasis, true)).toEqual(value('Yes'));
    expect(normaliseValue(metastasis, false)).toEqual(value('No'));
  });

  it('rejects inconsistent specs with BAD_SPEC', () => {
    const bad = (spec: VariableSpec) => {
      try {
        normaliseValue(spec, 'x');
      } catch (e) {
        return e instanceof AnalyticsError ? e.code : 'other error';
      }
      return 'no error';
    };
    expect(bad({ key: 'a', type: 'CATEGORICAL', options: [] })).toBe('BAD_SPEC');
    expect(bad({ key: 'a', type: 'CATEGORICAL', options: ['1', '1.0'] })).toBe('BAD_SPEC');
    expect(bad({ key: 'a', type: 'CATEGORICAL', options: ['Yes', 'yes'] })).toBe('BAD_SPEC');
    expect(bad({ key: 'a', type: 'CATEGORICAL', options: ['Yes'], aliases: { ja: 'Jawel' } })).toBe('BAD_SPEC');
    expect(bad({ key: 'a', type: 'CATEGORICAL', options: ['Yes'], collapseMap: { Nope: 'x' } })).toBe('BAD_SPEC');
    expect(bad({ key: 'a', type: 'NUMERIC', tolerance: -1 })).toBe('BAD_SPEC');
  });
});

describe('numeric values', () => {
  it('treats 10, "10" and 10.0 as equal', () => {
    const a = normaliseValue(samples, 10);
    const b = normaliseValue(samples, '10');
    const c = normaliseValue(samples, 10.0);
    const d = normaliseValue(samples, '10.0');
    for (const x of [a, b, c, d]) {
      expect(x).toEqual(value(10));
      expect(cellsEqual(a, x)).toBe(true);
    }
  });

  it('accepts a decimal comma', () => {
    expect(normaliseValue(breslow, '1,5')).toEqual(value(1.5));
    expect(normaliseValue(breslow, '0,5')).toEqual(value(0.5));
  });

  it('classifies non-numbers', () => {
    expect(category(breslow, '3-4')).toBe('AMBIGUOUS');
    expect(category(breslow, '3 to 4')).toBe('AMBIGUOUS');
    expect(category(breslow, '>1')).toBe('AMBIGUOUS');
    expect(category(breslow, '≥ 1,5')).toBe('AMBIGUOUS');
    expect(category(breslow, 'possibly 4')).toBe('AMBIGUOUS');
    expect(category(breslow, 'about ten')).toBe('AMBIGUOUS');
    expect(category(breslow, 'ongeveer 2')).toBe('AMBIGUOUS');
    expect(category(breslow, 'přibližně 2')).toBe('AMBIGUOUS');
    expect(category(breslow, '10+')).toBe('AMBIGUOUS');
    expect(category(breslow, '3 or 4')).toBe('MULTI_VALUED');
    expect(category(breslow, '3, 4')).toBe('MULTI_VALUED');
    expect(category(breslow, [3, 4])).toBe('MULTI_VALUED');
    expect(category(breslow, { value: 3 })).toBe('OUT_OF_FORMAT');
    expect(category(breslow, true)).toBe('OUT_OF_FORMAT');
    expect(category(breslow, '2.5 mm')).toBe('OTHER');
    expect(category(breslow, 'ten')).toBe('OTHER');
    expect(category(breslow, 'I am unable to answer')).toBe('OTHER');
  });

  it('keeps negative numbers and exponent notation as numbers', () => {
    expect(normaliseValue(breslow, '-3')).toEqual(value(-3));
    expect(normaliseValue(breslow, '1e-3')).toEqual(value(0.001));
    expect(category(breslow, '-3-4')).toBe('AMBIGUOUS');
  });

  it('compares within tolerance and never counts INVALID as correct', () => {
    const tol = 0.05;
    expect(cellsEqual(value(1.5), value(1.54), tol)).toBe(true);
    expect(cellsEqual(value(1.5), value(1.56), tol)).toBe(false);
    const inv = normaliseValue(breslow, 'about ten');
    expect(cellsEqual(MISSING, inv)).toBe(false);
    expect(cellsEqual(inv, inv)).toBe(false);
    expect(cellsEqual(MISSING, MISSING)).toBe(true);
    expect(cellsEqual(MISSING, value(0))).toBe(false);
  });
});

describe('text values', () => {
  it('trims free text and whitespace-normalises exact strings', () => {
    expect(normaliseValue(disease, '  Liposarcoom  ')).toEqual(value('Liposarcoom'));
    expect(normaliseValue(mitoses, ' 3 /  HPF ')).toEqual(value('3 / HPF'));
    expect(normaliseValue(mitoses, '3/HPF')).toEqual(value('3/HPF'));
    expect(cellsEqual(normaliseValue(mitoses, '3/HPF'), normaliseValue(mitoses, '3/hpf'))).toBe(false);
    expect(normaliseValue(mitoses, 12)).toEqual(value('12'));
    expect(category(mitoses, { a: 1 })).toBe('OUT_OF_FORMAT');
    expect(category(disease, ['lung', 'liver'])).toBe('MULTI_VALUED');
  });
});

describe('list values', () => {
  it('accepts arrays, JSON-array strings and plain strings', () => {
    expect(normaliseValue(organs, [' lever ', 'long', ''])).toEqual(value(['lever', 'long']));
    expect(normaliseValue(organs, '["játra", "plíce"]')).toEqual(value(['játra', 'plíce']));
    expect(normaliseValue(organs, 'liver, lung')).toEqual(value(['liver, lung']));
    expect(normaliseValue(organs, [3, 'lung'])).toEqual(value(['3', 'lung']));
    expect(normaliseValue(organs, '[]')).toEqual(MISSING);
    expect(normaliseValue(organs, ['none'])).toEqual(MISSING);
    expect(category(organs, '["liver", ')).toBe('OUT_OF_FORMAT');
    expect(category(organs, [{ organ: 'liver' }])).toBe('OUT_OF_FORMAT');
    expect(category(organs, { organ: 'liver' })).toBe('OUT_OF_FORMAT');
  });

  it('refuses a JSON-array string whose escapes decode to a NUL or a lone surrogate', () => {
    // The escapes are text in the string (a backslash, then u0000) and become characters only when parsed.
    expect(category(organs, '["a\\u0000b"]')).toBe('OUT_OF_FORMAT');
    expect(category(organs, '["lever", "\\ud800"]')).toBe('OUT_OF_FORMAT');
    expect(category(organs, '["\\udc00x"]')).toBe('OUT_OF_FORMAT');
    // A surrogate pair written as two escapes is one valid character.
    expect(normaliseValue(organs, '["\\ud83e\\uddec"]')).toEqual(value(['\u{1F9EC}']));
  });
});

describe('collapseValue', () => {
  it('collapses mapped options and leaves everything else', () => {
    expect(collapseValue(birads, value('4B'))).toEqual(value('4'));
    expect(collapseValue(birads, value('5'))).toEqual(value('5'));
    expect(collapseValue(birads, MISSING)).toEqual(MISSING);
    const multi = normaliseValue(birads, '4A or 4B');
    expect(collapseValue(birads, multi)).toBe(multi);
    expect(collapseValue(grade, value('G2'))).toEqual(value('G2'));
    expect(hasCollapse(birads)).toBe(true);
    expect(hasCollapse(grade)).toBe(false);
  });
});

describe('normaliseRecord', () => {
  const specs = [grade, breslow, organs];

  it('marks absent prediction keys INVALID/MISSING and absent reference keys as not annotated', () => {
    const pred = normaliseRecord(specs, { grade: 'G1', organs: null, extra: 'ignored' }, 'prediction');
    expect(pred.grade).toEqual(value('G1'));
    expect(pred.breslow).toEqual({ status: 'INVALID', category: 'MISSING', detail: 'key absent' });
    expect(pred.organs).toEqual(MISSING);
    expect(Object.keys(pred).sort()).toEqual(['breslow', 'grade', 'organs']);

    const ref = normaliseRecord(specs, { grade: 'G1', organs: '' }, 'reference');
    expect(ref.breslow).toBeUndefined();
    expect(ref.organs).toEqual(MISSING);
  });

  it('treats no JSON object as a missing answer for every variable', () => {
    for (const obj of [undefined, null, 'text', [1, 2], 42]) {
      const pred = normaliseRecord(specs, obj, 'prediction');
      for (const s of specs) expect(pred[s.key]).toMatchObject({ status: 'INVALID', category: 'MISSING' });
      const ref = normaliseRecord(specs, obj, 'reference');
      for (const s of specs) expect(ref[s.key]).toBeUndefined();
    }
  });

  it('finds a key spelled with another case only when unambiguous', () => {
    expect(normaliseRecord([grade], { Grade: 'G3' }, 'prediction').grade).toEqual(value('G3'));
    expect(normaliseRecord([grade], { Grade: 'G3', GRADE: 'G1' }, 'prediction').grade).toMatchObject({
      status: 'INVALID',
      category: 'MISSING',
    });
  });

  it('rejects duplicate variable keys', () => {
    expect(() => normaliseRecord([grade, grade], {}, 'prediction')).toThrow(AnalyticsError);
  });
});
