import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

// In a process of its own (a young generation grown by a burst, then nothing to do), as a platform after its start.
const CHILD = `
const v8 = require('node:v8');
const { trimWhenIdle } = require(${JSON.stringify(path.join(__dirname, 'memory.js'))});
const young = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').physical_space_size;
let keep = [];
for (let i = 0; i < 3e6; i++) { keep.push({ i, s: 'x' + i }); if (keep.length > 200000) keep = []; }
keep = null;
const before = { young: young(), rss: process.memoryUsage().rss };
trimWhenIdle({ everyMs: 500, quietMs: 500 });
// A round ends 5 s after it starts; V8 may decline to shrink in one, and a busy machine delays it:
// up to 30 s for the young generation to be given back, reported as soon as it is.
const started = Date.now();
const look = setInterval(() => {
  if (young() >= 8 * 1048576 && Date.now() - started < 30000) return;
  clearInterval(look);
  process.stdout.write(JSON.stringify({ before, after: { young: young(), rss: process.memoryUsage().rss } }));
  process.exit(0);
}, 250);
`;

test('a process gone quiet gives back the young generation a burst grew', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, ['--max-semi-space-size=64', '-e', CHILD]);
  const { before, after } = JSON.parse(stdout) as Record<'before' | 'after', { young: number; rss: number }>;
  const mb = (n: number) => Math.round(n / 1048576);
  assert.ok(before.young > 64 * 1048576, `the burst grew the young generation (${mb(before.young)} MB)`);
  assert.ok(after.young < 8 * 1048576, `young generation ${mb(before.young)} MB -> ${mb(after.young)} MB`);
  assert.ok(after.rss < before.rss - 48 * 1048576, `resident ${mb(before.rss)} MB -> ${mb(after.rss)} MB`);
});
