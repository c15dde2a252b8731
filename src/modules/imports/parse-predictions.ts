import type { RowError } from './import-errors';
import { resolveVariableColumns } from './parse-annotations';
import { collectColumns, describeColumns, DuplicateIdTracker, recordError, setOwn, type ParsedRecord } from './parse-records';
import { parsePythonLiteral, PythonLiteralError } from './python-literal';

export type PredictionLayout = 'RAW_OUTPUT' | 'JSON_COLUMN' | 'WIDE' | 'MEDICAL_RECORD_LLM_CSV';

/**
 * One column/key holds the raw model output, to be parsed as ReportQL parses its own runs; an
 * optional finish reason ("length" = truncated) tells the parser whether an unclosed object was cut.
 */
export interface RawOutputLayoutOptions {
  layout: 'RAW_OUTPUT';
  idField: string;
  rawField: string;
  reasoningField?: string;
  finishReasonField?: string;
}

/** One column/key holds the extracted object (an object in JSON; JSON or a Python dict literal in CSV). */
export interface JsonColumnLayoutOptions {
  layout: 'JSON_COLUMN';
  idField: string;
  objectField: string;
  rawField?: string;
  reasoningField?: string;
}

/** One column/key per variable; the extracted object is assembled from the present ones. */
export interface WideLayoutOptions {
  layout: 'WIDE';
  idField: string;
  variableKeys: string[];
  columnMap?: Record<string, string>;
  rawField?: string;
  reasoningField?: string;
}

/**
 * The output CSV of the extraction paper's framework (INTEROP.md): input columns plus
 * `extracted_data` (a Python dict literal), `raw_output`, `reasoning` (a string, or for
 * prompt-graph runs a Python list of per-step strings) and, for self-consistency, `candidates`.
 */
export interface MedicalRecordLlmLayoutOptions {
  layout: 'MEDICAL_RECORD_LLM_CSV';
  /** Default: the first of {@link MEDICAL_RECORD_LLM_ID_FIELDS} present in the file. */
  idField?: string;
}

export type ParsePredictionsOptions = RawOutputLayoutOptions | JsonColumnLayoutOptions | WideLayoutOptions | MedicalRecordLlmLayoutOptions;

/**
 * Id columns tried, in order, when the framework layout gets no `idField`: the framework's
 * `run.py` default (`patientID`), its experiment runner's default (`Patient-ID`), then
 * common spellings.
 */
export const MEDICAL_RECORD_LLM_ID_FIELDS = ['patientID', 'Patient-ID', 'patient_id', 'id', 'report_id'] as const;

/** Column names the framework writes. */
export const MEDICAL_RECORD_LLM_COLUMNS = {
  extracted: 'extracted_data',
  raw: 'raw_output',
  reasoning: 'reasoning',
  candidates: 'candidates',
} as const;

export interface ParsedPrediction {
  externalId: string;
  /**
   * The extracted object. `null` with `parseError` null: there was none (empty cell, `None`),
   * which scores as MISSING. `null` with a `parseError`: something was there but is not an
   * object, which scores as OUT_OF_FORMAT.
   */
  object: Record<string, unknown> | null;
  raw: string | null;
  reasoning: string | null;
  parseError: string | null;
  /** Self-consistency samples as written (`{temperature, reasoning, extracted_data}` each). */
  samples?: unknown[];
  /** RAW_OUTPUT: the finish reason given for the output. */
  finishReason?: string;
  row: number;
}

