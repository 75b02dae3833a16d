import assert from 'node:assert/strict';
import { Client } from 'pg';
import { createTestDatabase, type TestDatabase } from '../../test/support/database';
import type { Queryable } from './rows';
import { Tally } from './tally';

/**
 * A tally against PostgreSQL: after every kind of write, before and after a fold, with several
 * connections writing at once, its counts equal count(*) for every filter it covers.
 */

let db: TestDatabase;
let sql: Client;
const tally = new Tally('scratch.runs', ['owner', 'kind', 'status']);
const OWNERS = ['ann', 'bob', 'cy'];
const KINDS = ['build', 'test'];
const STATUSES = ['queued', 'running', 'done', 'failed'];

/** A connection as the stores see one (TypeORM's query answers rows). */
const rowsOf = (c: Client): Queryable => ({ query: async (text: string, params?: unknown[]) => (await c.query(text, params)).rows });

const connect = async () => {
  const c = new Client({ connectionString: db.url });
  await c.connect();
  return c;
};

/** Every filter the tally covers (each key column given or not), its count and count(*). */
async function assertExact(q: Client = sql): Promise<void> {
  for (const owner of [undefined, ...OWNERS])
    for (const kind of [undefined, ...KINDS])
      for (const status of [undefined, ...STATUSES]) {
        const filter = { owner, kind, status };
        const params: unknown[] = [];
        const where = Object.entries(filter)
          .filter(([, v]) => v !== undefined)
          .map(([c, v]) => `${c} = $${params.push(v)}`);
        const real = Number((await q.query(`SELECT count(*) AS n FROM scratch.runs ${where.length ? `WHERE ${where.join(' AND ')}` : ''}`, params)).rows[0].n);
        assert.equal(await tally.count(rowsOf(q), filter), real, JSON.stringify({ owner, kind, status, real }));
      }
}

const deltas = async () => Number((await sql.query(`SELECT count(*) AS n FROM ${tally.deltas}`)).rows[0].n);

beforeAll(async () => {
  db = await createTestDatabase();
  sql = await connect();
  await sql.query(`CREATE SCHEMA scratch`);
  await sql.query(
    `CREATE TABLE scratch.runs (id serial PRIMARY KEY, owner text NOT NULL, kind text NOT NULL, status text NOT NULL, progress int NOT NULL DEFAULT 0)`,
  );
  // Rows before the tally exists: an upgraded database.
  await sql.query(
    `INSERT INTO scratch.runs (owner, kind, status) SELECT ($1::text[])[1 + i % 3], ($2::text[])[1 + i % 2], ($3::text[])[1 + i % 4] FROM generate_series(1, 500) i`,
    [OWNERS, KINDS, STATUSES],
  );
  await tally.create(rowsOf(sql));
});

afterAll(async () => {
  await sql?.end();
  await db?.drop();
});

