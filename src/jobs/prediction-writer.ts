/**
 * Writes finished predictions with their run's counters, exactly once.
 *
 * Each prediction is inserted under the unique key (run_id, report_id) with ON CONFLICT DO
 * NOTHING, and the run's counters grow by what was actually inserted, in the same transaction:
 * a late duplicate (an item taken up again after its lease ran out while the first worker was
 * still alive) changes nothing, and the counters always equal the rows. The run that reaches
 * its total in that transaction gets its final status there too.
 *
 * A connection lost on the way (PostgreSQL restarted) is tried again for up to 30 s, so a short
 * restart costs no finished prediction; the statement is idempotent, so a commit whose answer
 * was lost inserts nothing the second time.
 *
 * Group commit: predictions finishing while a transaction is in flight wait for the next one,
 * which takes them all (up to MAX_BATCH). Under load that is one transaction per batch; when
 * idle, a prediction is written the moment it finishes.
 */
import type { Pool, PoolClient } from 'pg';
import type { AlignedQuote } from '../extraction/evidence-alignment';
import { findValueProblem, type ValueProblem } from '../db/storable';
import type { RunChange, RunEventPublisher } from './events';
import { finishedRunStatusSql } from './run-status';

export interface PredictionRow {
  projectId: string;
  runId: string;
  reportId: string;
  status: 'SUCCEEDED' | 'FAILED';
  values: Record<string, unknown> | null;
  cells: Record<string, unknown>;
  parsed: Record<string, unknown> | null;
  raw: string | null;
  reasoning: string | null;
  samples: unknown[] | null;
  finishReason: string | null;
  latencyMs: number | null;
  promptTokens: number | null;
  completionTokens: number | null;
  attempts: number;
  error: string | null;
  errorCode: string | null;
  inputTruncated: boolean;
  /** with evidence QUOTES: the aligned quotes per variable key; null without evidence */
  evidence: Record<string, AlignedQuote[]> | null;
}

export interface InsertedRow {
  id: string;
  run_id: string;
  report_id: string;
  experiment_id: string | null;
}

/** Which prediction a row is: of which run, for which report. */
export interface RowKey {
  projectId: string;
  runId: string;
  reportId: string;
}

const MAX_BATCH = 500;
/**
 * How long a commit waits for more predictions to join it. Reports take tens of milliseconds to
 * seconds at the endpoint, so 20 ms more before they are stored cost nothing, and under load
 * they turn one transaction per prediction into one per batch (bench/RESULTS.md: PostgreSQL's
 * CPU per prediction fell from 0.56 to 0.47 ms against 5 ms, at 100 ms endpoint latency).
 */
const GATHER_MS = 20;

interface Pending {
  row: PredictionRow;
  resolve(inserted: boolean): void;
  reject(error: unknown): void;
}

/**
 * A prediction row that cannot be stored as it is: what the endpoint answered holds a NUL
 * character (PostgreSQL refuses it in text and jsonb), a lone UTF-16 surrogate (a model's output
 * cut mid-character: it would become U+FFFD or fail jsonb), a number out of range or a value
 * nested deeper than 64 levels. The row is refused rather than altered; the report fails with
 * the code UNSTORABLE. The message names the kind of problem, never the text.
 */
export class UnstorableRowError extends Error {
  readonly code = 'UNSTORABLE';
  constructor(problem: ValueProblem) {
    super(`the endpoint's answer cannot be stored: a value ${problem.reason}`);
    this.name = 'UnstorableRowError';
  }
}

/** Why `row` cannot be stored as it is (see {@link UnstorableRowError}), or null. */
export function unstorableProblem(row: PredictionRow): ValueProblem | null {
  const { values, cells, parsed, raw, reasoning, samples, finishReason, error, evidence } = row;
  return findValueProblem({ values, cells, parsed, raw, reasoning, samples, finishReason, error, evidence });
}

/** @throws UnstorableRowError when `row` cannot be stored as it is */
export function assertStorable(row: PredictionRow): void {
  const problem = unstorableProblem(row);
  if (problem) throw new UnstorableRowError(problem);
}

function json(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  return JSON.stringify(value);
}

/**
 * The connection to PostgreSQL failed or was ended by the server (a restart, a failover): the
 * same statement may well succeed in a moment. SQLSTATE class 08 and 57P01–57P03, socket errors,
 * and node-postgres's own message for a connection that ended.
 */
export function isConnectionLoss(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (code.startsWith('08') || ['57P01', '57P02', '57P03', 'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT'].includes(code))) return true;
  return error instanceof Error && /^Connection terminated/.test(error.message);
}

/** How long a commit is tried again while the database is unreachable, milliseconds. */
const CONNECTION_RETRY_MS = 30_000;

/**
 * SQLSTATE classes of a row PostgreSQL will never take (data exceptions, limits), unlike a failing
 * connection, and rows refused before they reach it ({@link UnstorableRowError}).
 */
export function isUnstorable(error: unknown): boolean {
  if (error instanceof UnstorableRowError) return true;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && (code.startsWith('22') || code.startsWith('54'));
}

