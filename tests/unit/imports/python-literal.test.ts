import fc from 'fast-check';
import fixture from './fixtures/python-literals.json';
import { parsePythonLiteral, PythonLiteralError, PYTHON_LITERAL_MAX_DEPTH, type JsonValue } from '../../../src/modules/imports';

/** Python's repr() of a JSON value, written independently of the parser under test. */
function pyRepr(value: JsonValue): string {
  if (value === null) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : String(value);
  if (typeof value === 'string') {
    const quote = value.includes("'") && !value.includes('"') ? '"' : "'";
    let out = quote;
    for (const ch of value) {
      if (ch === '\\') out += '\\\\';
      else if (ch === quote) out += `\\${quote}`;
      else if (ch === '\n') out += '\\n';
      else if (ch === '\r') out += '\\r';
      else if (ch === '\t') out += '\\t';
      else if (ch.codePointAt(0)! < 0x20 || ch.codePointAt(0) === 0x7f) out += `\\x${ch.codePointAt(0)!.toString(16).padStart(2, '0')}`;
      else out += ch;
    }
    return out + quote;
  }
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(', ')}]`;
  return `{${Object.entries(value).map(([k, v]) => `${pyRepr(k)}: ${pyRepr(v)}`).join(', ')}}`;
}

function errorOf(text: string): PythonLiteralError {
  try {
    parsePythonLiteral(text);
  } catch (err) {
    if (err instanceof PythonLiteralError) return err;
    throw err;
  }
  throw new Error(`expected ${JSON.stringify(text)} to be rejected`);
}

describe('parsePythonLiteral', () => {
  it.each((fixture as { repr: string; json: JsonValue }[]).map((c) => [c.repr, c.json]))(
    'matches what CPython repr() wrote: %s',
    (repr, json) => {
      expect(parsePythonLiteral(repr as string)).toEqual(json);
    },
  );

  it('reads the framework extracted_data shape', () => {
    expect(parsePythonLiteral("{'Breslow thickness': 3.0, 'Ulceration': True, 'Regression': False, 'Site': None}")).toEqual({
      'Breslow thickness': 3,
      Ulceration: true,
      Regression: false,
      Site: null,
    });
  });

  it('handles quotes inside strings', () => {
    expect(parsePythonLiteral("'it\\'s'")).toBe("it's");
    expect(parsePythonLiteral('"Breslow\'s"')).toBe("Breslow's");
    expect(parsePythonLiteral("'say \"hi\"'")).toBe('say "hi"');
    expect(parsePythonLiteral('"a \\"b\\""')).toBe('a "b"');
    expect(parsePythonLiteral("{\"Breslow's\": 'it\\'s 1,5'}")).toEqual({ "Breslow's": "it's 1,5" });
  });

  it('keeps diacritics and decodes unicode escapes', () => {
    expect(parsePythonLiteral("'é č ř ů ĳ één'")).toBe('é č ř ů ĳ één');
    expect(parsePythonLiteral("'\\xe9 \\u010d \\U0001F600 \\N'".replace(' \\N', ''))).toBe('é č 😀');
    expect(parsePythonLiteral("'\\101\\0'")).toBe('A\0');
    expect(parsePythonLiteral("'unknown \\d escape'")).toBe('unknown \\d escape');
  });

  it('reads nested containers, tuples, sets and trailing commas', () => {
    expect(parsePythonLiteral("{'a': [1, (2, 3), {'b': {'c': ()}},], 'd': {4, 5,},}")).toEqual({
      a: [1, [2, 3], { b: { c: [] } }],
      d: [4, 5],
    });
    expect(parsePythonLiteral('(1,)')).toEqual([1]);
    expect(parsePythonLiteral('(1)')).toBe(1);
    expect(parsePythonLiteral('set()')).toEqual([]);
    expect(parsePythonLiteral('[\n  1,\n  2\n]')).toEqual([1, 2]);
  });

  it('reads numbers', () => {
    expect(parsePythonLiteral('[0, -1, +2, 1_000, 1.5, .5, 5., 1e3, -2.5E-2, 0x1f, 0o17, 0b101, 10L]')).toEqual([
      0, -1, 2, 1000, 1.5, 0.5, 5, 1000, -0.025, 31, 15, 5, 10,
    ]);
  });

  it('maps nan and inf to null', () => {
    expect(parsePythonLiteral("[nan, inf, -inf, float('nan'), float(\"-inf\"), 1e999, float('2.5')]")).toEqual([
      null, null, null, null, null, null, 2.5,
    ]);
  });

  it('concatenates adjacent string literals and reads raw, prefixed and triple-quoted strings', () => {
    expect(parsePythonLiteral("'a' \"b\" u'c'")).toBe('abc');
    expect(parsePythonLiteral("r'a\\nb'")).toBe('a\\nb');
    expect(parsePythonLiteral("'''multi\nline 'quoted' text'''")).toBe("multi\nline 'quoted' text");
    expect(parsePythonLiteral('"""x""y"""')).toBe('x""y');
  });

  it('accepts JSON as well', () => {
    expect(parsePythonLiteral('{"a": true, "b": null, "c": [false]}')).toEqual({ a: true, b: null, c: [false] });
  });

  it('keeps a __proto__ key as data', () => {
    const value = parsePythonLiteral("{'__proto__': {'x': 1}}") as Record<string, unknown>;
    expect(Object.keys(value)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
  });

  it.each([
    ['', 'empty input'],
    ["{'a': 1", "expected ',' or '}'"],
    ["{'a' 1}", "expected ':'"],
    ["'unterminated", 'unterminated string'],
    ["'line\nbreak'", 'unterminated string'],
    ['[1, 2] extra', 'after the value'],
    ["__import__('os')", "unknown name '__import__'"],
    ['os.system("x")', "unknown name 'os'"],
    ["b'bytes'", 'bytes literals are not supported'],
    ['1+2j', 'unexpected'],
    ['1j', 'complex numbers'],
    ['1__0', 'underscore'],
    ["{[1]: 'x'}", 'dict key'],
    ["'\\x4'", 'truncated'],
    ['[1,,2]', 'unexpected'],
  ])('rejects %j with a coded error', (text, fragment) => {
    const err = errorOf(text);
    expect(err.code).toBe('PYTHON_LITERAL_SYNTAX');
    expect(err.message).toContain(fragment);
  });

  it('reports the line and column of the error', () => {
    const err = errorOf("{\n  'a': 1,\n  'b': tru\n}");
    expect(err.line).toBe(3);
    expect(err.column).toBe(8);
    expect(err.position).toBe(19);
  });

  it('rejects nesting beyond the limit instead of overflowing the stack', () => {
    const deep = '['.repeat(PYTHON_LITERAL_MAX_DEPTH + 5) + ']'.repeat(PYTHON_LITERAL_MAX_DEPTH + 5);
    expect(errorOf(deep).code).toBe('PYTHON_LITERAL_TOO_DEEP');
    const ok = '['.repeat(100) + ']'.repeat(100);
    expect(parsePythonLiteral(ok)).toBeDefined();
  });

  it('round-trips any JSON value written as a Python repr', () => {
    const json = fc.letrec<{ v: JsonValue }>((tie) => ({
      v: fc.oneof(
        { depthSize: 'small' },
        fc.constant(null),
        fc.boolean(),
        fc.integer(),
        fc.double({ noNaN: true, noDefaultInfinity: true }).filter((x) => !Object.is(x, -0)),
        fc.string({ unit: 'grapheme' }),
        fc.string({ unit: 'binary' }),
        fc.array(tie('v'), { maxLength: 4 }),
        fc.dictionary(fc.string({ unit: 'grapheme' }), tie('v'), { maxKeys: 4 }),
      ),
    })).v;
    fc.assert(
      fc.property(json, (value) => {
        const parsed = parsePythonLiteral(pyRepr(value));
        expect(parsed).toEqual(value);
      }),
      { numRuns: 300 },
    );
  });
});
