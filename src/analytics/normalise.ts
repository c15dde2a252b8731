/**
 * Value normalisation (docs/scoring.md §1) and the invalid-output taxonomy (docs/scoring.md §3).
 *
 * One function, `normaliseValue`, turns a raw JSON value — a reference annotation or a model's
 * prediction, treated identically — into a {@link NormalisedCell}. Nothing here guesses: a
 * value that matches no option is INVALID with a category saying why, never the nearest option.
 */
import { AnalyticsError } from './errors';
import { numbersEqualWithin } from './tolerance';
import type { InvalidCategory, NormalisedCell, VariableSpec } from './types';

/** Default missing tokens of docs/scoring.md §1, compared case-insensitively after whitespace folding. */
export const DEFAULT_MISSING_TOKENS: readonly string[] = Object.freeze([
  'not specified',
  'missing',
  'none',
  'n/a',
  'unknown',
  'not applicable',
]);

/** A reference key that is absent: the report is not annotated for that variable (§1 "Absent keys"). */
export type AbsentCell = undefined;

/** A cell of a normalised record: a normalised value, or {@link AbsentCell} for an unannotated reference. */
export type RecordCell = NormalisedCell | AbsentCell;

/**
 * The record's own cell of `key` (undefined: no record, or no such key). Own only: a variable may
 * be named `constructor` or `toString`, which every parsed object inherits.
 */
export function cellOf<T>(record: Readonly<Record<string, T>> | undefined | null, key: string): T | undefined {
  return record !== undefined && record !== null && Object.hasOwn(record, key) ? record[key] : undefined;
}

/** Whose values a record holds: decides what an absent key means. */
export type RecordRole = 'prediction' | 'reference';

export interface NormaliseOptions {
  /**
   * Use-case-level missing tokens. A variable's own `spec.missingTokens` takes precedence; when
   * neither is given, {@link DEFAULT_MISSING_TOKENS} apply.
   */
  missingTokens?: readonly string[] | null;
}

/** Canonical comparison form: Unicode NFC, trimmed, internal whitespace collapsed, lower-cased. */
export function foldText(s: string): string {
  return s.normalize('NFC').trim().replace(/\s+/g, ' ').toLowerCase();
}

const NUMBER_RE = /^[+-]?(?:\d+(?:[.,]\d*)?|[.,]\d+)(?:e[+-]?\d+)?$/i;

/**
 * Parse a numeric string, accepting a decimal comma (`"1,5"` → 1.5) and surrounding whitespace.
 * Returns `undefined` for anything that is not exactly one finite number (`"3-4"`, `">1"`,
 * `"1 000"`, `"ten"`). O(length).
 */
export function parseNumeric(s: string): number | undefined {
  const t = s.trim();
  if (!NUMBER_RE.test(t)) return undefined;
  const x = Number(t.replace(',', '.'));
  return Number.isFinite(x) ? x : undefined;
}

/** Everything normalisation needs for one variable, precomputed once per spec object. */
interface CompiledSpec {
  readonly spec: VariableSpec;
  readonly missing: ReadonlySet<string>;
  /** folded option or folded alias → canonical option */
  readonly byText: ReadonlyMap<string, string>;
  /** numeric value of a numeric-looking option → canonical option */
  readonly byNumber: ReadonlyMap<number, string>;
  /** folded option → collapsed class */
  readonly collapse: ReadonlyMap<string, string>;
}

const compiledCache = new WeakMap<VariableSpec, Map<readonly string[] | null | undefined, CompiledSpec>>();

