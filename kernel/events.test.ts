import assert from 'node:assert/strict';
import { Client } from 'pg';
import { createEventBus, type EventBus } from './events';
import { createLogger } from './logger';
import type { AnyNames } from './topics';
import { createTestDatabase, type TestDatabase } from '../test/support/database';

let db: TestDatabase;
let notifier: Client;
beforeAll(async () => {
  db = await createTestDatabase();
  notifier = new Client({ connectionString: db.url });
  await notifier.connect();
});
afterAll(async () => {
  await notifier.end();
  await db.drop();
});

const logger = createLogger('silent');
// The transports themselves, with topics of the tests' own (the registry is the callers' contract).
const next = (bus: EventBus<AnyNames>, topic: string) => new Promise<unknown>((resolve) => bus.subscribe(topic, resolve));

test('in-process: subscribers of a topic get its events; unsubscribe stops them', async () => {
  const bus = await createEventBus<AnyNames>({ kind: 'memory' }, logger);
  const got: unknown[] = [];
  const off = bus.subscribe('t', (p) => got.push(p));
  bus.subscribe('other', () => assert.fail('wrong topic'));
  await bus.publish('t', { n: 1 });
  off();
  await bus.publish('t', { n: 2 });
  assert.deepEqual(got, [{ n: 1 }]);
  await bus.close();
});

test('across processes through PostgreSQL LISTEN/NOTIFY, once per subscriber', async () => {
  const transport = {
    kind: 'postgres' as const,
    url: db.url,
    notify: (channel: string, payload: string) => notifier.query('SELECT pg_notify($1, $2)', [channel, payload]),
  };
  const a = await createEventBus<AnyNames>(transport, logger);
  const b = await createEventBus<AnyNames>(transport, logger);
  const seenByA: unknown[] = [];
  a.subscribe('task.updated', (p) => seenByA.push(p));
  const atB = next(b, 'task.updated');
  await a.publish('task.updated', { taskId: 'x', status: 'running' });
  assert.deepEqual(await atB, { taskId: 'x', status: 'running' });
  await new Promise((r) => setTimeout(r, 100));
  assert.deepEqual(seenByA, [{ taskId: 'x', status: 'running' }], 'the publisher’s own subscribers get it exactly once');
  await a.close();
  await b.close();
});

test('across processes through Redis when REDIS_URL is given', async (t) => {
  const url = process.env.TEST_REDIS_URL;
  if (!url) return t.skip('TEST_REDIS_URL is not set (.ci/run sets it)');
  const a = await createEventBus<AnyNames>({ kind: 'redis', url }, logger);
  const b = await createEventBus<AnyNames>({ kind: 'redis', url }, logger);
  const atB = next(b, 'execution.updated');
  await a.publish('execution.updated', { executionId: 'e1' });
  assert.deepEqual(await atB, { executionId: 'e1' });
  await a.close();
  await b.close();
});
