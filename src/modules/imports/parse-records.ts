import { parse as parseCsv } from 'csv-parse/sync';
import { sortRowErrors, type RowError } from './import-errors';
import { MAX_NAME_LENGTH, NUL, NUL_REASON, TOO_LONG_REASON } from './text-checks';
import { findOutOfRangeNumber, findValueProblem, LONE_SURROGATE_REASON, OUT_OF_RANGE_REASON } from '../../db/storable';

export type RecordFormat = 'CSV' | 'JSON' | 'JSONL';

/** One data record of an input file; see {@link RowError} for what `row` and `line` count. */
export interface ParsedRecord {
  row: number;
  line?: number;
  record: Record<string, unknown>;
}

export interface ParseRecordsResult {
  rows: ParsedRecord[];
  errors: RowError[];
  /** CSV only: the header's column names in file order, and the delimiter used. */
  columns?: string[];
  delimiter?: string;
}

export interface ParseRecordsOptions {
  /** CSV field delimiter; when absent it is detected from the header line among `,` `;` tab. */
  delimiter?: string;
}

/** A field larger than this is almost certainly a wrong delimiter or an unclosed quote. */
const MAX_CSV_RECORD_CHARS = 16_000_000;

const BOM = '\uFEFF';

function stripBom(content: string): string {
  return content.charCodeAt(0) === 0xfeff ? content.slice(BOM.length) : content;
}

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** V8 quotes the whole input in some messages; a 2 KB report in an error is noise. */
function cleanJsonMessage(message: string): string {
  const cleaned = message.replace(/, ".*" is not valid JSON$/s, '').replace(/^"[\s\S]*" is not valid JSON$/, 'not valid JSON');
  return cleaned.length > 200 ? `${cleaned.slice(0, 200)}…` : cleaned;
}

/**
 * Parses an uploaded file into records. UTF-8 text in, a leading BOM stripped, CRLF or LF line
 * ends. Never throws on bad content: every problem becomes a {@link RowError}, and the rows that
 * did parse are returned alongside so a caller can report everything at once.
 *
 * - CSV: the first record is the header (names trimmed; empty or repeated names are errors).
 *   Quoted fields may span lines and contain the delimiter; `""` is a quote. Every cell is a
 *   string, an empty cell is `""`. A quote inside an unquoted field, or text after a closing
 *   quote, is kept literally (`5" lesion`, `"a"b`). Blank lines and records whose cells are all empty are
 *   skipped. A record with more or fewer cells than the header is an error. An unterminated
 *   quote stops parsing at the record where it opened.
 * - JSON: an array of objects; values keep their JSON types.
 * - JSONL: one object per line; blank lines are skipped.
 *
 * Values are refused rather than stored altered: a record with a lone UTF-16 surrogate in a
 * value or a key (PostgreSQL would get U+FFFD), nesting deeper than 64 levels, or (JSON, JSONL)
 * a number no double holds (1e400, 1e-400: JSON.parse makes them Infinity, stored as null, and
 * 0) is an error. NUL characters are left to the callers, which refuse or remove them.
 *
 * Linear in the input size.
 */
export function parseRecords(
  content: string,
  format: RecordFormat,
  options: ParseRecordsOptions = {},
): ParseRecordsResult {
  const text = stripBom(content);
  let result: ParseRecordsResult;
  switch (format) {
    case 'CSV':
      result = parseCsvRecords(text, options.delimiter);
      break;
    case 'JSON':
      result = parseJsonRecords(text);
      break;
    case 'JSONL':
      result = parseJsonlRecords(text);
      break;
    default: {
      const never: never = format;
      return { rows: [], errors: [{ row: 0, reason: `unknown format ${String(never)}` }] };
    }
  }
  return withoutUnstorableRecords(result);
}

/** Moves the records holding a value that cannot be stored as it is from `rows` to `errors`. */
function withoutUnstorableRecords(result: ParseRecordsResult): ParseRecordsResult {
  const rows: ParsedRecord[] = [];
  const errors = [...result.errors];
  let moved = false;
  for (const rec of result.rows) {
    const problem = findValueProblem(rec.record, { nul: false });
    if (!problem) {
      rows.push(rec);
      continue;
    }
    moved = true;
    errors.push(recordError(rec, problem.path ? `field '${problem.path}' ${problem.reason}` : `the record ${problem.reason}`, problem.path || undefined));
  }
  if (!moved) return result;
  return { ...result, rows, errors: sortRowErrors(errors) };
}

/**
 * Picks the delimiter among `,` `;` and tab that occurs most often outside quotes in the header
 * line; a tie or no delimiter at all means `,`.
 */
