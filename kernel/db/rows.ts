import { errors } from '../errors';
import { UUID } from '../ids';

/**
 * TypeORM's `query()` returns plain rows for SELECT and INSERT … RETURNING, but `[rows, rowCount]`
 * for UPDATE and DELETE: the rows either way.
 */
export function rowsOf<T = any>(result: unknown): T[] {
  if (Array.isArray(result) && result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number') return result[0] as T[];
  return result as T[];
}

/**
 * The row an id names, or 404 `resource_not_found` for `resource` — also when the id is not a
 * UUID, so no malformed id reaches PostgreSQL. `params` start with the id ($1).
 */
export async function rowById<T = any>(
  q: { query(sql: string, params?: unknown[]): Promise<any> },
  resource: string,
  id: string,
  sql: string,
  params: unknown[] = [id],
): Promise<T> {
  if (!UUID.test(id)) throw errors.notFound(resource, id);
  const [row] = rowsOf<T>(await q.query(sql, params));
  if (!row) throw errors.notFound(resource, id);
  return row;
}
