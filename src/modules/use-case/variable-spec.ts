import { normaliseRecord, type RecordCell } from '../../analytics/normalise';
import type { NormalisedCell, VariableSpec } from '../../analytics/types';
import type { UseCase } from './use-case.entity';
import type { Variable } from './variable.entity';

/** The analytics view of a stored variable; missing tokens fall back to the use case's. */
export function toSpec(variable: Variable, useCase: Pick<UseCase, 'customMissingTokens'>): VariableSpec {
  return {
    key: variable.key,
    type: variable.type,
    options: variable.options,
    aliases: variable.aliases,
    collapseMap: variable.collapseMap,
    missingTokens: variable.missingTokens ?? useCase.customMissingTokens,
    tolerance: variable.tolerance,
    weight: variable.weight,
  };
}

/** Normalised values by key as the API shows them: the value, or null for MISSING and INVALID. */
export function valuesOf(cells: Record<string, RecordCell>): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const [key, cell] of Object.entries(cells)) {
    if (cell) values[key] = cell.status === 'VALUE' ? cell.value : null;
  }
  return values;
}

/** Normalises one model answer (a parsed JSON object, or null when none was found). */
export function normalisePrediction(specs: VariableSpec[], parsed: unknown): Record<string, NormalisedCell> {
  return normaliseRecord(specs, parsed ?? undefined, 'prediction') as Record<string, NormalisedCell>;
}
