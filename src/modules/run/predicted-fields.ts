import type { AlignedQuote } from '../../extraction/evidence-alignment';
import { InvalidCategory } from '../annotation/annotation.entity';
import type { EvidenceSpan, PredictedField, StoredCell } from './prediction.entity';

/**
 * One field per variable key, in the order given, from a prediction's stored cells and evidence:
 * a key with no cell (the prediction failed, or the variable was added later) is an invalid
 * MISSING answer; a key without evidence (none asked for) has no spans.
 */
export function predictedFields(
  keys: readonly string[],
  cells: Readonly<Record<string, StoredCell>>,
  evidence: Readonly<Record<string, readonly AlignedQuote[]>> | null,
): PredictedField[] {
  return keys.map((key) => {
    const spans = (evidence?.[key] ?? []) as EvidenceSpan[];
    const cell = cells[key];
    if (!cell) return { key, value: null, valid: false, missing: false, invalidCategory: InvalidCategory.MISSING, skipped: false, evidence: spans };
    return {
      key,
      value: cell.status === 'VALUE' ? cell.value : null,
      valid: cell.status !== 'INVALID',
      missing: cell.status === 'MISSING',
      invalidCategory: cell.status === 'INVALID' ? (cell.category as InvalidCategory) : null,
      skipped: cell.skipped === true,
      evidence: spans,
    };
  });
}
