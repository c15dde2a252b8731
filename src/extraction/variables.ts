/**
 * Variable definitions for extraction: ordering, validation, the type names shown to the model
 * and the mapping from the extraction paper framework's type names (INTEROP.md).
 */
import { DEFAULT_MISSING_TOKENS, foldText, parseNumeric } from '../analytics/normalise';
import type { NormalisedCell, VariableType } from '../analytics/types';
import { ExtractionError } from './errors';
import type { DependsOn, ExtractionVariable } from './types';

/** Variables in prompt order: ascending `order`, ties (and missing orders) keep list order. */
export function sortVariables<T extends ExtractionVariable>(variables: readonly T[]): T[] {
  return variables
    .map((v, i) => ({ v, i }))
    .sort((a, b) => {
      const oa = a.v.order ?? Number.POSITIVE_INFINITY;
      const ob = b.v.order ?? Number.POSITIVE_INFINITY;
      if (oa !== ob) return oa < ob ? -1 : 1;
      return a.i - b.i;
    })
    .map((x) => x.v);
}

/**
 * Checks what the engine relies on: non-empty unique keys, categorical options present,
 * `dependsOn` pointing at another known variable with at least one value.
 * @throws ExtractionError BAD_VARIABLES
 */
export function validateVariables(variables: readonly ExtractionVariable[]): void {
  if (variables.length === 0) throw new ExtractionError('BAD_VARIABLES', 'no variables');
  const keys = new Set<string>();
  for (const v of variables) {
    if (typeof v.key !== 'string' || v.key.trim() === '') {
      throw new ExtractionError('BAD_VARIABLES', 'a variable has an empty key');
    }
    if (keys.has(v.key)) throw new ExtractionError('BAD_VARIABLES', `duplicate variable key "${v.key}"`);
    keys.add(v.key);
    if ((v.type === 'CATEGORICAL' || v.type === 'BINARY') && !(v.options && v.options.length > 0)) {
      throw new ExtractionError('BAD_VARIABLES', `variable "${v.key}": ${v.type} needs options`);
    }
  }
  for (const v of variables) {
    if (!v.dependsOn) continue;
    if (v.dependsOn.key === v.key) {
      throw new ExtractionError('BAD_VARIABLES', `variable "${v.key}" depends on itself`);
    }
    if (!keys.has(v.dependsOn.key)) {
      throw new ExtractionError('BAD_VARIABLES', `variable "${v.key}" depends on unknown variable "${v.dependsOn.key}"`);
    }
    if (!Array.isArray(v.dependsOn.values) || v.dependsOn.values.length === 0) {
      throw new ExtractionError('BAD_VARIABLES', `variable "${v.key}": dependsOn needs at least one value`);
    }
  }
}

/** The type name shown to the model: the framework's own name if imported, else derived from the type. */
export function promptTypeName(v: ExtractionVariable): string {
  if (v.frameworkType) return v.frameworkType;
  switch (v.type) {
    case 'NUMERIC':
      return 'number';
    case 'LIST':
      return 'list';
    case 'EXACT_STRING':
      return 'string_exact_match';
    case 'CATEGORICAL':
    case 'BINARY':
    case 'FREE_TEXT':
      return 'string';
    default: {
      const never: never = v.type;
      return String(never);
    }
  }
}

/** Placeholder value of the variable in the JSON template. */
export function templateValueOf(v: ExtractionVariable): unknown {
  if (v.templateValue !== undefined) return v.templateValue;
  if (v.structure && v.structure.length > 0) {
    const obj: Record<string, unknown> = {};
    for (const f of v.structure) obj[f.key] = f.type === 'list' ? [] : '';
    return v.frameworkType === 'list of dictionaries' ? [obj] : obj;
  }
  return v.type === 'LIST' ? [] : '';
}

/** The JSON template object, keys in variable order. */
export function jsonTemplateObject(variables: readonly ExtractionVariable[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const v of sortVariables(variables)) out[v.key] = templateValueOf(v);
  return out;
}

/**
 * Whether a dependsOn condition holds for the parent's normalised cell. Values compare
 * case-insensitively after trimming and whitespace folding, and numerically when both sides are
 * numbers ("1" matches 1.0). MISSING matches a condition value that is one of the missing tokens
 * ("Not specified"); INVALID never matches.
 */
export function conditionHolds(
  cond: DependsOn,
  parent: NormalisedCell | undefined,
  missingTokens: readonly string[] = DEFAULT_MISSING_TOKENS,
): boolean {
  if (!parent || parent.status === 'INVALID') return false;
  const wanted = cond.values.map((x) => foldText(String(x)));
  if (parent.status === 'MISSING') {
    const missing = new Set(missingTokens.map(foldText));
    return wanted.some((w) => w === '' || missing.has(w));
  }
  const values = Array.isArray(parent.value) ? parent.value : [parent.value];
  for (const val of values) {
    const f = foldText(String(val));
    for (const w of wanted) {
      if (w === f) return true;
      const a = parseNumeric(w);
      const b = typeof val === 'number' ? val : parseNumeric(f);
      if (a !== undefined && b !== undefined && a === b) return true;
    }
  }
  return false;
}

