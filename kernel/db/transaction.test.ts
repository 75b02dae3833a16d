import assert from 'node:assert/strict';
import type { DataSource, EntityManager } from 'typeorm';
import { carrying, withTransaction, type Carried } from './transaction';

/** A DataSource whose transaction commits unless its body throws (the real one is exercised in queue.test.ts). */
function fakeDb(log: string[]): DataSource {
  const manager = {} as EntityManager;
  return {
    manager,
    async transaction(...args: unknown[]) {
      const body = args[args.length - 1] as (m: EntityManager) => Promise<unknown>;
      log.push('BEGIN');
      try {
        const result = await body(manager);
        log.push('COMMIT');
        return result;
      } catch (err) {
        log.push('ROLLBACK');
        throw err;
      }
    },
  } as unknown as DataSource;
}

describe('withTransaction', () => {
  test('afterCommit callbacks run once, after COMMIT, in order; a failing one does not stop the rest', async () => {
    const log: string[] = [];
    const result = await withTransaction(fakeDb(log), async (tx) => {
      tx.afterCommit(() => log.push('first'));
      tx.afterCommit(() => {
        throw new Error('a callback failed');
      });
      tx.afterCommit(async () => void log.push('third'));
      log.push('body');
      return 42;
    });
    assert.equal(result, 42);
    assert.deepEqual(log, ['BEGIN', 'body', 'COMMIT', 'first', 'third']);
  });

  test('never after a rollback', async () => {
    const log: string[] = [];
    let escaped: { afterCommit(fn: () => unknown): void } | undefined;
    await assert.rejects(
      withTransaction(fakeDb(log), async (tx) => {
        escaped = tx;
        tx.afterCommit(() => log.push('callback'));
        throw new Error('rolled back');
      }),
      /rolled back/,
    );
    escaped!.afterCommit(() => log.push('late callback'));
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(log, ['BEGIN', 'ROLLBACK']);
  });

  test('given a Tx, the work joins it: its callbacks wait for the outer COMMIT', async () => {
    const log: string[] = [];
    await withTransaction(fakeDb(log), async (outer) => {
      await withTransaction(outer, async (inner) => {
        assert.equal(inner, outer);
        inner.afterCommit(() => log.push('inner'));
      });
      log.push('outer body');
    });
    assert.deepEqual(log, ['BEGIN', 'outer body', 'COMMIT', 'inner']);
  });

  test('the row a change carries is written once, just before the COMMIT of its first transaction; a rollback frees it for the next', async () => {
    const log: string[] = [];
    const carried: Carried<string> = { row: 'entry', state: 'pending', write: async (_m, rows) => void log.push(`write ${rows.join()}`) };
    await carrying(carried, async () => {
      await assert.rejects(
        withTransaction(fakeDb(log), async () => {
          log.push('failing body');
          throw new Error('rolled back');
        }),
      );
      assert.equal(carried.state, 'pending');
      await withTransaction(fakeDb(log), async (outer) => {
        await withTransaction(outer, async () => void log.push('joined body'));
        log.push('body');
      });
      assert.equal(carried.state, 'written');
      await withTransaction(fakeDb(log), async () => void log.push('later body'));
    });
    assert.deepEqual(log, ['BEGIN', 'failing body', 'ROLLBACK', 'BEGIN', 'joined body', 'body', 'write entry', 'COMMIT', 'BEGIN', 'later body', 'COMMIT']);
  });

  test('a failing write of the carried row rolls the transaction back', async () => {
    const log: string[] = [];
    const carried: Carried<string> = {
      row: 'entry',
      state: 'pending',
      write: async () => {
        throw new Error('entry refused');
      },
    };
    await assert.rejects(
      carrying(carried, () => withTransaction(fakeDb(log), async () => void log.push('body'))),
      /entry refused/,
    );
    assert.deepEqual(log, ['BEGIN', 'body', 'ROLLBACK']);
    assert.equal(carried.state, 'pending');
  });
});