export interface ParsePredictionsResult {
  predictions: ParsedPrediction[];
  errors: RowError[];
  /** Problems that do not reject a row (e.g. unreadable `candidates`). */
  warnings: RowError[];
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function kindOf(value: unknown): string {
  if (value === null) return 'None';
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'object' ? 'a dict' : `a ${typeof value}`;
}

/**
 * Reads a cell that should hold the extracted object: an object as-is; a string as JSON, else
 * as a Python literal. An empty cell, `None` or `null` is "no object" (not an error).
 */
export function readExtractedObject(value: unknown): { object: Record<string, unknown> | null; parseError: string | null } {
  if (value === undefined || value === null) return { object: null, parseError: null };
  if (isPlainObject(value)) return { object: value, parseError: null };
  if (typeof value !== 'string') return { object: null, parseError: `expected an object, got ${kindOf(value)}` };
  const text = value.trim();
  if (text === '') return { object: null, parseError: null };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    try {
      parsed = parsePythonLiteral(text);
    } catch (err) {
      const reason = err instanceof PythonLiteralError ? err.message : String(err);
      return { object: null, parseError: `neither JSON nor a Python literal: ${reason}` };
    }
  }
  if (parsed === null) return { object: null, parseError: null };
  if (!isPlainObject(parsed)) return { object: null, parseError: `expected an object, got ${kindOf(parsed)}` };
  return { object: parsed, parseError: null };
}

function textOrNull(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string') return value === '' ? null : value;
  return JSON.stringify(value);
}

/** Per-step reasoning (an array, or a Python/JSON list literal of strings) joined by blank lines. */
function readReasoning(value: unknown, allowListLiteral: boolean): string | null {
  if (Array.isArray(value)) return joinSteps(value);
  if (typeof value === 'string' && allowListLiteral) {
    const t = value.trim();
    if (t.startsWith('[') && t.endsWith(']')) {
      try {
        const parsed = parsePythonLiteral(t);
        if (Array.isArray(parsed) && parsed.every((s) => typeof s === 'string' || s === null)) return joinSteps(parsed);
      } catch {
        // reasoning prose that merely starts with '[' stays as written
      }
    }
  }
  return textOrNull(value);
}

function joinSteps(steps: readonly unknown[]): string | null {
  const parts = steps
    .filter((s) => s !== null && s !== undefined)
    .map((s) => (typeof s === 'string' ? s.trim() : JSON.stringify(s)))
    .filter((s) => s !== '');
  return parts.length === 0 ? null : parts.join('\n\n');
}

function readSamples(value: unknown): { samples?: unknown[]; warning?: string } {
  if (value === undefined || value === null || value === '') return {};
  let parsed: unknown = value;
  if (typeof value === 'string') {
    const t = value.trim();
    if (t === '' || t === 'None') return {};
    try {
      parsed = parsePythonLiteral(t);
    } catch (err) {
      return { warning: `candidates ignored: ${err instanceof Error ? err.message : String(err)}` };
    }
  }
  if (!Array.isArray(parsed)) return { warning: `candidates ignored: expected a list, got ${kindOf(parsed)}` };
  return { samples: parsed };
}

/** Reads one record's prediction fields; null when the row is rejected (its error pushed). */
type RowReader = (rec: ParsedRecord) => Omit<ParsedPrediction, 'externalId' | 'row'> | null;

/**
 * Turns records into predictions for an imported run, one record at a time, so that a file is
 * read as it arrives. Missing or repeated ids are row errors; an unreadable extracted object is
 * not: it becomes `object: null` with a `parseError`, so it scores as OUT_OF_FORMAT like any
 * model output that is not an object.
 *
 * Columns the layout needs that no record has are one file-level error (row 0), known only at
 * {@link PredictionReader.finish}; such an error replaces the row errors. The framework layout
 * without an `idField` takes the first of {@link MEDICAL_RECORD_LLM_ID_FIELDS} among the file's
 * columns: `columns` when given (a file read whole), else the first record's (a CSV record has
 * every column of the header); when a later record shows that another id column ranks higher,
 * finish reports it as a file-level error asking for `idField`.
 */
export class PredictionReader {
  private readonly errors: RowError[] = [];
  private readonly warnings: RowError[] = [];
  private readonly seen = new Set<string>();
  private readonly ids = new DuplicateIdTracker();
  /** File-level errors known before any record: the file fails whatever its records hold. */
  private readonly upfront: RowError[] = [];
  /** WIDE: a column map naming unknown variables (file-level, known before any record). */
  private wideErrors: RowError[] = [];
  private readRow!: RowReader;
  private idField: string | undefined;
  private records = 0;

