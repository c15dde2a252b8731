/**
 * One rejected input row.
 *
 * `row` is the 1-based index of the data record in the file: for CSV the first record after the
 * header is row 1 (blank lines and all-empty records are not rows); for JSON the first array
 * element is row 1; for JSONL the first non-blank line is row 1. `row` 0 means the file as a
 * whole (header problems, a JSON document that is not an array, a missing column).
 *
 * `line` is the 1-based physical line where the record starts (CSV counts the header as line
 * 1 and counts every line of a quoted multi-line field; JSONL counts blank lines; JSON gives the
 * line of the element when the document had to be diagnosed). It is absent when unknown.
 */
export interface RowError {
  row: number;
  reason: string;
  field?: string;
  line?: number;
}

/** ImportError keeps at most this many errors; `totalErrors` still counts them all. */
export const MAX_REPORTED_ERRORS = 50;

/** How many errors are spelled out in the error message itself. */
const ERRORS_IN_MESSAGE = 10;

/** Renders one error as "row 2 (line 3): reason". */
export function formatRowError(error: RowError): string {
  if (error.row === 0) return error.line !== undefined ? `line ${error.line}: ${error.reason}` : error.reason;
  const where = error.line !== undefined ? `row ${error.row} (line ${error.line})` : `row ${error.row}`;
  return `${where}: ${error.reason}`;
}

function headline(errors: readonly RowError[]): string {
  const rows = new Set<number>();
  let fileLevel = false;
  for (const e of errors) {
    if (e.row === 0) fileLevel = true;
    else rows.add(e.row);
  }
  const parts: string[] = [];
  if (fileLevel) parts.push('file rejected');
  if (rows.size > 0) parts.push(`${rows.size} ${rows.size === 1 ? 'row' : 'rows'} rejected`);
  return parts.join(' and ');
}

/**
 * The request-level failure of an import: the whole file is rejected (nothing is written) and
 * the caller sees which rows failed and why. Maps to the GraphQL error code BAD_USER_INPUT.
 */
export class ImportError extends Error {
  readonly code = 'BAD_USER_INPUT' as const;
  /** The first {@link MAX_REPORTED_ERRORS} errors, in input order. */
  readonly errors: RowError[];
  /** Number of errors before truncation. */
  readonly totalErrors: number;

  constructor(errors: readonly RowError[]) {
    const shown = errors.slice(0, ERRORS_IN_MESSAGE).map(formatRowError).join('; ');
    const more = errors.length > ERRORS_IN_MESSAGE ? `; … (${errors.length} errors in total)` : '';
    super(errors.length === 0 ? 'import rejected' : `${headline(errors)}: ${shown}${more}`);
    this.name = 'ImportError';
    this.errors = errors.slice(0, MAX_REPORTED_ERRORS);
    this.totalErrors = errors.length;
  }
}

/** Throws an {@link ImportError} listing `errors` when there are any. */
export function assertNoImportErrors(errors: readonly RowError[]): void {
  if (errors.length > 0) throw new ImportError(errors);
}

/** Sorts errors by row, file-level first; stable for errors of the same row. */
export function sortRowErrors(errors: readonly RowError[]): RowError[] {
  return errors
    .map((e, i) => ({ e, i }))
    .sort((a, b) => a.e.row - b.e.row || a.i - b.i)
    .map(({ e }) => e);
}
