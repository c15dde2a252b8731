import type { RowError } from './import-errors';
import {
  anyRecordHas,
  collectColumns,
  describeColumns,
  identifiedRecords,
  setOwn,
  type ParsedRecord,
} from './parse-records';

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
 * Turns records into one annotator's reference values. The id is required and unique within
 * the file. A file in which no record has any variable column is an error (most likely the
 * wrong file or a wrong column map). Rows with errors are left out of `annotations`.
 */
export function parseAnnotations(rows: readonly ParsedRecord[], options: ParseAnnotationsOptions): ParseAnnotationsResult {
  const { idField, variableKeys } = options;
  const resolved = resolveVariableColumns(idField, variableKeys, options.columnMap);
  const allColumns = collectColumns(rows);
  const variableColumns = new Set(resolved.columns.values());
  const unknownColumns = allColumns.filter((c) => c !== idField && !variableColumns.has(c));
  if (resolved.errors.length > 0) return { annotations: [], unknownColumns, errors: resolved.errors };

  const errors: RowError[] = [];
  if (rows.length > 0) {
    if (!anyRecordHas(rows, idField)) {
      errors.push({ row: 0, field: idField, reason: `id field '${idField}' not found; the file has ${describeColumns(allColumns)}` });
    }
    if (![...variableColumns].some((c) => allColumns.includes(c))) {
      errors.push({
        row: 0,
        reason: `none of the variable columns (${describeColumns([...variableColumns])}) is in the file; the file has ${describeColumns(allColumns)}`,
      });
    }
    if (errors.length > 0) return { annotations: [], unknownColumns, errors };
  }

  const annotations: ParsedAnnotation[] = [];
  for (const { rec, id } of identifiedRecords(rows, idField, errors)) {
    const values: Record<string, unknown> = {};
    for (const [key, column] of resolved.columns) {
      if (Object.prototype.hasOwnProperty.call(rec.record, column)) setOwn(values, key, rec.record[column]);
    }
    annotations.push({ externalId: id, values, row: rec.row });
  }
  return { annotations, unknownColumns, errors };
}
