// What every format's record reader shares: the records and problems it hands out, the sink it
// hands them to, and the wrappers around the stream of pieces it reads.
import type { RowError } from './import-errors';
import { findValueProblem } from '../../db/storable';

export type RecordFormat = 'CSV' | 'JSON' | 'JSONL';

/** One data record of an input file; see {@link RowError} for what `row` and `line` count. */
export interface ParsedRecord {
  row: number;
  line?: number;
  record: Record<string, unknown>;
}

/** Where a {@link RecordReader} hands what it reads, in file order. */
export interface RecordSink {
  record(rec: ParsedRecord): void;
  error(error: RowError): void;
  /** The file is rejected with this error alone: what was handed out before does not count. */
  reject(error: RowError): void;
}

/**
 * Reads a file handed to it in pieces (`write`, then `end`), passing each record and each
 * problem to its sink as soon as it is complete, so that a caller never holds more than the
 * records it has not processed yet. The pieces may split the file anywhere except inside a
 * surrogate pair (see {@link textSlices}).
 */
export interface RecordReader {
  write(text: string): void;
  end(): void;
  /**
   * Whether the `line` of the records (and of errors naming them) is meant to be shown. For
   * JSON, lines are only given for a document that is not valid JSON (they locate the broken
   * elements); for CSV and JSONL always.
   */
  readonly showLines: boolean;
  /** CSV only, after the header: the header's column names in file order, and the delimiter used. */
  readonly columns?: string[];
  readonly delimiter?: string;
}

export interface RecordReaderOptions {
  /** CSV field delimiter; when absent it is detected from the header line among `,` `;` tab. */
  delimiter?: string;
}

/** Characters per piece when a whole file held as one string is read piece by piece. */
export const TEXT_SLICE_CHARS = 1 << 18;

/**
 * `text` in pieces of about `size` characters, never ending a piece between the two halves of
 * a surrogate pair. Pieces are slices of `text` (V8 shares the characters, nothing is copied).
 */
export function* textSlices(text: string, size: number = TEXT_SLICE_CHARS): Generator<string> {
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + size);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end += 1;
    yield text.slice(start, end);
    start = end;
  }
}

export function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
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

/**
 * `sink` with every record checked first: a record holding a value that cannot be stored as it
 * is (lone surrogate, nesting deeper than 64 levels) reaches it as an error instead.
 */
export function checkedSink(sink: RecordSink): RecordSink {
  return {
    record(rec) {
      const problem = findValueProblem(rec.record, { nul: false });
      if (!problem) sink.record(rec);
      else sink.error(recordError(rec, problem.path ? `field '${problem.path}' ${problem.reason}` : `the record ${problem.reason}`, problem.path || undefined));
    },
    error: (error) => sink.error(error),
    reject: (error) => sink.reject(error),
  };
}

/** `reader` skipping a leading BOM. */
export function withoutBom(reader: RecordReader): RecordReader {
  let started = false;
  return {
    write(text) {
      if (!started && text.length > 0) {
        started = true;
        if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      }
      reader.write(text);
    },
    end: () => reader.end(),
    get showLines() {
      return reader.showLines;
    },
    get columns() {
      return reader.columns;
    },
    get delimiter() {
      return reader.delimiter;
    },
  };
}
