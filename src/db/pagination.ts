/**
 * Keyset pagination of lists, with cursors that only fit their own list. It lives beside the
 * data source, not in the GraphQL layer, so that services page their lists without knowing the API.
 */
import { createHash } from 'node:crypto';
import type { ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import { badInput } from '../domain/errors';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 200;

/** Which page of a list is asked for (the GraphQL `PageArgs`). */
export interface PageRequest {
  first?: number | null;
  /** Cursor of the last edge of the previous page. */
  after?: string | null;
}

export interface PageInfoShape {
  hasNextPage: boolean;
  hasPreviousPage: boolean;
  startCursor: string | null;
  endCursor: string | null;
}

export interface ConnectionShape<T> {
  edges: { cursor: string; node: T }[];
  nodes: T[];
  pageInfo: PageInfoShape;
  totalCount(): Promise<number>;
}

export function pageSize(first: number | null | undefined): number {
  if (first === null || first === undefined) return DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(first) || first < 0 || first > MAX_PAGE_SIZE) {
    throw badInput(`first must be between 0 and ${MAX_PAGE_SIZE}`, { field: 'first' });
  }
  return first;
}

export interface Cursor {
  k: string | number;
  i: string;
  /** Which list the cursor belongs to: a tag of the sort column and the parent object. */
  l: string;
}

/** The list tag of a cursor: the same for every page of one list, different between lists. */
export function listTag(column: string, scope: string): string {
  return createHash('sha256').update(`${column.replace(/^e\./, '')}|${scope}`).digest('base64url').slice(0, 12);
}

/** The cursor of one row of a list sorted by (column, id) under the parent `scope`. */
export function cursorFor(column: string, scope: string, key: string | number | Date, id: string): string {
  return encodeCursor({ k: key instanceof Date ? key.toISOString() : key, i: id, l: listTag(column, scope) });
}

function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify(cursor), 'utf8').toString('base64url');
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const INT4_MIN = -2_147_483_648;
const INT4_MAX = 2_147_483_647;
/** Longer is no cursor of ours (they are about 120 characters). */
const MAX_CURSOR_LENGTH = 512;

/**
 * Whether a cursor's key fits the sort column, so that PostgreSQL takes it: integer columns are
 * int4; timestamps are written as our cursors write them (a date that exists, year 1 or later,
 * since PostgreSQL has no year 0 and refuses 2024-02-30, which Date.parse rolls over to March 1).
 */
function keyFits(key: unknown, kind: SortKind): boolean {
  if (kind === 'integer') return Number.isSafeInteger(key) && (key as number) >= INT4_MIN && (key as number) <= INT4_MAX;
  if (typeof key !== 'string' || !ISO_TIMESTAMP.test(key) || key.startsWith('0000')) return false;
  const time = Date.parse(key);
  return !Number.isNaN(time) && new Date(time).toISOString() === key;
}

/** A cursor of this list, or BAD_USER_INPUT: a forged or foreign cursor never reaches SQL. */
export function decodeCursor(value: string, kind: SortKind, tag: string): Cursor {
  try {
    if (value.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(value)) throw new Error('not base64url');
    const parsed = JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) as Cursor;
    if (typeof parsed !== 'object' || parsed === null || parsed.l !== tag) throw new Error('cursor of another list');
    if (keyFits(parsed.k, kind) && typeof parsed.i === 'string' && UUID.test(parsed.i)) return parsed;
  } catch {
    // fall through
  }
  throw badInput('after is not a cursor of this list', { field: 'after' });
}

export type SortKind = 'timestamp' | 'integer';

export interface SortKey<T> {
  /** SQL expression on alias `e`, e.g. `e.created_at` or `e.ordinal`. */
  column: string;
  /** The parent the list belongs to (its id), so a cursor of another list is refused. */
  scope: string;
  /** Default 'timestamp' (a millisecond-precision timestamptz). */
  kind?: SortKind;
  value: (row: T) => string | number | Date;
}

/**
 * Keyset pagination over `query` (alias `e`) ordered by (sort column, id): stable under
 * inserts, one query for the page and one for the count (only when asked for).
 */
export async function paginate<T extends ObjectLiteral & { id: string }>(
  query: SelectQueryBuilder<T>,
  args: PageRequest,
  sort: SortKey<T>,
): Promise<ConnectionShape<T> & { count: () => Promise<number> }> {
  const limit = pageSize(args.first);
  const countQuery = query.clone();
  const page = query.clone();
  if (args.after) {
    const cursor = decodeCursor(args.after, sort.kind ?? 'timestamp', listTag(sort.column, sort.scope));
    page.andWhere(`(${sort.column}, e.id) > (:cursorKey, :cursorId)`, { cursorKey: cursor.k, cursorId: cursor.i });
  }
  let counted: Promise<number> | undefined;
  const count = () => (counted ??= countQuery.getCount());
  const rows = limit === 0 ? [] : await page.orderBy(sort.column, 'ASC').addOrderBy('e.id', 'ASC').take(limit + 1).getMany();
  const hasNextPage = limit === 0 ? (await page.take(1).getCount()) > 0 : rows.length > limit;
  const nodes = rows.slice(0, limit);
  const edges = nodes.map((node) => ({ cursor: cursorFor(sort.column, sort.scope, sort.value(node), node.id), node }));
  return {
    edges,
    nodes,
    pageInfo: {
      hasNextPage,
      hasPreviousPage: Boolean(args.after),
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges.at(-1)?.cursor ?? null,
    },
    count,
    totalCount: count,
  };
}
