import { count, exec, type Queryable } from './rows';

/**
 * Exact row counts of a big table by a few key columns, without `count(*)` over its rows and
 * without a shared row every writer updates (issue #15: a list's total at a million rows).
 *
 * `<table>_tally` holds a count per key (the columns lists filter on). Writers never touch it:
 * triggers append signed deltas to `<table>_tally_delta` in the writer's own transaction — one
 * row per key and statement for INSERT and DELETE (transition tables, so a bulk insert or a prune
 * costs one statement), two rows for an UPDATE that changes a key column (a row trigger whose
 * WHEN skips every other update before any function runs). `fold()` moves the committed deltas
 * into the counts in one statement; `count()` adds the counts and the pending deltas in one
 * statement, so every snapshot reads exactly what `count(*)` would.
 *
 * The triggers are ENABLE ALWAYS: a session in `session_replication_role = replica` (history
 * loaded with the business triggers off) still counts its rows.
 */
/**
 * A tally's shape beyond plain key columns (the rollups of kernel/metrics.ts): key columns computed
 * from the row, summed values besides the count, and only some of the rows.
 */
export interface TallyOptions<K extends string> {
  /** The tables' names without `_tally`/`_tally_delta` (default: the counted table's). */
  name?: string;
  /** Key column -> SQL over the row as `t` (default: the column of that name). */
  keyExpressions?: Partial<Record<K, string>>;
  /** Summed column -> SQL over `t` (an integer), kept beside the count `n`. */
  sums?: Record<string, string>;
  /** Only rows for which this SQL over `t` holds are counted. */
  where?: string;
  /** The table's columns whose change may move a row between keys or in or out of `where` (default: the key columns). */
  watch?: readonly string[];
}

export class Tally<K extends string = string> {
  /** The counts (one row per key). */
  readonly counters: string;
  /** The deltas not folded yet. */
  readonly deltas: string;
  /** The summed columns besides `n`. */
  readonly sums: readonly string[];
  private readonly base: string;

  constructor(
    /** The counted table, schema-qualified (`control_plane.tasks`). */
    readonly table: string,
    /** Its key columns, NOT NULL, in the order of the counts' primary key (a range read leads with its column). */
    readonly key: readonly K[],
    private readonly opts: TallyOptions<K> = {},
  ) {
    this.base = opts.name ?? table;
    this.counters = `${this.base}_tally`;
    this.deltas = `${this.base}_tally_delta`;
    this.sums = Object.keys(opts.sums ?? {});
  }

  /** Whether these filters (undefined, null and '' are not given) can all be answered from the tally. */
  covers(filter: Record<string, unknown>): boolean {
    return Object.entries(filter).every(([column, value]) => !given(value) || (this.key as readonly string[]).includes(column));
  }

  /** The number of rows matching every given filter (column = value), from the counts and the pending deltas. */
  async count(q: Queryable, filter: Partial<Record<K, unknown>>): Promise<number> {
    if (!this.covers(filter)) throw new Error(`${this.table}: the tally counts by ${this.key.join(', ')} only`);
    const params: unknown[] = [];
    const conditions = Object.entries(filter)
      .filter(([, value]) => given(value))
      .map(([column, value]) => `${column} = $${params.push(value)}`);
    const where = conditions.length ? `WHERE ${conditions.join(' AND ')}` : '';
    return count(
      q,
      `SELECT (coalesce((SELECT sum(n) FROM ${this.counters} ${where}), 0) + coalesce((SELECT sum(n) FROM ${this.deltas} ${where}), 0))::bigint AS n`,
      params,
    );
  }

  /** A list's total from the tally (page()'s `total`) when it covers every given filter; undefined when a count must read the rows. */
  totalOf(filter: Record<string, unknown>): ((q: Queryable) => Promise<number>) | undefined {
    return this.covers(filter) ? (q) => this.count(q, filter as Partial<Record<K, unknown>>) : undefined;
  }

  /**
   * Its rows, counts and pending deltas alike (a key may appear more than once: sum them), as a
   * FROM item: `(SELECT key…, n, sums… FROM counts WHERE … UNION ALL … deltas WHERE …)`.
   */
  rows(where: string): string {
    const cols = [...this.key, 'n', ...this.sums].join(', ');
    return `(SELECT ${cols} FROM ${this.counters} ${where} UNION ALL SELECT ${cols} FROM ${this.deltas} ${where})`;
  }