  constructor(
    private readonly options: ParsePredictionsOptions,
    private readonly columns?: readonly string[],
  ) {
    switch (options.layout) {
      case 'RAW_OUTPUT': {
        this.idField = options.idField;
        const { rawField, reasoningField, finishReasonField } = options;
        this.readRow = (rec) => {
          const raw = rec.record[rawField];
          if (raw !== undefined && raw !== null && typeof raw !== 'string') {
            this.errors.push(recordError(rec, `${rawField} must be a string`, rawField));
            return null;
          }
          const finishReason = finishReasonField === undefined ? undefined : rec.record[finishReasonField];
          return {
            object: null,
            parseError: null,
            raw: raw ?? null,
            reasoning: reasoningField === undefined ? null : textOrNull(rec.record[reasoningField]),
            ...(typeof finishReason === 'string' ? { finishReason } : {}),
          };
        };
        break;
      }
      case 'JSON_COLUMN': {
        this.idField = options.idField;
        const { objectField, rawField, reasoningField } = options;
        this.readRow = (rec) => ({
          ...readExtractedObject(rec.record[objectField]),
          raw: rawField === undefined ? null : textOrNull(rec.record[rawField]),
          reasoning: reasoningField === undefined ? null : readReasoning(rec.record[reasoningField], false),
        });
        break;
      }
      case 'WIDE': {
        this.idField = options.idField;
        const resolved = resolveVariableColumns(options.idField, options.variableKeys, options.columnMap);
        this.wideErrors = resolved.errors;
        const { rawField, reasoningField } = options;
        this.readRow = (rec) => {
          const object: Record<string, unknown> = {};
          for (const [key, column] of resolved.columns) {
            if (Object.prototype.hasOwnProperty.call(rec.record, column)) setOwn(object, key, rec.record[column]);
          }
          return {
            object,
            parseError: null,
            raw: rawField === undefined ? null : textOrNull(rec.record[rawField]),
            reasoning: reasoningField === undefined ? null : readReasoning(rec.record[reasoningField], false),
          };
        };
        this.wideColumns = [...resolved.columns.values()];
        break;
      }
      case 'MEDICAL_RECORD_LLM_CSV': {
        this.idField = options.idField ?? (columns ? frameworkIdField(columns) : undefined);
        const c = MEDICAL_RECORD_LLM_COLUMNS;
        this.readRow = (rec) => {
          const row: Omit<ParsedPrediction, 'externalId' | 'row'> = {
            ...readExtractedObject(rec.record[c.extracted]),
            raw: textOrNull(rec.record[c.raw]),
            reasoning: readReasoning(rec.record[c.reasoning], true),
          };
          const { samples, warning } = readSamples(rec.record[c.candidates]);
          if (samples !== undefined) row.samples = samples;
          if (warning !== undefined) this.warnings.push(recordError(rec, warning, c.candidates));
          return row;
        };
        break;
      }
      default: {
        const never: never = options;
        this.upfront.push({ row: 0, reason: `unknown layout ${String((never as { layout: unknown }).layout)}` });
        this.readRow = () => null;
      }
    }
  }

  /** WIDE: the file columns that hold variables. */
  private wideColumns: string[] = [];

  /** Whether a row error has been found (file-level errors are only known at finish). */
  get failed(): boolean {
    return this.errors.length > 0 || this.upfront.length > 0 || this.wideErrors.length > 0;
  }

  /** The record's prediction, or null when the record is rejected (its error kept for finish). */
  add(rec: ParsedRecord): ParsedPrediction | null {
    this.records += 1;
    for (const key of Object.keys(rec.record)) this.seen.add(key);
    if (this.upfront.length > 0 || this.wideErrors.length > 0) return null;
    if (this.idField === undefined) {
      // The framework layout without idField, read as it arrives: the first record decides.
      this.idField = frameworkIdField(Object.keys(rec.record));
      if (this.idField === undefined) return null;
    }
    const externalId = this.ids.identify(rec, this.idField, this.errors);
    if (externalId === null) return null;
    const row = this.readRow(rec);
    return row === null ? null : { externalId, row: rec.row, ...row };
  }

