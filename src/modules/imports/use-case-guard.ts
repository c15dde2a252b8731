import type { EntityManager } from 'typeorm';
import { conflict, notFound } from '../../domain/errors';

/** What an import normalised its values against, read before its transaction. */
export interface UseCaseSnapshot {
  useCaseId: string;
  updatedAt: Date;
  variableIds: readonly string[];
}

/**
 * Imports read the use case and its variables before their transaction, and normalise the
 * file's values against them (annotation and prediction imports a chunk at a time inside the
 * transaction, as the file arrives). Inside the transaction this takes a share lock on the use
 * case row (updateUseCase takes FOR UPDATE, so the two exclude each other until commit) and
 * checks that the use case is still the one the values are normalised against: same update
 * time, same variables. Otherwise the import would write values normalised under old rules,
 * which the update's renormalisation has already passed by, or annotations of a variable
 * deleted meanwhile. While a streamed import reads its file, an update of the use case waits.
 *
 * Call it first in the transaction, before any write: the import then waits for a use case
 * update to commit before holding any lock of its own that the update might need.
 */
export async function lockUnchangedUseCase(manager: EntityManager, snapshot: UseCaseSnapshot): Promise<void> {
  const rows = (await manager.query('SELECT updated_at FROM use_cases WHERE id = $1 FOR SHARE', [snapshot.useCaseId])) as { updated_at: Date }[];
  if (rows.length === 0) throw notFound('Use case');
  const variables = (await manager.query('SELECT id FROM variables WHERE use_case_id = $1', [snapshot.useCaseId])) as { id: string }[];
  const now = new Set(variables.map((v) => v.id));
  const sameVariables = now.size === snapshot.variableIds.length && snapshot.variableIds.every((id) => now.has(id));
  if (!sameVariables || rows[0]!.updated_at.getTime() !== snapshot.updatedAt.getTime()) {
    throw conflict('The use case changed during the import; import again', { reason: 'USE_CASE_CHANGED' });
  }
}
