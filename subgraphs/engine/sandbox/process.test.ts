import assert from 'node:assert/strict';
import { SandboxError } from './isolate';
import { ProcessSandbox } from './process';

/** The process pool: what would abort a V8 process costs one evaluation; the pool goes on. */

const pool = new ProcessSandbox({ memoryMb: 64, timeoutMs: 10_000, processes: 2 });
afterAll(() => pool.dispose());

const run = (code: string, timeoutMs?: number) => pool.run({ body: code, input: '{}', timeoutMs });

async function failsWith(p: Promise<unknown>, reasons: SandboxError['reason'][]): Promise<SandboxError> {
  let caught: unknown;
  await p.catch((err) => (caught = err));
  assert.ok(caught instanceof SandboxError, `a SandboxError, got ${String(caught)}`);
  assert.ok(reasons.includes(caught.reason), `${caught.reason}: ${caught.message}`);
  return caught;
}

describe('ProcessSandbox', () => {
  test('runs code and answers JSON text; processes are reused (warm)', async () => {
    assert.equal(await run('return JSON.stringify(1 + 1)'), '2');
    for (let i = 0; i < 6; i++) assert.equal(await run(`return "${i}"`), String(i));
    assert.equal(await run('return typeof process + typeof require + typeof fetch'), 'undefinedundefinedundefined');
  });

  test('bodies sent once and named afterwards: each run gets its own body, its own input and a fresh context, also in a process that replaced one', async () => {
    const echo = 'const v = JSON.parse($0); globalThis.seen = (globalThis.seen ?? 0) + 1; return JSON.stringify(["echo", v.n, globalThis.seen]);';
    const twice = 'return JSON.stringify(["twice", JSON.parse($0).n * 2, typeof globalThis.seen]);';
    const runs = Array.from({ length: 12 }, (_, n) => pool.run({ body: n % 3 ? echo : twice, input: JSON.stringify({ n }) }));
    const answers = (await Promise.all(runs)).map((a) => JSON.parse(a) as unknown[]);
    answers.forEach((a, n) => assert.deepEqual(a, n % 3 ? ['echo', n, 1] : ['twice', n * 2, 'undefined']));
    // A process that ends (here killed by an abort) takes its bodies with it: its replacement is sent them again.
    const one = new ProcessSandbox({ memoryMb: 64, timeoutMs: 10_000, processes: 1 });
    try {
      assert.deepEqual(JSON.parse(await one.run({ body: echo, input: '{"n":1}' })), ['echo', 1, 1]);
      const controller = new AbortController();
      const endless = one.run({ body: 'for (;;);', input: '{}', signal: controller.signal });
      setTimeout(() => controller.abort(), 200);
      await failsWith(endless, ['aborted']);
      assert.deepEqual(JSON.parse(await one.run({ body: echo, input: '{"n":2}' })), ['echo', 2, 1]);
    } finally {
      one.dispose();
    }
  });

  test('a fast-elements array of 2 GB, typed arrays, a huge string, deep recursion: each fails alone, the next run works', async () => {
    const cases: [string, string][] = [
      ['array', 'const a = new Array(2**28).fill(1.5); return String(a.length)'],
      ['typed', 'const a = new Float64Array(2**28); a.fill(1); return String(a.length)'],
      ['string', "const s = 'x'.repeat(2**29); return String(s.length)"],
      ['recursion', 'const f = (n) => f(n + 1) + 1; return String(f(0))'],
    ];
    for (const [name, code] of cases) {
      const err = await failsWith(run(code), ['memory', 'crashed', 'script']);
      if (name === 'recursion') assert.match(err.message, /call stack/i);
      assert.equal(await run('return "alive"'), 'alive', `after ${name}`);
    }
  });

  test('WebAssembly is not available to user code (its memory is outside every limit)', async () => {
    const err = await failsWith(run('const m = new WebAssembly.Memory({ initial: 1, maximum: 32768 }); m.grow(32767); return "grew"'), ['script']);
    assert.match(err.message, /WebAssembly is not defined/);
  });

  test('an infinite loop times out; an abort stops the evaluation at once', async () => {
    await failsWith(run('while (true) {}', 300), ['timeout']);
    const controller = new AbortController();
    const pending = pool.run({ body: 'while (true) {}', input: '{}', timeoutMs: 10_000, signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    const started = Date.now();
    await failsWith(pending, ['aborted']);
    assert.ok(Date.now() - started < 2_000);
    assert.equal(await run('return "alive"'), 'alive');
  });

  test('evaluations beyond the pool size wait for a process, and all complete', async () => {
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => run(`return String(${i} * 2)`)));
    assert.deepEqual(results, ['0', '2', '4', '6', '8', '10', '12', '14']);
  });

  test("the processes' contexts have n8n's prelude too (luxon, the extensions), unless a run needs none", async () => {
    const out = await run(
      `const X = globalThis[Symbol.for('n8n.expressions')];
       return JSON.stringify([DateTime.fromMillis(0, { zone: 'Europe/Berlin' }).toISO(), X.extend('the quick fox', 'toTitleCase')(), X.extend([1, 2, 3], 'sum')()])`,
    );
    assert.deepEqual(JSON.parse(out), ['1970-01-01T01:00:00.000+01:00', 'The Quick Fox', 6]);
    assert.equal(await pool.run({ body: 'return String(2 * 21)', input: '{}', prelude: 'bare' }), '42');
  });
});
