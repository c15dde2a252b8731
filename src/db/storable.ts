/**
 * What PostgreSQL refuses, or would store altered, in the values the server is given: checks
 * shared by GraphQL arguments, imported files, config files and what endpoints answer.
 */
/**
 * PostgreSQL refuses U+0000 in `text` (22021) and in `jsonb` (22P05), so a NUL that reaches a
 * statement fails the whole request with an internal error. OCR and PDF pipelines produce them.
 */
export const NUL = '\u0000';

/** The reason given for a string with a NUL character (row errors and BAD_USER_INPUT alike). */
export const NUL_REASON = 'contains a NUL character';

/**
 * Deepest nesting of arrays and objects accepted in any JSON or YAML input (JSON arguments,
 * imported records, config files): `[]` and `{}` are depth 1. PostgreSQL's jsonb parser and
 * V8's JSON.stringify recurse, so a deep enough value fails with an internal error; no report
 * metadata, annotation or example needs more than a few levels.
 */
export const MAX_JSON_DEPTH = 64;

/** The reason given for a string holding half of a UTF-16 surrogate pair. */
export const LONE_SURROGATE_REASON = 'contains a lone UTF-16 surrogate (half of a character, not valid Unicode)';

/** The reason given for a value nested deeper than {@link MAX_JSON_DEPTH}. */
export const TOO_DEEP_REASON = `is nested deeper than ${MAX_JSON_DEPTH} levels`;

/** The reason given for a number JSON cannot carry (1e400, NaN). */
export const NOT_FINITE_REASON = 'holds a number out of range (JSON numbers must be finite doubles)';

/** The reason given for a number written in a file that no double can hold (1e400, 1e-400). */
export const OUT_OF_RANGE_REASON = 'holds a number out of range of a double (it would be stored as null, infinity or 0)';

/**
 * Whether `text` holds a lone surrogate. PostgreSQL stores text as UTF-8, where a lone surrogate
 * has no encoding: the driver writes U+FFFD instead (text), or the statement fails (jsonb).
 */
export function hasLoneSurrogate(text: string): boolean {
  return !(text as string & { isWellFormed(): boolean }).isWellFormed();
}

/** A problem found in a value, with the path to it (`a.b[2]`, relative to the value). */
export interface ValueProblem {
  path: string;
  reason: string;
}

export interface ValueCheckOptions {
  /** Also refuse NUL characters (default true). */
  nul?: boolean;
  /** Also refuse nesting deeper than {@link MAX_JSON_DEPTH} (default true). */
  depth?: boolean;
}

/** Paths in errors are cut here: keys come from the input and may be long, and nesting deep. */
export const MAX_PATH_LENGTH = 200;

/**
 * `parent.key` or `parent[index]`, with NUL shown as `\0` so that a path is always printable,
 * cut with `…` at {@link MAX_PATH_LENGTH} characters.
 */
export function childPath(parent: string, key: string | number): string {
  if (parent.endsWith('…')) return parent;
  const shown = typeof key === 'number' ? `[${key}]` : key.slice(0, MAX_PATH_LENGTH).replaceAll(NUL, '\\0');
  const path = typeof key === 'number' ? `${parent}${shown}` : parent ? `${parent}.${shown}` : shown;
  return path.length > MAX_PATH_LENGTH ? `${path.slice(0, MAX_PATH_LENGTH)}…` : path;
}

/** Why a string cannot be stored as it is, or null. */
export function stringProblem(text: string, nul = true): string | null {
  if (nul && text.includes(NUL)) return NUL_REASON;
  if (hasLoneSurrogate(text)) return LONE_SURROGATE_REASON;
  return null;
}

/**
 * The first thing in `value` (a JSON-like value: strings, numbers, booleans, null, arrays,
 * plain objects) that PostgreSQL would refuse or that would be stored altered: a NUL character
 * or a lone surrogate in a string or an object key, a number that is not finite, nesting deeper
 * than {@link MAX_JSON_DEPTH}. Iterative and linear in the size of the value; a value shared
 * by several parents (YAML aliases) is visited once per parent.
 */
export function findValueProblem(value: unknown, options: ValueCheckOptions = {}): ValueProblem | null {
  const nul = options.nul ?? true;
  const limitDepth = options.depth ?? true;
  const stack: { value: unknown; path: string; depth: number }[] = [{ value, path: '', depth: 0 }];
  while (stack.length > 0) {
    const current = stack.pop()!;
    const v = current.value;
    if (typeof v === 'string') {
      const reason = stringProblem(v, nul);
      if (reason) return { path: current.path, reason };
      continue;
    }
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) return { path: current.path, reason: NOT_FINITE_REASON };
      continue;
    }
    if (typeof v !== 'object' || v === null) continue;
    const depth = current.depth + 1;
    if (limitDepth && depth > MAX_JSON_DEPTH) return { path: current.path, reason: TOO_DEEP_REASON };
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i -= 1) stack.push({ value: v[i], path: childPath(current.path, i), depth });
      continue;
    }
    const entries = Object.entries(v as Record<string, unknown>);
    for (let i = entries.length - 1; i >= 0; i -= 1) {
      const [key, item] = entries[i]!;
      const reason = stringProblem(key, nul);
      if (reason) return { path: current.path, reason: `has a key that ${reason}` };
      stack.push({ value: item, path: childPath(current.path, key), depth });
    }
  }
  return null;
}

/** A path below `prefix`: `prefix.a[0]`, `prefix[1].b`, or either alone when the other is empty. */
export function joinPath(prefix: string, relative: string): string {
  if (!relative) return prefix;
  if (!prefix) return relative;
  return relative.startsWith('[') ? `${prefix}${relative}` : `${prefix}.${relative}`;
}

/**
 * The offset of the first number literal in JSON `text` that no double holds: one that parses
 * to ±Infinity (1e400) or to 0 although it has a non-zero digit (1e-400). `JSON.parse` turns the
 * first into Infinity (stored as null) and the second into 0 without a word. Strings are
 * skipped; the text need not be valid JSON. Linear in the length of the text.
 */
export function findOutOfRangeNumber(text: string): number | null {
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i += 1;
      else if (c === 34) inString = false;
      continue;
    }
    if (c === 34) {
      inString = true;
      continue;
    }
    const startsNumber = (c >= 48 && c <= 57) || c === 45;
    if (!startsNumber) continue;
    // A digit right after a letter or digit is part of a word (true, a key in broken JSON), not a number.
    const before = i > 0 ? text.charCodeAt(i - 1) : 32;
    if ((before >= 48 && before <= 57) || (before >= 65 && before <= 90) || (before >= 97 && before <= 122) || before === 46) continue;
    let end = i + 1;
    while (end < text.length && /[0-9eE+\-.]/.test(text[end]!)) end += 1;
    const token = text.slice(i, end);
    const n = Number(token);
    if (!Number.isFinite(n) && !Number.isNaN(n)) return i;
    if (n === 0 && /[1-9]/.test(token.split(/[eE]/)[0]!)) return i;
    i = end - 1;
  }
  return null;
}
