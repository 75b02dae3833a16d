import { count, exec, type Queryable } from './rows';

/**
 * Exact row counts of a big table by a few key columns, without `count(*)` and without a hot shared row.
 * Statement triggers append signed per-key deltas to `<table>_tally_delta` in the writer's transaction
 * (one row per key and statement; an UPDATE that moves no row between keys writes nothing). `fold()`
 * moves committed deltas into `<table>_tally`; `count()` adds counts and pending deltas, so every
 * snapshot reads what `count(*)` would. The triggers are ENABLE ALWAYS so replica-role sessions count too.
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
}

/** The writes a tally follows, one trigger each. */
const TRIGGER_KINDS = ['inserted', 'deleted', 'moved', 'truncated'] as const;
type TriggerKind = (typeof TRIGGER_KINDS)[number];

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
    const shape = `SELECT ${this.keyed()}, 0::bigint AS n${Object.keys(this.opts.sums ?? {})
      .map((c) => `, 0::bigint AS ${c}`)
      .join('')} FROM ${this.table} t WITH NO DATA`;
    await exec(q, `CREATE TABLE ${this.counters} AS ${shape}`);
    await exec(q, `ALTER TABLE ${this.counters} ADD PRIMARY KEY (${k})`);
    await exec(q, `CREATE TABLE ${this.deltas} AS ${shape}`);
    for (const c of [...this.key, 'n', ...this.sums]) await exec(q, `ALTER TABLE ${this.deltas} ALTER COLUMN ${c} SET NOT NULL`);
    for (const c of ['n', ...this.sums]) await exec(q, `ALTER TABLE ${this.counters} ALTER COLUMN ${c} SET NOT NULL`);
    await this.createTriggers(q);
    await exec(q, `INSERT INTO ${this.counters} (${cols}) ${this.counted([[this.table, '']])}`);
  }

  /**
   * The trigger functions and statement triggers (ENABLE ALWAYS), each writing the deltas of its
   * statement's transition tables: inserted rows +1, deleted rows -1, updated rows -1 as they
   * were and +1 as they are. Replaces those there (a database migrated before
   * TaskTallyStatementUpdates1763769601770 counted an UPDATE with a row trigger).
   */
  async createTriggers(q: Queryable): Promise<void> {
    const cols = [...this.key, 'n', ...this.sums].join(', ');
    const triggers: [what: TriggerKind, event: string, referencing: string, body: string][] = [
      ['inserted', 'INSERT', 'REFERENCING NEW TABLE AS tally_new', `INSERT INTO ${this.deltas} (${cols}) ${this.counted([['tally_new', '']])}`],
      ['deleted', 'DELETE', 'REFERENCING OLD TABLE AS tally_old', `INSERT INTO ${this.deltas} (${cols}) ${this.counted([['tally_old', '-']])}`],
      [
        'moved',
        'UPDATE',
        'REFERENCING OLD TABLE AS tally_old NEW TABLE AS tally_new',
        `INSERT INTO ${this.deltas} (${cols}) ${this.counted([
          ['tally_old', '-'],
          ['tally_new', ''],
        ])}`,
      ],
      ['truncated', 'TRUNCATE', '', `DELETE FROM ${this.deltas}; DELETE FROM ${this.counters}`],
    ];
    for (const [what, event, referencing, body] of triggers) {
      const { fn, trigger } = this.named(what);
      await exec(q, `DROP TRIGGER IF EXISTS ${trigger} ON ${this.table}`);
      await exec(q, `CREATE OR REPLACE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ${body}; RETURN NULL; END $$`);
      await exec(q, `CREATE TRIGGER ${trigger} AFTER ${event} ON ${this.table} ${referencing} FOR EACH STATEMENT EXECUTE FUNCTION ${fn}()`);
      await exec(q, `ALTER TABLE ${this.table} ENABLE ALWAYS TRIGGER ${trigger}`);
    }
  }

  /**
   * The count and sums per key of the rows of `sources` (each a relation of the table's rows and
   * the sign its rows count with) that `where` holds for; a key whose count and sums all come to
   * 0 has no row.
   */
  private counted(sources: [relation: string, sign: '' | '-'][]): string {
    const values = ['n', ...this.sums];
    const signed = sources
      .map(([relation, sign]) => `SELECT ${this.keyed()}, ${sign}1 AS n${this.summed(sign)} FROM ${relation} t WHERE ${this.opts.where ?? 'true'}`)
      .join(' UNION ALL ');
    return `SELECT ${this.key.join(', ')}, ${values.map((v) => `sum(${v})::bigint`).join(', ')} FROM (${signed}) d
            GROUP BY ${this.key.join(', ')} HAVING ${values.map((v) => `sum(${v}) <> 0`).join(' OR ')}`;
  }

  /** The trigger function and the trigger of one kind of write. */
  private named(what: TriggerKind): { fn: string; trigger: string } {
    return { fn: `${this.base}_tally_${what}`, trigger: `${bare(this.base)}_tally_${what}` };
  }

  /** The migration's down: the triggers, functions and tables go. */
  async drop(q: Queryable): Promise<void> {
    for (const what of TRIGGER_KINDS) {
      const { fn, trigger } = this.named(what);
      await exec(q, `DROP TRIGGER IF EXISTS ${trigger} ON ${this.table}`);
      await exec(q, `DROP FUNCTION IF EXISTS ${fn}()`);
    }
    await exec(q, `DROP TABLE IF EXISTS ${this.deltas}`);
    await exec(q, `DROP TABLE IF EXISTS ${this.counters}`);
  }
}

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
