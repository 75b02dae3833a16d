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
}

class Transaction implements Tx {
  private state: 'open' | 'committed' | 'rolledBack' = 'open';
  private readonly callbacks: (() => unknown)[] = [];
  constructor(readonly manager: EntityManager) {}

  afterCommit(fn: () => unknown): void {
    if (this.state === 'open') this.callbacks.push(fn);
    // Registered late (the transaction escaped its block): committed work is announced at once.
    else if (this.state === 'committed') void run(fn);
  }

  rolledBack(): void {
    this.state = 'rolledBack';
    this.callbacks.length = 0;
  }

  async committed(): Promise<void> {
    this.state = 'committed';
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
 * method takes `db | tx` and works alone or inside a caller's transaction alike.
 */
export async function withTransaction<T>(db: DataSource | Tx, fn: (tx: Tx) => Promise<T>, isolation?: IsolationLevel): Promise<T> {
  if (isTx(db)) return fn(db);
  let tx!: Transaction;
  const body = (manager: EntityManager) => fn((tx = new Transaction(manager)));
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

/** Structural, so a caller's own `Tx` (a test's, an adapter's) joins like the kernel's. */
function isTx(value: unknown): value is Tx {
  return typeof (value as Partial<Tx> | null)?.afterCommit === 'function' && (value as Partial<Tx>).manager !== undefined;
}
