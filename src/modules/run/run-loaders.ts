import DataLoader from 'dataloader';
import type { LoaderFactory } from '../../graphql/loader-registry';
import { RECENT_WINDOW_SECONDS, type LatencySummary, type TelemetrySummary } from './run-progress';

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
export const latencyPercentilesByRun: LoaderFactory<string, LatencySummary | null> = (_dataSource, _principal, services) =>
  new DataLoader<string, LatencySummary | null>(async (ids) => {
    const found = await services.runs.latencyPercentiles([...new Set(ids)]);
    return ids.map((id) => found.get(id) ?? null);
  });

/** Aggregates of each run's endpoint samples, one query per batch. */
export const telemetryByRun: LoaderFactory<string, TelemetrySummary | null> = (dataSource) =>
  new DataLoader<string, TelemetrySummary | null>(async (ids) => {
    const rows = (await dataSource.query(
      `SELECT run_id, count(*)::int AS samples, avg(kv_cache_usage) AS kv, avg(running) AS running, avg(waiting) AS waiting,
              (max(prefix_hits) - min(prefix_hits)) / nullif(max(prefix_queries) - min(prefix_queries), 0) AS hit_rate,
              (max(generation_tokens) - min(generation_tokens)) / nullif(extract(epoch FROM max(sampled_at) - min(sampled_at)), 0) AS generation_tps
       FROM run_endpoint_samples WHERE run_id = ANY($1::uuid[]) GROUP BY run_id`,
      [[...new Set(ids)]],
    )) as { run_id: string; samples: number; kv: number | null; running: number | null; waiting: number | null; hit_rate: number | null; generation_tps: number | null }[];
    const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));
    const byRun = new Map(
      rows.map((r) => [
        r.run_id,
        { samples: r.samples, kv: num(r.kv), running: num(r.running), waiting: num(r.waiting), hitRate: num(r.hit_rate), generationTps: num(r.generation_tps) },
      ]),
    );
    return ids.map((id) => byRun.get(id) ?? null);
  });
