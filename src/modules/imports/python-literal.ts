/**
 * A small parser for Python literal syntax (the subset `ast.literal_eval` accepts, plus what
 * `str()`/`repr()` of plain containers prints), returning JSON-compatible values.
 *
 * The extraction paper's framework writes `extracted_data`, `reasoning` lists and
 * self-consistency `candidates` into its output CSV with `str(dict)`, i.e. single quotes,
 * `True`/`False`/`None`, and `nan`/`inf` for non-finite floats. Nothing here evaluates code.
 *
 * Mapping:
 * - dict → object (keys: strings as-is; int/float/bool/None keys become their Python `str()`
 *   text, e.g. `1` → "1", `True` → "True", `None` → "None"; a repeated key keeps the last value,
 *   as Python does)
 * - list, tuple, set → array (order as written)
 * - str (single, double or triple quotes; prefixes u/r; adjacent literals concatenate) → string
 * - int, float (signs, underscores, exponents, 0x/0o/0b ints) → number; integers beyond 2^53
 *   lose precision exactly as `JSON.parse` does
 * - True/False → boolean; None → null
 * - nan, inf, -inf, float('nan'), float('inf') → null, since JSON has no non-finite numbers and
 *   for an extracted value "not a number" is no answer
 * - JSON's own `true`/`false`/`null` are also accepted, so a JSON document parses too.
 *
 * Trailing commas are allowed in every container. Whitespace (including newlines) may appear
 * between tokens. Bytes literals, comments, expressions and calls other than `float(...)` and
 * `set()` are syntax errors. Parsing is linear in the input length.
 */

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export type PythonLiteralErrorCode = 'PYTHON_LITERAL_SYNTAX' | 'PYTHON_LITERAL_TOO_DEEP';

export class PythonLiteralError extends Error {
  constructor(
    readonly code: PythonLiteralErrorCode,
    readonly reason: string,
    /** 0-based offset into the input where parsing failed. */
    readonly position: number,
    /** 1-based line of `position`. */
    readonly line: number,
    /** 1-based column of `position`. */
    readonly column: number,
  ) {
    super(`${reason} at line ${line} column ${column} (position ${position})`);
    this.name = 'PythonLiteralError';
  }
}

/** Containers nested deeper than this are rejected instead of risking a stack overflow. */
export const PYTHON_LITERAL_MAX_DEPTH = 500;

const SIMPLE_ESCAPES: Record<string, string> = {
  '\\': '\\',
  "'": "'",
  '"': '"',
  n: '\n',
  r: '\r',
  t: '\t',
  a: '\x07',
  b: '\b',
  f: '\f',
  v: '\v',
  '0': '\0',
};

const IDENT_CHAR = /[A-Za-z0-9_]/;
const NUMBER_RE =
  /[+-]?(?:0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d[\d_]*)?)/y;

class Parser {
  private pos = 0;

  constructor(private readonly src: string) {}

  parseDocument(): JsonValue {
    this.skipWs();
    if (this.pos >= this.src.length) this.fail('empty input');
    const value = this.parseValue(0);
    this.skipWs();
    if (this.pos < this.src.length) this.fail(`unexpected ${this.describe()} after the value`);
    return value;
  }

  private fail(reason: string, at = this.pos, code: PythonLiteralErrorCode = 'PYTHON_LITERAL_SYNTAX'): never {
    let line = 1;
    let lineStart = 0;
    for (let i = this.src.indexOf('\n'); i !== -1 && i < at; i = this.src.indexOf('\n', i + 1)) {
      line += 1;
      lineStart = i + 1;
    }
    throw new PythonLiteralError(code, reason, at, line, at - lineStart + 1);
  }

  private describe(): string {
    if (this.pos >= this.src.length) return 'end of input';
    return `character ${JSON.stringify(this.src[this.pos])}`;
  }

  private skipWs(): void {
    const s = this.src;
    let p = this.pos;
    while (p < s.length) {
      const c = s.charCodeAt(p);
      // space, tab, LF, CR, form feed, vertical tab; a backslash-newline is a Python line join
      if (c === 32 || c === 9 || c === 10 || c === 13 || c === 12 || c === 11) p += 1;
      else if (c === 92 && (s[p + 1] === '\n' || s[p + 1] === '\r')) p += 2;
      else break;
    }
    this.pos = p;
  }

