import type { EntityManager } from 'typeorm';

/**
 * The dataset's report ids of `externalIds` by external id (ids not in the dataset are absent).
 * An import looks up one chunk's ids at a time: a dataset may hold far more reports than the file.
 */
export async function reportIdsOf(manager: EntityManager, datasetId: string, externalIds: string[]): Promise<Map<string, string>> {
  const rows = (await manager.query('SELECT id, external_id FROM reports WHERE dataset_id = $1 AND external_id = ANY($2::text[])', [datasetId, externalIds])) as {
    id: string;
    external_id: string;
  }[];
  return new Map(rows.map((r) => [r.external_id, r.id]));
}
