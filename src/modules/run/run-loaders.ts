import DataLoader from 'dataloader';
import type { LoaderFactory } from '../../graphql/loader-registry';
import { RECENT_WINDOW_SECONDS } from './run-progress';

/** Predictions committed in the last minute, per run (the ETA's pace), one query per batch. */
export const recentPredictionsByRun: LoaderFactory<string, number> = (dataSource) =>
  new DataLoader<string, number>(async (ids) => {
    const rows = (await dataSource.query(
      `SELECT run_id, count(*)::int AS n FROM predictions
       WHERE run_id = ANY($1::uuid[]) AND created_at > now() - make_interval(secs => $2) GROUP BY run_id`,
      [[...new Set(ids)], RECENT_WINDOW_SECONDS],
    )) as { run_id: string; n: number }[];
    const counts = new Map(rows.map((r) => [r.run_id, r.n]));
    return ids.map((id) => counts.get(id) ?? 0);
  });

/** Latency percentiles of each run's succeeded predictions, one query per batch. */
export const latencyPercentilesByRun: LoaderFactory<string, { p50: number; p95: number } | null> = (_dataSource, _principal, services) =>
  new DataLoader<string, { p50: number; p95: number } | null>(async (ids) => {
    const found = await services.runs.latencyPercentiles([...new Set(ids)]);
    return ids.map((id) => found.get(id) ?? null);
  });