describe('Tally', () => {
  test('the rows already there when it is created are counted', async () => {
    assert.equal(await deltas(), 0);
    await assertExact();
  });

  test('inserts, one row and many in one statement, count before and after a fold; a bulk insert is one delta per key', async () => {
    await sql.query(`INSERT INTO scratch.runs (owner, kind, status) VALUES ('ann', 'build', 'queued')`);
    const before = await deltas();
    await sql.query(`INSERT INTO scratch.runs (owner, kind, status) SELECT 'bob', 'test', 'queued' FROM generate_series(1, 1000)`);
    assert.equal(await deltas(), before + 1);
    await assertExact();
    assert.ok((await tally.fold(rowsOf(sql))) > 0);
    assert.equal(await deltas(), 0);
    await tally.tidy(rowsOf(sql));
    await assertExact();
  });

  test('status changes move a row between keys (queued → running → done, cancel); other updates write nothing', async () => {
    await sql.query(`UPDATE scratch.runs SET status = 'running' WHERE owner = 'bob' AND status = 'queued' AND id % 2 = 0`);
    await assertExact();
    await sql.query(`UPDATE scratch.runs SET status = 'done' WHERE owner = 'bob' AND status = 'running' AND id % 3 = 0`);
    await sql.query(`UPDATE scratch.runs SET status = 'failed' WHERE owner = 'bob' AND status IN ('queued','running') AND id % 5 = 0`);
    await assertExact();
    await tally.fold(rowsOf(sql));
    const before = await deltas();
    await sql.query(`UPDATE scratch.runs SET progress = progress + 10`);
    await sql.query(`UPDATE scratch.runs SET status = status WHERE owner = 'ann'`);
    assert.equal(await deltas(), before, 'an update that changes no key column writes no delta');
    await sql.query(`UPDATE scratch.runs SET owner = 'cy', kind = 'build' WHERE id % 7 = 0`);
    await assertExact();
  });

  test('an update of many rows is one delta per key it changes, whatever the number of rows', async () => {
    await tally.fold(rowsOf(sql));
    const moved = await sql.query(`UPDATE scratch.runs SET status = 'failed' WHERE status IN ('queued','running') AND owner IN ('ann','bob')`);
    assert.ok(moved.rowCount! > 100);
    const written = await sql.query(`SELECT owner, kind, status, n FROM ${tally.deltas} ORDER BY owner, kind, status`);
    const keys = new Set(written.rows.map((r) => `${r.owner}/${r.kind}/${r.status}`));
    assert.equal(keys.size, written.rows.length, `one delta per key: ${JSON.stringify(written.rows)}`);
    assert.ok(written.rows.length <= 2 * OWNERS.length * KINDS.length * STATUSES.length);
    assert.equal(
      written.rows.reduce((sum, r) => sum + Number(r.n), 0),
      0,
      'rows only moved between keys',
    );
    await assertExact();
  });

  test('its triggers can be made again over a live table (a migration replacing them): still one set, still exact', async () => {
    await tally.createTriggers(rowsOf(sql));
    const triggers = await sql.query(`SELECT count(*)::int AS n FROM pg_trigger WHERE tgrelid = 'scratch.runs'::regclass AND NOT tgisinternal`);
    assert.equal(triggers.rows[0].n, 4);
    await sql.query(`UPDATE scratch.runs SET status = 'done' WHERE status = 'failed' AND id % 2 = 0`);
    await assertExact();
  });

  test('deletes and prunes, one row and many', async () => {
    await sql.query(`DELETE FROM scratch.runs WHERE id = (SELECT min(id) FROM scratch.runs)`);
    await sql.query(`DELETE FROM scratch.runs WHERE status = 'done' AND id % 2 = 0`);
    await assertExact();
    await tally.fold(rowsOf(sql));
    await assertExact();
  });

  test('a rolled-back write counts nothing; a transaction sees its own writes', async () => {
    await sql.query('BEGIN');
    await sql.query(`INSERT INTO scratch.runs (owner, kind, status) SELECT 'cy', 'test', 'failed' FROM generate_series(1, 30)`);
    await sql.query(`DELETE FROM scratch.runs WHERE owner = 'ann' AND status = 'queued'`);
    await assertExact();
    await sql.query('ROLLBACK');
    await assertExact();
  });

  test('rows written with the session in replica mode (history loads) are counted', async () => {
    await sql.query(`SET session_replication_role = replica`);
    await sql.query(`INSERT INTO scratch.runs (owner, kind, status) SELECT 'ann', 'test', 'done' FROM generate_series(1, 40)`);
    await sql.query(`SET session_replication_role = DEFAULT`);
    await assertExact();
  });

  test('several connections writing while folds run: exact at every snapshot and at the end', async () => {
    const writers = await Promise.all([1, 2, 3, 4].map(() => connect()));
    const folders = await Promise.all([1, 2].map(() => connect()));
    try {
      let writing = true;
      const folds = folders.map(async (c) => {
        while (writing) await tally.fold(rowsOf(c));
      });
      const checks = (async () => {
        const c = await connect();
        try {
          // Each check runs in one snapshot, so writes committing meanwhile cannot split it.
          while (writing) {
            await c.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
            try {
              await assertExact(c);
            } finally {
              await c.query('COMMIT');
            }
          }
        } finally {
          await c.end();
        }
      })();
      const writes = Promise.all(
        writers.map(async (c, w) => {
          for (let i = 0; i < 40; i++) {
            const owner = OWNERS[(w + i) % 3]!;
            await c.query(`INSERT INTO scratch.runs (owner, kind, status) SELECT $1, 'build', 'queued' FROM generate_series(1, 3)`, [owner]);
            await c.query(
              `UPDATE scratch.runs SET status = 'running' WHERE id IN (SELECT id FROM scratch.runs WHERE status = 'queued' AND owner = $1 LIMIT 2)`,
              [owner],
            );
            await c.query(`UPDATE scratch.runs SET status = 'done' WHERE id IN (SELECT id FROM scratch.runs WHERE status = 'running' AND owner = $1 LIMIT 1)`, [
              owner,
            ]);
            if (i % 10 === 0) await c.query(`DELETE FROM scratch.runs WHERE id IN (SELECT id FROM scratch.runs WHERE status = 'done' LIMIT 5)`);
          }
        }),
      ).finally(() => (writing = false));
      await Promise.all([writes, ...folds, checks]);
    } finally {
      await Promise.all([...writers, ...folders].map((c) => c.end()));
    }
    await assertExact();
    await tally.fold(rowsOf(sql));
    assert.equal(await deltas(), 0);
    await assertExact();
  });

  test('TRUNCATE empties the counts', async () => {
    await sql.query(`TRUNCATE scratch.runs`);
    await assertExact();
    await sql.query(`INSERT INTO scratch.runs (owner, kind, status) VALUES ('ann', 'build', 'queued')`);
    await tally.fold(rowsOf(sql));
    await assertExact();
  });

  test('covers only filters on its key columns; not given values do not count as filters', () => {
    assert.equal(tally.covers({ owner: 'ann', kind: undefined, status: null }), true);
    assert.equal(tally.covers({ owner: 'ann', started: '' }), true);
    assert.equal(tally.covers({ owner: 'ann', started: new Date() }), false);
  });

  test('drop removes its tables and triggers; writes go on', async () => {
    await tally.drop(rowsOf(sql));
    await sql.query(`INSERT INTO scratch.runs (owner, kind, status) VALUES ('ann', 'build', 'queued')`);
    const left = await sql.query(`SELECT count(*)::int AS n FROM pg_trigger WHERE tgrelid = 'scratch.runs'::regclass AND NOT tgisinternal`);
    assert.equal(left.rows[0].n, 0);
  });
});
