import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { EventBus } from './events';
import type { Queue } from './queue';
import { JOB, JOB_NAMES, TOPIC, TOPIC_NAMES } from './topics';

// Never called: the body only has to compile, each @ts-expect-error line has to fail to.
export function typeChecks(queue: Queue, bus: EventBus): void {
  void queue.enqueue(JOB.execute, { executionId: 'e' });
  // @ts-expect-error a job name not in the registry
  void queue.enqueue('engine.exceute', { executionId: 'e' });
  // @ts-expect-error a payload of another job
  void queue.enqueue(JOB.execute, { taskId: 't', notifyStart: false });
  // @ts-expect-error a payload missing a field
  void queue.enqueue(JOB.task, { taskId: 't' });
  queue.register(JOB.chain, async (job) => job.data.executionId);
  // @ts-expect-error a handler reading a field its job does not carry
  queue.register(JOB.chain, async (job) => job.data.taskId);
  // @ts-expect-error registering a name not in the registry
  queue.register('promptlib.chian', async () => undefined);

  void bus.publish(TOPIC.linksChanged, { slug: 's' });
  // @ts-expect-error a topic not in the registry
  void bus.publish('links.change', { slug: 's' });
  // @ts-expect-error a payload of another topic
  void bus.publish(TOPIC.linksChanged, { id: 'k' });
  bus.subscribe(TOPIC.executionUpdated, (p) => p.executionId);
  // @ts-expect-error a subscriber reading a field its topic does not carry
  bus.subscribe(TOPIC.executionUpdated, (p) => p.taskId);
  // @ts-expect-error subscribing to a topic not in the registry
  bus.subscribe('engine.execution.update', () => undefined);
}

const ROOT = path.resolve(__dirname, '..', '..');
const DIRS = ['kernel', 'subgraphs', 'gateway', 'rest-adapter', 'server'];

/** The platform's own sources (not tests, not benches, not this registry), as written. */
function sources(): { file: string; text: string }[] {
  const out: { file: string; text: string }[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') && entry.name !== 'topics.ts') {
        out.push({ file: path.relative(ROOT, full), text: code(readFileSync(full, 'utf8')) });
      }
    }
  };
  for (const dir of DIRS) walk(path.join(ROOT, dir));
  return out;
}

/** Without comments: prose may name a job (`the engine.execute job`); only code counts. */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|\s)\/\/\s.*$/gm, '$1');
}

const registered = new Set<string>([...JOB_NAMES, ...TOPIC_NAMES]);

test('the registry: names are distinct, and jobs and topics do not share one', () => {
  assert.equal(new Set(JOB_NAMES).size, JOB_NAMES.length);
  assert.equal(new Set(TOPIC_NAMES).size, TOPIC_NAMES.length);
  assert.equal(registered.size, JOB_NAMES.length + TOPIC_NAMES.length);
});

test('every name used at run time is registered, and only the registry spells one', () => {
  const files = sources();
  assert.ok(files.length > 50, `sources found under ${ROOT}`);
  const stray: string[] = [];
  for (const { file, text } of files) {
    // A name passed as a literal to the queue or the bus (a cast can get one past the compiler).
    for (const m of text.matchAll(/\.(publish|subscribe|enqueue|jobSpec|added|register)\(\s*(?:\w+,\s*\w+,\s*)?(['"`])([^'"`$]+)\2/g)) {
      if (!registered.has(m[3])) stray.push(`${file}: ${m[1]}('${m[3]}') is not in kernel/topics.ts`);
    }
    // A registered name spelled as a string of its own: a constant the registry should replace.
    for (const m of text.matchAll(/(['"`])([\w.-]+)\1/g)) {
      if (registered.has(m[2])) stray.push(`${file}: '${m[2]}' spelled out; use JOB/TOPIC from kernel/topics.ts`);
    }
  }
  assert.deepEqual(stray, []);
});

test('every registered name is used somewhere', () => {
  const text = sources()
    .map((s) => s.text)
    .join('\n');
  const unused = [...Object.keys(JOB).filter((k) => !text.includes(`JOB.${k}`)), ...Object.keys(TOPIC).filter((k) => !text.includes(`TOPIC.${k}`))];
  assert.deepEqual(unused, []);
});
