import { errors, type FieldError } from '../errors';
import { count, rows, type Queryable } from './rows';

/**
 * How every store reads a list: the filters a caller gave become a WHERE (`Where`), and `page()`
 * reads one page of the matches with the number of all of them. One way for all six services,
 * so a list's filters, order, LIMIT/OFFSET and total behave alike on every surface.
 */

/** Which rows of a list: `limit` of them, after the first `offset`. */
export interface PageWindow {
  limit: number;
  offset: number;
}

/** The problems of a window a caller asked for: `limit` an integer from 1 to `max`, `offset` one of 0 or more. */
export function windowProblems(window: PageWindow, max = 100): FieldError[] {
  const problems: FieldError[] = [];
  if (!Number.isInteger(window.limit) || window.limit < 1 || window.limit > max)
    problems.push({ field: 'limit', message: `must be an integer from 1 to ${max}` });
  if (!Number.isInteger(window.offset) || window.offset < 0) problems.push({ field: 'offset', message: 'must be an integer of at least 0' });
  return problems;
}

/** 400 validation_error with each problem of the window (windowProblems). */
export function checkWindow(window: PageWindow, max = 100): void {
  const problems = windowProblems(window, max);
  if (problems.length) throw errors.validation(problems);
}

/**
 * The WHERE of a list: one condition for each filter given (undefined, null and '' are not
 * given), each value a parameter. `params` may start with values of the statement's own.
 */
export class Where {
  private readonly conditions: string[] = [];

  constructor(readonly params: unknown[] = []) {}

  /** `condition($n)`, `$n` the parameter holding `value`, unless the value is not given. */
  and(value: unknown, condition: (param: string) => string): this {
    if (value !== undefined && value !== null && value !== '') this.conditions.push(condition(`$${this.params.push(value)}`));
    return this;
  }

  /** `column = value` unless the value is not given. */
  equals(column: string, value: unknown): this {
    return this.and(value, (p) => `${column} = ${p}`);
  }

  /** A condition that always holds for this list (its values already in `params`). */
  always(condition: string): this {
    this.conditions.push(condition);
    return this;
  }

  /** `WHERE a AND b …`, or nothing without a condition. */
  toString(): string {
    return this.conditions.length ? `WHERE ${this.conditions.join(' AND ')}` : '';
  }
}

/** A list statement: `SELECT <select> <from> ORDER BY <orderBy>`, `from` with its WHERE and `params` ($1…). */
export interface ListSql {
  select: string;
  from: string;
  orderBy: string;
  params?: unknown[];
}

export interface PageOptions {
  /**
   * How the total is counted. `window` (the default): it rides on the page's rows
   * (`count(*) OVER ()`), and only a page past the end, with no row to carry it, counts apart.
   * `apart`: a count statement beside the page's, in parallel — for columns that cost per row
   * (subqueries, joins), which a window count would compute for every match, not the page's.
   */
  count?: 'window' | 'apart';
  /**
   * The total from elsewhere (a tally of the table, kernel/db/tally.ts), read beside the page's
   * rows in parallel instead of counting the matches: for big tables whose filters the tally
   * covers. The page's rows are read as `apart` or `keysFirst` would.
   */
  total?: (q: Queryable) => Promise<number>;
  /**
   * The page's keys first, then only their rows (counts apart): the inner SELECT of `key` skips
   * the offset on an index without reading the rows it skips; `join` joins the subquery `page`
   * (its column: `key`'s name) to the tables `select` reads.
   */
  keysFirst?: { key: string; join: string };
}

/**
 * The same order backwards: each term's direction flipped, and its NULLS placement with it
 * (`a DESC NULLS LAST, id DESC` -> `a ASC NULLS FIRST, id ASC`), so the rows come out exactly
 * reversed and the same index serves the order scanned the other way.
 */
export function reverseOrder(orderBy: string): string {
  const terms: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < orderBy.length; i++) {
    const c = orderBy[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      terms.push(orderBy.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(orderBy.slice(start));
  return terms
    .map((term) => {
      const m = /^\s*(.*?)(?:\s+(ASC|DESC))?(?:\s+NULLS\s+(FIRST|LAST))?\s*$/i.exec(term)!;
      const desc = m[2]?.toUpperCase() === 'DESC';
      const nulls = m[3] ? ` NULLS ${m[3].toUpperCase() === 'FIRST' ? 'LAST' : 'FIRST'}` : '';
      return `${m[1]} ${desc ? 'ASC' : 'DESC'}${nulls}`;
    })
    .join(', ');
}

/** One page of a list and the number of all its rows. */
export async function page<R>(q: Queryable, sql: ListSql, window: PageWindow, opts: PageOptions = {}): Promise<{ rows: R[]; total: number }> {
  const params = sql.params ?? [];
  const limits = `LIMIT $${params.length + 1} OFFSET $${params.length + 2}`;
  const counted = opts.total ? () => opts.total!(q) : () => count(q, `SELECT count(*)::int AS n ${sql.from}`, params);
  if (opts.keysFirst || opts.count === 'apart' || opts.total) {
    const statement = (orderBy: string) =>
      opts.keysFirst
        ? `SELECT ${sql.select} FROM (SELECT ${opts.keysFirst.key} ${sql.from} ORDER BY ${orderBy} ${limits}) page ${opts.keysFirst.join} ORDER BY ${orderBy}`
        : `SELECT ${sql.select} ${sql.from} ORDER BY ${orderBy} ${limits}`;
    if (opts.total && window.offset > 0) {
      // The total is cheap and known first: a page nearer the end is read from the end, in the
      // reversed order, so a deep offset skips the few rows after it instead of all before it.
      const total = await counted();
      const after = total - window.offset;
      if (after <= 0) return { rows: [], total };
      if (window.offset > after) {
        const limit = Math.min(window.limit, after);
        const found = await rows<R>(q, statement(reverseOrder(sql.orderBy)), [...params, limit, after - limit]);
        return { rows: found.reverse(), total };
      }
      return { rows: await rows<R>(q, statement(sql.orderBy), [...params, window.limit, window.offset]), total };
    }
    const [total, found] = await Promise.all([counted(), rows<R>(q, statement(sql.orderBy), [...params, window.limit, window.offset])]);
    return { rows: found, total };
  }
  const found = await rows<R & { page_total__: number }>(
    q,
    `SELECT ${sql.select}, count(*) OVER ()::int AS page_total__ ${sql.from} ORDER BY ${sql.orderBy} ${limits}`,
    [...params, window.limit, window.offset],
  );
  const total = found[0]?.page_total__ ?? (window.offset > 0 ? await counted() : 0);
  return { rows: found.map(({ page_total__: _, ...row }) => row as R), total };
}