function compileSpec(spec: VariableSpec, useCaseTokens: readonly string[] | null | undefined): CompiledSpec {
  let perSpec = compiledCache.get(spec);
  const hit = perSpec?.get(useCaseTokens);
  if (hit) return hit;

  const tokens = spec.missingTokens ?? useCaseTokens ?? DEFAULT_MISSING_TOKENS;
  const missing = new Set(tokens.map(foldText));
  const byText = new Map<string, string>();
  const byNumber = new Map<number, string>();
  const collapse = new Map<string, string>();
  const categorical = spec.type === 'CATEGORICAL' || spec.type === 'BINARY';

  if (categorical) {
    const options = spec.options ?? [];
    if (options.length === 0) {
      throw new AnalyticsError('BAD_SPEC', `variable "${spec.key}": ${spec.type} needs a non-empty option list`);
    }
    for (const option of options) {
      const f = foldText(option);
      if (f === '') throw new AnalyticsError('BAD_SPEC', `variable "${spec.key}": empty option`);
      const prev = byText.get(f);
      if (prev !== undefined) {
        throw new AnalyticsError('BAD_SPEC', `variable "${spec.key}": options "${prev}" and "${option}" coincide after case folding`);
      }
      byText.set(f, option);
      const x = parseNumeric(option);
      if (x !== undefined) {
        const prevNum = byNumber.get(x);
        if (prevNum !== undefined) {
          throw new AnalyticsError('BAD_SPEC', `variable "${spec.key}": options "${prevNum}" and "${option}" are the same number`);
        }
        byNumber.set(x, option);
      }
    }
    for (const [alias, target] of Object.entries(spec.aliases ?? {})) {
      const canonical = byText.get(foldText(target));
      if (canonical === undefined) {
        throw new AnalyticsError('BAD_SPEC', `variable "${spec.key}": alias "${alias}" points to "${target}", which is not an option`);
      }
      const fa = foldText(alias);
      const existing = byText.get(fa);
      if (existing !== undefined && existing !== canonical) {
        throw new AnalyticsError('BAD_SPEC', `variable "${spec.key}": alias "${alias}" collides with option "${existing}"`);
      }
      byText.set(fa, canonical);
    }
    for (const [from, to] of Object.entries(spec.collapseMap ?? {})) {
      const canonical = byText.get(foldText(from));
      if (canonical === undefined) {
        throw new AnalyticsError('BAD_SPEC', `variable "${spec.key}": collapse map key "${from}" is not an option`);
      }
      collapse.set(foldText(canonical), to);
    }
  }
  if (spec.tolerance != null && !(spec.tolerance >= 0 && Number.isFinite(spec.tolerance))) {
    throw new AnalyticsError('BAD_SPEC', `variable "${spec.key}": tolerance must be a finite number >= 0`);
  }

  const compiled: CompiledSpec = { spec, missing, byText, byNumber, collapse };
  if (!perSpec) {
    perSpec = new Map();
    compiledCache.set(spec, perSpec);
  }
  perSpec.set(useCaseTokens, compiled);
  return compiled;
}

const MISSING_CELL: NormalisedCell = Object.freeze({ status: 'MISSING' }) as NormalisedCell;

function invalid(category: InvalidCategory, detail?: string): NormalisedCell {
  return detail === undefined ? { status: 'INVALID', category } : { status: 'INVALID', category, detail };
}

function isPlainObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function isMissingScalar(c: CompiledSpec, raw: unknown): boolean {
  if (raw === null || raw === undefined) return true;
  if (typeof raw === 'string') {
    const f = foldText(raw);
    return f === '' || c.missing.has(f);
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// Classifying an unmatched string (§3): range → AMBIGUOUS, several values → MULTI_VALUED,
// hedge or comparison → AMBIGUOUS, anything else → OTHER. English, Dutch and Czech markers,
// since the reports (and therefore many answers) are Dutch and Czech.
// ---------------------------------------------------------------------------------------------

/** Range separators between two resolvable values: "3-4", "3 – 4", "3 to 4", "3 tot 4", "3 až 4". */
// `\b` is ASCII-only in JavaScript, so words with diacritics get explicit Unicode boundaries.
const W = (alternatives: string): string => `(?<![\\p{L}\\p{N}])(?:${alternatives})(?![\\p{L}\\p{N}])`;

const RANGE_SEP_RE = new RegExp(`\\s*(?:-|–|—|\\.\\.|${W('to|tot|až|do')})\\s*`, 'giu');

/** Separators of several values: "4A or 4B", "G2/G3", "3, 4", "3; 4", "ja of nee", "ano nebo ne". */
const MULTI_SEP_RE = new RegExp(`\\s*(?:${W('or|and|of|en|nebo|či|a')}|/|;|\\||&|\\+|,(?!\\d)|,\\s+)\\s*`, 'giu');

const HEDGE_WORDS = [
  'possibly', 'probably', 'likely', 'maybe', 'perhaps', 'presumably', 'suspected', 'suspicious for', 'suspicious of',
  'approximately', 'approx\\.?', 'about', 'around', 'roughly', 'circa', 'ca\\.?', 'cca\\.?', 'at least', 'at most',
  'more than', 'less than', 'greater than', 'up to', 'over', 'under',
  'mogelijk', 'waarschijnlijk', 'vermoedelijk', 'verdacht voor', 'ongeveer', 'ruim', 'minstens', 'tenminste',
  'ten minste', 'hooguit', 'maximaal', 'meer dan', 'minder dan',
  'pravděpodobně', 'možná', 'asi', 'přibližně', 'zhruba', 'nejméně', 'alespoň', 'nejvýše', 'více než', 'méně než',
  'suspektní',
].join('|');

const HEDGE_PREFIX_RE = new RegExp(`^(?:(?:>=|<=|≥|≤|>|<|~|≈|±|\\+/-)\\s*|(?:${HEDGE_WORDS})(?![\\p{L}\\p{N}])\\s*)`, 'iu');

const HEDGE_SUFFIX_RE = /(?:\?|\+|\s+(?:or more|or less|or so|of meer|of minder|a více|či více))\s*$/iu;

/**
 * One end of a range that names no option: a single word holding a number or a code built around
 * one (`7`, `4x`, `g4`, `t2a`, `1,5`) or a roman numeral (`iv`). Words without a digit are left
 * out, so hyphenated words (`low-grade`, `well-differentiated`) are not ranges.
 */
const RANGE_END_RE = /^(?:[\p{L}]{0,4}[+-]?\d+(?:[.,]\d+)?[\p{L}]{0,3}|[ivx]{1,6})$/u;

/**
 * Classify a string that did not resolve as a single value. `resolve` maps one folded piece to a
 * value key (an option, or a number as string) or undefined.
 */
function classifyUnmatched(folded: string, resolve: (piece: string) => string | undefined): NormalisedCell {
  // Range (§3): some split at a range separator has two value-like ends. An end need not be an
  // option: "3-4" against options 1..3 is still a hedge between two values, not OTHER.
  const rangeEnd = (piece: string): boolean => resolve(piece) !== undefined || RANGE_END_RE.test(piece);
  for (const m of folded.matchAll(RANGE_SEP_RE)) {
    const start = m.index;
    const left = folded.slice(0, start).trim();
    const right = folded.slice(start + m[0].length).trim();
    if (left !== '' && right !== '' && rangeEnd(left) && rangeEnd(right)) {
      return invalid('AMBIGUOUS', 'range');
    }
  }
  const pieces = folded.split(MULTI_SEP_RE).map((p) => p.trim()).filter((p) => p !== '');
  if (pieces.length >= 2) {
    const distinct = new Set<string>();
    for (const p of pieces) {
      const r = resolve(p) ?? resolve(p.replace(HEDGE_PREFIX_RE, '').replace(HEDGE_SUFFIX_RE, '').trim());
      if (r !== undefined) distinct.add(r);
    }
    if (distinct.size >= 2) return invalid('MULTI_VALUED', 'several values');
  }
  if (HEDGE_PREFIX_RE.test(folded) || HEDGE_SUFFIX_RE.test(folded)) return invalid('AMBIGUOUS', 'hedged value');
  return invalid('OTHER', 'no matching value');
}

// ---------------------------------------------------------------------------------------------
// Per-type normalisers.
// ---------------------------------------------------------------------------------------------

function matchOptionText(c: CompiledSpec, folded: string): string | undefined {
  const direct = c.byText.get(folded);
  if (direct !== undefined) return direct;
  if (c.byNumber.size > 0) {
    const x = parseNumeric(folded);
    if (x !== undefined) return c.byNumber.get(x);
  }
  return undefined;
}

function normaliseCategoricalScalar(c: CompiledSpec, raw: unknown): NormalisedCell {
  if (isMissingScalar(c, raw)) return MISSING_CELL;
  if (typeof raw === 'number') {
    if (!Number.isFinite(raw)) return invalid('OUT_OF_FORMAT', 'non-finite number');
    const option = c.byNumber.get(raw) ?? c.byText.get(foldText(String(raw)));
    return option !== undefined ? { status: 'VALUE', value: option } : invalid('OTHER', 'number outside the option list');
  }
  if (typeof raw === 'boolean') {
    // JSON booleans answer yes/no questions; they match only an option or alias spelled
    // "true"/"false" or "yes"/"no", never another option.
    const spellings = raw ? ['true', 'yes'] : ['false', 'no'];
    for (const s of spellings) {
      const option = c.byText.get(s);
      if (option !== undefined) return { status: 'VALUE', value: option };
    }
    return invalid('OUT_OF_FORMAT', 'boolean for a variable without yes/no options');
  }
  if (typeof raw === 'string') {
    const folded = foldText(raw);
    const option = matchOptionText(c, folded);
    if (option !== undefined) return { status: 'VALUE', value: option };
    return classifyUnmatched(folded, (p) => matchOptionText(c, p));
  }
  return invalid('OUT_OF_FORMAT', `${Array.isArray(raw) ? 'nested array' : typeof raw} for a categorical variable`);
}

/**
 * Arrays where one value is expected: missing items are dropped; nothing left → MISSING; one
 * item → that item; several items → the common value if all agree, else MULTI_VALUED.
 */
function normaliseSingleFromArray(
  c: CompiledSpec,
  arr: readonly unknown[],
  scalar: (c: CompiledSpec, raw: unknown) => NormalisedCell,
): NormalisedCell {
  const items = arr.filter((x) => !isMissingScalar(c, x));
  if (items.length === 0) return MISSING_CELL;
  const cells = items.map((x) => (Array.isArray(x) ? invalid('OUT_OF_FORMAT', 'nested array') : scalar(c, x)));
  if (cells.length === 1) return cells[0]!;
  const first = cells[0]!;
  if (first.status === 'VALUE' && cells.every((x) => x.status === 'VALUE' && x.value === first.value)) return first;
  return invalid('MULTI_VALUED', `${items.length} values`);
}

function normaliseNumericScalar(c: CompiledSpec, raw: unknown): NormalisedCell {
  if (isMissingScalar(c, raw)) return MISSING_CELL;
  if (typeof raw === 'number') {
    return Number.isFinite(raw) ? { status: 'VALUE', value: raw } : invalid('OUT_OF_FORMAT', 'non-finite number');
  }
  if (typeof raw === 'string') {
    const x = parseNumeric(raw);
    if (x !== undefined) return { status: 'VALUE', value: x };
    const resolve = (p: string): string | undefined => {
      const y = parseNumeric(p);
      return y === undefined ? undefined : String(y);
    };
    return classifyUnmatched(foldText(raw), resolve);
  }
  return invalid('OUT_OF_FORMAT', `${typeof raw} for a numeric variable`);
}

function normaliseTextScalar(c: CompiledSpec, raw: unknown, exact: boolean): NormalisedCell {
  if (isMissingScalar(c, raw)) return MISSING_CELL;
  if (typeof raw === 'string') {
    const s = raw.normalize('NFC').trim();
    return { status: 'VALUE', value: exact ? s.replace(/\s+/g, ' ') : s };
  }
  if (typeof raw === 'number') {
    return Number.isFinite(raw) ? { status: 'VALUE', value: String(raw) } : invalid('OUT_OF_FORMAT', 'non-finite number');
  }
  return invalid('OUT_OF_FORMAT', `${typeof raw} for a ${exact ? 'exact-string' : 'free-text'} variable`);
}

/** Text without NUL characters and without lone UTF-16 surrogates (well-formed Unicode). */
function isValidText(s: string): boolean {
  return !s.includes('\u0000') && (s as string & { isWellFormed(): boolean }).isWellFormed();
}

function normaliseList(c: CompiledSpec, raw: unknown): NormalisedCell {
  if (isMissingScalar(c, raw)) return MISSING_CELL;
  let arr: unknown;
  if (typeof raw === 'string') {
    const t = raw.trim();
    if (t.startsWith('[')) {
      try {
        arr = JSON.parse(t);
      } catch {
        return invalid('OUT_OF_FORMAT', 'string looks like a JSON array but does not parse');
      }
      if (!Array.isArray(arr)) return invalid('OUT_OF_FORMAT', 'not a JSON array');
    } else {
      arr = [t];
    }
  } else if (typeof raw === 'number') {
    if (!Number.isFinite(raw)) return invalid('OUT_OF_FORMAT', 'non-finite number');
    arr = [raw];
  } else {
    arr = raw;
  }
  if (!Array.isArray(arr)) return invalid('OUT_OF_FORMAT', `${typeof raw} for a list variable`);
  const decoded = typeof raw === 'string';
  const items: string[] = [];
  for (const item of arr) {
    if (isMissingScalar(c, item)) continue;
    // Escapes in a JSON-array string are decoded only here: "\u0000" or a lone "\ud800" becomes
    // an item that is no valid text, which the checks made on the raw string could not see.
    if (decoded && typeof item === 'string' && !isValidText(item)) {
      return invalid('OUT_OF_FORMAT', 'list item is not valid text (a NUL character or half of a surrogate pair)');
    }
    if (typeof item === 'string') items.push(item.normalize('NFC').trim());
    else if (typeof item === 'number' && Number.isFinite(item)) items.push(String(item));
    else return invalid('OUT_OF_FORMAT', `list item of type ${Array.isArray(item) ? 'array' : typeof item}`);
  }
  return items.length === 0 ? MISSING_CELL : { status: 'VALUE', value: items };
}

/**
 * Normalise one raw value of a variable (docs/scoring.md §1), identically for references and
 * predictions.
 *
 * - MISSING: `null`/`undefined`, `""`, whitespace, an empty list, or a missing token (variable's
 *   `missingTokens`, else `opts.missingTokens`, else {@link DEFAULT_MISSING_TOKENS}; compared
 *   after case and whitespace folding). Missing tokens are checked before options, so a variable
 *   whose option list contains such a token must configure its own `missingTokens`.
 * - CATEGORICAL/BINARY: case-folded, trimmed, whitespace-collapsed, NFC text matched against
 *   options, then aliases; numbers and numeric strings (decimal comma allowed) match
 *   numeric-looking options by value. Booleans match only options/aliases spelled true/false or
 *   yes/no. A one-item array is unwrapped.
 * - NUMERIC: finite JSON numbers or numeric strings with decimal point or comma.
 * - FREE_TEXT: trimmed string (numbers become their decimal string). EXACT_STRING additionally
 *   collapses internal whitespace; case is kept.
 * - LIST: array, JSON-array string, or a plain string as a one-item list; items trimmed, empty
 *   and missing-token items dropped; an empty result is MISSING. A JSON-array string whose
 *   escapes decode to a NUL character or a lone surrogate is OUT_OF_FORMAT.
 *
 * INVALID categories (§3): wrong JSON type → OUT_OF_FORMAT; a range of two values, options or
 * not (`"3-4"`, `"G3-G4"`), or a hedge/comparison (`"possibly 4"`, `">1"`, `"10?"`) →
 * AMBIGUOUS; several values (`"4A or 4B"`, `["G2","G3"]`) → MULTI_VALUED; anything else
 * (outside the option list, refusals, units, words) → OTHER. There is no nearest-option guessing.
 *
 * Source: docs/scoring.md §1, §3; RADS benchmark paper (taxonomy). Complexity: O(length of raw)
 * after a once-per-spec compilation that is cached.
 *
 * @throws AnalyticsError BAD_SPEC when the spec is inconsistent (categorical without options,
 *   options coinciding after folding or numerically, alias or collapse key that is not an
 *   option, negative tolerance).
 */
export function normaliseValue(spec: VariableSpec, raw: unknown, opts?: NormaliseOptions): NormalisedCell {
  const c = compileSpec(spec, opts?.missingTokens);
  switch (spec.type) {
    case 'CATEGORICAL':
    case 'BINARY':
      if (Array.isArray(raw)) return normaliseSingleFromArray(c, raw, normaliseCategoricalScalar);
      return normaliseCategoricalScalar(c, raw);
    case 'NUMERIC':
      if (Array.isArray(raw)) return normaliseSingleFromArray(c, raw, normaliseNumericScalar);
      return normaliseNumericScalar(c, raw);
    case 'FREE_TEXT':
    case 'EXACT_STRING': {
      const exact = spec.type === 'EXACT_STRING';
      const scalar = (cc: CompiledSpec, x: unknown): NormalisedCell => normaliseTextScalar(cc, x, exact);
      if (Array.isArray(raw)) return normaliseSingleFromArray(c, raw, scalar);
      return scalar(c, raw);
    }
    case 'LIST':
      return normaliseList(c, raw);
    default: {
      const never: never = spec.type;
      throw new AnalyticsError('BAD_SPEC', `variable "${(spec as VariableSpec).key}": unknown type ${String(never)}`);
    }
  }
}

/**
 * The collapsed-scoring value of a normalised cell (docs/scoring.md §1, RADS paper): a categorical
 * VALUE whose option appears in the variable's `collapseMap` becomes the collapsed class (e.g.
 * BI-RADS `4A` → `4`); everything else (other options, MISSING, INVALID, other types) is
 * returned unchanged, so without a collapse map collapsed equals exact. O(1).
 *
 * @throws AnalyticsError BAD_SPEC as {@link normaliseValue}.
 */
export function collapseValue(spec: VariableSpec, cell: NormalisedCell): NormalisedCell {
  if (cell.status !== 'VALUE' || typeof cell.value !== 'string') return cell;
  if (spec.type !== 'CATEGORICAL' && spec.type !== 'BINARY') return cell;
  if (!spec.collapseMap) return cell;
  const c = compileSpec(spec, undefined);
  const to = c.collapse.get(foldText(cell.value));
  return to === undefined ? cell : { status: 'VALUE', value: to };
}

/** Whether a variable has a collapse map that changes at least one option. */
export function hasCollapse(spec: VariableSpec): boolean {
  if (spec.type !== 'CATEGORICAL' && spec.type !== 'BINARY') return false;
  return Object.entries(spec.collapseMap ?? {}).some(([from, to]) => foldText(from) !== foldText(to));
}

function findKey(obj: Record<string, unknown>, key: string): { found: boolean; value: unknown } {
  if (Object.prototype.hasOwnProperty.call(obj, key)) return { found: true, value: obj[key] };
  // Models sometimes change a key's case or spacing; accept that only when exactly one key
  // matches after folding, so no answer is taken from a different variable.
  const want = foldText(key);
  let match: string | undefined;
  for (const k of Object.keys(obj)) {
    if (foldText(k) === want) {
      if (match !== undefined) return { found: false, value: undefined };
      match = k;
    }
  }
  return match === undefined ? { found: false, value: undefined } : { found: true, value: obj[match] };
}

/**
 * Normalise a whole JSON record (one report's reference annotation or one model answer)
 * against a use case's variables (docs/scoring.md §1 "Absent keys").
 *
 * For `role: 'prediction'`, an absent key — or `obj` that is not a JSON object (undefined,
 * null, array, scalar: no JSON object found) — gives INVALID with category MISSING (the model
 * did not answer). For `role: 'reference'`, an absent key (or no object) gives `undefined`
 * ({@link AbsentCell}): the report is not annotated and is left out of that variable; a
 * present-but-empty value is MISSING. Keys are looked up exactly, then by a unique
 * case/whitespace-folded match. Keys the specs do not define are ignored. O(Σ value sizes +
 * keys × variables) in the worst case.
 *
 * @throws AnalyticsError BAD_SPEC as {@link normaliseValue}; BAD_INPUT on duplicate spec keys.
 */
export function normaliseRecord(
  specs: readonly VariableSpec[],
  obj: unknown,
  role: RecordRole,
  opts?: NormaliseOptions,
): Record<string, RecordCell> {
  const out: Record<string, RecordCell> = Object.create(null) as Record<string, RecordCell>;
  const seen = new Set<string>();
  const record = isPlainObject(obj) ? obj : undefined;
  for (const spec of specs) {
    if (seen.has(spec.key)) throw new AnalyticsError('BAD_INPUT', `duplicate variable key "${spec.key}"`);
    seen.add(spec.key);
    const hit = record ? findKey(record, spec.key) : { found: false, value: undefined };
    if (hit.found) {
      out[spec.key] = normaliseValue(spec, hit.value, opts);
    } else {
      out[spec.key] = role === 'prediction' ? invalid('MISSING', record ? 'key absent' : 'no JSON object') : undefined;
    }
  }
  return out;
}

/**
 * Whether two normalised cells are equal values for accuracy (docs/scoring.md §1–§2): INVALID never
 * equals anything (not even INVALID or MISSING); MISSING equals only MISSING; numbers are equal
 * within `tolerance` (absolute, default 0, see below); strings compare exactly (categorical cells hold the
 * canonical option); lists compare as multisets (order ignored). O(list length).
 * Numbers: with tolerance 0 they must be equal; with t > 0, |a − b| ≤ t + 1e-12·max(1, |a|, |b|)
 * ({@link numbersEqualWithin}), inclusive in spite of binary rounding.
 */
export function cellsEqual(reference: NormalisedCell, prediction: NormalisedCell, tolerance = 0): boolean {
  if (reference.status === 'INVALID' || prediction.status === 'INVALID') return false;
  if (reference.status === 'MISSING' || prediction.status === 'MISSING') {
    return reference.status === prediction.status;
  }
  const a = reference.value;
  const b = prediction.value;
  if (typeof a === 'number' && typeof b === 'number') return numbersEqualWithin(a, b, tolerance);
  if (typeof a === 'string' && typeof b === 'string') return a === b;
  if (Array.isArray(a) && Array.isArray(b)) {
    // A list is a multiset of items: order carries no meaning in the reports' lists.
    if (a.length !== b.length) return false;
    const sa = [...a].sort();
    const sb = [...b].sort();
    return sa.every((x, i) => x === sb[i]);
  }
  return false;
}
