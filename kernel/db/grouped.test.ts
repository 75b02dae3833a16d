import assert from 'node:assert/strict';
import type { DataSource } from 'typeorm';
import { createTestDatabase, type TestDatabase } from '../../test/support/database';
import { createDataSource } from './data-source';
import { grouped, inOrderOf } from './grouped';
import { rows } from './rows';

let db: TestDatabase;
let ds: DataSource;

beforeAll(async () => {
  db = await createTestDatabase();
  ds = createDataSource({ url: db.url, migrations: [], applicationName: 'grouped-test', poolSize: 4 });
  await ds.initialize();
  await ds.query(`CREATE TABLE notes (id int PRIMARY KEY, body text NOT NULL CHECK (body <> ''))`);
});

afterAll(async () => {
  await ds?.destroy();
  await db?.drop();
});

beforeEach(() => ds.query(`TRUNCATE notes`));

interface Note {
  id: number;
  body: string;
}

/** A grouped insert that records each statement's rows; `slow` holds a statement open for that long. */
function noteWriter(opts: { slowMs?: number } = {}) {
  const statements: number[][] = [];
  const write = grouped(async (notes: readonly Note[]) => {
    statements.push(notes.map((n) => n.id));
    const inserted = await rows<{ id: number; body: string }>(
      ds,
      `WITH pause AS (SELECT pg_sleep($3::float8 / 1000))
       INSERT INTO notes (id, body) SELECT n.id, n.body FROM unnest($1::int[], $2::text[]) AS n(id, body), pause RETURNING id, body`,
      [notes.map((n) => n.id), notes.map((n) => n.body), opts.slowMs ?? 0],
    );
    return inOrderOf(
      notes.map((n) => String(n.id)),
      inserted,
      (r) => String(r.id),
    );
  });
  return { write, statements };
}

const stored = async () => (await ds.query(`SELECT id, body FROM notes ORDER BY id`)) as Note[];

describe('grouped writes', () => {
  test('calls made together go in one statement, each answered with its own row', async () => {
    const { write, statements } = noteWriter();
    const answers = await Promise.all([1, 2, 3].map((id) => write({ id, body: `note ${id}` })));
    assert.deepEqual(answers, [
      { id: 1, body: 'note 1' },
      { id: 2, body: 'note 2' },
      { id: 3, body: 'note 3' },
    ]);
    assert.deepEqual(statements, [[1, 2, 3]]);
    assert.equal((await stored()).length, 3);
  });

  test('a lone caller is not held back: one call after another is one statement each', async () => {
    const { write, statements } = noteWriter();
    for (const id of [1, 2, 3]) assert.deepEqual(await write({ id, body: 'alone' }), { id, body: 'alone' });
    assert.deepEqual(statements, [[1], [2], [3]]);
  });

  test('calls made while a statement is in flight wait for it and go together in the next', async () => {
    const { write, statements } = noteWriter({ slowMs: 150 });
    const first = write({ id: 1, body: 'first' });
    await new Promise((resolve) => setTimeout(resolve, 30)); // the first statement is in flight
    const later = [2, 3, 4].map((id) => write({ id, body: 'later' }));
    // Still in flight: nothing of the later calls has been sent.
    assert.deepEqual(statements, [[1]]);
    await Promise.all([first, ...later]);
    assert.deepEqual(statements, [[1], [2, 3, 4]]);
    assert.deepEqual(
      (await stored()).map((n) => n.id),
      [1, 2, 3, 4],
    );
  });

  test('a group whose statement fails is retried call by call: only the bad row fails, the others are stored once', async () => {
    await ds.query(`INSERT INTO notes (id, body) VALUES (2, 'already there')`);
    const { write, statements } = noteWriter();
    const outcomes = await Promise.allSettled([
      write({ id: 1, body: 'fine' }),
      write({ id: 2, body: 'duplicate key' }),
      write({ id: 3, body: '' }), // refused by the CHECK constraint
      write({ id: 4, body: 'fine too' }),
    ]);
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['fulfilled', 'rejected', 'rejected', 'fulfilled'],
    );
    assert.equal((outcomes[1] as PromiseRejectedResult).reason.code, '23505');
    assert.equal((outcomes[2] as PromiseRejectedResult).reason.code, '23514');
    assert.deepEqual(statements, [[1, 2, 3, 4], [1], [2], [3], [4]]);
    assert.deepEqual(await stored(), [
      { id: 1, body: 'fine' },
      { id: 2, body: 'already there' },
      { id: 4, body: 'fine too' },
    ]);
  });

  test('a group holds at most `max` calls', async () => {
    const statements: number[] = [];
    const write = grouped(
      async (ids: readonly number[]) => {
        statements.push(ids.length);
        return ids.map((id) => id * 10);
      },
      { max: 3 },
    );
    assert.deepEqual(await Promise.all([1, 2, 3, 4, 5, 6, 7].map(write)), [10, 20, 30, 40, 50, 60, 70]);
    assert.deepEqual(statements, [3, 3, 1]);
  });
});
