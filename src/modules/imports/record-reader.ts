import { Parser as CsvParser } from 'csv-parse';
import type { RowError } from './import-errors';
import { findOutOfRangeNumber, LONE_SURROGATE_REASON, OUT_OF_RANGE_REASON } from '../../db/storable';
import { checkedSink, describeType, setOwn, withoutBom, type RecordFormat, type RecordReader, type RecordReaderOptions, type RecordSink } from './record-stream';

/** A field larger than this is almost certainly a wrong delimiter or an unclosed quote. */
export const MAX_CSV_RECORD_CHARS = 16_000_000;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** V8 quotes the whole input in some messages; a 2 KB report in an error is noise. */
function cleanJsonMessage(message: string): string {
  const cleaned = message.replace(/, ".*" is not valid JSON$/s, '').replace(/^"[\s\S]*" is not valid JSON$/, 'not valid JSON');
  return cleaned.length > 200 ? `${cleaned.slice(0, 200)}…` : cleaned;
}

/**
 * A reader for `format` (see `parseRecords` for what each format accepts). A record holding a
 * value that cannot be stored as it is (lone surrogate, nesting deeper than 64 levels) reaches
 * the sink as an error instead of a record. A leading BOM is skipped.
 */
export function createRecordReader(format: RecordFormat, sink: RecordSink, options: RecordReaderOptions = {}): RecordReader {
  const checked = checkedSink(sink);
  let inner: RecordReader;
  switch (format) {
    case 'CSV':
      inner = new CsvReader(checked, options.delimiter);
      break;
    case 'JSON':
      inner = new JsonArrayReader(checked);
      break;
    case 'JSONL':
      inner = new JsonLinesReader(checked);
      break;
    default: {
      const never: never = format;
      throw new Error(`unknown format ${String(never)}`);
    }
  }
  return withoutBom(inner);
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

/** Whether `text` holds a line break outside quotes (the header line is complete). */
function hasHeaderLine(text: string): boolean {
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (c === 34) quoted = !quoted;
    else if (!quoted && (c === 10 || c === 13)) return true;
  }
  return false;
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

function countNewlines(text: string, end: number = text.length): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < end; i = text.indexOf('\n', i + 1)) n += 1;
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

interface CsvApi {
  parse(buf: Buffer | undefined, end: boolean, push: (record: unknown) => void, close: () => void): CsvErrorLike | undefined;
}

class CsvReader implements RecordReader {
  readonly showLines = true;
  columns?: string[];
  delimiter?: string;
  private api: CsvApi | null = null;
  /** Text before the header line is complete (the delimiter is detected from it). */
  private head = '';
  /** A high surrogate that ended the last piece, checked with the next one. */
  private carry = '';
  private linesBefore = 0;
  private stopped = false;
  private header: string[] | null = null;
  private headerOk = true;
  // physical lines consumed by the records seen so far (blank lines are counted separately)
  private recordLines = 0;
  private emptyLinesSeen = 0;
  private dataRecords = 0;

  constructor(
    private readonly sink: RecordSink,
    private readonly delimiterOption: string | undefined,
  ) {}

  write(piece: string): void {
    if (this.stopped) return;
    let text = this.carry + piece;
    this.carry = '';
    const last = text.charCodeAt(text.length - 1);
    if (last >= 0xd800 && last <= 0xdbff) {
      this.carry = text.slice(-1);
      text = text.slice(0, -1);
    }
    this.feed(text, false);
  }

  end(): void {
    if (this.stopped) return;
    const text = this.carry;
    this.carry = '';
    this.feed(text, true);
    if (this.stopped) return;
    this.stopped = true;
    if (this.header === null) this.sink.error({ row: 0, reason: 'the file is empty: a CSV needs a header line' });
  }

  private feed(text: string, end: boolean): void {
    // csv-parse reads UTF-8 bytes, in which a lone surrogate has already become U+FFFD.
    const lone = LONE_SURROGATE.exec(text);
    if (lone) {
      this.stopped = true;
      // as for a file refused before its header was read
      this.columns = [];
      this.delimiter ??= this.delimiterOption ?? detectDelimiter(this.head + text);
      this.sink.reject({ row: 0, line: this.linesBefore + countNewlines(text, lone.index) + 1, reason: `the file ${LONE_SURROGATE_REASON}` });
      return;
    }
    this.linesBefore += countNewlines(text);
    if (this.api === null) {
      this.head += text;
      if (!end && !hasHeaderLine(this.head)) return;
      text = this.head;
      this.head = '';
      this.delimiter = this.delimiterOption ?? detectDelimiter(text);
      const parser = new CsvParser({
        delimiter: this.delimiter,
        relax_column_count: true,
        relax_quotes: true,
        skip_empty_lines: true,
        max_record_size: MAX_CSV_RECORD_CHARS,
        on_record: (fields: string[], ctx: { empty_lines: number }) => this.onRecord(fields, ctx),
      });
      this.api = (parser as unknown as { api: CsvApi }).api;
    }
    const error = this.api.parse(
      text.length > 0 ? Buffer.from(text, 'utf8') : undefined,
      end,
      () => {},
      () => {},
    );
    if (error !== undefined) {
      this.stopped = true;
      this.sink.error({
        row: this.header === null ? 0 : this.dataRecords + 1,
        line: this.recordLines + this.emptyLinesSeen + 1,
        reason: describeCsvError(error),
      });
    }
  }