  /**
   * Moves the committed deltas into the counts (one statement: what it deletes it adds). Safe
   * beside writers and other folds: a delta another fold took is skipped, and counts are locked
   * in key order. Returns how many deltas it folded.
   */
  async fold(q: Queryable): Promise<number> {
    const k = this.key.join(', ');
    const values = ['n', ...this.sums];
    return count(
      q,
      `WITH d AS (DELETE FROM ${this.deltas} RETURNING ${k}, ${values.join(', ')}),
              f AS (INSERT INTO ${this.counters} AS c (${k}, ${values.join(', ')})
                    SELECT ${k}, ${values.map((v) => `sum(${v})`).join(', ')} FROM d GROUP BY ${k} ORDER BY ${k}
                    ON CONFLICT (${k}) DO UPDATE SET ${values.map((v) => `${v} = c.${v} + excluded.${v}`).join(', ')})
         SELECT count(*)::int AS n FROM d`,
    );
  }

  /**
   * After a fold of many deltas (a bulk load, a prune): VACUUM the deltas, whose dead rows every
   * read would scan until autovacuum came by, and refresh both tables' statistics. Outside a
   * transaction only.
   */
  async tidy(q: Queryable): Promise<void> {
    await exec(q, `VACUUM (ANALYZE) ${this.deltas}, ${this.counters}`);
  }

  /** `expr AS key, …` over `t`. */
  private keyed(): string {
    return this.key.map((c) => `${this.opts.keyExpressions?.[c] ?? `t.${c}`} AS ${c}`).join(', ');
  }

  /** The summed values over `t` with a sign. */
  private summed(sign: '' | '-'): string {
    return Object.entries(this.opts.sums ?? {})
      .map(([c, e]) => `, ${sign}(${e})::bigint AS ${c}`)
      .join('');
  }

  /**
   * The migration's statements: the two tables, the trigger functions and triggers, and the
   * count of the rows already there (the triggers' lock on the table holds writers off until the
   * migration commits, so nothing is counted twice or missed).
   */
  async create(q: Queryable): Promise<void> {
    const k = this.key.join(', ');
    const cols = [...this.key, 'n', ...this.sums].join(', ');
    const groups = this.key.map((_, i) => i + 1).join(', ');
    const where = this.opts.where ?? 'true';
    const aggregated = (sign: '' | '-') =>
      `SELECT ${this.keyed()}, ${sign}count(*)${Object.entries(this.opts.sums ?? {})
        .map(([c, e]) => `, ${sign}coalesce(sum(${e}), 0)::bigint AS ${c}`)
        .join('')} FROM tally_rows t WHERE ${where} GROUP BY ${groups}`;
    const fn = (what: string) => `${this.base}_tally_${what}`;
    const trigger = (what: string) => `${bare(this.base)}_tally_${what}`;
    const shape = `SELECT ${this.keyed()}, 0::bigint AS n${Object.keys(this.opts.sums ?? {})
      .map((c) => `, 0::bigint AS ${c}`)
      .join('')} FROM ${this.table} t WITH NO DATA`;
    await exec(q, `CREATE TABLE ${this.counters} AS ${shape}`);
    await exec(q, `ALTER TABLE ${this.counters} ADD PRIMARY KEY (${k})`);
    await exec(q, `CREATE TABLE ${this.deltas} AS ${shape}`);
    for (const c of [...this.key, 'n', ...this.sums]) await exec(q, `ALTER TABLE ${this.deltas} ALTER COLUMN ${c} SET NOT NULL`);
    for (const c of ['n', ...this.sums]) await exec(q, `ALTER TABLE ${this.counters} ALTER COLUMN ${c} SET NOT NULL`);
    // A statement's inserted rows count +1 each, its deleted rows -1 (from their transition table).
    for (const [what, sign, event, rows] of [
      ['inserted', '', 'INSERT', 'NEW'],
      ['deleted', '-', 'DELETE', 'OLD'],
    ] as const) {
      await exec(
        q,
        `CREATE FUNCTION ${fn(what)}() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         INSERT INTO ${this.deltas} (${cols}) ${aggregated(sign)};
         RETURN NULL;
       END $$`,
      );
      await exec(
        q,
        `CREATE TRIGGER ${trigger(what)} AFTER ${event} ON ${this.table} REFERENCING ${rows} TABLE AS tally_rows FOR EACH STATEMENT EXECUTE FUNCTION ${fn(what)}()`,
      );
    }
    await exec(
      q,
      `CREATE FUNCTION ${fn('moved')}() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         INSERT INTO ${this.deltas} (${cols})
         SELECT ${this.keyed()}, -1${this.summed('-')} FROM (SELECT OLD.*) t WHERE ${where}
         UNION ALL
         SELECT ${this.keyed()}, 1${this.summed('')} FROM (SELECT NEW.*) t WHERE ${where};
         RETURN NULL;
       END $$`,
    );
    await exec(
      q,
      `CREATE FUNCTION ${fn('truncated')}() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         DELETE FROM ${this.deltas};
         DELETE FROM ${this.counters};
         RETURN NULL;
       END $$`,
    );
    const watch = this.opts.watch ?? this.key;
    const changed = watch.map((c) => `OLD.${c} IS DISTINCT FROM NEW.${c}`).join(' OR ');
    // Only updates that change a watched column of a row counted before or after run the function.
    const counted = this.opts.where ? ` AND (${row(this.opts.where, 'OLD')} OR ${row(this.opts.where, 'NEW')})` : '';
    await exec(
      q,
      `CREATE TRIGGER ${trigger('moved')} AFTER UPDATE OF ${watch.join(', ')} ON ${this.table} FOR EACH ROW
       WHEN ((${changed})${counted}) EXECUTE FUNCTION ${fn('moved')}()`,
    );
    await exec(q, `CREATE TRIGGER ${trigger('truncated')} AFTER TRUNCATE ON ${this.table} FOR EACH STATEMENT EXECUTE FUNCTION ${fn('truncated')}()`);
    for (const what of ['inserted', 'deleted', 'moved', 'truncated']) await exec(q, `ALTER TABLE ${this.table} ENABLE ALWAYS TRIGGER ${trigger(what)}`);
    await exec(q, `INSERT INTO ${this.counters} (${cols}) ${aggregated('').replace('FROM tally_rows t', `FROM ${this.table} t`)}`);
  }