  private parseValue(depth: number): JsonValue {
    if (depth > PYTHON_LITERAL_MAX_DEPTH) {
      this.fail(`nesting deeper than ${PYTHON_LITERAL_MAX_DEPTH}`, this.pos, 'PYTHON_LITERAL_TOO_DEEP');
    }
    this.skipWs();
    const c = this.src[this.pos];
    switch (c) {
      case '{':
        return this.parseBraces(depth);
      case '[':
        return this.parseSequence(']', depth);
      case '(':
        return this.parseParen(depth);
      case "'":
      case '"':
        return this.parseStrings();
      case undefined:
        return this.fail('unexpected end of input');
      default:
        break;
    }
    if (c === '-' || c === '+' || c === '.' || (c >= '0' && c <= '9')) return this.parseNumber();
    if (/[A-Za-z_]/.test(c)) return this.parseName(depth);
    return this.fail(`unexpected ${this.describe()}`);
  }

  private parseBraces(depth: number): JsonValue {
    const open = this.pos;
    this.pos += 1;
    this.skipWs();
    if (this.src[this.pos] === '}') {
      this.pos += 1;
      return {};
    }
    const first = this.parseValue(depth + 1);
    this.skipWs();
    if (this.src[this.pos] !== ':') {
      if (this.src[this.pos] !== ',' && this.src[this.pos] !== '}') {
        this.fail(`expected ':' after a dict key, got ${this.describe()}`);
      }
      // {a, b} is a set literal
      const items: JsonValue[] = [first];
      this.continueSequence(items, '}', depth, open);
      return items;
    }
    const obj: { [key: string]: JsonValue } = {};
    let key = this.keyOf(first, open);
    for (;;) {
      this.skipWs();
      if (this.src[this.pos] !== ':') this.fail(`expected ':' after a dict key, got ${this.describe()}`);
      this.pos += 1;
      const value = this.parseValue(depth + 1);
      // defineProperty keeps a key like "__proto__" an own data property
      Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
      this.skipWs();
      const sep = this.src[this.pos];
      if (sep === '}') {
        this.pos += 1;
        return obj;
      }
      if (sep !== ',') this.fail(`expected ',' or '}' in dict opened at position ${open}, got ${this.describe()}`);
      this.pos += 1;
      this.skipWs();
      if (this.src[this.pos] === '}') {
        this.pos += 1;
        return obj;
      }
      const keyAt = this.pos;
      key = this.keyOf(this.parseValue(depth + 1), keyAt);
    }
  }

  private keyOf(value: JsonValue, at: number): string {
    if (typeof value === 'string') return value;
    if (typeof value === 'number') return String(value);
    if (typeof value === 'boolean') return value ? 'True' : 'False';
    if (value === null) return 'None';
    return this.fail('a dict key must be a string, number, bool or None', at);
  }

  private parseSequence(close: ']' | ')' | '}', depth: number): JsonValue[] {
    const open = this.pos;
    this.pos += 1;
    const items: JsonValue[] = [];
    this.skipWs();
    if (this.src[this.pos] === close) {
      this.pos += 1;
      return items;
    }
    items.push(this.parseValue(depth + 1));
    this.continueSequence(items, close, depth, open);
    return items;
  }

  private continueSequence(items: JsonValue[], close: string, depth: number, open: number): void {
    for (;;) {
      this.skipWs();
      const sep = this.src[this.pos];
      if (sep === close) {
        this.pos += 1;
        return;
      }
      if (sep !== ',') {
        this.fail(`expected ',' or '${close}' in container opened at position ${open}, got ${this.describe()}`);
      }
      this.pos += 1;
      this.skipWs();
      if (this.src[this.pos] === close) {
        this.pos += 1;
        return;
      }
      items.push(this.parseValue(depth + 1));
    }
  }

  /** `(x)` is x, `(x,)` and `(x, y)` are tuples, `()` is the empty tuple. */
  private parseParen(depth: number): JsonValue {
    const open = this.pos;
    this.pos += 1;
    this.skipWs();
    if (this.src[this.pos] === ')') {
      this.pos += 1;
      return [];
    }
    const first = this.parseValue(depth + 1);
    this.skipWs();
    if (this.src[this.pos] === ')') {
      this.pos += 1;
      return first;
    }
    const items: JsonValue[] = [first];
    this.continueSequence(items, ')', depth, open);
    return items;
  }