  private onRecord(fields: string[], ctx: { empty_lines: number }): null {
    this.emptyLinesSeen = ctx.empty_lines;
    const startLine = this.recordLines + this.emptyLinesSeen + 1;
    let breaks = 0;
    for (const f of fields) breaks += countLineBreaks(f);
    this.recordLines += 1 + breaks;

    if (this.header === null) {
      const header = fields.map((name) => name.trim());
      this.header = header;
      this.columns = header;
      const seen = new Map<string, number>();
      header.forEach((name, i) => {
        if (name === '') {
          this.sink.error({ row: 0, line: startLine, reason: `header column ${i + 1} has no name` });
          this.headerOk = false;
        } else if (seen.has(name)) {
          this.sink.error({
            row: 0,
            line: startLine,
            field: name,
            reason: `header names column '${name}' twice (columns ${(seen.get(name) ?? 0) + 1} and ${i + 1})`,
          });
          this.headerOk = false;
        } else {
          seen.set(name, i);
        }
      });
      return null;
    }

    if (fields.every((f) => f.trim() === '')) return null;
    this.dataRecords += 1;
    const row = this.dataRecords;
    const header = this.header;
    if (fields.length !== header.length) {
      this.sink.error({ row, line: startLine, reason: `${fields.length} cells but the header has ${header.length} columns` });
      return null;
    }
    if (!this.headerOk) return null;
    const record: Record<string, unknown> = {};
    for (let i = 0; i < header.length; i += 1) setOwn(record, header[i], fields[i]);
    this.sink.record({ row, line: startLine, record });
    return null;
  }
}

type JsonPhase = 'start' | 'notArray' | 'beforeElement' | 'element' | 'after' | 'done';

/**
 * A JSON array of objects, element by element: brackets and strings are scanned to find where
 * each top-level element ends, and each element is parsed on its own, so every broken element is
 * reported with its row and line and the good ones still parse. A document whose first
 * character is not `[` is kept whole and judged at the end (it is an error either way).
 */
class JsonArrayReader implements RecordReader {
  private phase: JsonPhase = 'start';
  private line = 1;
  private row = 0;
  /** A syntax problem was found: lines are shown (see {@link RecordReader.showLines}). */
  private diagnosed = false;
  // the element being read
  private parts: string[] = [];
  private startLine = 1;
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** The document when it does not start with `[`. */
  private whole: string[] = [];
  private notArrayLine = 1;

  constructor(private readonly sink: RecordSink) {}

  get showLines(): boolean {
    return this.diagnosed;
  }

  private syntaxError(error: RowError): void {
    this.diagnosed = true;
    this.sink.error(error);
  }

  write(text: string): void {
    let p = 0;
    const n = text.length;
    while (p < n) {
      switch (this.phase) {
        case 'done':
          return;
        case 'notArray':
          this.whole.push(text.slice(p));
          return;
        case 'start':
        case 'beforeElement':
        case 'after': {
          // whitespace between the tokens
          let c = text.charCodeAt(p);
          while (c === 32 || c === 9 || c === 13 || c === 10) {
            if (c === 10) this.line += 1;
            p += 1;
            if (p >= n) return;
            c = text.charCodeAt(p);
          }
          if (this.phase === 'start') {
            if (c === 91) {
              this.phase = 'beforeElement';
              p += 1;
            } else {
              this.phase = 'notArray';
              this.notArrayLine = this.line;
            }
          } else if (this.phase === 'after') {
            this.syntaxError({ row: 0, line: this.line, reason: 'unexpected content after the closing bracket of the array' });
            this.phase = 'done';
            return;
          } else if (c === 93) {
            if (this.row > 0) this.syntaxError({ row: this.row, line: this.line, reason: 'trailing comma after the last element' });
            this.phase = 'after';
            p += 1;
          } else {
            this.row += 1;
            this.startLine = this.line;
            this.parts = [];
            this.depth = 0;
            this.inString = false;
            this.escaped = false;
            this.phase = 'element';
          }
          break;
        }
        case 'element':
          p = this.scanElement(text, p);
          break;
      }
    }
  }