  /**
   * Every problem of the file: the file-level ones alone when there are any (row 0, in the
   * order the layout's columns are checked, and then no warnings), else the row errors in the
   * order found.
   */
  finish(): { errors: RowError[]; warnings: RowError[]; fileLevel: boolean } {
    const fileLevel = this.upfront.length > 0 ? this.upfront : this.fileErrors();
    return fileLevel.length > 0 ? { errors: fileLevel, warnings: [], fileLevel: true } : { errors: this.errors, warnings: this.warnings, fileLevel: false };
  }

  private fileErrors(): RowError[] {
    const columns = this.columns ?? [...this.seen];
    const errors: RowError[] = [];
    const requireColumn = (field: string, role: string): void => {
      if (this.records > 0 && !this.seen.has(field)) {
        errors.push({ row: 0, field, reason: `${role} '${field}' not found; the file has ${describeColumns(columns)}` });
      }
    };
    const o = this.options;
    switch (o.layout) {
      case 'RAW_OUTPUT':
        requireColumn(o.idField, 'id field');
        requireColumn(o.rawField, 'raw output field');
        if (o.reasoningField !== undefined) requireColumn(o.reasoningField, 'reasoning field');
        break;
      case 'JSON_COLUMN':
        requireColumn(o.idField, 'id field');
        requireColumn(o.objectField, 'object field');
        if (o.rawField !== undefined) requireColumn(o.rawField, 'raw output field');
        if (o.reasoningField !== undefined) requireColumn(o.reasoningField, 'reasoning field');
        break;
      case 'WIDE':
        requireColumn(o.idField, 'id field');
        errors.push(...this.wideErrors);
        if (this.records > 0 && this.wideErrors.length === 0 && !this.wideColumns.some((c) => this.seen.has(c))) {
          errors.push({
            row: 0,
            reason: `none of the variable columns (${describeColumns(this.wideColumns)}) is in the file; the file has ${describeColumns(columns)}`,
          });
        }
        if (o.rawField !== undefined) requireColumn(o.rawField, 'raw output field');
        if (o.reasoningField !== undefined) requireColumn(o.reasoningField, 'reasoning field');
        break;
      case 'MEDICAL_RECORD_LLM_CSV': {
        const best = o.idField ?? frameworkIdField(columns);
        if (best === undefined) {
          if (this.records > 0) {
            errors.push({
              row: 0,
              reason: `no id column: name one, or use one of ${describeColumns(MEDICAL_RECORD_LLM_ID_FIELDS)}; the file has ${describeColumns(columns)}`,
            });
          }
        } else if (this.idField !== undefined && best !== this.idField) {
          errors.push({
            row: 0,
            reason: `the first record's id column is '${this.idField}' but later records have '${best}': name the id column (idField)`,
          });
        } else {
          requireColumn(best, 'id field');
        }
        requireColumn(MEDICAL_RECORD_LLM_COLUMNS.extracted, 'framework column');
        break;
      }
    }
    return errors;
  }
}

/** The framework layout's id column among `columns`: the first of MEDICAL_RECORD_LLM_ID_FIELDS present. */
function frameworkIdField(columns: readonly string[]): string | undefined {
  return MEDICAL_RECORD_LLM_ID_FIELDS.find((f) => columns.includes(f));
}

/** All predictions of records read whole: {@link PredictionReader} over `rows`. */
export function parsePredictions(rows: readonly ParsedRecord[], options: ParsePredictionsOptions): ParsePredictionsResult {
  const reader = new PredictionReader(options, collectColumns(rows));
  const predictions: ParsedPrediction[] = [];
  for (const rec of rows) {
    const prediction = reader.add(rec);
    if (prediction !== null) predictions.push(prediction);
  }
  const { errors, warnings, fileLevel } = reader.finish();
  return { predictions: fileLevel ? [] : predictions, errors, warnings };
}
