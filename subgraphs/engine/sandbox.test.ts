import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { Sandbox, SandboxError } from './sandbox';

const sandbox = new Sandbox({ memoryMb: 32, timeoutMs: 500, poolSize: 2 });
after(() => sandbox.dispose());

const run = (body: string, input = '{}', opts: { timeoutMs?: number; signal?: AbortSignal } = {}) => sandbox.run({ body, input, ...opts });

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
    await rejectsWith(run('const a = []; for (;;) a.push({ x: Math.random(), s: "y".repeat(64) });', '{}', { timeoutMs: 10_000 }), 'memory', /memory limit of 32 MB/);
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

  test('each evaluation gets a fresh context: nothing leaks between runs', async () => {
    await run('globalThis.secret = 42; Array.prototype.push = null; return "set"');
    assert.equal(await run('return String(typeof globalThis.secret) + ":" + typeof [].push'), 'undefined:function');
  });

  test('more evaluations than isolates wait for a free one', async () => {
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => run(`return String(${i} * 10)`)));
    assert.deepEqual(results, ['0', '10', '20', '30', '40', '50']);
  });
});
