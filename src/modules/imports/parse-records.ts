import type { RowError } from './import-errors';
import { nameProblem, NUL, NUL_REASON } from './text-checks';
import { createRecordReader } from './record-reader';
import {
  describeType,
  recordError,
  textSlices,
  type ParsedRecord,
  type RecordFormat,
  type RecordReader,
  type RecordReaderOptions,
  type RecordSink,
} from './record-stream';
import { TimeSlices } from '../../event-loop';
import { InlineFile } from './inline-file';
import { isTruncated, type ImportSource } from './upload';

export { detectDelimiter } from './record-reader';
export { recordError, setOwn, type ParsedRecord, type RecordFormat } from './record-stream';

export interface ParseRecordsResult {
  rows: ParsedRecord[];
  errors: RowError[];
  /** CSV only: the header's column names in file order, and the delimiter used. */
  columns?: string[];
  delimiter?: string;
}

export type ParseRecordsOptions = RecordReaderOptions;

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
 * Linear in the input size. {@link readRecords} does the same without holding all records.
 */
export function parseRecords(content: string, format: RecordFormat, options: ParseRecordsOptions = {}): ParseRecordsResult {
  let rows: ParsedRecord[] = [];
  let errors: RowError[] = [];
  let rejected = false;
  const reader = createRecordReader(
    format,
    {
      record: (rec) => {
        if (!rejected) rows.push(rec);
      },
      error: (error) => {
        if (!rejected) errors.push(error);
      },
      reject: (error) => {
        rejected = true;
        rows = [];
        errors = [error];
      },
    },
    options,
  );
  for (const piece of textSlices(content)) reader.write(piece);
  reader.end();
  if (!reader.showLines) {
    for (const rec of rows) delete rec.line;
    for (const error of errors) delete error.line;
  }
  const result: ParseRecordsResult = { rows, errors };
  if (format === 'CSV') {
    result.columns = reader.columns ?? [];
    if (reader.delimiter !== undefined) result.delimiter = reader.delimiter;
  }
  return result;
}

export interface ReadRecordsResult {
  /** The problems found while reading, in the order they were found. */
  errors: RowError[];
  /** The file was rejected as a whole: `errors` holds that one error, and records handed out before do not count. */
  rejected: boolean;
  /** False when the records' `line` is not to be shown: drop it from errors made from them (see {@link RecordReader.showLines}). */
  showLines: boolean;
  columns?: string[];
  delimiter?: string;
}

/**
 * The pieces of a file: slices of a string, the decoded pieces of an inline file, or an uploaded file's bytes decoded as UTF-8 as
 * they arrive. Bytes that are not UTF-8, or a file the multipart parser cut at its size limit,
 * are reported through `fail`; the rest of the upload is still read (and dropped) so that the
 * request body is consumed.
 */
async function* textPieces(source: ImportSource, fail: (error: RowError) => void): AsyncGenerator<string> {
  if (typeof source === 'string') {
    yield* textSlices(source);
    return;
  }
  if (source instanceof InlineFile) {
    // The body reader checked the literal before the request went on.
    yield* source.pieces();
    return;
  }
  // ignoreBOM: the BOM is passed on and skipped by the reader, as for inline content
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  let failed = false;
  for await (const chunk of source) {
    if (failed) continue;
    try {
      const text = decoder.decode(chunk, { stream: true });
      if (text.length > 0) yield text;
    } catch {
      failed = true;
      fail({ row: 0, reason: 'the file is not valid UTF-8' });
    }
  }
  if (failed) return;
  try {
    const text = decoder.decode();
    if (text.length > 0) yield text;
  } catch {
    fail({ row: 0, reason: 'the file is not valid UTF-8 (it ends inside a character)' });
    return;
  }
  if (isTruncated(source)) fail({ row: 0, reason: 'the file is larger than the server accepts' });
}

/** How long an import works before other requests get a turn of the event loop (ms). */
const IMPORT_SLICE_MS = 20;

