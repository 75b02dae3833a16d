import { AsyncLocalStorage } from 'node:async_hooks';
import type { DataSource, EntityManager } from 'typeorm';

type IsolationLevel = 'READ UNCOMMITTED' | 'READ COMMITTED' | 'REPEATABLE READ' | 'SERIALIZABLE';

/**
 * A transaction as the kernel hands it around: its EntityManager, and `afterCommit` for what must
 * only happen once the rows are visible to others (waking queue workers, publishing events). A
 * wake-up sent before COMMIT reaches workers that cannot see the job yet, so they would find it
 * only at their next poll; an event sent before a rollback announces a change that never happened.
 */
export interface Tx {
  readonly manager: EntityManager;
  /** Runs `fn` once after COMMIT, never after a rollback. Its failure is the callback's own: it is swallowed. */
  afterCommit(fn: () => unknown): void;
  /**
   * Writes now, in this transaction, the rows the given changes carry (see `Carried`) that no
   * transaction has taken yet: a grouped write names the callers whose rows it wrote. They count as
   * written once this transaction commits, and are free again if it rolls back.
   */
  carry(carried: readonly (Carried | undefined)[]): Promise<void>;
}

/**
 * A row a change must commit together with (the change's audit entry, kernel/audit): the first
 * transaction that commits within the change's scope (`carrying`) writes it just before its
 * COMMIT, so the row exists exactly when the change does, and a failure to write it rolls the
 * change back.
 */
export interface Carried<R = unknown> {
  readonly row: R;
  /** Writes rows of this kind in one statement; the rows of several changes go together (a grouped write). */
  write(m: EntityManager, rows: readonly R[]): Promise<void>;
  /**
   * The same rows as one INSERT statement to run beside a lone write in a single statement
   * (kernel/db/rows.ts): the rows travel as parameter `$param`; `createdId` is an SQL expression
   * for the id the write created (NULL when it creates none), `guard` an SQL condition that holds
   * when the write changed a row.
   */
  alongside?(rows: readonly R[], sql: { param: number; createdId: string; guard: string }): { text: string; params: unknown[] };
  /** Told the id a lone INSERT carrying it created (kernel/db/rows.ts): a create's entry names it. */
  named?(id: string): void;
  /** pending: no transaction took it; taken: an open transaction wrote it; written: that transaction committed, or the change ended without one. */
  state: 'pending' | 'taken' | 'written';
}

const carriedScope = new AsyncLocalStorage<Carried | undefined>();

/** Runs `fn` with `carried` as the row its transactions carry. */
export function carrying<T>(carried: Carried, fn: () => Promise<T>): Promise<T> {
  return carriedScope.run(carried, fn);
}

/** The row the current change carries, if any (a grouped write captures its callers'). */
export function carriedHere(): Carried | undefined {
  return carriedScope.getStore();
}

/** Runs `fn` outside any change's scope: a grouped write runs for all its callers, not the first one. */
export function carryingNothing<T>(fn: () => Promise<T>): Promise<T> {
  return carriedScope.run(undefined, fn);
}

class Transaction implements Tx {
  private state: 'open' | 'committed' | 'rolledBack' = 'open';
  private readonly callbacks: (() => unknown)[] = [];
  private readonly taken: Carried[] = [];
  constructor(readonly manager: EntityManager) {}

  async carry(carried: readonly (Carried | undefined)[]): Promise<void> {
    const mine = carried.filter((c): c is Carried => c?.state === 'pending');
    if (!mine.length) return;
    for (const c of mine) c.state = 'taken';
    this.taken.push(...mine);
    // One statement per kind of row: a grouped write's callers share their entries' insert.
    const byWrite = new Map<Carried['write'], Carried[]>();
    for (const c of mine) byWrite.set(c.write, [...(byWrite.get(c.write) ?? []), c]);
    for (const [write, group] of byWrite)
      await write(
        this.manager,
        group.map((c) => c.row),
      );
  }

  afterCommit(fn: () => unknown): void {
    if (this.state === 'open') this.callbacks.push(fn);
    // Registered late (the transaction escaped its block): committed work is announced at once.
    else if (this.state === 'committed') void run(fn);
  }