  /** The migration's down: the triggers, functions and tables go. */
  async drop(q: Queryable): Promise<void> {
    for (const what of ['inserted', 'deleted', 'moved', 'truncated']) {
      await exec(q, `DROP TRIGGER IF EXISTS ${bare(this.base)}_tally_${what} ON ${this.table}`);
      await exec(q, `DROP FUNCTION IF EXISTS ${this.base}_tally_${what}()`);
    }
    await exec(q, `DROP TABLE IF EXISTS ${this.deltas}`);
    await exec(q, `DROP TABLE IF EXISTS ${this.counters}`);
  }
}

/** SQL over the row `t` rewritten over OLD or NEW (a trigger's WHEN). */
const row = (sql: string, as: 'OLD' | 'NEW') => `(${sql.replace(/\bt\./g, `${as}.`)})`;
const given = (value: unknown) => value !== undefined && value !== null && value !== '';
const bare = (table: string) => table.slice(table.lastIndexOf('.') + 1);

/** Folded deltas after which a periodic fold tidies the tables. */
const TIDY_AFTER = 10_000;

/** What runs the folds: the queue's lifecycle (workers fold; a process without a running queue does not). */
export interface FoldHost {
  onLifecycle(started: () => void, stopping: () => void): void;
}

/**
 * Folds `tallies` every `everyMs` while the queue runs (every worker process does: folds are safe
 * side by side). A failed fold leaves its deltas for the next one; counts stay exact meanwhile.
 */
export function foldPeriodically(
  host: FoldHost,
  db: Queryable,
  tallies: readonly Tally[],
  logger: { warn(msg: string, meta?: object): void },
  everyMs = 5_000,
): void {
  let timer: NodeJS.Timeout | undefined;
  let running = false;
  const tick = async () => {
    if (running) return;
    running = true;
    try {
      for (const tally of tallies) if ((await tally.fold(db)) >= TIDY_AFTER) await tally.tidy(db);
    } catch (err) {
      logger.warn('tally not folded', { err });
    } finally {
      running = false;
    }
  };
  host.onLifecycle(
    () => {
      if (timer) return;
      timer = setInterval(() => void tick(), everyMs);
      timer.unref();
    },
    () => {
      clearInterval(timer);
      timer = undefined;
    },
  );
}
