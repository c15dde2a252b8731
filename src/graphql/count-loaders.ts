import DataLoader from 'dataloader';
import type { LoaderFactory } from './loader-registry';

/** Number of reports per dataset, one query per batch. */
export const reportCountByDataset: LoaderFactory<string, number> = (dataSource) =>
  new DataLoader<string, number>(async (ids) => {
    const rows = (await dataSource.query('SELECT dataset_id, count(*)::int AS n FROM reports WHERE dataset_id = ANY($1) GROUP BY dataset_id', [
      [...new Set(ids)],
    ])) as { dataset_id: string; n: number }[];
    const counts = new Map(rows.map((r) => [r.dataset_id, r.n]));
    return ids.map((id) => counts.get(id) ?? 0);
  });