  rolledBack(): void {
    this.state = 'rolledBack';
    this.callbacks.length = 0;
    for (const c of this.taken.splice(0)) c.state = 'pending';
  }

  async committed(): Promise<void> {
    this.state = 'committed';
    for (const c of this.taken.splice(0)) c.state = 'written';
    // In registration order; one failing callback does not keep the others from running.
    for (const fn of this.callbacks.splice(0)) await run(fn);
  }
}

async function run(fn: () => unknown): Promise<void> {
  try {
    await fn();
  } catch {
    // The commit stands whatever a callback does; callbacks log their own failures.
  }
}

/**
 * Runs `fn` in a transaction and then its `afterCommit` callbacks. Given a `Tx` instead of a
 * DataSource, `fn` joins that transaction: its callbacks wait for the outer COMMIT. So a service
 * method takes `db | tx` and works alone or inside a caller's transaction alike. Just before
 * COMMIT the transaction writes the row the current change carries, if no transaction has yet.
 */
export async function withTransaction<T>(db: DataSource | Tx, fn: (tx: Tx) => Promise<T>, isolation?: IsolationLevel): Promise<T> {
  if (isTx(db)) return fn(db);
  let tx!: Transaction;
  const body = async (manager: EntityManager) => {
    const result = await fn((tx = new Transaction(manager)));
    await tx.carry([carriedHere()]);
    return result;
  };
  let result: T;
  try {
    result = await (isolation ? db.transaction(isolation, body) : db.transaction(body));
  } catch (err) {
    tx?.rolledBack();
    throw err;
  }
  await tx.committed();
  return result;
}

/** What the callers of a grouped write carry, to insert in the write's own statement (carriedBeside). */
export interface CarriedBeside {
  /**
   * The INSERT of the carried rows, each written only where `guard` (an SQL condition on the row)
   * holds; its rows are parameter `$param`; `createdId`, an SQL expression for the id the statement
   * created, names the resource of a row that names none (Carried.alongside).
   */
  sql(param: number, guard: string, createdId?: string): { text: string; params: unknown[] };
  /** Runs the statement that holds the INSERT, then marks the rows of the callers `wrote` names as written (a failure leaves them pending). */
  writing<T>(statement: () => Promise<T>, wrote: (result: T) => (index: number) => boolean): Promise<T>;
}

/**
 * The rows the callers of a grouped write carry (kernel/db/grouped.ts: their audit entries), or a
 * lone write's caller (kernel/db/rows.ts), as
 * one INSERT inside the write's own statement, a data-modifying WITH: one round trip instead of
 * BEGIN, the write, the carried rows and COMMIT, and the same atomicity, since a statement commits
 * whole or not at all. Null when no caller carries a pending row or the rows cannot go beside a
 * statement: the write then opens a transaction and carries them there.
 */
export function carriedBeside(carried: readonly (Carried | undefined)[]): CarriedBeside | null {
  const pending = carried.map((c) => (c?.state === 'pending' ? c : undefined));
  const first = pending.find(Boolean);
  const alongside = first?.alongside;
  if (!alongside || pending.some((c) => c && c.alongside !== alongside)) return null;
  const mine = pending.filter((c): c is Carried => c !== undefined);
  return {
    sql: (param, guard, createdId = 'NULL') =>
      alongside(
        mine.map((c) => c.row),
        { param, createdId, guard },
      ),
    async writing(statement, wrote) {
      for (const c of mine) c.state = 'taken';
      let result;
      try {
        result = await statement();
      } catch (err) {
        for (const c of mine) c.state = 'pending';
        throw err;
      }
      const written = wrote(result);
      pending.forEach((c, i) => {
        if (c) c.state = written(i) ? 'written' : 'pending';
      });
      return result;
    },
  };
}

/** Structural, so a caller's own `Tx` (a test's, an adapter's) joins like the kernel's. */
function isTx(value: unknown): value is Tx {
  return typeof (value as Partial<Tx> | null)?.afterCommit === 'function' && (value as Partial<Tx>).manager !== undefined;
}
