import { childPath, findOutOfRangeNumber, findValueProblem, hasLoneSurrogate, joinPath, MAX_JSON_DEPTH, MAX_PATH_LENGTH } from '../../../src/db/storable';

const nested = (depth: number): unknown => JSON.parse('['.repeat(depth) + ']'.repeat(depth));

describe('hasLoneSurrogate', () => {
  it('finds a high or a low surrogate alone, and accepts pairs', () => {
    expect(hasLoneSurrogate('cut \ud800')).toBe(true);
    expect(hasLoneSurrogate('\udc00 first')).toBe(true);
    expect(hasLoneSurrogate('pair 𝔸 and emoji 🧬')).toBe(false);
    expect(hasLoneSurrogate('reversed \udc00\ud800')).toBe(true);
  });
});

describe('findValueProblem', () => {
  it('names the path to a NUL, a lone surrogate (in values and keys) and a non-finite number', () => {
    expect(findValueProblem({ a: [1, 'x\u0000'] })).toEqual({ path: 'a[1]', reason: 'contains a NUL character' });
    expect(findValueProblem({ a: { b: 'x\ud800' } })?.path).toBe('a.b');
    expect(findValueProblem({ a: { 'k\udc00': 1 } })).toEqual({ path: 'a', reason: expect.stringMatching(/^has a key that contains a lone UTF-16 surrogate/) });
    expect(findValueProblem([Number.POSITIVE_INFINITY])).toEqual({ path: '[0]', reason: expect.stringMatching(/out of range/) });
    expect(findValueProblem({ n: Number.NaN })?.path).toBe('n');
    expect(findValueProblem({ a: 'x\u0000' }, { nul: false })).toBeNull();
  });

  it(`accepts ${MAX_JSON_DEPTH} levels of nesting and refuses ${MAX_JSON_DEPTH + 1}, without recursion`, () => {
    expect(findValueProblem(nested(MAX_JSON_DEPTH))).toBeNull();
    expect(findValueProblem(nested(MAX_JSON_DEPTH + 1))?.reason).toBe(`is nested deeper than ${MAX_JSON_DEPTH} levels`);
    // Far deeper than the stack would allow for a recursive walk.
    expect(findValueProblem(nested(200_000))?.reason).toMatch(/nested deeper/);
    expect(findValueProblem(nested(200_000), { depth: false })).toBeNull();
  });

  it('accepts ordinary values', () => {
    expect(findValueProblem({ text: 'Breslow 1,4 mm', n: 1e308, tiny: 5e-324, list: [true, null, { a: 'é' }] })).toBeNull();
  });
});

describe('findOutOfRangeNumber', () => {
  it('finds numbers that overflow to infinity or underflow to zero, outside strings only', () => {
    expect(findOutOfRangeNumber('{"a": 1e400}')).toBe(6);
    expect(findOutOfRangeNumber('{"a": -1E+309}')).toBe(6);
    expect(findOutOfRangeNumber('[1, 2.5e-400]')).toBe(4);
    expect(findOutOfRangeNumber('{"a": "1e400", "b": "x\\"1e400"}')).toBeNull();
    expect(findOutOfRangeNumber('{"a": 0, "b": 0.0e-999, "c": -0, "d": 1.7976931348623157e308, "e": 5e-324}')).toBeNull();
    expect(findOutOfRangeNumber('{"k1e400": 1}')).toBeNull();
  });
});

describe('paths', () => {
  it('are cut at 200 characters, however long the keys and deep the nesting', () => {
    const key = 'k'.repeat(1_000_000);
    const value = { [key]: { [key]: 'x\u0000' } };
    const problem = findValueProblem(value)!;
    expect(problem.path).toHaveLength(MAX_PATH_LENGTH + 1);
    expect(problem.path.endsWith('…')).toBe(true);
    expect(childPath('a', 0)).toBe('a[0]');
    expect(childPath('', 'k\u0000')).toBe('k\\0');
  });
});

describe('joinPath', () => {
  it('joins keys with dots and indexes without', () => {
    expect(joinPath('a', 'b[0]')).toBe('a.b[0]');
    expect(joinPath('a', '[0].b')).toBe('a[0].b');
    expect(joinPath('', 'b')).toBe('b');
    expect(joinPath('a', '')).toBe('a');
  });
});