const INSERT = `
  WITH input AS (
    SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[],
                         $10::text[], $11::text[], $12::int[], $13::int[], $14::int[], $15::int[], $16::text[], $17::text[], $18::bool[],
                         $19::text[])
      AS u(project_id, run_id, report_id, status, vals, cells, parsed, raw, reasoning, samples, finish_reason, latency_ms,
           prompt_tokens, completion_tokens, attempts, error, error_code, input_truncated, evidence)
  ), inserted AS (
    INSERT INTO predictions (project_id, run_id, report_id, report_ordinal, status, "values", cells, parsed, raw, reasoning, samples,
                             finish_reason, latency_ms, prompt_tokens, completion_tokens, attempts, error, error_code, input_truncated, evidence)
    SELECT u.project_id, u.run_id, u.report_id, r.ordinal, u.status, u.vals::jsonb, u.cells::jsonb, u.parsed::jsonb, u.raw, u.reasoning,
           u.samples::jsonb, u.finish_reason, u.latency_ms, u.prompt_tokens, u.completion_tokens, u.attempts, u.error, u.error_code,
           u.input_truncated, u.evidence::jsonb
    FROM input u JOIN reports r ON r.id = u.report_id
    ORDER BY u.run_id, u.report_id
    ON CONFLICT (run_id, report_id) DO NOTHING
    RETURNING id, run_id, report_id, status, latency_ms, prompt_tokens, completion_tokens
  ), totals AS (
    SELECT run_id,
           count(*) FILTER (WHERE status = 'SUCCEEDED') AS succeeded,
           count(*) FILTER (WHERE status = 'FAILED') AS failed,
           coalesce(sum(prompt_tokens), 0) AS prompt_tokens,
           coalesce(sum(completion_tokens), 0) AS completion_tokens,
           coalesce(sum(latency_ms) FILTER (WHERE status = 'SUCCEEDED'), 0) AS latency
    FROM inserted GROUP BY run_id
  ), updated AS (
    UPDATE runs r SET
      succeeded_count = r.succeeded_count + t.succeeded,
      failed_count = r.failed_count + t.failed,
      prompt_tokens = r.prompt_tokens + t.prompt_tokens,
      completion_tokens = r.completion_tokens + t.completion_tokens,
      latency_ms_sum = r.latency_ms_sum + t.latency,
      status = CASE
        WHEN r.status IN ('QUEUED', 'RUNNING') AND r.succeeded_count + t.succeeded + r.failed_count + t.failed >= r.total_reports THEN
          ${finishedRunStatusSql('r.succeeded_count + t.succeeded', 'r.failed_count + t.failed')}
        ELSE r.status END,
      finished_at = CASE
        WHEN r.status IN ('QUEUED', 'RUNNING') AND r.succeeded_count + t.succeeded + r.failed_count + t.failed >= r.total_reports THEN now()
        ELSE r.finished_at END,
      error = CASE
        WHEN r.status IN ('QUEUED', 'RUNNING') AND r.succeeded_count + t.succeeded = 0 AND r.failed_count + t.failed >= r.total_reports
          THEN 'every report failed; the errorCode of each prediction says why'
        ELSE r.error END
    FROM totals t WHERE r.id = t.run_id
    RETURNING r.id, r.experiment_id
  )
  SELECT i.id, i.run_id, i.report_id, u.experiment_id FROM inserted i JOIN updated u ON u.id = i.run_id`;

function insertParameters(rows: PredictionRow[]): unknown[] {
  return [
    rows.map((r) => r.projectId),
    rows.map((r) => r.runId),
    rows.map((r) => r.reportId),
    rows.map((r) => r.status),
    rows.map((r) => json(r.values)),
    rows.map((r) => json(r.cells)),
    rows.map((r) => json(r.parsed)),
    rows.map((r) => r.raw),
    rows.map((r) => r.reasoning),
    rows.map((r) => json(r.samples)),
    rows.map((r) => r.finishReason),
    rows.map((r) => r.latencyMs),
    rows.map((r) => r.promptTokens),
    rows.map((r) => r.completionTokens),
    rows.map((r) => r.attempts),
    rows.map((r) => r.error),
    rows.map((r) => r.errorCode),
    rows.map((r) => r.inputTruncated),
    rows.map((r) => json(r.evidence)),
  ];
}

/**
 * The writer's statement inside a caller's transaction (one run's rows): inserts what is new
 * and adds it to the run's counters. Returns the rows inserted.
 * @throws UnstorableRowError before any statement when a row cannot be stored as it is
 */
export async function insertPredictions(query: (sql: string, params: unknown[]) => Promise<unknown>, rows: PredictionRow[]): Promise<InsertedRow[]> {
  for (const row of rows) assertStorable(row);
  return (await query(INSERT, insertParameters(rows))) as InsertedRow[];
}

export class PredictionWriter {
  private queue: Pending[] = [];
  private flushing: Promise<void> | undefined;

  constructor(
    private readonly pool: Pool,
    private readonly events: RunEventPublisher,
  ) {}

