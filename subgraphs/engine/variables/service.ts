import type { DataSource } from 'typeorm';
import { AppError, errors, type FieldError } from '../../../kernel/errors';
import { UUID } from '../../../kernel/ids';
import { toView, variableStore as store, type VariableView } from './store';

/**
 * n8n's variables: a key (letters, digits and `_`, at most 50) and a text value (at most 1,000
 * characters), unique by key. Every workflow reads them, read-only, as `$vars.<key>` in its
 * expressions and Code nodes, as they stand when its execution starts (or resumes).
 */

const KEY = /^[A-Za-z0-9_]+$/;
const MAX_KEY = 50;
const MAX_VALUE = 1000;

export interface VariableFields {
  key?: string | null;
  value?: string | null;
}

function problems(key: unknown, value: unknown): FieldError[] {
  const out: FieldError[] = [];
  if (typeof key !== 'string' || key === '') out.push({ field: 'key', message: 'is required', reason: 'required_field_missing' });
  else if (key.length > MAX_KEY) out.push({ field: 'key', message: `may be at most ${MAX_KEY} characters`, reason: 'too_long' });
  else if (!KEY.test(key)) out.push({ field: 'key', message: 'may contain only the characters A-Z, a-z, 0-9 and _' });
  if (typeof value !== 'string') out.push({ field: 'value', message: 'is required', reason: 'required_field_missing' });
  else if (value.length > MAX_VALUE) out.push({ field: 'value', message: `may be at most ${MAX_VALUE} characters`, reason: 'too_long' });
  return out;
}

function isUniqueViolation(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === '23505';
}

export class VariableService {
  constructor(private readonly db: DataSource) {}

  async list(): Promise<VariableView[]> {
    return (await store.list(this.db)).map(toView);
  }

  async get(id: string): Promise<VariableView> {
    const row = UUID.test(id) ? await store.byId(this.db, id) : undefined;
    if (!row) throw errors.notFound('variable', id);
    return toView(row);
  }

  async create(input: VariableFields): Promise<VariableView> {
    const bad = problems(input.key, input.value);
    if (bad.length) throw errors.validation(bad);
    const row = await store.insert(this.db, input.key!, input.value!);
    if (!row) throw await this.taken(input.key!);
    return toView(row);
  }

  /** Fields left out keep their value. */
  async update(id: string, input: VariableFields): Promise<VariableView> {
    const current = await this.get(id);
    const key = input.key ?? current.key;
    const value = input.value ?? current.value;
    const bad = problems(key, value);
    if (bad.length) throw errors.validation(bad);
    try {
      const row = await store.update(this.db, id, key, value);
      if (!row) throw errors.notFound('variable', id);
      return toView(row);
    } catch (err) {
      if (isUniqueViolation(err)) throw await this.taken(key);
      throw err;
    }
  }

  async delete(id: string): Promise<{ variableId: string; deletedAt: Date }> {
    if (!UUID.test(id) || !(await store.delete(this.db, id))) throw errors.notFound('variable', id);
    return { variableId: id, deletedAt: new Date() };
  }

  /** Every variable by key: what `$vars` holds in an execution. */
  values(): Promise<Record<string, string>> {
    return store.values(this.db);
  }

  private async taken(key: string): Promise<AppError> {
    const existing = await store.byKey(this.db, key);
    return errors.alreadyExists('key', key, existing?.id);
  }
}
