import assert from 'node:assert/strict';
import type { DataSource } from 'typeorm';
import { createTestDatabase, type TestDatabase } from '../../test/support/database';
import { createDataSource } from './data-source';
import { exec, one, prepared, rows } from './rows';
import { withTransaction } from './transaction';

let db: TestDatabase;
let ds: DataSource;

beforeAll(async () => {
  db = await createTestDatabase();
  ds = createDataSource({ url: db.url, migrations: [], applicationName: 'rows-test', poolSize: 1 });
  await ds.initialize();
  await ds.query(`CREATE TABLE notes (id int PRIMARY KEY, body text NOT NULL)`);
});

afterAll(async () => {
  await ds?.destroy();
  await db?.drop();
});

const preparedOnConnection = async (q: { query(sql: string): Promise<unknown> }) =>
  ((await q.query(`SELECT name, statement FROM pg_prepared_statements`)) as { name: string; statement: string }[]).map((r) => r.name);

describe('prepared statements', () => {
  const insert = prepared(`INSERT INTO notes (id, body) VALUES ($1, $2) RETURNING id, body`);

  test('one per text: the same text is the same statement, another text another name', () => {
    assert.equal(prepared(`INSERT INTO notes (id, body) VALUES ($1, $2) RETURNING id, body`), insert);
    assert.notEqual(prepared(`SELECT $1::int AS n`).name, insert.name);
  });

  test('run through the DataSource and inside a transaction; the connection keeps it prepared', async () => {
    assert.deepEqual(await one(ds, insert, [1, 'first']), { id: 1, body: 'first' });
    // One connection in the pool: the statement is still prepared there for the next caller.
    assert.ok((await preparedOnConnection(ds)).includes(insert.name));
    await withTransaction(ds, async (tx) => {
      assert.deepEqual(await one(tx.manager, insert, [2, 'second']), { id: 2, body: 'second' });
      assert.ok((await preparedOnConnection(tx.manager)).includes(insert.name));
    });
    assert.deepEqual(await rows(ds, prepared(`SELECT id, body FROM notes WHERE id = ANY($1::int[]) ORDER BY id`), [[1, 2]]), [
      { id: 1, body: 'first' },
      { id: 2, body: 'second' },
    ]);
  });

  test('UPDATE rows and errors come back as with plain text: RETURNING rows, the SQLSTATE on the error, a rollback undoes it', async () => {
    const update = prepared(`UPDATE notes SET body = $2 WHERE id = $1 RETURNING id, body`);
    assert.deepEqual(await rows(ds, update, [1, 'changed']), [{ id: 1, body: 'changed' }]);
    await assert.rejects(exec(ds, insert, [1, 'again']), (err: { code?: string }) => err.code === '23505');
    await assert.rejects(
      withTransaction(ds, async (tx) => {
        await exec(tx.manager, update, [2, 'rolled back']);
        throw new Error('undo');
      }),
      /undo/,
    );
    assert.deepEqual(await one(ds, `SELECT body FROM notes WHERE id = 2`), { body: 'second' });
  });
});
