/**
 * One run's item scores on a dataset, in columns: for each grid variable (in grid order) the
 * item score of every report, and whether the run's prediction for that report and variable is
 * valid (conditional scoring bootstraps on those only).
 */
export interface RunItems {
  /** V × n item scores, variable-major. */
  scores: Float64Array;
  /** V × n, 1 where the prediction cell is present and not INVALID. */
  valid: Uint8Array;
  reports: number;
}

/** The item-score column of variable `v` (a view, not a copy). */
export function itemColumn(items: RunItems, v: number): Float64Array {
  return items.scores.subarray(v * items.reports, (v + 1) * items.reports);
}

export function validColumn(items: RunItems, v: number): Uint8Array {
  return items.valid.subarray(v * items.reports, (v + 1) * items.reports);
}

function bytesOf(items: RunItems): number {
  return items.scores.byteLength + items.valid.byteLength + 128;
}

/** Default budget of the per-run item-score cache (ANALYTICS_RUN_CACHE_MB). */
export const DEFAULT_RUN_CACHE_BYTES = 256 * 1024 * 1024;

/**
 * Item scores of runs by content key, least recently used first out once their bytes exceed
 * the budget. A key names everything the scores depend on (the run's predictions as read in
 * one snapshot, the reference values, the reports, the variables and the scoring options), so
 * an entry is never stale: a write to a run gives it a new key and the old entry ages out.
 */
export class RunItemCache {
  private readonly entries = new Map<string, RunItems>();
  private bytes = 0;
  /** Counters for operations and tests: look-ups answered, and the succeeded predictions of the runs read. */
  readonly stats = { hits: 0, misses: 0, predictionRowsRead: 0 };

  constructor(readonly capacityBytes = DEFAULT_RUN_CACHE_BYTES) {}

  get(key: string): RunItems | undefined {
    const hit = this.entries.get(key);
    if (!hit) {
      this.stats.misses += 1;
      return undefined;
    }
    this.stats.hits += 1;
    this.entries.delete(key);
    this.entries.set(key, hit);
    return hit;
  }

  set(key: string, items: RunItems): void {
    const size = bytesOf(items);
    if (size > this.capacityBytes) return;
    const old = this.entries.get(key);
    if (old) {
      this.bytes -= bytesOf(old);
      this.entries.delete(key);
    }
    this.entries.set(key, items);
    this.bytes += size;
    while (this.bytes > this.capacityBytes) {
      const [oldestKey, oldest] = this.entries.entries().next().value as [string, RunItems];
      this.entries.delete(oldestKey);
      this.bytes -= bytesOf(oldest);
    }
  }

  get size(): number {
    return this.entries.size;
  }

  get usedBytes(): number {
    return this.bytes;
  }

  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }
}
