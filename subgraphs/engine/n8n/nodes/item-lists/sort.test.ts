import assert from 'node:assert/strict';
import { disposeHarness, outputFailure as failure, runOutput as run, type Json } from '../../../../../test/support/n8n-harness';

afterAll(disposeHarness);

const by = (...sortField: Json[]) => ({ sortFieldsUi: { sortField } });
const names = (items: Json[]) => items.map((i) => i.name);

/** Customers of n8n's own Item Lists 3 test (one without a country). */
const customers = [
  { name: 'Jay', country: 'US', created: '1925-04-10' },
  { name: 'José', country: 'CO', created: '1967-05-05' },
  { name: 'Max', country: 'US', created: '1963-04-09' },
  { name: 'Zaphod', country: null, created: '1979-10-12' },
  { name: 'Edmund', country: 'UK', created: '1950-10-16' },
];

describe('n8n Sort 1: simple', () => {
  test('ascending by default, text without regard to case, equal items in their order', async () => {
    const out = await run('sort', 1, by({ fieldName: 'name' }), [{ name: 'bob' }, { name: 'Alice' }, { name: 'alice', n: 2 }, { name: 'Carl' }]);
    assert.deepEqual(out, [{ name: 'Alice' }, { name: 'alice', n: 2 }, { name: 'bob' }, { name: 'Carl' }]);
  });

  test('several fields, each in its own direction; numbers as numbers', async () => {
    const items = [
      { name: 'a', n: 2 },
      { name: 'b', n: 10 },
      { name: 'c', n: 2 },
    ];
    const out = await run('sort', 1, by({ fieldName: 'n', order: 'descending' }, { fieldName: 'name' }), items);
    assert.deepEqual(names(out), ['b', 'a', 'c']);
  });

  test('mixed values compare as n8n compares them: a null country sorts as n8n sorts it (n8n test case)', async () => {
    assert.deepEqual(names(await run('sort', 1, by({ fieldName: 'country' }), customers)), ['José', 'Edmund', 'Jay', 'Max', 'Zaphod']);
  });

  test('a nested field by dot notation; with it disabled, a key with dots', async () => {
    const nested = [
      { name: 'x', p: { n: 2 } },
      { name: 'y', p: { n: 1 } },
    ];
    assert.deepEqual(names(await run('sort', 1, by({ fieldName: 'p.n' }), nested)), ['y', 'x']);
    const dotted = [
      { name: 'x', 'p.n': 1, p: { n: 2 } },
      { name: 'y', 'p.n': 2, p: { n: 1 } },
    ];
    assert.deepEqual(names(await run('sort', 1, { ...by({ fieldName: 'p.n' }), options: { disableDotNotation: true } }, dotted)), ['x', 'y']);
  });

  test('a field no item has, or no field at all, fails', async () => {
    assert.match((await failure('sort', 1, by({ fieldName: 'nope' }), customers)).message, /Couldn't find the field 'nope' in the input data$/);
    assert.match((await failure('sort', 1, {}, customers)).message, /No sorting specified. Please add a field to sort by$/);
    const dotted = await failure('sort', 1, { ...by({ fieldName: 'p.n' }), options: { disableDotNotation: true } }, [{ p: { n: 1 } }]);
    assert.match(String(dotted.details.description), /turn off 'disable dot notation'/);
  });
});

describe('n8n Sort 1: random and code', () => {
  test('random keeps every item, in some order', async () => {
    const items = Array.from({ length: 30 }, (_, n) => ({ n }));
    const out = await run('sort', 1, { type: 'random' }, items);
    assert.equal(out.length, 30);
    assert.deepEqual(
      [...out].sort((a, b) => (a.n as number) - (b.n as number)),
      items,
    );
  });

  test('code compares two items a and b, in the code sandbox', async () => {
    const out = await run('sort', 1, { type: 'code', code: 'return b.json.n - a.json.n;' }, [{ n: 1 }, { n: 3 }, { n: 2 }]);
    assert.deepEqual(out, [{ n: 3 }, { n: 2 }, { n: 1 }]);
  });

  test("n8n's default code (it assigns an undeclared variable) sorts by myField", async () => {
    assert.deepEqual(await run('sort', 1, { type: 'code' }, [{ myField: 2 }, { myField: 1 }]), [{ myField: 1 }, { myField: 2 }]);
  });

  test('the code is not an expression and sees no host: "process" does not exist there', async () => {
    const info = await failure('sort', 1, { type: 'code', code: '=return process.exit(1)' }, [{ n: 1 }, { n: 2 }]);
    assert.match(info.message, /Sort code failed: SyntaxError/);
    const ref = await failure('sort', 1, { type: 'code', code: 'return process.exit(1)' }, [{ n: 1 }, { n: 2 }]);
    assert.match(ref.message, /Sort code failed: ReferenceError: process is not defined$/);
  });

  test('code without return fails as n8n does; a syntax error is reported', async () => {
    assert.match(
      (await failure('sort', 1, { type: 'code', code: 'a.json.n - b.json.n' }, [{ n: 1 }])).message,
      /Sort code doesn't return. Please add a 'return' statement to your code$/,
    );
    assert.match((await failure('sort', 1, { type: 'code', code: 'return (' }, [{ n: 1 }, { n: 2 }])).message, /Sort code failed: SyntaxError/);
  });
});

describe('n8n Limit 1', () => {
  const items = [{ n: 1 }, { n: 2 }, { n: 3 }];

  test('keeps the first item by default, or the first / last maxItems', async () => {
    assert.deepEqual(await run('limit', 1, {}, items), [{ n: 1 }]);
    assert.deepEqual(await run('limit', 1, { maxItems: 2 }, items), [{ n: 1 }, { n: 2 }]);
    assert.deepEqual(await run('limit', 1, { maxItems: 2, keep: 'lastItems' }, items), [{ n: 2 }, { n: 3 }]);
  });

  test('fewer items than maxItems pass as they are', async () => {
    assert.deepEqual(await run('limit', 1, { maxItems: 5, keep: 'lastItems' }, items), items);
  });
});

describe('n8n Item Lists: sort and limit in every version', () => {
  test('sort and limit run alike in 1, 2, 2.1, 2.2, 3 and 3.1', async () => {
    for (const version of [1, 2, 2.1, 2.2, 3, 3.1]) {
      const sorted = await run('itemLists', version, { operation: 'sort', ...by({ fieldName: 'country' }) }, customers);
      assert.deepEqual(names(sorted), ['José', 'Edmund', 'Jay', 'Max', 'Zaphod'], `sort ${version}`);
      const limited = await run('itemLists', version, { operation: 'limit', keep: 'lastItems' }, customers);
      assert.deepEqual(names(limited), ['Edmund'], `limit ${version}`);
      const coded = await run('itemLists', version, { operation: 'sort', type: 'code', code: 'return a.json.created < b.json.created ? -1 : 1;' }, customers);
      assert.deepEqual(names(coded), ['Jay', 'Edmund', 'Max', 'José', 'Zaphod'], `code ${version}`);
    }
  });
});
