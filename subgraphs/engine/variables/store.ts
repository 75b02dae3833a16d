import { one, rows, type Queryable } from '../../../kernel/db/rows';

/** Where variables are kept (engine.variables); service.ts holds the rules. */

export interface VariableRow {
  id: string;
  key: string;
  value: string;
  created_at: Date;
  updated_at: Date;
}

export interface VariableView {
  id: string;
  key: string;
  value: string;
  createdAt: Date;
  updatedAt: Date;
}

const COLUMNS = 'id, key, value, created_at, updated_at';

export function toView(r: VariableRow): VariableView {
  return { id: r.id, key: r.key, value: r.value, createdAt: r.created_at, updatedAt: r.updated_at };
}

export const variableStore = {
  list: (q: Queryable) => rows<VariableRow>(q, `SELECT ${COLUMNS} FROM engine.variables ORDER BY key`),
  byId: (q: Queryable, id: string) => one<VariableRow>(q, `SELECT ${COLUMNS} FROM engine.variables WHERE id = $1`, [id]),
  byKey: (q: Queryable, key: string) => one<{ id: string }>(q, `SELECT id FROM engine.variables WHERE key = $1`, [key]),
  /** undefined when the key is taken (the unique index decides, also between concurrent creations). */
  insert: (q: Queryable, key: string, value: string) =>
    one<VariableRow>(q, `INSERT INTO engine.variables (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING RETURNING ${COLUMNS}`, [key, value]),
  /** undefined when the row is gone. */
  update: (q: Queryable, id: string, key: string, value: string) =>
    one<VariableRow>(q, `UPDATE engine.variables SET key = $2, value = $3, updated_at = now() WHERE id = $1 RETURNING ${COLUMNS}`, [id, key, value]),
  delete: async (q: Queryable, id: string) => {
    const row = await one<{ id: string }>(q, `DELETE FROM engine.variables WHERE id = $1 RETURNING id`, [id]);
    return row !== undefined;
  },
  /** Every key and its value, as an execution reads them. */
  values: async (q: Queryable): Promise<Record<string, string>> => {
    const found = await rows<{ key: string; value: string }>(q, `SELECT key, value FROM engine.variables`);
    // Own data properties, whatever the key (`__proto__` too).
    return Object.fromEntries(found.map((r) => [r.key, r.value]));
  },
};
