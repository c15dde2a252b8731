/**
 * How a run's status follows from its predictions, for every statement that sets it: the
 * writer that stores the last report, extract calls that add to a run, and resumeRun's recount.
 */

/** Statuses after which a run changes no more: subscriptions end, work items of it are dropped. */
export const TERMINAL_RUN_STATUSES: ReadonlySet<string> = new Set(['SUCCEEDED', 'PARTIAL', 'FAILED', 'CANCELLED']);

/**
 * The SQL expression of a finished run's status from its counts (two SQL expressions): SUCCEEDED
 * when no report failed, FAILED when none succeeded, PARTIAL otherwise.
 */
export function finishedRunStatusSql(succeeded: string, failed: string): string {
  return `CASE WHEN ${failed} = 0 THEN 'SUCCEEDED' WHEN ${succeeded} = 0 THEN 'FAILED' ELSE 'PARTIAL' END`;
}
