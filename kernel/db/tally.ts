import { count, exec, rowsOf, type Queryable } from './rows';

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
export class Tally<K extends string = string> {
  /** The counts (one row per key). */
  readonly counters: string;
  /** The deltas not folded yet. */
  readonly deltas: string;

  constructor(
    /** The counted table, schema-qualified (`control_plane.tasks`). */
    readonly table: string,
    /** Its key columns: NOT NULL columns that lists filter on by equality. */
    readonly key: readonly K[],
  ) {
    this.counters = `${table}_tally`;
    this.deltas = `${table}_tally_delta`;
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

  /**
   * Moves the committed deltas into the counts (one statement: what it deletes it adds). Safe
   * beside writers and other folds: a delta another fold took is skipped, and counts are locked
   * in key order. Returns how many deltas it folded.
   */
  async fold(q: Queryable): Promise<number> {
    const k = this.key.join(', ');
    const result = rowsOf<{ n: number }>(
      await q.query(
        `WITH d AS (DELETE FROM ${this.deltas} RETURNING ${k}, n),
              f AS (INSERT INTO ${this.counters} AS c (${k}, n)
                    SELECT ${k}, sum(n) FROM d GROUP BY ${k} ORDER BY ${k}
                    ON CONFLICT (${k}) DO UPDATE SET n = c.n + excluded.n)
         SELECT count(*)::int AS n FROM d`,
      ),
    );
    return Number(result[0]?.n ?? 0);
  }

  /**
   * The migration's statements: the two tables, the trigger functions and triggers, and the
   * count of the rows already there (the triggers' lock on the table holds writers off until the
   * migration commits, so nothing is counted twice or missed).
   */
  async create(q: Queryable): Promise<void> {
    const k = this.key.join(', ');
    const keyDefs = this.key.map((c) => `${c}`).join(', ');
    const fn = (what: string) => `${this.table}_tally_${what}`;
    const trigger = (what: string) => `${bare(this.table)}_tally_${what}`;
    await exec(q, `CREATE TABLE ${this.counters} AS SELECT ${keyDefs}, 0::bigint AS n FROM ${this.table} WITH NO DATA`);
    await exec(q, `ALTER TABLE ${this.counters} ADD PRIMARY KEY (${k})`);
    await exec(q, `CREATE TABLE ${this.deltas} AS SELECT ${keyDefs}, 0::bigint AS n FROM ${this.table} WITH NO DATA`);
    for (const c of [...this.key, 'n']) await exec(q, `ALTER TABLE ${this.deltas} ALTER COLUMN ${c} SET NOT NULL`);
    await exec(q, `ALTER TABLE ${this.counters} ALTER COLUMN n SET NOT NULL`);
    await exec(
      q,
      `CREATE FUNCTION ${fn('inserted')}() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         INSERT INTO ${this.deltas} (${k}, n) SELECT ${k}, count(*) FROM tally_rows GROUP BY ${k};
         RETURN NULL;
       END $$`,
    );
    await exec(
      q,
      `CREATE FUNCTION ${fn('deleted')}() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         INSERT INTO ${this.deltas} (${k}, n) SELECT ${k}, -count(*) FROM tally_rows GROUP BY ${k};
         RETURN NULL;
       END $$`,
    );
    await exec(
      q,
      `CREATE FUNCTION ${fn('moved')}() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         INSERT INTO ${this.deltas} (${k}, n) VALUES (${this.key.map((c) => `OLD.${c}`).join(', ')}, -1), (${this.key.map((c) => `NEW.${c}`).join(', ')}, 1);
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
    await exec(
      q,
      `CREATE TRIGGER ${trigger('inserted')} AFTER INSERT ON ${this.table} REFERENCING NEW TABLE AS tally_rows FOR EACH STATEMENT EXECUTE FUNCTION ${fn('inserted')}()`,
    );
    await exec(
      q,
      `CREATE TRIGGER ${trigger('deleted')} AFTER DELETE ON ${this.table} REFERENCING OLD TABLE AS tally_rows FOR EACH STATEMENT EXECUTE FUNCTION ${fn('deleted')}()`,
    );
    await exec(
      q,
      `CREATE TRIGGER ${trigger('moved')} AFTER UPDATE OF ${k} ON ${this.table} FOR EACH ROW
       WHEN (${this.key.map((c) => `OLD.${c} IS DISTINCT FROM NEW.${c}`).join(' OR ')}) EXECUTE FUNCTION ${fn('moved')}()`,
    );
    await exec(q, `CREATE TRIGGER ${trigger('truncated')} AFTER TRUNCATE ON ${this.table} FOR EACH STATEMENT EXECUTE FUNCTION ${fn('truncated')}()`);
    for (const what of ['inserted', 'deleted', 'moved', 'truncated']) await exec(q, `ALTER TABLE ${this.table} ENABLE ALWAYS TRIGGER ${trigger(what)}`);
    await exec(q, `INSERT INTO ${this.counters} (${k}, n) SELECT ${k}, count(*) FROM ${this.table} GROUP BY ${k}`);
  }

  /** The migration's down: the triggers, functions and tables go. */
  async drop(q: Queryable): Promise<void> {
    for (const what of ['inserted', 'deleted', 'moved', 'truncated']) {
      await exec(q, `DROP TRIGGER IF EXISTS ${bare(this.table)}_tally_${what} ON ${this.table}`);
      await exec(q, `DROP FUNCTION IF EXISTS ${this.table}_tally_${what}()`);
    }
    await exec(q, `DROP TABLE IF EXISTS ${this.deltas}`);
    await exec(q, `DROP TABLE IF EXISTS ${this.counters}`);
  }
}

const given = (value: unknown) => value !== undefined && value !== null && value !== '';
const bare = (table: string) => table.slice(table.lastIndexOf('.') + 1);

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
      for (const tally of tallies) await tally.fold(db);
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
