import type { DataSource } from 'typeorm';

/**
 * Columns that change without any write of the caller's: the key check records when a key was
 * last used, the queue's supervisor stamps its own bookkeeping.
 */
const VOLATILE_COLUMNS: Readonly<Record<string, readonly string[]>> = {
  'public.api_keys': ['last_used_at'],
};
/**
 * Tables that refused requests write too (the audit trail records them, rate limits count them),
 * and the runs' cell columns, which a read may store after it answered.
 */
const UNCHECKED_TABLES: ReadonlySet<string> = new Set(['public.audit_events', 'public.rate_limits', 'public.run_cell_columns']);
/** Of the queue's schema only the work items count (the rest is the supervisor's state). */
const QUEUE_COLUMNS = ['id', 'name', 'data'];

/**
 * A digest of every row of every table of the application (and of the queued work items), to
 * show that a refused request wrote nothing.
 */
export async function databaseChecksum(dataSource: DataSource): Promise<string> {
  const columns = (await dataSource.query(
    `SELECT table_schema AS schema, table_name AS table, array_agg(column_name::text ORDER BY ordinal_position) AS columns
     FROM information_schema.columns
     WHERE table_schema = 'public' OR (table_schema = 'pgboss' AND table_name = 'job')
     GROUP BY table_schema, table_name ORDER BY table_schema, table_name`,
  )) as { schema: string; table: string; columns: string[] }[];
  const parts: string[] = [];
  for (const { schema, table, columns: all } of columns) {
    if (UNCHECKED_TABLES.has(`${schema}.${table}`)) continue;
    const volatile = VOLATILE_COLUMNS[`${schema}.${table}`] ?? [];
    const kept = schema === 'pgboss' ? QUEUE_COLUMNS : all.filter((c) => !volatile.includes(c));
    const list = kept.map((c) => `"${c}"`).join(', ');
    const [row] = (await dataSource.query(
      `SELECT count(*)::int AS n, md5(coalesce(string_agg(r::text, E'\\n' ORDER BY r::text), '')) AS digest FROM (SELECT ${list} FROM "${schema}"."${table}") r`,
    )) as { n: number; digest: string }[];
    parts.push(`${schema}.${table}:${row!.n}:${row!.digest}`);
  }
  return parts.join('\n');
}

/** The tables whose rows differ between two checksums. */
export function changedTables(before: string, after: string): string[] {
  const old = new Set(before.split('\n'));
  return after
    .split('\n')
    .filter((line) => !old.has(line))
    .map((line) => line.slice(0, line.indexOf(':')));
}
