import { InvalidCategory } from '../annotation/annotation.entity';
import type { PredictedField, StoredCell } from './prediction.entity';

/**
 * One field per variable key, in the order given, from a prediction's stored cells: a key with
 * no cell (the prediction failed, or the variable was added later) is an invalid MISSING answer.
 */
export function predictedFields(keys: readonly string[], cells: Readonly<Record<string, StoredCell>>): PredictedField[] {
  return keys.map((key) => {
    const cell = cells[key];
    if (!cell) return { key, value: null, valid: false, missing: false, invalidCategory: InvalidCategory.MISSING, skipped: false };
    return {
      key,
      value: cell.status === 'VALUE' ? cell.value : null,
      valid: cell.status !== 'INVALID',
      missing: cell.status === 'MISSING',
      invalidCategory: cell.status === 'INVALID' ? (cell.category as InvalidCategory) : null,
      skipped: cell.skipped === true,
    };
  });
}
