import 'reflect-metadata';
import { DataSource, type Logger as TypeOrmLogger } from 'typeorm';
import { MIGRATIONS } from '../../migrations';
import { ENTITIES } from './entities';

export interface DataSourceOptions {
  url: string;
  poolSize?: number;
  /** Called with every SQL statement; used by the query-count tests. */
  onQuery?: (sql: string) => void;
}

export function createDataSource(options: DataSourceOptions): DataSource {
  const logger: TypeOrmLogger | undefined = options.onQuery
    ? {
        logQuery: (query) => options.onQuery?.(query),
        logQueryError: () => undefined,
        logQuerySlow: () => undefined,
        logSchemaBuild: () => undefined,
        logMigration: () => undefined,
        log: () => undefined,
      }
    : undefined;
  return new DataSource({
    type: 'postgres',
    url: options.url,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'migrations',
    migrationsTransactionMode: 'each',
    synchronize: false,
    logging: options.onQuery ? ['query'] : false,
    logger,
    extra: { max: options.poolSize ?? 10, application_name: 'reportql' },
  });
}

/** Opens the data source and applies pending migrations; concurrent starters wait on an advisory lock. */
export async function openDatabase(options: DataSourceOptions): Promise<DataSource> {
  const dataSource = createDataSource(options);
  await dataSource.initialize();
  const runner = dataSource.createQueryRunner();
  try {
    await runner.connect();
    await runner.query('SELECT pg_advisory_lock(7423001)');
    try {
      await dataSource.runMigrations({ transaction: 'each' });
      // Only each project's newest analytics change matters (it is the revision): drop the rest.
      await runner.query(`DELETE FROM analytics_changes c USING (SELECT project_id, max(id) AS newest FROM analytics_changes GROUP BY project_id) k
        WHERE c.project_id = k.project_id AND c.id < k.newest`);
    } finally {
      await runner.query('SELECT pg_advisory_unlock(7423001)');
    }
  } finally {
    await runner.release();
  }
  return dataSource;
}
