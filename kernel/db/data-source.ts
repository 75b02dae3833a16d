import 'reflect-metadata';
import { DataSource, type MixedList } from 'typeorm';

export interface DataSourceOptions {
  url: string;
  migrations: MixedList<Function | string>;
  poolSize?: number;
  applicationName?: string;
}

/**
 * One TypeORM data source per process: its pool, its transactions and the migrations of every
 * service the process hosts. Each service keeps its tables in its own PostgreSQL schema, created
 * by its first migration, and reaches them only through its stores' SQL (`<thing>.store.ts`,
 * kernel/db/rows.ts): no entity classes, never `synchronize`.
 */
export function createDataSource(opts: DataSourceOptions): DataSource {
  return new DataSource({
    type: 'postgres',
    url: opts.url,
    migrations: opts.migrations,
    migrationsTableName: 'platform_migrations',
    migrationsTransactionMode: 'each',
    synchronize: false,
    logging: false,
    applicationName: opts.applicationName ?? 'automation-platform',
    extra: { max: opts.poolSize ?? 20, idleTimeoutMillis: 30_000 },
  });
}
