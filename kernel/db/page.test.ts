import assert from 'node:assert/strict';
import type { DataSource } from 'typeorm';
import { createTestDatabase, type TestDatabase } from '../../test/support/database';
import { createDataSource } from './data-source';
import { page, reverseOrder, Where, windowProblems, type PageOptions } from './page';

let db: TestDatabase;
let ds: DataSource;

beforeAll(async () => {
  db = await createTestDatabase();
  ds = createDataSource({ url: db.url, migrations: [], applicationName: 'page-test', poolSize: 2 });
  await ds.initialize();
  await ds.query(`CREATE TABLE things (id int PRIMARY KEY, kind text NOT NULL, tags text[] NOT NULL)`);
  await ds.query(`INSERT INTO things SELECT i, CASE WHEN i % 2 = 0 THEN 'even' ELSE 'odd' END, ARRAY['t' || (i % 3)] FROM generate_series(1, 25) i`);
  // Ties and NULLs in the sort column.
  await ds.query(`CREATE TABLE ranked (id int PRIMARY KEY, score int)`);
  await ds.query(`INSERT INTO ranked SELECT i, CASE WHEN i % 5 = 0 THEN NULL ELSE i % 4 END FROM generate_series(1, 23) i`);
});

afterAll(async () => {
  await ds?.destroy();
  await db?.drop();
});

describe('Where', () => {
  test('a condition for each filter given, each value a parameter after those the statement brought', () => {
    const where = new Where(['owner']).always('owner = $1').equals('kind', 'odd').equals('status', undefined).equals('type', null).equals('name', '');
    where.and('t1', (p) => `${p} = ANY(tags)`);
    assert.equal(String(where), 'WHERE owner = $1 AND kind = $2 AND $3 = ANY(tags)');
    assert.deepEqual(where.params, ['owner', 'odd', 't1']);
  });

  test('nothing without a condition; false is a value', () => {
    assert.equal(String(new Where()), '');
    assert.equal(String(new Where().equals('active', false)), 'WHERE active = $1');
  });
});

describe('page', () => {
  const list = (where: Where, window: { limit: number; offset: number }, opts?: PageOptions) =>
    page<{ id: number; kind: string }>(ds, { select: 'id, kind', from: `FROM things ${where}`, orderBy: 'id', params: where.params }, window, opts);

  for (const opts of [{}, { count: 'apart' }, { keysFirst: { key: 'id', join: 'JOIN things USING (id)' } }] as PageOptions[]) {
    const how = opts.keysFirst ? 'keys first' : (opts.count ?? 'window');
    test(`${how}: the page's rows in order, only the selected columns, and the number of all matches`, async () => {
      const odd = await list(new Where().equals('kind', 'odd'), { limit: 4, offset: 2 }, opts);
      assert.deepEqual(odd, {
        rows: [5, 7, 9, 11].map((id) => ({ id, kind: 'odd' })),
        total: 13,
      });
    });

    test(`${how}: a page past the end is empty and still says how many there are; no match, 0`, async () => {
      assert.deepEqual(await list(new Where(), { limit: 10, offset: 30 }, opts), { rows: [], total: 25 });
      assert.deepEqual(await list(new Where().equals('kind', 'none'), { limit: 10, offset: 0 }, opts), { rows: [], total: 0 });
    });
  }
});

describe('page with a total counted elsewhere (a tally)', () => {
  const ORDERS = ['score DESC NULLS LAST, id DESC', 'score ASC NULLS FIRST, id ASC', 'score, id DESC', 'score DESC, id'];
  const counted = async () => Number((await ds.query(`SELECT count(*) AS n FROM ranked`))[0].n);

  test('every window, deep ones read from the end in the reversed order, holds the same rows as a forward read; past the end, empty', async () => {
    for (const orderBy of ORDERS) {
      const all = (await ds.query(`SELECT id, score FROM ranked ORDER BY ${orderBy}`)) as { id: number; score: number | null }[];
      for (const keysFirst of [undefined, { key: 'id', join: 'JOIN ranked USING (id)' }])
        for (let limit = 1; limit <= 7; limit += 3)
          for (let offset = 0; offset <= 26; offset++) {
            const got = await page<{ id: number; score: number | null }>(
              ds,
              { select: 'id, score', from: 'FROM ranked', orderBy },
              { limit, offset },
              { total: counted, keysFirst },
            );
            assert.deepEqual(got, { rows: all.slice(offset, offset + limit), total: 23 }, `${orderBy}, ${limit}, ${offset}, ${keysFirst ? 'keys first' : ''}`);
          }
    }
  });

  test('reverseOrder flips each direction and NULLS placement, commas inside calls kept', () => {
    assert.equal(reverseOrder('a DESC NULLS LAST, id DESC'), 'a ASC NULLS FIRST, id ASC');
    assert.equal(reverseOrder('e.started_at DESC, e.id DESC'), 'e.started_at ASC, e.id ASC');
    assert.equal(reverseOrder('coalesce(a, b), id asc nulls first'), 'coalesce(a, b) DESC, id DESC NULLS LAST');
  });
});

describe('windowProblems', () => {
  test('limit from 1 to the maximum, offset 0 or more, whole numbers; each problem named', () => {
    assert.deepEqual(windowProblems({ limit: 100, offset: 0 }), []);
    assert.deepEqual(windowProblems({ limit: 0, offset: -1 }), [
      { field: 'limit', message: 'must be an integer from 1 to 100' },
      { field: 'offset', message: 'must be an integer of at least 0' },
    ]);
    assert.deepEqual(windowProblems({ limit: 1.5, offset: 0 }, 500), [{ field: 'limit', message: 'must be an integer from 1 to 500' }]);
  });
});