export function detectDelimiter(text: string): string {
  const counts = new Map<string, number>([
    [',', 0],
    [';', 0],
    ['\t', 0],
  ]);
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (c === '"') quoted = !quoted;
    else if (!quoted && (c === '\n' || c === '\r')) break;
    else if (!quoted && counts.has(c)) counts.set(c, (counts.get(c) ?? 0) + 1);
  }
  let best = ',';
  for (const [d, n] of counts) if (n > (counts.get(best) ?? 0)) best = d;
  return best;
}

/** Line breaks in a field: LF, CRLF and a lone CR each count once (native indexOf scans). */
function countLineBreaks(field: string): number {
  let n = 0;
  for (let i = field.indexOf('\n'); i !== -1; i = field.indexOf('\n', i + 1)) n += 1;
  for (let i = field.indexOf('\r'); i !== -1; i = field.indexOf('\r', i + 1)) {
    if (field.charCodeAt(i + 1) !== 10) n += 1;
  }
  return n;
}

interface CsvErrorLike {
  code?: string;
  message: string;
}

function describeCsvError(err: CsvErrorLike): string {
  switch (err.code) {
    case 'CSV_QUOTE_NOT_CLOSED':
      return 'unterminated quoted field: the opening quote is never closed';
    case 'CSV_INVALID_CLOSING_QUOTE':
      return 'invalid closing quote: a quoted field must be followed by the delimiter or a line end (write a quote inside a quoted field as "")';
    case 'CSV_MAX_RECORD_SIZE':
      return `record longer than ${MAX_CSV_RECORD_CHARS} characters (wrong delimiter or an unclosed quote?)`;
    default:
      // csv-parse's own line numbers count CRLF inside quoted fields twice; ours do not
      return `CSV syntax error: ${err.message.replace(/ at line \d+/, '')}`;
  }
}

/** Lone surrogates only: in a `u` regular expression a pair is one code point and does not match. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

function parseCsvRecords(text: string, delimiterOption: string | undefined): ParseRecordsResult {
  const delimiter = delimiterOption ?? detectDelimiter(text);
  // csv-parse reads UTF-8 bytes, in which a lone surrogate has already become U+FFFD.
  const lone = LONE_SURROGATE.exec(text);
  if (lone) {
    const line = text.slice(0, lone.index).split('\n').length;
    return { rows: [], errors: [{ row: 0, line, reason: `the file ${LONE_SURROGATE_REASON}` }], columns: [], delimiter };
  }
  const rows: ParsedRecord[] = [];
  const errors: RowError[] = [];
  let header: string[] | null = null;
  let headerOk = true;
  // physical lines consumed by the records seen so far (blank lines are counted separately)
  let recordLines = 0;
  let emptyLinesSeen = 0;
  let dataRecords = 0;

  const onRecord = (fields: string[], ctx: { empty_lines: number }): null => {
    emptyLinesSeen = ctx.empty_lines;
    const startLine = recordLines + emptyLinesSeen + 1;
    let breaks = 0;
    for (const f of fields) breaks += countLineBreaks(f);
    recordLines += 1 + breaks;

    if (header === null) {
      header = fields.map((name) => name.trim());
      const seen = new Map<string, number>();
      header.forEach((name, i) => {
        if (name === '') {
          errors.push({ row: 0, line: startLine, reason: `header column ${i + 1} has no name` });
          headerOk = false;
        } else if (seen.has(name)) {
          errors.push({
            row: 0,
            line: startLine,
            field: name,
            reason: `header names column '${name}' twice (columns ${(seen.get(name) ?? 0) + 1} and ${i + 1})`,
          });
          headerOk = false;
        } else {
          seen.set(name, i);
        }
      });
      return null;
    }

    if (fields.every((f) => f.trim() === '')) return null;
    dataRecords += 1;
    const row = dataRecords;
    if (fields.length !== header.length) {
      errors.push({
        row,
        line: startLine,
        reason: `${fields.length} cells but the header has ${header.length} columns`,
      });
      return null;
    }
    if (!headerOk) return null;
    const record: Record<string, unknown> = {};
    for (let i = 0; i < header.length; i += 1) setOwn(record, header[i], fields[i]);
    rows.push({ row, line: startLine, record });
    return null;
  };

  try {
    parseCsv(text, {
      delimiter,
      relax_column_count: true,
      relax_quotes: true,
      skip_empty_lines: true,
      max_record_size: MAX_CSV_RECORD_CHARS,
      on_record: onRecord,
    });
  } catch (err) {
    const e = err as CsvErrorLike;
    errors.push({
      row: header === null ? 0 : dataRecords + 1,
      line: recordLines + emptyLinesSeen + 1,
      reason: describeCsvError(e),
    });
  }
  if (header === null && errors.length === 0) {
    errors.push({ row: 0, reason: 'the file is empty: a CSV needs a header line' });
  }
  return { rows, errors, columns: header ?? [], delimiter };
}

function parseJsonRecords(text: string): ParseRecordsResult {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return diagnoseJsonArray(text);
  }
  // Rare: the element by element reading names the rows holding such a number.
  if (Array.isArray(doc) && findOutOfRangeNumber(text) !== null) return diagnoseJsonArray(text);
  if (!Array.isArray(doc)) {
    return {
      rows: [],
      errors: [{ row: 0, reason: `a JSON import must be an array of objects, got ${describeType(doc)}` }],
    };
  }
  const rows: ParsedRecord[] = [];
  const errors: RowError[] = [];
  doc.forEach((element: unknown, i) => {
    if (isPlainObject(element)) rows.push({ row: i + 1, record: element });
    else errors.push({ row: i + 1, reason: `expected an object, got ${describeType(element)}` });
  });
  return { rows, errors };
}

/**
 * Runs only when `JSON.parse` rejected the document: splits the top-level array into elements
 * by scanning brackets and strings, then parses each element on its own, so every broken
 * element is reported with its row and line and the good ones still parse.
 */
