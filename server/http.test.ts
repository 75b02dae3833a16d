import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { RequestStats } from '../kernel/request-stats';
import { HttpFront } from './http';

test('the front counts every response once, by status class, with the time since its request arrived', async () => {
  const front = new HttpFront();
  const port = await front.listen(0, '127.0.0.1');
  const stats = new RequestStats();
  front.countInto(stats);
  const app = Fastify({ serverFactory: () => front.server });
  app.get('/ok', async () => ({ ok: true }));
  app.get('/slow', async () => {
    await new Promise((r) => setTimeout(r, 50));
    return 'late';
  });
  app.get('/moved', async (_req, reply) => reply.code(302).header('location', '/ok').send());
  app.get('/broken', async () => {
    throw new Error('broken');
  });
  // A response written by hand: its head implied by its first write, with a status message.
  app.get('/raw', (_req, reply) => {
    reply.hijack();
    reply.raw.writeHead(202, 'Taken', { 'content-type': 'text/plain' });
    reply.raw.end('raw');
  });
  try {
    await front.attach(app);
    const statuses = [];
    for (const path of ['/ok', '/slow', '/moved', '/nowhere', '/broken', '/raw']) {
      const res = await fetch(`http://127.0.0.1:${port}${path}`, { redirect: 'manual' });
      await res.text();
      statuses.push(res.status);
    }
    assert.deepEqual(statuses, [200, 200, 302, 404, 500, 202]);
    assert.deepEqual(
      { total: stats.total, successful: stats.successful, clientErrors: stats.clientErrors, serverErrors: stats.serverErrors },
      {
        total: 6,
        successful: 4,
        clientErrors: 1,
        serverErrors: 1,
      },
    );
    assert.ok(stats.latency(1)! >= 49, `the slow one took ${stats.latency(1)} ms`);
    assert.ok(stats.latency(0)! >= 0);
  } finally {
    await app.close();
    await front.close();
  }
});