/**
 * Reads a file piece by piece and hands its records to `onBatch` in file order, at most
 * `batchSize` at a time (each batch is awaited before reading on), so that only one batch of
 * records exists at a time; `clean` tells whether no problem was found so far, and `pause`
 * gives other requests a turn once IMPORT_SLICE_MS have passed (for long per-record work). Problems are
 * collected and returned, as {@link parseRecords} would. An uploaded file is read to its end
 * even when it is rejected early.
 */
export async function readRecords(
  source: ImportSource,
  format: RecordFormat,
  options: ParseRecordsOptions,
  batchSize: number,
  onBatch: (records: ParsedRecord[], clean: boolean, pause: () => Promise<void>) => Promise<void> | void,
): Promise<ReadRecordsResult> {
  let batch: ParsedRecord[] = [];
  let errors: RowError[] = [];
  let rejected = false;
  const reject = (error: RowError): void => {
    if (rejected) return;
    rejected = true;
    batch = [];
    errors = [error];
  };
  const sink: RecordSink = {
    record: (rec) => {
      if (!rejected) batch.push(rec);
    },
    error: (error) => {
      if (!rejected) errors.push(error);
    },
    reject,
  };
  const reader: RecordReader = createRecordReader(format, sink, options);
  // A batch that fails (a database error) ends the import; an upload is still read to its end.
  let failure: { error: unknown } | null = null;
  // An upload is read to its end (the request body must be consumed); a file in memory need not be.
  const inMemory = typeof source === 'string' || source instanceof InlineFile;
  // One budget for reading and for the batches' work: `pause` between records of a batch.
  const slices = new TimeSlices(IMPORT_SLICE_MS);
  const pause = (): Promise<void> => slices.pause();
  for await (const piece of textPieces(source, reject)) {
    if (rejected || failure) {
      if (inMemory) break;
      continue;
    }
    reader.write(piece);
    await pause();
    try {
      while (!rejected && batch.length >= batchSize) {
        const full = batch.slice(0, batchSize);
        batch = batch.slice(batchSize);
        await onBatch(full, errors.length === 0, pause);
      }
    } catch (error) {
      failure = { error };
    }
  }
  if (failure) throw failure.error;
  if (!rejected) reader.end();
  if (!rejected && batch.length > 0) {
    const last = batch;
    batch = [];
    await onBatch(last, errors.length === 0, pause);
  }
  const result: ReadRecordsResult = { errors, rejected, showLines: reader.showLines };
  if (format === 'CSV') {
    result.columns = reader.columns ?? [];
    if (reader.delimiter !== undefined) result.delimiter = reader.delimiter;
  }
  return result;
}

/** The outcome of reading an external id from a record. */
export type ExternalIdResult = { ok: true; id: string } | { ok: false; reason: string };

/**
 * Reads a record's external id: a non-empty string (trimmed, so ids match across files that
 * pad differently) or a finite number (converted with `String`, so 12 and "12" are the same id).
 * Ids are stored and indexed: one with a NUL character, a byte-order mark (which trimming would
 * remove) or over 500 characters (code points) is refused.
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
    const problem = nameProblem(value);
    if (problem) return { ok: false, reason: `id in field '${idField}' ${problem}` };
    return { ok: true, id };
  }
  if (value === null || value === undefined) return { ok: false, reason: `empty id in field '${idField}'` };
  return { ok: false, reason: `id field '${idField}' must be a string or a number, got ${describeType(value)}` };
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

  /**
   * The record's external id (readExternalId) when it is readable and not seen in an earlier
   * row; otherwise null, with the reason pushed to `errors`.
   */
  identify(rec: ParsedRecord, idField: string, errors: RowError[]): string | null {
    const idResult = readExternalId(rec.record, idField);
    if (!idResult.ok) {
      errors.push(recordError(rec, idResult.reason, idField));
      return null;
    }
    const duplicate = this.check(idResult.id, rec.row, rec.line, idField);
    if (duplicate) {
      errors.push(duplicate);
      return null;
    }
    return idResult.id;
  }
}

/** The columns present in the file, for error messages, abbreviated past 20. */
export function describeColumns(columns: readonly string[]): string {
  if (columns.length === 0) return 'none';
  const shown = columns.slice(0, 20).map((c) => `'${c}'`).join(', ');
  return columns.length > 20 ? `${shown}, … (${columns.length} in total)` : shown;
}