function diagnoseJsonArray(text: string): ParseRecordsResult {
  const rows: ParsedRecord[] = [];
  const errors: RowError[] = [];
  let p = 0;
  let line = 1;
  const skipWs = (): void => {
    while (p < text.length) {
      const c = text.charCodeAt(p);
      if (c === 10) line += 1;
      else if (c !== 32 && c !== 9 && c !== 13) break;
      p += 1;
    }
  };
  skipWs();
  if (p >= text.length) return { rows, errors: [{ row: 0, reason: 'the file is empty' }] };
  if (text[p] !== '[') {
    let reason = 'a JSON import must be an array of objects';
    try {
      JSON.parse(text);
    } catch (err) {
      reason += ` (${cleanJsonMessage((err as Error).message)})`;
    }
    return { rows, errors: [{ row: 0, line, reason }] };
  }
  p += 1;
  let row = 0;
  for (;;) {
    skipWs();
    if (p >= text.length) {
      errors.push({ row: 0, line, reason: "unexpected end of file: the array is not closed with ']'" });
      break;
    }
    if (text[p] === ']') {
      if (row > 0) errors.push({ row, line, reason: "trailing comma after the last element" });
      p += 1;
      break;
    }
    row += 1;
    const startLine = line;
    const start = p;
    let depth = 0;
    let inString = false;
    let end = -1;
    for (; p < text.length; p += 1) {
      const c = text.charCodeAt(p);
      if (c === 10) line += 1;
      if (inString) {
        if (c === 92) p += 1;
        else if (c === 34) inString = false;
        continue;
      }
      if (c === 34) inString = true;
      else if (c === 123 || c === 91) depth += 1;
      else if (c === 125 || c === 93) {
        if (depth === 0) {
          end = p;
          break;
        }
        depth -= 1;
      } else if (c === 44 && depth === 0) {
        end = p;
        break;
      }
    }
    const chunk = text.slice(start, end === -1 ? p : end);
    if (end === -1 && (inString || depth > 0)) {
      errors.push({
        row,
        line: startLine,
        reason: inString ? 'unterminated string at the end of the file' : 'unexpected end of file inside this element',
      });
      break;
    }
    try {
      const element: unknown = JSON.parse(chunk);
      if (findOutOfRangeNumber(chunk) !== null) errors.push({ row, line: startLine, reason: `a value ${OUT_OF_RANGE_REASON}` });
      else if (isPlainObject(element)) rows.push({ row, line: startLine, record: element });
      else errors.push({ row, line: startLine, reason: `expected an object, got ${describeType(element)}` });
    } catch (err) {
      errors.push({ row, line: startLine, reason: `invalid JSON: ${cleanJsonMessage((err as Error).message)}` });
    }
    if (text[p] === ',') {
      p += 1;
      continue;
    }
    if (text[p] === ']') {
      p += 1;
      break;
    }
    if (p >= text.length) {
      errors.push({ row: 0, line, reason: "unexpected end of file: the array is not closed with ']'" });
      break;
    }
    // a '}' closing nothing: report and stop, the rest cannot be split reliably
    errors.push({ row, line, reason: `unexpected '${text[p]}' after this element` });
    return { rows, errors };
  }
  skipWs();
  if (p < text.length) {
    errors.push({ row: 0, line, reason: 'unexpected content after the closing bracket of the array' });
  }
  if (errors.length === 0) {
    // JSON.parse failed but every element parsed: the problem is outside the elements
    errors.push({ row: 0, reason: 'invalid JSON outside the array elements' });
  }
  return { rows, errors };
}