  private parseName(depth: number): JsonValue {
    const start = this.pos;
    let end = start;
    while (end < this.src.length && IDENT_CHAR.test(this.src[end])) end += 1;
    const name = this.src.slice(start, end);
    const next = this.src[end];
    // string prefixes: u'..', r'..', ur is not Python 3 but R/U casing is
    if ((next === "'" || next === '"') && /^(?:[uUrR]|[bB][rR]?|[rR][bB]|[fF][rR]?|[rR][fF])$/.test(name)) {
      if (/[bBfF]/.test(name)) this.fail(`${/[bB]/.test(name) ? 'bytes' : 'f-string'} literals are not supported`);
      return this.parseStrings();
    }
    this.pos = end;
    switch (name) {
      case 'True':
      case 'true':
        return true;
      case 'False':
      case 'false':
        return false;
      case 'None':
      case 'null':
        return null;
      case 'nan':
      case 'inf':
      case 'NaN':
      case 'Infinity':
        return null;
      case 'float':
        return this.parseFloatCall(start);
      case 'set':
        return this.parseSetCall(depth, start);
      default:
        return this.fail(`unknown name '${name}'`, start);
    }
  }

  private parseFloatCall(start: number): JsonValue {
    this.skipWs();
    if (this.src[this.pos] !== '(') this.fail("expected '(' after 'float'");
    this.pos += 1;
    this.skipWs();
    const argAt = this.pos;
    const arg = this.src[this.pos] === "'" || this.src[this.pos] === '"' ? this.parseStrings() : null;
    this.skipWs();
    if (this.src[this.pos] !== ')') this.fail("expected ')' to close float(...)");
    this.pos += 1;
    if (arg === null) this.fail('float(...) takes a quoted string here', argAt);
    const t = arg.trim().toLowerCase();
    if (/^[+-]?(?:nan|inf|infinity)$/.test(t)) return null;
    const n = Number(t.replace(/_/g, ''));
    if (t === '' || !Number.isFinite(n)) this.fail(`float(${JSON.stringify(arg)}) is not a number`, start);
    return n;
  }

  private parseSetCall(depth: number, start: number): JsonValue {
    this.skipWs();
    if (this.src[this.pos] !== '(') this.fail("expected '(' after 'set'");
    this.pos += 1;
    this.skipWs();
    if (this.src[this.pos] === ')') {
      this.pos += 1;
      return [];
    }
    const inner = this.parseValue(depth + 1);
    this.skipWs();
    if (this.src[this.pos] !== ')') this.fail("expected ')' to close set(...)");
    this.pos += 1;
    if (!Array.isArray(inner)) this.fail('set(...) takes a list, tuple or set here', start);
    return inner;
  }

  private parseNumber(): JsonValue {
    const start = this.pos;
    let sign = 1;
    let p = start;
    // repr never writes '+', but literal_eval accepts unary signs, also before nan/inf names
    while (this.src[p] === '-' || this.src[p] === '+') {
      if (this.src[p] === '-') sign = -sign;
      p += 1;
      while (this.src[p] === ' ' || this.src[p] === '\t') p += 1;
    }
    if (/[A-Za-z]/.test(this.src[p] ?? '')) {
      this.pos = p;
      const name = this.src.slice(p).match(/^[A-Za-z_][A-Za-z0-9_]*/)?.[0] ?? '';
      if (name === 'inf' || name === 'nan' || name === 'Infinity' || name === 'NaN') {
        this.pos = p + name.length;
        return null;
      }
      return this.fail(`unexpected '${name}' after a sign`, p);
    }
    NUMBER_RE.lastIndex = p;
    const m = NUMBER_RE.exec(this.src);
    if (!m || m[0] === '' || m[0] === '.') this.fail('malformed number', start);
    let text = m[0];
    let end = p + text.length;
    if (/[jJ]/.test(this.src[end] ?? '')) this.fail('complex numbers are not supported', start);
    if (/[lL]/.test(this.src[end] ?? '')) end += 1; // Python 2 long suffix
    if (IDENT_CHAR.test(this.src[end] ?? '')) this.fail('malformed number', start);
    this.pos = end;
    const radixPrefixed = /^0[xXoObB]/.test(text);
    const misplacedUnderscore = radixPrefixed
      ? /__|_$/.test(text.slice(2))
      : /__|_$|_\.|\._|_[eE]|[eE][+-]?_/.test(text);
    if (misplacedUnderscore) this.fail('misplaced underscore in number', start);
    text = text.replace(/_/g, '');
    let n: number;
    if (/^0[xX]/.test(text)) n = parseInt(text.slice(2), 16);
    else if (/^0[oO]/.test(text)) n = parseInt(text.slice(2), 8);
    else if (/^0[bB]/.test(text)) n = parseInt(text.slice(2), 2);
    else n = Number(text);
    if (Number.isNaN(n)) this.fail('malformed number', start);
    if (!Number.isFinite(n)) return null; // 1e999 is inf in Python
    return sign * n;
  }