  /**
   * Resolves after the commit: true when this call inserted the prediction, false when it existed.
   * Rejects at once with an {@link UnstorableRowError} for a row that cannot be stored as it is.
   */
  async write(row: PredictionRow): Promise<boolean> {
    assertStorable(row);
    return new Promise((resolve, reject) => {
      this.queue.push({ row, resolve, reject });
      this.flushing ??= this.drain();
    });
  }

  /** Waits for everything handed over so far. */
  async idle(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  private async drain(): Promise<void> {
    try {
      if (this.queue.length < MAX_BATCH) await new Promise((resolve) => setTimeout(resolve, GATHER_MS));
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, MAX_BATCH);
        try {
          const inserted = await this.commitSeparatingBadRows(batch);
          const key = (runId: string, reportId: string) => `${runId}/${reportId}`;
          const done = new Set(inserted.map((r) => key(r.run_id, r.report_id)));
          for (const p of batch) p.resolve(done.has(key(p.row.runId, p.row.reportId)));
          // After the commit; the publisher swallows its own failures.
          await this.publish(inserted).catch(() => undefined);
        } catch (error) {
          for (const p of batch) p.reject(error);
        }
      }
    } finally {
      this.flushing = undefined;
    }
  }

  /**
   * Commits the batch; when PostgreSQL refuses one of its rows, every row is committed on its own
   * so that only that row's writer hears of it (the others must not fail with it).
   */
  private async commitSeparatingBadRows(batch: Pending[]): Promise<InsertedRow[]> {
    try {
      return await this.commit(batch.map((p) => p.row));
    } catch (error) {
      if (!isUnstorable(error) || batch.length === 1) throw error;
    }
    const inserted: InsertedRow[] = [];
    for (const pending of [...batch]) {
      try {
        inserted.push(...(await this.commit([pending.row])));
      } catch (error) {
        pending.reject(error);
        batch.splice(batch.indexOf(pending), 1);
      }
    }
    return inserted;
  }

  private async commit(rows: PredictionRow[]): Promise<InsertedRow[]> {
    const params = insertParameters(rows);
    const runIds = [...new Set(rows.map((r) => r.runId))].sort();
    // Predictions that took calls to make are not dropped for a database restart of a few
    // seconds: the commit is tried again (it is idempotent: a commit whose answer was lost
    // inserts nothing the second time).
    const giveUpAt = Date.now() + CONNECTION_RETRY_MS;
    for (let attempt = 1, wait = 250; ; attempt++) {
      let client: PoolClient;
      try {
        client = await this.pool.connect();
      } catch (error) {
        if (!isConnectionLoss(error) || Date.now() + wait > giveUpAt) throw error;
        await new Promise((resolve) => setTimeout(resolve, wait));
        wait = Math.min(2000, wait * 2);
        continue;
      }
      // A checked-out client has no error listener of the pool's: a connection that ends while
      // the statement runs (PostgreSQL shut down or restarted) would be an uncaught 'error' event,
      // which ends the process. The statement fails on its own; the client is then discarded.
      let broken: Error | undefined;
      const onError = (error: Error): void => {
        broken = error;
      };
      client.on('error', onError);
      try {
        if (runIds.length === 1) {
          // One statement is one transaction: the rows and their run's counters commit together.
          return (await client.query<InsertedRow>(INSERT, params)).rows;
        }
        await client.query('BEGIN');
        // Runs are locked in id order, so concurrent writers never deadlock on them.
        await client.query('SELECT id FROM runs WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE', [runIds]);
        const result = await client.query<InsertedRow>(INSERT, params);
        await client.query('COMMIT');
        return result.rows;
      } catch (error) {
        // The error below decides what happens next; a ROLLBACK refused on a broken connection
        // changes nothing (the server rolls the transaction back when the connection ends).
        if (runIds.length > 1) await client.query('ROLLBACK').catch(() => undefined);
        const code = (error as { code?: string }).code;
        // Serialisation failures and deadlocks are worth another try; the batch is idempotent.
        if ((code === '40001' || code === '40P01') && attempt < 5) continue;
        if (!((broken !== undefined || isConnectionLoss(error)) && Date.now() + wait <= giveUpAt)) throw error;
        broken ??= error instanceof Error ? error : new Error('connection lost');
      } finally {
        client.removeListener('error', onError);
        client.release(broken);
      }
      // The connection was lost: again, on a new one, after a pause.
      await new Promise((resolve) => setTimeout(resolve, wait));
      wait = Math.min(2000, wait * 2);
    }
  }

  private async publish(inserted: { id: string; run_id: string; experiment_id: string | null }[]): Promise<void> {
    if (inserted.length === 0) return;
    const byRun = new Map<string, { experimentId: string | null; ids: string[] }>();
    for (const r of inserted) {
      const entry = byRun.get(r.run_id) ?? { experimentId: r.experiment_id, ids: [] };
      entry.ids.push(r.id);
      byRun.set(r.run_id, entry);
    }
    const changes: RunChange[] = [...byRun].map(([runId, e]) => ({ runId, experimentId: e.experimentId }));
    await this.events.committed(
      [...byRun].map(([runId, e]) => ({ runId, ids: e.ids })),
      changes,
    );
  }
}
