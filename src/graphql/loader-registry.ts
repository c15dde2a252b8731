import DataLoader from 'dataloader';
import type { DataSource, EntityTarget, ObjectLiteral } from 'typeorm';
import type { Principal } from '../modules/api-key/principal';
import type { Services } from '../services';
import { canSee } from '../modules/api-key/principal';

export type LoaderFactory<K, V> = (dataSource: DataSource, principal: Principal, services: Services) => DataLoader<K, V>;

/**
 * Per-request DataLoaders. Modules keep their loader factories beside their code; the
 * registry creates each once per request, keyed by the factory itself.
 */
export class LoaderRegistry {
  private readonly loaders = new Map<LoaderFactory<unknown, unknown>, DataLoader<unknown, unknown>>();

  constructor(
    private readonly dataSource: DataSource,
    private readonly principal: Principal,
    private readonly services: Services,
  ) {}

  get<K, V>(factory: LoaderFactory<K, V>): DataLoader<K, V> {
    let loader = this.loaders.get(factory as LoaderFactory<unknown, unknown>);
    if (!loader) {
      loader = factory(this.dataSource, this.principal, this.services) as DataLoader<unknown, unknown>;
      this.loaders.set(factory as LoaderFactory<unknown, unknown>, loader);
    }
    return loader as DataLoader<K, V>;
  }
}

/**
 * A loader of rows by primary key that drops rows of projects the caller cannot see, so a
 * batch mixing tenants never leaks across them.
 */
export function byIdLoaderFactory<T extends ObjectLiteral & { id: string; projectId: string }>(
  entity: EntityTarget<T>,
): LoaderFactory<string, T | null> {
  return (dataSource, principal) =>
    new DataLoader<string, T | null>(async (ids) => {
      const rows = await dataSource
        .getRepository(entity)
        .createQueryBuilder('e')
        .where('e.id IN (:...ids)', { ids: [...new Set(ids)] })
        .getMany();
      const byId = new Map(rows.filter((r) => canSee(principal, r.projectId)).map((r) => [r.id, r]));
      return ids.map((id) => byId.get(id) ?? null);
    });
}

/** A loader of the rows whose `column` equals each key, ordered by `orderBy`, tenant-filtered. */
export function manyByLoaderFactory<T extends ObjectLiteral & { projectId: string }>(
  entity: EntityTarget<T>,
  column: keyof T & string,
  orderBy: string[],
): LoaderFactory<string, T[]> {
  return (dataSource, principal) =>
    new DataLoader<string, T[]>(async (keys) => {
      let query = dataSource
        .getRepository(entity)
        .createQueryBuilder('e')
        .where(`e.${column} IN (:...keys)`, { keys: [...new Set(keys)] });
      for (const [i, field] of orderBy.entries()) {
        query = i === 0 ? query.orderBy(`e.${field}`, 'ASC') : query.addOrderBy(`e.${field}`, 'ASC');
      }
      const rows = await query.getMany();
      const groups = new Map<string, T[]>();
      for (const row of rows) {
        if (!canSee(principal, row.projectId)) continue;
        const key = String(row[column]);
        const group = groups.get(key);
        if (group) group.push(row);
        else groups.set(key, [row]);
      }
      return keys.map((key) => groups.get(key) ?? []);
    });
}
