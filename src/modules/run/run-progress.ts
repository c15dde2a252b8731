import type { RunTelemetry } from './run-execution.input';
import { Run, RunProgress, RunStatus, type RunUsage } from './run.entity';

/** Throughput is measured over this window, so the ETA follows the pace of now, not of the start. */
export const RECENT_WINDOW_SECONDS = 60;

export function elapsedMs(run: Run): number | null {
  if (!run.startedAt) return null;
  return Math.max(0, (run.finishedAt ?? new Date()).getTime() - run.startedAt.getTime() - (run.pausedMs ?? 0));
}

/**
 * Counters and times of a run; the ETA divides what is pending by the predictions committed in
 * the last minute (`recent`, over the part of that minute the run has been running). When nothing
 * was committed in that minute the run is stalled (its items wait for a worker, its endpoint is
 * paused) and no finish time is promised; the pace since the start stands in only for a caller
 * without the recent count.
 */
export function progressOf(run: Run, recent: number | null): RunProgress {
  const done = run.succeededCount + run.failedCount;
  const pending = Math.max(0, run.totalReports - done);
  const elapsed = elapsedMs(run);
  let etaMs: number | null = null;
  if (run.status === RunStatus.RUNNING && elapsed !== null && pending > 0) {
    const window = Math.min(RECENT_WINDOW_SECONDS * 1000, elapsed);
    if (recent !== null) {
      if (recent > 0 && window > 0) etaMs = Math.round((pending * window) / recent);
    } else if (done > 0) etaMs = Math.round((elapsed / done) * pending);
  }
  return {
    total: run.totalReports,
    succeeded: run.succeededCount,
    failed: run.failedCount,
    pending,
    startedAt: run.startedAt,
    finishedAt: run.finishedAt,
    elapsedMs: elapsed,
    etaMs,
  };
}

/** Latency of a run's succeeded predictions (milliseconds), as the run loaders aggregate it. */
export interface LatencySummary {
  mean: number;
  p50: number;
  p95: number;
}

/** Completion tokens per second of an executed run over the time it ran; null for an imported run or one not started. */
export function tokensPerSecondOf(run: Run): number | null {
  const elapsed = run.source === 'EXECUTED' ? elapsedMs(run) : null;
  return elapsed !== null && elapsed > 0 ? run.completionTokens / (elapsed / 1000) : null;
}

/** Token counts, latency and throughput of a run; per GPU when the endpoint's GPU count is known. */
export function usageOf(run: Run, latency: LatencySummary | null, gpus: number | null): RunUsage {
  const done = run.succeededCount + run.failedCount;
  const tokensPerSecond = tokensPerSecondOf(run);
  const seconds = tokensPerSecond !== null ? elapsedMs(run)! / 1000 : null;
  return {
    promptTokens: run.promptTokens,
    completionTokens: run.completionTokens,
    meanLatencyMs: latency?.mean ?? null,
    latencyP50Ms: latency?.p50 ?? null,
    latencyP95Ms: latency?.p95 ?? null,
    secondsPerReport: seconds !== null && done > 0 ? seconds / done : null,
    tokensPerSecond,
    tokensPerSecondPerGpu: tokensPerSecond !== null && gpus ? tokensPerSecond / gpus : null,
  };
}

/** Means of the endpoint's samples while the run executed. */
export interface TelemetrySummary {
  samples: number;
  kv: number | null;
  running: number | null;
  waiting: number | null;
  hitRate: number | null;
  generationTps: number | null;
}

/** The endpoint's metrics during a run, and the run's throughput scaled to a full KV cache. */
export function telemetryOf(run: Run, row: TelemetrySummary | null): RunTelemetry {
  const tokensPerSecond = tokensPerSecondOf(run);
  return {
    samples: row?.samples ?? 0,
    meanKvCacheUsage: row?.kv ?? null,
    meanRunning: row?.running ?? null,
    meanWaiting: row?.waiting ?? null,
    prefixCacheHitRate: row?.hitRate ?? null,
    endpointGenerationTokensPerSecond: row?.generationTps ?? null,
    tokensPerSecondAtFullCache: tokensPerSecond !== null && row?.kv ? tokensPerSecond / row.kv : null,
  };
}
