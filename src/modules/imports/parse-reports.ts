import type { RowError } from './import-errors';
import {
  describeColumns,
  DuplicateIdTracker,
  readExternalId,
  recordError,
  setOwn,
  type ParsedRecord,
} from './parse-records';
import { containsNul, NUL, NUL_REASON } from './text-checks';

export interface ParseReportsOptions {
  idField: string;
  textField: string;
  /** Fields kept as metadata; default every field other than the id and the text. */
  metadataFields?: string[];
}

export interface ParsedReport {
  externalId: string;
  text: string;
  metadata: Record<string, unknown>;
  /** The input row, for error messages of later steps. */
  row: number;
}

export interface ParseReportsResult {
  reports: ParsedReport[];
  errors: RowError[];
}

/**
 * Turns records into reports. The id is required (see `readExternalId`); the text must be a
 * string with at least one non-whitespace character and is kept exactly as written except for
 * one trailing `\r` (a CRLF artefact). A repeated external id is an error on the later row,
 * naming the earlier one. Rows with errors are left out of `reports`.
 *
 * Text and metadata are stored in PostgreSQL, which refuses NUL characters: a row holding one is
 * an error (a NUL is not part of any report; it comes from a broken OCR or PDF conversion).
 *
 * A named id or text field that no record has at all is one file-level error (row 0) listing
 * the columns that exist, instead of one error per row.
 */
export function parseReports(rows: readonly ParsedRecord[], options: ParseReportsOptions): ParseReportsResult {
  const reader = new ReportReader(options);
  const reports: ParsedReport[] = [];
  for (const rec of rows) {
    const report = reader.add(rec);
    if (report) reports.push(report);
  }
  const errors = reader.finish();
  return { reports: errors.some((e) => e.row === 0) ? [] : reports, errors };
}

/**
 * {@link parseReports} one record at a time, for a file read piece by piece: `add` checks a
 * record and returns its report (or null, its errors kept), `finish` returns the errors of the
 * whole file. Holds only the ids seen and the column names, not the records.
 */
export class ReportReader {
  private readonly ids = new DuplicateIdTracker();
  private readonly rowErrors: RowError[] = [];
  private readonly columns = new Set<string>();
  private records = 0;

  constructor(private readonly options: ParseReportsOptions) {}

  /** Whether an error was found so far (the file will be rejected). */
  get failed(): boolean {
    return this.rowErrors.length > 0 || this.options.idField === this.options.textField;
  }

  add(rec: ParsedRecord): ParsedReport | null {
    const { idField, textField } = this.options;
    this.records += 1;
    for (const key of Object.keys(rec.record)) this.columns.add(key);
    if (idField === textField) return null;
    const errors = this.rowErrors;
    const idResult = readExternalId(rec.record, idField);
    let rowOk = true;
    if (!idResult.ok) {
      errors.push(recordError(rec, idResult.reason, idField));
      rowOk = false;
    }
    const rawText = rec.record[textField];
    let text = '';
    if (rawText === undefined) {
      errors.push(recordError(rec, `missing text field '${textField}'`, textField));
      rowOk = false;
    } else if (typeof rawText !== 'string') {
      errors.push(recordError(rec, `text field '${textField}' must be a string, got ${rawText === null ? 'null' : typeof rawText}`, textField));
      rowOk = false;
    } else if (rawText.trim() === '') {
      errors.push(recordError(rec, `empty text in field '${textField}'`, textField));
      rowOk = false;
    } else if (rawText.includes(NUL)) {
      errors.push(recordError(rec, `text field '${textField}' ${NUL_REASON}`, textField));
      rowOk = false;
    } else {
      text = rawText.endsWith('\r') ? rawText.slice(0, -1) : rawText;
    }
    if (idResult.ok) {
      const dup = this.ids.check(idResult.id, rec.row, rec.line, idField);
      if (dup) {
        errors.push(dup);
        rowOk = false;
      }
    }
    if (!rowOk || !idResult.ok) return null;

    const explicitMetadata = this.options.metadataFields;
    const metadata: Record<string, unknown> = {};
    if (explicitMetadata) {
      for (const f of explicitMetadata) {
        if (Object.prototype.hasOwnProperty.call(rec.record, f)) setOwn(metadata, f, rec.record[f]);
      }
    } else {
      for (const [k, v] of Object.entries(rec.record)) if (k !== idField && k !== textField) setOwn(metadata, k, v);
    }
    const nulField = Object.keys(metadata).find((k) => containsNul(k) || containsNul(metadata[k]));
    if (nulField !== undefined) {
      const shown = nulField.replaceAll(NUL, '\\0');
      errors.push(recordError(rec, `metadata field '${shown}' ${NUL_REASON}`, shown));
      return null;
    }
    return { externalId: idResult.id, text, metadata, row: rec.row };
  }

  /**
   * The file's errors: a field no record has is one file-level error listing the columns (and
   * then the rows' errors are not listed); otherwise the rows' errors in row order.
   */
  finish(): RowError[] {
    const { idField, textField } = this.options;
    if (idField === textField) return [{ row: 0, reason: `the id field and the text field are both '${idField}'` }];
    if (this.records > 0) {
      const columns = [...this.columns];
      const fileErrors: RowError[] = [];
      for (const [role, field] of [
        ['id', idField],
        ['text', textField],
      ] as const) {
        if (!this.columns.has(field)) {
          fileErrors.push({ row: 0, field, reason: `${role} field '${field}' not found; the file has ${describeColumns(columns)}` });
        }
      }
      for (const field of this.options.metadataFields ?? []) {
        if (!this.columns.has(field)) {
          fileErrors.push({ row: 0, field, reason: `metadata field '${field}' not found; the file has ${describeColumns(columns)}` });
        }
      }
      if (fileErrors.length > 0) return fileErrors;
    }
    return this.rowErrors;
  }
}
