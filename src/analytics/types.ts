/**
 * Shared vocabulary of the analytics layer (docs/scoring.md §1, §3). Pure types: the rest of the
 * server (extraction, modules) speaks in these terms when it hands values to analytics.
 */

export type VariableType = 'CATEGORICAL' | 'BINARY' | 'NUMERIC' | 'FREE_TEXT' | 'LIST' | 'EXACT_STRING';

export const VARIABLE_TYPES: readonly VariableType[] = [
  'CATEGORICAL',
  'BINARY',
  'NUMERIC',
  'FREE_TEXT',
  'LIST',
  'EXACT_STRING',
];

export type InvalidCategory = 'MISSING' | 'OUT_OF_FORMAT' | 'MULTI_VALUED' | 'AMBIGUOUS' | 'OTHER';

export const INVALID_CATEGORIES: readonly InvalidCategory[] = [
  'MISSING',
  'OUT_OF_FORMAT',
  'MULTI_VALUED',
  'AMBIGUOUS',
  'OTHER',
];

/** What normalisation needs to know about one variable. */
export interface VariableSpec {
  key: string;
  type: VariableType;
  /** Option list of CATEGORICAL / BINARY variables, canonical spelling. */
  options?: readonly string[] | null;
  /** Alias (any spelling) → option, e.g. { "ja": "Yes" }. */
  aliases?: Readonly<Record<string, string>> | null;
  /** Option → collapsed class, e.g. { "4A": "4", "4B": "4" } (collapsed scoring). */
  collapseMap?: Readonly<Record<string, string>> | null;
  /** Tokens read as MISSING; null/undefined means the defaults of docs/scoring.md §1. */
  missingTokens?: readonly string[] | null;
  /** Absolute tolerance for NUMERIC equality (default 0). */
  tolerance?: number | null;
  /** Weight in the macro average (default 1). */
  weight?: number | null;
}

/** A normalised cell: a value, MISSING (a value in its own right), or INVALID with its category. */
export type NormalisedCell =
  | { status: 'VALUE'; value: string | number | string[] }
  | { status: 'MISSING' }
  | { status: 'INVALID'; category: InvalidCategory; detail?: string };
