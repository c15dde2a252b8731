import DataLoader from 'dataloader';
import type { EntityTarget, ObjectLiteral } from 'typeorm';
import { canSee } from '../modules/api-key/principal';
import { cursorFor, pageSize, type ConnectionShape } from '../db/pagination';
import type { LoaderFactory } from './loader-registry';

export interface FirstPageKey {
  parentId: string;
  first: number | null | undefined;
}

/**
 * The first page of a list nested under many parents (use cases → datasets, …) in one query for
 * all of them: rows ranked per parent by (sort column, id) with their per-parent total. Later
 * pages (with a cursor) go through the ordinary keyset query of the list.
 */
export function firstPageLoaderFactory<T extends ObjectLiteral & { id: string; projectId: string }>(
  entity: EntityTarget<T>,
  parentColumn: string,
  sortColumn: string,
  sortValue: (row: T) => string | number | Date,
): LoaderFactory<FirstPageKey, ConnectionShape<T>> {
  return (dataSource, principal) =>
    new DataLoader<FirstPageKey, ConnectionShape<T>, string>(
      async (keys) => {
        const metadata = dataSource.getMetadata(entity);
        const limits = new Map<number, string[]>();
        for (const key of keys) {
          const limit = pageSize(key.first);
          limits.set(limit, [...(limits.get(limit) ?? []), key.parentId]);
        }
        const pages = new Map<string, ConnectionShape<T>>();
        for (const [limit, parents] of limits) {
          const rows = (await dataSource.query(
            `SELECT * FROM (
               SELECT e.*, row_number() OVER w AS page_position, count(*) OVER (PARTITION BY e.${parentColumn}) AS page_total
               FROM ${metadata.tableName} e WHERE e.${parentColumn} = ANY($1)
               WINDOW w AS (PARTITION BY e.${parentColumn} ORDER BY e.${sortColumn}, e.id)
             ) ranked WHERE page_position <= $2 ORDER BY page_position`,
            [[...new Set(parents)], Math.max(limit, 1) + 1],
          )) as Record<string, unknown>[];
          const byParent = new Map<string, { nodes: T[]; total: number; more: boolean }>();
          for (const raw of rows) {
            const parent = String(raw[parentColumn]);
            const group = byParent.get(parent) ?? { nodes: [], total: Number(raw.page_total), more: false };
            if (Number(raw.page_position) <= limit) group.nodes.push(hydrate<T>(metadata, raw));
            else group.more = true;
            byParent.set(parent, group);
          }
          for (const parentId of parents) {
            const group = byParent.get(parentId) ?? { nodes: [], total: 0, more: false };
            const nodes = group.nodes.filter((n) => canSee(principal, n.projectId));
            const edges = nodes.map((node) => ({ cursor: cursorFor(sortColumn, parentId, sortValue(node), node.id), node }));
            const total = nodes.length === group.nodes.length ? group.total : nodes.length;
            pages.set(`${parentId}:${limit}`, {
              edges,
              nodes,
              pageInfo: {
                hasNextPage: limit === 0 ? total > 0 : group.more,
                hasPreviousPage: false,
                startCursor: edges[0]?.cursor ?? null,
                endCursor: edges.at(-1)?.cursor ?? null,
              },
              totalCount: () => Promise.resolve(total),
              count: () => Promise.resolve(total),
            } as ConnectionShape<T>);
          }
        }
        return keys.map((key) => pages.get(`${key.parentId}:${pageSize(key.first)}`)!);
      },
      { cacheKeyFn: (key) => `${key.parentId}:${key.first ?? ''}` },
    );
}

/** An entity instance from a raw row, through the column metadata (names, transformers). */
function hydrate<T>(metadata: import('typeorm').EntityMetadata, raw: Record<string, unknown>): T {
  const instance = metadata.create() as Record<string, unknown>;
  for (const column of metadata.columns) {
    let value = raw[column.databaseName];
    const transformer = column.transformer;
    if (transformer && !Array.isArray(transformer)) value = transformer.from(value);
    instance[column.propertyName] = value;
  }
  return instance as T;
}

/**
 * A nested list: its first page through the batched loader, later pages (or filtered lists)
 * through `list`.
 */
export function nestedConnection<T>(
  loaders: import('./loader-registry').LoaderRegistry,
  factory: LoaderFactory<FirstPageKey, ConnectionShape<T>>,
  parentId: string,
  args: { first?: number | null; after?: string | null },
  list: () => Promise<ConnectionShape<T>>,
): Promise<ConnectionShape<T>> {
  if (args.after) return list();
  pageSize(args.first);
  return loaders.get(factory).load({ parentId, first: args.first });
}