  /** Scans the current element from `p`; returns where scanning stopped. */
  private scanElement(text: string, from: number): number {
    const n = text.length;
    let p = from;
    let depth = this.depth;
    let inString = this.inString;
    if (this.escaped) {
      // the character after a backslash at the end of the last piece
      this.escaped = false;
      p += 1;
    }
    let end = -1;
    for (; p < n; p += 1) {
      const c = text.charCodeAt(p);
      if (c === 10) this.line += 1;
      if (inString) {
        if (c === 92) {
          if (p + 1 >= n) {
            this.escaped = true;
            p = n;
            break;
          }
          p += 1;
        } else if (c === 34) inString = false;
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
    this.depth = depth;
    this.inString = inString;
    if (end === -1) {
      this.parts.push(text.slice(from, n));
      return n;
    }
    this.parts.push(text.slice(from, end));
    this.finishElement();
    const c = text.charCodeAt(end);
    if (c === 44) this.phase = 'beforeElement';
    else if (c === 93) this.phase = 'after';
    else {
      // a '}' closing nothing: report and stop, the rest cannot be split reliably
      this.syntaxError({ row: this.row, line: this.line, reason: `unexpected '${text[end]}' after this element` });
      this.phase = 'done';
    }
    return end + 1;
  }

  private finishElement(): void {
    const chunk = this.parts.length === 1 ? this.parts[0]! : this.parts.join('');
    this.parts = [];
    const row = this.row;
    const line = this.startLine;
    try {
      const element: unknown = JSON.parse(chunk);
      if (findOutOfRangeNumber(chunk) !== null) this.syntaxError({ row, line, reason: `a value ${OUT_OF_RANGE_REASON}` });
      else if (isPlainObject(element)) this.sink.record({ row, line, record: element });
      else this.sink.error({ row, line, reason: `expected an object, got ${describeType(element)}` });
    } catch (err) {
      this.syntaxError({ row, line, reason: `invalid JSON: ${cleanJsonMessage((err as Error).message)}` });
    }
  }

  end(): void {
    switch (this.phase) {
      case 'start':
        this.sink.error({ row: 0, reason: 'the file is empty' });
        break;
      case 'notArray': {
        const text = this.whole.join('');
        this.whole = [];
        let doc: unknown;
        try {
          doc = JSON.parse(text);
        } catch (err) {
          this.syntaxError({ row: 0, line: this.notArrayLine, reason: `a JSON import must be an array of objects (${cleanJsonMessage((err as Error).message)})` });
          break;
        }
        this.sink.error({ row: 0, reason: `a JSON import must be an array of objects, got ${describeType(doc)}` });
        break;
      }
      case 'beforeElement':
        this.syntaxError({ row: 0, line: this.line, reason: "unexpected end of file: the array is not closed with ']'" });
        break;
      case 'element':
        if (this.inString || this.depth > 0 || this.escaped) {
          this.syntaxError({
            row: this.row,
            line: this.startLine,
            reason: this.inString || this.escaped ? 'unterminated string at the end of the file' : 'unexpected end of file inside this element',
          });
        } else {
          this.finishElement();
          this.syntaxError({ row: 0, line: this.line, reason: "unexpected end of file: the array is not closed with ']'" });
        }
        break;
      default:
        break;
    }
    this.phase = 'done';
  }
}

/** JSON Lines: one object per line; blank lines are skipped. */
class JsonLinesReader implements RecordReader {
  readonly showLines = true;
  private rest: string[] = [];
  private row = 0;
  private lineNo = 0;

  constructor(private readonly sink: RecordSink) {}

  write(text: string): void {
    let start = 0;
    for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', start)) {
      let raw = text.slice(start, end);
      if (this.rest.length > 0) {
        this.rest.push(raw);
        raw = this.rest.join('');
        this.rest = [];
      }
      this.line(raw);
      start = end + 1;
    }
    if (start < text.length) this.rest.push(text.slice(start));
  }

  end(): void {
    const raw = this.rest.join('');
    this.rest = [];
    this.line(raw);
  }

  private line(raw: string): void {
    this.lineNo += 1;
    if (raw.trim() === '') return;
    this.row += 1;
    const row = this.row;
    const line = this.lineNo;
    try {
      const value: unknown = JSON.parse(raw);
      if (findOutOfRangeNumber(raw) !== null) this.sink.error({ row, line, reason: `a value ${OUT_OF_RANGE_REASON}` });
      else if (isPlainObject(value)) this.sink.record({ row, line, record: value });
      else this.sink.error({ row, line, reason: `expected an object, got ${describeType(value)}` });
    } catch (err) {
      this.sink.error({ row, line, reason: `invalid JSON: ${cleanJsonMessage((err as Error).message)}` });
    }
  }
}
