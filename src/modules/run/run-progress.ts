import type { Services } from '../../services';
import type { RunProgressEvent } from './run-execution.input';
import { Run, RunProgress, RunStatus } from './run.entity';

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

export async function runProgress(services: Services, run: Run): Promise<RunProgressEvent> {
  const recent = run.status === RunStatus.RUNNING ? await services.runs.recentPredictions(run.id, RECENT_WINDOW_SECONDS) : null;
  return { run, status: run.status, progress: progressOf(run, recent), lastError: await services.runs.lastError(run.id) };
}
