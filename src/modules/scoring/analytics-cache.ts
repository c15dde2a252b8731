import { createHash } from 'node:crypto';
import type { DataSource } from 'typeorm';

/**
 * Results of statistics keyed by (project revision, what was asked). Any write to a project's
 * annotations, predictions, variables, runs, reports or models appends a change (database
 * triggers) and so moves the project's revision on: an entry can never outlive its inputs, in
 * any process. The granularity is the project: a write anywhere in it recomputes its statistics. Concurrent requests for
 * the same cold entry share one computation.
 */
export class AnalyticsCache {
  private readonly entries = new Map<string, Promise<unknown>>();

  constructor(
    private readonly dataSource: DataSource,
    private readonly capacity = 256,
  ) {}

  async revision(projectId: string): Promise<string> {
    const rows = (await this.dataSource.query('SELECT max(id) AS revision FROM analytics_changes WHERE project_id = $1', [projectId])) as {
      revision: string | null;
    }[];
    return rows[0]?.revision ?? '0';
  }

  async getOrCompute<T>(projectId: string, kind: string, args: unknown, compute: () => Promise<T>): Promise<T> {
    const key = `${projectId}:${await this.revision(projectId)}:${kind}:${createHash('sha256').update(JSON.stringify(args)).digest('hex')}`;
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit as Promise<T>;
    }
    const pending = compute();
    this.entries.set(key, pending);
    pending.catch(() => this.entries.delete(key));
    while (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value as string);
    return pending;
  }
}
