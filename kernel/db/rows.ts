/**
 * TypeORM's `query()` returns plain rows for SELECT and INSERT … RETURNING, but `[rows, rowCount]`
 * for UPDATE and DELETE: the rows either way.
 */
export function rowsOf<T = any>(result: unknown): T[] {
  if (Array.isArray(result) && result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number') return result[0] as T[];
  return result as T[];
}