  /** One or more adjacent string literals, concatenated as Python does. */
  private parseStrings(): string {
    let out = this.parseOneString();
    for (;;) {
      const save = this.pos;
      this.skipWs();
      const c = this.src[this.pos];
      if (c === "'" || c === '"') {
        out += this.parseOneString();
        continue;
      }
      if (c !== undefined && /[uUrR]/.test(c) && (this.src[this.pos + 1] === "'" || this.src[this.pos + 1] === '"')) {
        out += this.parseOneString();
        continue;
      }
      this.pos = save;
      return out;
    }
  }

  private parseOneString(): string {
    const s = this.src;
    let raw = false;
    while (/[uUrR]/.test(s[this.pos])) {
      if (s[this.pos] === 'r' || s[this.pos] === 'R') raw = true;
      this.pos += 1;
    }
    const start = this.pos;
    const q = s[start];
    const triple = s[start + 1] === q && s[start + 2] === q;
    const delim = triple ? q + q + q : q;
    let p = start + delim.length;
    let out = '';
    for (;;) {
      // copy runs without a backslash or quote in one slice: keeps long strings linear and fast
      const nextQuote = s.indexOf(q, p);
      const nextBackslash = s.indexOf('\\', p);
      if (nextQuote === -1) this.fail('unterminated string', start);
      if (!triple) {
        const nl = s.indexOf('\n', p);
        if (nl !== -1 && nl < nextQuote && (nextBackslash === -1 || nl < nextBackslash)) {
          this.fail('unterminated string (newline inside a single-quoted string)', start);
        }
      }
      if (nextBackslash !== -1 && nextBackslash < nextQuote) {
        out += s.slice(p, nextBackslash);
        p = this.readEscape(nextBackslash, raw, (text) => {
          out += text;
        });
        continue;
      }
      if (triple && s.slice(nextQuote, nextQuote + 3) !== delim) {
        out += s.slice(p, nextQuote + 1);
        p = nextQuote + 1;
        continue;
      }
      out += s.slice(p, nextQuote);
      this.pos = nextQuote + delim.length;
      return out;
    }
  }

  /** Reads the escape at `at` (a backslash), emits its text and returns the position after it. */
  private readEscape(at: number, raw: boolean, emit: (text: string) => void): number {
    const s = this.src;
    const c = s[at + 1];
    if (c === undefined) this.fail('unterminated string', at);
    if (raw) {
      // in a raw string a backslash escapes nothing but still keeps the next quote in the string
      emit(s.slice(at, at + 2));
      return at + 2;
    }
    if (c === '\n') return at + 2;
    if (c === '\r') return s[at + 2] === '\n' ? at + 3 : at + 2;
    const simple = SIMPLE_ESCAPES[c];
    if (simple !== undefined && !(c === '0' && /[0-7]/.test(s[at + 2] ?? ''))) {
      emit(simple);
      return at + 2;
    }
    if (c >= '0' && c <= '7') {
      const m = /^[0-7]{1,3}/.exec(s.slice(at + 1, at + 4));
      const digits = m ? m[0] : c;
      emit(String.fromCodePoint(parseInt(digits, 8)));
      return at + 1 + digits.length;
    }
    const hexLen = c === 'x' ? 2 : c === 'u' ? 4 : c === 'U' ? 8 : 0;
    if (hexLen > 0) {
      const hex = s.slice(at + 2, at + 2 + hexLen);
      if (hex.length !== hexLen || !/^[0-9a-fA-F]+$/.test(hex)) this.fail(`truncated \\${c} escape`, at);
      const cp = parseInt(hex, 16);
      if (cp > 0x10ffff) this.fail(`\\${c} escape out of Unicode range`, at);
      emit(String.fromCodePoint(cp));
      return at + 2 + hexLen;
    }
    if (c === 'N') this.fail('\\N{...} escapes are not supported', at);
    // Python keeps unknown escapes verbatim, backslash included
    emit('\\' + c);
    return at + 2;
  }
}

/**
 * Parses one Python literal into a JSON-compatible value (see the module comment for the
 * mapping). Linear in the input length; never evaluates code.
 *
 * @throws PythonLiteralError with code PYTHON_LITERAL_SYNTAX (and the position, line and column)
 *   on anything that is not a literal, or PYTHON_LITERAL_TOO_DEEP past
 *   {@link PYTHON_LITERAL_MAX_DEPTH} nested containers.
 */
export function parsePythonLiteral(text: string): JsonValue {
  return new Parser(text).parseDocument();
}