// --- framework type names (INTEROP.md) ---

const YES_LIKE = new Set(['yes', 'true', '1', 'ja', 'ano', 'y', 'positive', 'present']);
const NO_LIKE = new Set(['no', 'false', '0', 'nee', 'ne', 'n', 'negative', 'absent']);

export interface MappedType {
  type: VariableType;
  /** options as strings, "" removed ("" means "not stated" in the papers' configs) */
  options: string[] | null;
  aliases: Record<string, string> | null;
  /** the framework type said `_or_missing` */
  orMissing: boolean;
  warning: string | null;
}

/** String form of a framework option (numbers such as Fazekas 0.5 become "0.5"). */
export function optionToString(o: unknown): string {
  if (typeof o === 'string') return o;
  if (typeof o === 'number' || typeof o === 'boolean') return String(o);
  if (o === null) return '';
  return JSON.stringify(o);
}

/**
 * Maps a framework type name (+ options) to a variable type:
 * options present → CATEGORICAL, or BINARY when the type says boolean/binary or (unless it says
 * categorical) the options other than "" and missing tokens are a yes/no-like pair or a single
 * yes-like option (the papers' "Yes"/"" binaries); float/int/integer/number → NUMERIC; string → FREE_TEXT;
 * string_exact_match → EXACT_STRING; list → LIST; boolean/binary without options → BINARY with
 * options Yes/No (true/false as aliases); dictionary, list of dictionaries, nested → FREE_TEXT
 * (the structure is kept on the variable). A `_or_missing` suffix is stripped (missing is always
 * allowed). Unknown names become FREE_TEXT with a warning.
 */
export function mapFrameworkType(
  frameworkType: string | null | undefined,
  rawOptions: readonly unknown[] | null | undefined,
  missingTokens: readonly string[] = DEFAULT_MISSING_TOKENS,
): MappedType {
  let name = (frameworkType ?? 'string').trim().toLowerCase();
  let orMissing = false;
  if (name.endsWith('_or_missing')) {
    orMissing = true;
    name = name.slice(0, -'_or_missing'.length);
  }
  const missing = new Set(missingTokens.map(foldText));
  const options = rawOptions ? rawOptions.map(optionToString).filter((o) => o.trim() !== '') : null;
  const boolish = name === 'boolean' || name === 'bool' || name === 'binary';
  if (options && options.length > 0) {
    const substantive = options.filter((o) => !missing.has(foldText(o)));
    const folded = substantive.map(foldText);
    const yesNoPair =
      folded.length === 2 &&
      ((YES_LIKE.has(folded[0]!) && NO_LIKE.has(folded[1]!)) || (NO_LIKE.has(folded[0]!) && YES_LIKE.has(folded[1]!)));
    const singleYes = folded.length === 1 && YES_LIKE.has(folded[0]!);
    const binary = name !== 'categorical' && (boolish || yesNoPair || singleYes);
    return { type: binary ? 'BINARY' : 'CATEGORICAL', options, aliases: null, orMissing, warning: null };
  }
  switch (name) {
    case 'float':
    case 'int':
    case 'integer':
    case 'number':
    case 'numeric':
      return { type: 'NUMERIC', options: null, aliases: null, orMissing, warning: null };
    case 'string':
    case 'str':
    case 'text':
      return { type: 'FREE_TEXT', options: null, aliases: null, orMissing, warning: null };
    case 'string_exact_match':
    case 'exact_string':
      return { type: 'EXACT_STRING', options: null, aliases: null, orMissing, warning: null };
    case 'list':
      return { type: 'LIST', options: null, aliases: null, orMissing, warning: null };
    case 'categorical':
      return {
        type: 'FREE_TEXT',
        options: null,
        aliases: null,
        orMissing,
        warning: `type "${frameworkType}" without options: treated as free text`,
      };
    case 'boolean':
    case 'bool':
    case 'binary':
      return { type: 'BINARY', options: ['Yes', 'No'], aliases: { true: 'Yes', false: 'No' }, orMissing, warning: null };
    case 'dictionary':
    case 'dict':
    case 'nested':
    case 'list of dictionaries':
      return { type: 'FREE_TEXT', options: null, aliases: null, orMissing, warning: null };
    default:
      return {
        type: 'FREE_TEXT',
        options: null,
        aliases: null,
        orMissing,
        warning: `unknown type "${frameworkType}": treated as free text`,
      };
  }
}