function parseJsonlRecords(text: string): ParseRecordsResult {
  const rows: ParsedRecord[] = [];
  const errors: RowError[] = [];
  let row = 0;
  let lineNo = 0;
  let start = 0;
  while (start <= text.length) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    lineNo += 1;
    const raw = text.slice(start, end);
    start = end + 1;
    if (raw.trim() === '') continue;
    row += 1;
    try {
      const value: unknown = JSON.parse(raw);
      if (findOutOfRangeNumber(raw) !== null) errors.push({ row, line: lineNo, reason: `a value ${OUT_OF_RANGE_REASON}` });
      else if (isPlainObject(value)) rows.push({ row, line: lineNo, record: value });
      else errors.push({ row, line: lineNo, reason: `expected an object, got ${describeType(value)}` });
    } catch (err) {
      errors.push({ row, line: lineNo, reason: `invalid JSON: ${cleanJsonMessage((err as Error).message)}` });
    }
  }
  return { rows, errors };
}

/** The outcome of reading an external id from a record. */
export type ExternalIdResult = { ok: true; id: string } | { ok: false; reason: string };

/**
 * Reads a record's external id: a non-empty string (trimmed, so ids match across files that
 * pad differently) or a finite number (converted with `String`, so 12 and "12" are the same id).
 * Ids are stored and indexed: one with a NUL character or over 500 characters is refused.
 */
export function readExternalId(record: Record<string, unknown>, idField: string): ExternalIdResult {
  if (!Object.prototype.hasOwnProperty.call(record, idField)) {
    return { ok: false, reason: `missing id field '${idField}'` };
  }
  const value = record[idField];
  if (typeof value === 'number' && Number.isFinite(value)) return { ok: true, id: String(value) };
  if (typeof value === 'string') {
    const id = value.trim();
    if (id === '') return { ok: false, reason: `empty id in field '${idField}'` };
    if (id.includes(NUL)) return { ok: false, reason: `id in field '${idField}' ${NUL_REASON}` };
    if (id.length > MAX_NAME_LENGTH) return { ok: false, reason: `id in field '${idField}' ${TOO_LONG_REASON}` };
    return { ok: true, id };
  }
  if (value === null || value === undefined) return { ok: false, reason: `empty id in field '${idField}'` };
  return { ok: false, reason: `id field '${idField}' must be a string or a number, got ${describeType(value)}` };
}

/** Whether any record has `field` as an own key. */
export function anyRecordHas(rows: readonly ParsedRecord[], field: string): boolean {
  return rows.some((r) => Object.prototype.hasOwnProperty.call(r.record, field));
}

/** The keys of all records in first-seen order. */
export function collectColumns(rows: readonly ParsedRecord[]): string[] {
  const seen = new Set<string>();
  for (const r of rows) for (const k of Object.keys(r.record)) seen.add(k);
  return [...seen];
}

/** Tracks ids already seen in a file, to report duplicates with both rows. */
export class DuplicateIdTracker {
  private readonly firstRow = new Map<string, number>();

  /** Returns the error for `row` if `id` was already seen, otherwise records it. */
  check(id: string, row: number, line: number | undefined, idField: string): RowError | null {
    const first = this.firstRow.get(id);
    if (first !== undefined) {
      const error: RowError = { row, field: idField, reason: `duplicate external id '${id}' (also in row ${first})` };
      if (line !== undefined) error.line = line;
      return error;
    }
    this.firstRow.set(id, row);
    return null;
  }
}

/**
 * The records that have a readable external id not seen in an earlier row, with that id; the
 * others are pushed to `errors` (unreadable id, or a repeat naming the first row).
 */
export function identifiedRecords(rows: readonly ParsedRecord[], idField: string, errors: RowError[]): { rec: ParsedRecord; id: string }[] {
  const ids = new DuplicateIdTracker();
  const out: { rec: ParsedRecord; id: string }[] = [];
  for (const rec of rows) {
    const idResult = readExternalId(rec.record, idField);
    if (!idResult.ok) {
      errors.push(recordError(rec, idResult.reason, idField));
      continue;
    }
    const dup = ids.check(idResult.id, rec.row, rec.line, idField);
    if (dup) {
      errors.push(dup);
      continue;
    }
    out.push({ rec, id: idResult.id });
  }
  return out;
}

/** The columns present in the file, for error messages, abbreviated past 20. */
export function describeColumns(columns: readonly string[]): string {
  if (columns.length === 0) return 'none';
  const shown = columns.slice(0, 20).map((c) => `'${c}'`).join(', ');
  return columns.length > 20 ? `${shown}, … (${columns.length} in total)` : shown;
}

/** A {@link RowError} for one record, carrying its row and (when known) its line. */
export function recordError(rec: ParsedRecord, reason: string, field?: string): RowError {
  const error: RowError = { row: rec.row, reason };
  if (rec.line !== undefined) error.line = rec.line;
  if (field !== undefined) error.field = field;
  return error;
}

/** Sets an own enumerable property, even for a key such as "__proto__" taken from user input. */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    target[key] = value;
  }
}
