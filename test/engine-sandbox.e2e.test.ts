import 'reflect-metadata';
import assert from 'node:assert/strict';
import type { V1 } from './support/answers';
import { startTestPlatform, type TestPlatform } from './support/platform';

/**
 * User code cannot crash or exhaust the platform: each Code node below would abort a V8 process
 * or take memory no limit counts; each fails its own execution with a clear error, the platform
 * answers /health throughout, and the next execution runs.
 */

/** A synchronous run's execution: the fields these tests read. */
interface Execution {
  status: string;
  error: { code: string; node?: string; message: string } | null;
}

let p: TestPlatform;
beforeAll(async () => {
  p = await startTestPlatform();
});
afterAll(async () => {
  await p?.stop();
});

async function runCode(code: string) {
  const wf = await p.rest<V1<{ workflowId: string }>>('POST', '/v1/engine/workflows', {
    body: {
      name: `code ${Math.random()}`,
      nodes: [
        { name: 'Start', type: 'engine.manualTrigger' },
        { name: 'Code', type: 'engine.code', parameters: { code } },
      ],
      connections: { Start: { main: [[{ node: 'Code' }]] } },
    },
  });
  assert.equal(wf.status, 201, JSON.stringify(wf.body));
  const res = await p.rest<V1<Execution>>('POST', `/v1/engine/workflows/${wf.body.data.workflowId}/execute`, { body: { mode: 'sync' } });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.data;
}

const rssMb = () => process.memoryUsage().rss / 2 ** 20;

describe('Code nodes that would take the platform down', () => {
  const hostile: [string, string, RegExp][] = [
    ['a 2 GB fast-elements array', 'const a = new Array(2**28).fill(1.5); return [{json:{n:a.length}}]', /crashed its sandbox process|memory limit/],
    [
      'WebAssembly memory grown to 2 GB',
      'const m = new WebAssembly.Memory({ initial: 1, maximum: 32768 }); m.grow(32767); return [{json:{ok:true}}]',
      /WebAssembly is not defined/,
    ],
    ['a 2 GB typed array', 'const a = new Float64Array(2**28); a.fill(1); return [{json:{n:a.length}}]', /memory limit|crashed|Array buffer allocation failed/],
    ['a 512 MB string', "const s = 'x'.repeat(2**29); return [{json:{n:s.length}}]", /memory limit|crashed|Invalid string length/],
    ['deep recursion', 'const f = (n) => f(n + 1) + 1; return [{json:{n:f(0)}}]', /call stack/],
  ];
  for (const [name, code, message] of hostile) {
    test(`${name}: the execution fails with a clear error; /health answers; the next execution runs`, async () => {
      const before = rssMb();
      const health = fetch(`${p.url}/health`); // asked while the code runs
      const failed = await runCode(code);
      assert.equal((await health).status, 200);
      assert.equal(failed.status, 'error', JSON.stringify(failed));
      assert.equal(failed.error?.code, 'NODE_EXECUTION_FAILED');
      assert.equal(failed.error?.node, 'Code');
      assert.match(String(failed.error?.message), message);
      assert.ok(rssMb() - before < 256, `the platform's own memory stayed put (${Math.round(rssMb() - before)} MB more)`);
      const ok = await runCode('return [{ json: { fine: true } }]');
      assert.equal(ok.status, 'success', JSON.stringify(ok));
      assert.equal((await fetch(`${p.url}/health`)).status, 200);
    });
  }
});
