import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestDatabase, type TestDatabase } from './support/database';
import { freePort } from './support/net';
import { untilValue } from './support/until';

/**
 * The README's five-minute tour, as a reader runs it: `dist/main.js` started in a scratch folder
 * (so `data/bootstrap-key` is written beside the blocks), then every ```sh block of the tour pasted
 * into bash in order. Each block must print what the README says it does.
 */

const MAIN = path.join(__dirname, '..', 'main.js');
const README = readFileSync(path.join(__dirname, '..', '..', 'README.md'), 'utf8');

let db: TestDatabase;
let cwd: string;
let child: ChildProcess;
let port: number;
let stdout = '';
let stderr = '';

beforeAll(async () => {
  db = await createTestDatabase();
  cwd = mkdtempSync(path.join(tmpdir(), 'readme-tour-'));
  port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: db.url,
    PORT: String(port),
    HOST: '127.0.0.1',
    // The embedded setup turns local sign-in on by itself; this one runs on DATABASE_URL.
    FEEDBACK_LOCAL_SIGNIN: 'true',
    LOG_LEVEL: 'info',
    LOCAL_ROLLOUT_STEP_MS: '50',
  };
  for (const name of ['BOOTSTRAP_API_KEY', 'DATA_DIR', 'LLM_BASE_URL', 'PUBLIC_URL']) delete env[name];
  child = spawn(process.execPath, [MAIN], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  await untilValue(
    'the start banner',
    async () => (child.exitCode === null ? stdout.includes('Platform ready at') : Promise.reject(new Error(`exited ${child.exitCode}: ${stderr}`))),
    (ready) => ready,
    { timeoutMs: 90_000, everyMs: 100 },
  );
}, 120_000);

afterAll(async () => {
  if (child && child.exitCode === null) {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  }
  await db?.drop();
  if (cwd) rmSync(cwd, { recursive: true, force: true });
});

test('the start says what it does, then a banner with the addresses and the key file; the JSON log is unchanged', () => {
  const base = `http://127.0.0.1:${port}`;
  assert.match(stdout, /Connecting to PostgreSQL \(DATABASE_URL\) and applying migrations/);
  assert.match(stdout, /Seeding the agents' prompts/);
  assert.ok(stdout.includes(`Platform ready at ${base}`), stdout);
  for (const [label, url] of [
    ['Dashboard', `${base}/dashboard`],
    ['API docs', `${base}/docs`],
    ['GraphQL', `${base}/graphql`],
  ]) {
    assert.match(stdout, new RegExp(`${label}\\s+${url.replace(/[.]/g, '\\.')}\\n`), stdout);
  }
  assert.match(stdout, /Admin key\s+data\/bootstrap-key \(generated now/);
  assert.ok(
    stderr.split('\n').some((line) => line.startsWith('{') && JSON.parse(line).msg === 'platform ready'),
    'the JSON log line stays',
  );
  assert.match(readFileSync(path.join(cwd, 'data', 'bootstrap-key'), 'utf8'), /^cp_live_sk_/);
});

/** The tour's blocks with the bold title before each. */
function tourBlocks(): { title: string; code: string }[] {
  const section = README.split('\n## A five-minute tour\n')[1]!.split('\n## ')[0]!;
  const blocks: { title: string; code: string }[] = [];
  let from = 0;
  for (const fence of section.matchAll(/```sh\n([\s\S]*?)```/g)) {
    const titles = [...section.slice(from, fence.index).matchAll(/\*\*([^*]+)\*\*/g)];
    blocks.push({ title: titles.at(-1)?.[1]!.replace(/[.,:]$/, '') ?? '', code: fence[1]! });
    from = fence.index + fence[0].length;
  }
  return blocks;
}

const json = (line: string | undefined) => JSON.parse(line ?? 'null');

/** What each block prints, as the README describes it; a new block needs its expectation here. */
const expectations: Record<string, (lines: string[]) => void> = {
  'Is it up?': ([health, limits]) => {
    assert.equal(json(health).status, 'ok');
    assert.equal(json(limits).success, true);
  },
  'A key of your own': ([key, limits, keys]) => {
    assert.match(key!, /^cp_live_sk_/);
    assert.equal(json(limits).success, true);
    assert.equal(json(keys).error.code, 'insufficient_permissions');
  },
  'An agent task': ([task, artifacts]) => {
    assert.equal(json(task).data.agentId, 'docs-author');
    assert.match(json(task).data.status, /^(queued|running|completed)$/);
    assert.equal(json(artifacts).success, true, artifacts);
  },
  'A prompt': ([created, tested, missing]) => {
    assert.equal(json(created).data.promptId, 'reply-to-ticket');
    assert.equal(typeof json(tested).data.output, 'string');
    assert.equal(json(missing).error.code, 'validation_error');
    assert.match(missing!, /ticket/);
  },
  'A workflow': ([run]) => {
    assert.equal(json(run).success, true, run);
    assert.match(run!, /"greeting":"Hello Ann"/);
  },
  'A short link': ([status, location]) => {
    assert.match(status!, /^HTTP\/1\.1 302/);
    assert.match(location!, /^location: https:\/\/example\.com\/pricing/i);
  },
  'A feature request': ([request]) => {
    const answer = json(request);
    assert.equal(answer.success, true, request);
    assert.equal(answer.data.title, 'Dark mode');
    assert.equal(answer.data.status, 'pending');
  },
  Infrastructure: ([service, cluster]) => {
    assert.equal(json(service).name, 'api', service);
    assert.equal(json(cluster).nodes.total, 1, cluster);
  },
  'The same through GraphQL': ([answer]) => {
    const data = json(answer).data;
    assert.ok(Array.isArray(data.tasks.tasks) && Array.isArray(data.prompts.prompts) && Array.isArray(data.workflows.workflows), answer);
  },
};

test('every block of the tour prints what the README says, in order', () => {
  const blocks = tourBlocks();
  assert.deepEqual(
    blocks.map((b) => b.title),
    Object.keys(expectations),
  );
  for (const { title, code } of blocks) {
    const run = spawnSync('bash', ['-c', code.replaceAll('localhost:4000', `127.0.0.1:${port}`)], { cwd, encoding: 'utf8', timeout: 60_000 });
    const lines = run.stdout.split('\n').filter(Boolean);
    try {
      assert.equal(run.status, 0, run.stderr);
      expectations[title]!(lines);
    } catch (err) {
      throw new Error(`block "${title}" printed:\n${run.stdout}\n${run.stderr}\n${(err as Error).message}`);
    }
  }
});
