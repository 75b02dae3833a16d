import assert from 'node:assert/strict';
import ivm from 'isolated-vm';
import { PRELUDE_KEY } from './prelude/prelude';
import { Sandbox, SandboxError, type Prelude } from './isolate';

// A run's limit covers making its context (the first in an isolate compiles the prelude): generous, so a busy machine does not fail a test about something else.
const sandbox = new Sandbox({ memoryMb: 32, timeoutMs: 5_000, poolSize: 2 });
afterAll(() => sandbox.dispose());

const run = (body: string, input = '{}', opts: { timeoutMs?: number; signal?: AbortSignal; prelude?: Prelude; warmup?: string } = {}) =>
  sandbox.run({ body, input, ...opts });

async function rejectsWith(p: Promise<unknown>, reason: SandboxError['reason'], message?: RegExp) {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof SandboxError, String(err));
    assert.equal(err.reason, reason, err.message);
    if (message) assert.match(err.message, message);
    return true;
  });
}

describe('sandbox (isolated-vm)', () => {
  test('runs code on JSON in and JSON out', async () => {
    const out = await run('const d = JSON.parse($0); return JSON.stringify(d.a.map((x) => x * 2));', '{"a":[1,2,3]}');
    assert.deepEqual(JSON.parse(out), [2, 4, 6]);
  });

  test('an infinite loop is stopped at the time limit, and the event loop stays free meanwhile', async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 20);
    const started = Date.now();
    await rejectsWith(run('while (true) {}', '{}', { timeoutMs: 400 }), 'timeout', /timed out after 400 ms/);
    clearInterval(timer);
    assert.ok(Date.now() - started < 2000, 'stopped promptly');
    assert.ok(ticks >= 5, `the main event loop kept running (${ticks} ticks)`);
  });

  test('a memory bomb hits the memory limit and takes only its isolate down', async () => {
    await rejectsWith(
      run('const a = []; for (;;) a.push({ x: Math.random(), s: "y".repeat(64) });', '{}', { timeoutMs: 10_000 }),
      'memory',
      /memory limit of 32 MB/,
    );
    // The pool replaced the isolate: the next run works.
    assert.equal(await run('return "still here"'), 'still here');
  });

  test('no process, require, file system, network or timers inside', async () => {
    const out = await run(
      'return JSON.stringify([typeof process, typeof require, typeof fetch, typeof setTimeout, typeof XMLHttpRequest, typeof module, typeof globalThis.process]);',
    );
    assert.deepEqual(JSON.parse(out), ['undefined', 'undefined', 'undefined', 'undefined', 'undefined', 'undefined', 'undefined']);
    await rejectsWith(run('return this.constructor.constructor("return process")().exit(1)'), 'script', /process is not defined/);
  });

  test('a promise that never settles is bounded by the time limit', async () => {
    await rejectsWith(run('return new Promise(() => {})', '{}', { timeoutMs: 300 }), 'timeout');
    assert.equal(await run('return (async () => { await null; return "async ok"; })()'), 'async ok');
  });

  test('an abort signal stops a running script at once', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const started = Date.now();
    await rejectsWith(run('while (true) {}', '{}', { timeoutMs: 10_000, signal: controller.signal }), 'aborted');
    assert.ok(Date.now() - started < 2000);
  });

  test('Atomics.waitAsync, which aborts the host process under isolated-vm 5, is not reachable', async () => {
    assert.equal(await run('return [typeof Atomics.waitAsync, typeof Atomics.add, typeof WebAssembly].join(",")'), 'undefined,function,undefined');
  });

  test('each evaluation gets a fresh context: nothing leaks between runs', async () => {
    await run('globalThis.secret = 42; Array.prototype.push = null; return "set"');
    assert.equal(await run('return String(typeof globalThis.secret) + ":" + typeof [].push'), 'undefined:function');
  });

  test('more evaluations than isolates wait for a free one', async () => {
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => run(`return String(${i} * 10)`)));
    assert.deepEqual(results, ['0', '10', '20', '30', '40', '50']);
  });

  test("every context starts with n8n's prelude unless the run needs none: luxon's classes as globals, nothing enumerable", async () => {
    const out = await run(
      `return JSON.stringify([typeof DateTime, typeof Duration, typeof Interval, Object.keys(globalThis), typeof globalThis[Symbol.for(${JSON.stringify(PRELUDE_KEY)})].extend,
        DateTime.fromISO('2024-01-15T10:00:00Z', { zone: 'Asia/Tokyo' }).toISO(), Duration.fromObject({ hours: 1 }).as('minutes'), typeof luxon])`,
    );
    assert.deepEqual(JSON.parse(out), ['function', 'function', 'function', [], 'function', '2024-01-15T19:00:00.000+09:00', 60, 'undefined']);
    assert.equal(await run('return String(1 + 1)', '{}', { prelude: 'bare' }), '2');
    const extensions = `return globalThis[Symbol.for(${JSON.stringify(PRELUDE_KEY)})].extend([1, 2], 'sum')()`;
    assert.equal(await run(`return String((() => { ${extensions} })())`, '{}', { prelude: 'extensions' }), '3');
  });

  test('luxon is built on first use at every level but bare, ahead at n8n; a context that never reads it never builds it', async () => {
    // A pool of its own: its contexts are never made at `n8n`, which builds luxon ahead.
    const lazy = new Sandbox({ memoryMb: 32, timeoutMs: 2_000, poolSize: 1 });
    const api = `globalThis[Symbol.for(${JSON.stringify(PRELUDE_KEY)})]`;
    try {
      const dates = `const own = (n) => Object.getOwnPropertyDescriptor(globalThis, n); const before = [typeof own('DateTime').get, typeof own('Interval').get];
        const iso = DateTime.fromMillis(0, { zone: 'UTC' }).toISO();
        return JSON.stringify([before, iso, ['DateTime', 'Duration', 'Interval'].map((n) => [typeof own(n).value, own(n).writable, own(n).enumerable]), Object.keys(globalThis)])`;
      for (let i = 0; i < 2; i++) {
        assert.deepEqual(JSON.parse(await lazy.run({ body: dates, input: '{}', prelude: 'dates' })), [
          ['function', 'function'],
          '1970-01-01T00:00:00.000Z',
          [
            ['function', true, false],
            ['function', true, false],
            ['function', true, false],
          ],
          [],
        ]);
      }
      // The extensions that need no dates leave luxon unbuilt; a zone set meanwhile applies as it is built.
      const extensions = `const X = ${api}; const sum = X.extend([1, 2], 'sum')(); const unbuilt = X.loaded() === undefined && typeof Object.getOwnPropertyDescriptor(globalThis, 'DateTime').get;
        const zone = X.setZone('Asia/Tokyo', 1); const stillUnbuilt = X.loaded() === undefined;
        return JSON.stringify([sum, unbuilt, zone, stillUnbuilt, X.extend('2024-01-15T10:00:00', 'toDateTime')().zoneName, DateTime.now().zoneName, typeof X.loaded()])`;
      for (let i = 0; i < 2; i++) {
        assert.deepEqual(JSON.parse(await lazy.run({ body: extensions, input: '{}', prelude: 'extensions' })), [
          3,
          'function',
          null,
          true,
          'Asia/Tokyo',
          'Asia/Tokyo',
          'object',
        ]);
      }
      // An unknown zone fails where luxon is built, and at every use after.
      const unknown = `${api}.setZone('Mars/Olympus', 1); const tries = [];
        for (let i = 0; i < 2; i++) try { DateTime.now(); tries.push('built'); } catch (err) { tries.push(err.message); }
        return JSON.stringify(tries)`;
      assert.deepEqual(JSON.parse(await lazy.run({ body: unknown, input: '{}', prelude: 'extensions' })), [
        'The workflow\'s time zone "Mars/Olympus" is not a time zone (use an IANA name such as "Europe/Berlin")',
        'The workflow\'s time zone "Mars/Olympus" is not a time zone (use an IANA name such as "Europe/Berlin")',
      ]);
    } finally {
      lazy.dispose();
    }
    const ahead = `return JSON.stringify([typeof Object.getOwnPropertyDescriptor(globalThis, 'DateTime').value, typeof ${api}.loaded()])`;
    assert.deepEqual(JSON.parse(await run(ahead, '{}', { prelude: 'n8n' })), ['function', 'object']);
  });

  test('the contexts made ahead are fresh too: what one run changes (globals, prototypes, luxon itself) is gone in the next', async () => {
    const tamper = `globalThis.secret = 42; Array.prototype.push = null; String.prototype.trim = () => 'x';
      DateTime.prototype.toISO = () => 'hacked'; DateTime.fromMillis(0).constructor.now = () => 0; return 'set'`;
    const check = `return JSON.stringify([typeof globalThis.secret, typeof [].push, ' a '.trim(), typeof DateTime === 'function' ? DateTime.fromMillis(0, { zone: 'UTC' }).toISO() : 'bare'])`;
    for (const [first, second] of [
      ['n8n', 'n8n'],
      ['bare', 'bare'],
      ['n8n', 'bare'],
      ['bare', 'n8n'],
    ] as [Prelude, Prelude][]) {
      for (let i = 0; i < 3; i++) {
        if (first === 'n8n') assert.equal(await run(tamper, '{}', { prelude: first }), 'set');
        else assert.equal(await run(tamper.replace(/DateTime[^;]*;/g, ''), '{}', { prelude: first }), 'set');
        const [secret, push, trim, iso] = JSON.parse(await run(check, '{}', { prelude: second })) as string[];
        assert.deepEqual([secret, push, trim], ['undefined', 'function', 'a'], `${first} then ${second}`);
        if (second === 'n8n') assert.equal(iso, '1970-01-01T00:00:00.000Z');
      }
    }
  });

  test("a run's warmup code runs in the context made for the next run, after the prelude", async () => {
    await run('return "x"', '{}', { warmup: 'globalThis.__warmed = typeof DateTime;' });
    const pool = new Sandbox({ memoryMb: 32, timeoutMs: 5_000, poolSize: 1 });
    try {
      await pool.run({ body: 'return "x"', input: '{}', warmup: 'globalThis.__warmed = typeof DateTime;' });
      assert.equal(await pool.run({ body: 'return String(globalThis.__warmed)', input: '{}' }), 'function');
    } finally {
      pool.dispose();
    }
  });

  test("why there is no heap snapshot: isolated-vm's snapshots corrupt one-character strings with this Node (if this fails, they may be usable now)", async () => {
    const snapshot = ivm.Isolate.createSnapshot([{ code: 'var kept = { a: 1, f: 2, m: "m" }; var long = { alpha: 1 };' }]);
    const isolate = new ivm.Isolate({ snapshot, memoryLimit: 16 });
    try {
      const context = await isolate.createContext();
      const out = await context.evalClosure('return JSON.stringify([kept.a, kept.f, kept.m, long.alpha])', [], { result: { copy: true } });
      assert.notDeepEqual(JSON.parse(out as string), [1, 2, 'm', 1]);
    } finally {
      isolate.dispose();
    }
  });
});
