import type { DataSource, EntityManager } from 'typeorm';

/**
 * How the caller of a long write steers it: a request with a deadline, or a background task
 * with a lease. The write happens in one transaction that commits only if `signal` is not
 * aborted and `beforeCommit` agrees, so a caller that gave up leaves nothing written.
 */
export interface WorkControl {
  /** Aborted (with the error to throw as its reason) when the caller no longer wants the work. */
  readonly signal?: AbortSignal | undefined;
  /** Runs in the work's transaction just before it commits, with the work's result; throwing rolls the work back. */
  beforeCommit?(manager: EntityManager, result: unknown): Promise<void>;
  /** Records done so far (for a caller that shows progress). */
  progress?(done: number): void;
  /**
   * Set when a client waits for the answer (a request, not a background task): work larger than
   * these is refused, pointing to the background form.
   */
  readonly waitedLimits?: WaitedLimits;
}

/** The most work a request does while its client waits. */
export interface WaitedLimits {
  /** Records of an importReports file. */
  importRecords: number;
  /** Runs of a startExperiment grid. */
  experimentRuns: number;
}

export const DEFAULT_WAITED_LIMITS: WaitedLimits = { importRecords: 200_000, experimentRuns: 200 };

/** Throws the abort reason once the caller gave up; called between batches of a long write. */
export function checkpoint(control: WorkControl | undefined): void {
  control?.signal?.throwIfAborted();
}

/** `work` in one transaction that commits only while its caller still wants it (see {@link WorkControl}). */
export function controlledTransaction<T>(dataSource: DataSource, control: WorkControl | undefined, work: (manager: EntityManager) => Promise<T>): Promise<T> {
  checkpoint(control);
  return dataSource.transaction(async (manager) => {
    const result = await work(manager);
    checkpoint(control);
    await control?.beforeCommit?.(manager, result);
    return result;
  });
}
