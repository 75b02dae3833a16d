import { createHash } from 'node:crypto';
import { DataSource, QueryFailedError } from 'typeorm';
import { errors } from '../errors';
import { UUID } from '../ids';
import { carriedBeside, carriedHere, carryingNothing, withTransaction, type Carried, type CarriedBeside } from './transaction';

/**
 * Typed reads and writes for the stores (`<thing>.store.ts`): every SQL statement of a service
 * lives in its store and goes through these, so a row has one declared shape (the store's
 * `XRow` interface) and no caller handles TypeORM's result forms.
 */

type Camel<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Head}${Capitalize<Camel<Tail>>}` : S;

/**
 * A row's shape under camelCase names (`created_at` -> `createdAt`): the view of a store whose
 * row maps field for field, so the two shapes are declared once (the store's `toView` still
 * maps them, checked against it).
 */
export type CamelCased<Row> = { [K in keyof Row as K extends string ? Camel<K> : K]: Row[K] };

/** What runs SQL: the DataSource, a transaction's EntityManager (`tx.manager`), a QueryRunner. */
export interface Queryable {
  query(sql: string, params?: unknown[]): Promise<unknown>;
}

/**
 * A statement PostgreSQL parses and plans once per connection and afterwards only binds and runs
 * (pg's named statements): for the hot paths' statements, whose parse and plan cost more than
 * their execution (the execution write's CTEs, a task's steps, the queue's claim). Only fixed
 * texts with parameters — each text is kept on every connection for the connection's life, so
 * a statement built from a caller's choice of filters stays a plain string.
 */
export interface Prepared {
  readonly name: string;
  readonly text: string;
}

const preparedByText = new Map<string, Prepared>();

/** The prepared form of `text` (one per text: its name is the text's hash). */
export function prepared(text: string): Prepared {
  let statement = preparedByText.get(text);
  if (!statement) {
    statement = Object.freeze({ name: `p_${createHash('sha1').update(text).digest('base64url')}`, text });
    preparedByText.set(text, statement);
  }
  return statement;
}

/** SQL text, or a prepared statement. */
export type Sql = string | Prepared;

/**
 * Runs a statement. A prepared one goes to pg as its query config ({name, text}), which
 * TypeORM's query() hands to pg's client unchanged (typed as a string there), in or out of a
 * transaction alike (kernel/db/rows.test.ts proves it is prepared on the connection).
 */
export function run(q: Queryable, sql: Sql, params?: unknown[]): Promise<unknown> {
  const carried = carriedHere();
  if (carried?.state !== 'pending') return q.query(sql as string, params);
  const text = typeof sql === 'string' ? sql : sql.text;
  const beside = FOLDABLE.test(text) && carriedBeside([carried]);
  if (q instanceof DataSource && beside) return foldedWrite(q, sql, params ?? [], beside, carried);
  if (q instanceof DataSource && WRITE.test(text)) return carriedWrite(q, sql, params, carried);
  return q.query(sql as string, params).then((result) => {
    if (INSERT.test(text)) nameCreated(carried, result);
    return result;
  });
}

const WRITE = /^\s*(INSERT|UPDATE|DELETE)\b|^\s*WITH\b[\s\S]*\b(INSERT|UPDATE|DELETE)\b/i;
const INSERT = /^\s*INSERT\b/i;
/** A lone INSERT, UPDATE or DELETE that returns the rows it wrote: the rows it carries can go in the same statement. */
const FOLDABLE = /^\s*(INSERT|UPDATE|DELETE)\b[\s\S]*\bRETURNING\b/i;

/**
 * A lone write that returns its rows, and the rows its change carries, in one statement: the write
 * as a data-modifying WITH, the carried rows inserted beside it only when it wrote a row. One
 * round trip instead of four (BEGIN, the write, the carried rows, COMMIT), and the same atomicity:
 * a statement commits whole or not at all. The answer keeps the shape the write alone gives
 * (TypeORM's `[rows, count]` for UPDATE and DELETE).
 */
async function foldedWrite(db: DataSource, sql: Sql, params: unknown[], beside: CarriedBeside, carried: Carried): Promise<unknown> {
  const text = typeof sql === 'string' ? sql : sql.text;
  const insert = INSERT.test(text);
  const along = beside.sql(params.length + 1, 'EXISTS (SELECT 1 FROM written)', insert ? `(SELECT to_jsonb(written) ->> 'id' FROM written LIMIT 1)` : 'NULL');
  // No row written: nothing was carried, and the change may still commit elsewhere (or fail).
  const written = await beside.writing(
    () => onPool(db, foldedStatement(sql, along.text), [...params, ...along.params]),
    (rows) => () => rows.length > 0,
  );
  if (insert) {
    nameCreated(carried, written);
    return written;
  }
  return [written, written.length];
}

const foldedByWrite = new WeakMap<Prepared, Map<string, Prepared>>();

/** The write and the carried rows' insert as one statement; prepared when the write is, made once per pair. */
function foldedStatement(sql: Sql, along: string): Sql {
  if (typeof sql === 'string') return `WITH written AS (${sql}), carried AS (${along}) SELECT * FROM written`;
  let texts = foldedByWrite.get(sql);
  if (!texts) foldedByWrite.set(sql, (texts = new Map()));
  let statement = texts.get(along);
  if (!statement) {
    statement = prepared(`WITH written AS (${sql.text}), carried AS (${along}) SELECT * FROM written`);
    if (texts.size < 100) texts.set(along, statement);
  }
  return statement;
}

/** What of pg's Pool (TypeORM's PostgreSQL driver keeps it as `master`) a statement alone needs. */
interface PgPool {
  query(config: { name?: string; text: string; values: unknown[] }): Promise<{ rows: Record<string, unknown>[] }>;
}

/**
 * One statement, alone and outside any transaction, straight on the DataSource's pg pool: what
 * DataSource.query does, without the query runner it makes, connects, broadcasts to and releases
 * for each statement (bench/README.md, prompt tests). The pool is the one TypeORM uses, and so
 * are its connections and their prepared statements; a failure is TypeORM's QueryFailedError, as
 * DataSource.query throws it. The answer is the statement's rows, which is what DataSource.query
 * answers for any statement that is not a bare UPDATE or DELETE (the folded write is a SELECT).
 */
function onPool(db: DataSource, sql: Sql, params: unknown[]): Promise<Record<string, unknown>[]> {
  const pool = (db.driver as unknown as { master?: Partial<PgPool> }).master;
  if (typeof pool?.query !== 'function') return db.query(sql as string, params) as Promise<Record<string, unknown>[]>;
  const text = typeof sql === 'string' ? sql : sql.text;
  return (pool as PgPool).query(typeof sql === 'string' ? { text, values: params } : { name: sql.name, text, values: params }).then(
    (result) => result.rows,
    (err: unknown) => {
      throw new QueryFailedError(text, params, err as Error);
    },
  );
}

/**
 * A change's write made outside a transaction commits together with the row the change carries
 * (its audit entry): both in one transaction. Only when the statement changed a row — an UPDATE
 * of no row is the not-found that fails the change.
 */
function carriedWrite(db: DataSource, sql: Sql, params: unknown[] | undefined, carried: Carried): Promise<unknown> {
  return carryingNothing(() =>
    withTransaction(db, async (tx) => {
      // The structured answer counts the rows an INSERT without RETURNING wrote; `raw` is what query() answers.
      const result = await tx.manager.queryRunner!.query(sql as string, params, true);
      if ((result.affected ?? result.records.length) > 0) {
        if (INSERT.test(typeof sql === 'string' ? sql : sql.text)) nameCreated(carried, result.records);
        await tx.carry([carried]);
      }
      return result.raw as unknown;
    }),
  );
}

/** What a change creates is the first row it inserts: the id that row got names the change's resource. */
function nameCreated(carried: Carried, result: unknown): void {
  const id = rowsOf<Record<string, unknown>>(result)[0]?.id;
  if (typeof id === 'string' || typeof id === 'number') carried.named?.(String(id));
}

/**
 * TypeORM's `query()` returns plain rows for SELECT and INSERT … RETURNING, but `[rows, rowCount]`
 * for UPDATE and DELETE: the rows either way.
 */
export function rowsOf<T = Record<string, unknown>>(result: unknown): T[] {
  if (Array.isArray(result) && result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number') return result[0] as T[];
  return result as T[];
}

/** Every row the statement returns (a write's RETURNING rows included), typed as `R`. */
export async function rows<R>(q: Queryable, sql: Sql, params?: unknown[]): Promise<R[]> {
  return rowsOf<R>(await run(q, sql, params));
}

/** The first row the statement returns, or undefined. */
export async function one<R>(q: Queryable, sql: Sql, params?: unknown[]): Promise<R | undefined> {
  return (await rows<R>(q, sql, params))[0];
}

/** The number in the first column of the first row (`SELECT count(*) …`), 0 when there is no row. */
export async function count(q: Queryable, sql: Sql, params?: unknown[]): Promise<number> {
  const row = await one<Record<string, unknown>>(q, sql, params);
  return row ? Number(Object.values(row)[0] ?? 0) : 0;
}

/** A statement run for its effect alone. */
export async function exec(q: Queryable, sql: Sql, params?: unknown[]): Promise<void> {
  await run(q, sql, params);
}

/**
 * The row an id names, or 404 `resource_not_found` for `resource` — also when the id is not a
 * UUID, so no malformed id reaches PostgreSQL. `params` start with the id ($1).
 */
export async function rowById<T = Record<string, unknown>>(q: Queryable, resource: string, id: string, sql: Sql, params: unknown[] = [id]): Promise<T> {
  if (!UUID.test(id)) throw errors.notFound(resource, id);
  const row = await one<T>(q, sql, params);
  if (!row) throw errors.notFound(resource, id);
  return row;
}
