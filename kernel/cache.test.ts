import assert from 'node:assert/strict';
import { SharedReadCache } from './cache';
import { createEventBus } from './events';
import { createLogger } from './logger';
import { TOPIC } from './topics';

test('SharedReadCache: kept until its group changes; a load overtaken by a change is not kept; absent values are not kept', async () => {
  const bus = await createEventBus({ kind: 'memory' }, createLogger('silent'));
  const cache = new SharedReadCache<string | null>(bus, TOPIC.promptChanged, { ttlMs: 60_000, maxGroups: 100 });
  let reads = 0;
  const row = { value: 'v1' as string | null };
  const load = async () => {
    reads++;
    return row.value;
  };
  assert.equal(await cache.get('p', 'latest', load), 'v1');
  assert.equal(await cache.get('p', 'latest', load), 'v1');
  assert.equal(reads, 1, 'the second read is served from the cache');

  row.value = 'v2';
  await cache.changed('p');
  assert.equal(await cache.get('p', 'latest', load), 'v2');
  assert.equal(reads, 2);

  // A change published by another process (the same bus here) drops the group too.
  row.value = 'v3';
  await bus.publish(TOPIC.promptChanged, { group: 'p' });
  assert.equal(await cache.get('p', 'latest', load), 'v3');

  // A read that started before a change and ends after it must not be kept.
  let release!: () => void;
  const slow = cache.get('q', 'latest', () => new Promise<string>((resolve) => (release = () => resolve('old'))));
  await cache.changed('q');
  release();
  assert.equal(await slow, 'old');
  assert.equal(await cache.get('q', 'latest', async () => 'new'), 'new', 'the overtaken read was not kept');

  row.value = null;
  await cache.changed('p');
  assert.equal(await cache.get('p', 'latest', load), null);
  row.value = 'v4';
  assert.equal(await cache.get('p', 'latest', load), 'v4', 'an absent value is read again');
  await bus.close();
});
