import 'reflect-metadata';
import { DataSource, type MixedList, type EntitySchema } from 'typeorm';

export interface DataSourceOptions {
  url: string;
  entities: MixedList<Function | string | EntitySchema>;
  migrations: MixedList<Function | string>;
  poolSize?: number;
  applicationName?: string;
}

/**
 * One TypeORM data source per process over every entity the process hosts. Each service keeps
 * its tables in its own PostgreSQL schema (the entity's `schema`); the schema is created by the
 * service's first migration. Never `synchronize`.
 */
export function createDataSource(opts: DataSourceOptions): DataSource {
  return new DataSource({
    type: 'postgres',
    url: opts.url,
    entities: opts.entities,
    migrations: opts.migrations,
    migrationsTableName: 'platform_migrations',
    migrationsTransactionMode: 'each',
    synchronize: false,
    logging: false,
    applicationName: opts.applicationName ?? 'automation-platform',
    extra: { max: opts.poolSize ?? 20, idleTimeoutMillis: 30_000 },
  });
}
