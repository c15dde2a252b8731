import type { RowError } from './import-errors';
import { describeColumns, DuplicateIdTracker, setOwn, type ParsedRecord } from './parse-records';

export interface ParseAnnotationsOptions {
  idField: string;
  /** The use case's variable keys. */
  variableKeys: string[];
  /** Column (or JSON key) holding a variable when it is not named like the variable key. */
  columnMap?: Record<string, string>;
}

export interface ParsedAnnotation {
  externalId: string;
  /**
   * Variable key → value as found in the file. A variable whose column/key is absent from the
   * record is absent here ("not annotated"); a present but empty CSV cell is `""` (MISSING).
   * JSON values keep their JSON type (numbers, arrays, null).
   */
  values: Record<string, unknown>;
  row: number;
}

export interface ParseAnnotationsResult {
  annotations: ParsedAnnotation[];
  /** Columns that are neither the id nor a variable, in first-seen order: reported, not fatal. */
  unknownColumns: string[];
  errors: RowError[];
}

/**
 * Resolves each variable key to the column that holds it. Throwing is not useful here since the
 * mapping comes from the user: problems come back as file-level errors.
 */
export function resolveVariableColumns(
  idField: string,
  variableKeys: readonly string[],
  columnMap: Readonly<Record<string, string>> | undefined,
): { columns: Map<string, string>; errors: RowError[] } {
  const errors: RowError[] = [];
  const keys = new Set(variableKeys);
  const columns = new Map<string, string>();
  if (variableKeys.length === 0) errors.push({ row: 0, reason: 'the use case defines no variables' });
  for (const mapped of Object.keys(columnMap ?? {})) {
    if (!keys.has(mapped)) errors.push({ row: 0, field: mapped, reason: `column map names '${mapped}', which is not a variable` });
  }
  for (const key of variableKeys) {
    const column = columnMap?.[key] ?? key;
    if (column === idField) {
      errors.push({ row: 0, field: column, reason: `variable '${key}' is read from the id column '${idField}'` });
    }
    columns.set(key, column);
  }
  return { columns, errors };
}

/**
 * Turns records, as they arrive, into one annotator's reference values. The id is required and
 * unique within the file. A file in which no record has the id column, or none has any variable
 * column, is an error (most likely the wrong file or a wrong column map): those file-level
 * problems are known only once every record has been seen, at {@link finish}. Rows with errors
 * give no annotation.
 */
export class AnnotationReader {
  private readonly errors: RowError[] = [];
  private readonly seen = new Set<string>();
  private readonly ids = new DuplicateIdTracker();
  private readonly resolved: { columns: Map<string, string>; errors: RowError[] };
  private readonly variableColumns: Set<string>;
  private records = 0;

  constructor(private readonly options: ParseAnnotationsOptions) {
    this.resolved = resolveVariableColumns(options.idField, options.variableKeys, options.columnMap);
    this.variableColumns = new Set(this.resolved.columns.values());
  }

  /** Whether a problem has been found so far (file-level ones other than the column map's are only known at finish). */
  get failed(): boolean {
    return this.errors.length > 0 || this.resolved.errors.length > 0;
  }

  /** The record's annotation, or null when the record is rejected (its error kept for finish). */
  add(rec: ParsedRecord): ParsedAnnotation | null {
    this.records += 1;
    for (const key of Object.keys(rec.record)) this.seen.add(key);
    if (this.resolved.errors.length > 0) return null;
    const externalId = this.ids.identify(rec, this.options.idField, this.errors);
    if (externalId === null) return null;
    const values: Record<string, unknown> = {};
    for (const [key, column] of this.resolved.columns) {
      if (Object.prototype.hasOwnProperty.call(rec.record, column)) setOwn(values, key, rec.record[column]);
    }
    return { externalId, values, row: rec.row };
  }

  /**
   * The file's problems: the file-level ones alone when there are any (row 0: the column map's,
   * else a missing id column and no variable column at all), else the row errors in the order
   * found; and the columns that are neither the id nor a variable, in first-seen order.
   */
  finish(): { errors: RowError[]; unknownColumns: string[]; fileLevel: boolean } {
    const { idField } = this.options;
    const columns = [...this.seen];
    const unknownColumns = columns.filter((c) => c !== idField && !this.variableColumns.has(c));
    if (this.resolved.errors.length > 0) return { errors: this.resolved.errors, unknownColumns, fileLevel: true };
    const fileErrors: RowError[] = [];
    if (this.records > 0) {
      if (!this.seen.has(idField)) {
        fileErrors.push({ row: 0, field: idField, reason: `id field '${idField}' not found; the file has ${describeColumns(columns)}` });
      }
      if (![...this.variableColumns].some((c) => this.seen.has(c))) {
        fileErrors.push({
          row: 0,
          reason: `none of the variable columns (${describeColumns([...this.variableColumns])}) is in the file; the file has ${describeColumns(columns)}`,
        });
      }
    }
    return fileErrors.length > 0 ? { errors: fileErrors, unknownColumns, fileLevel: true } : { errors: this.errors, unknownColumns, fileLevel: false };
  }
}

/** All annotations of records read whole: {@link AnnotationReader} over `rows`. */
export function parseAnnotations(rows: readonly ParsedRecord[], options: ParseAnnotationsOptions): ParseAnnotationsResult {
  const reader = new AnnotationReader(options);
  const annotations: ParsedAnnotation[] = [];
  for (const rec of rows) {
    const annotation = reader.add(rec);
    if (annotation !== null) annotations.push(annotation);
  }
  const { errors, unknownColumns, fileLevel } = reader.finish();
  return { annotations: fileLevel ? [] : annotations, unknownColumns, errors };
}
