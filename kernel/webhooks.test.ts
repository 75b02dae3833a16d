import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { createTestDatabase, type TestDatabase } from '../test/support/database';
import { freePort } from '../test/support/net';
import { sleep, untilValue } from '../test/support/until';
import { webhookReceiver } from '../test/support/webhook-receiver';
import { createDataSource } from './db/data-source';
import { kernelMigrations } from './db/migrations';
import { withTransaction } from './db/transaction';
import { AppError } from './errors';
import { createEventBus, type EventBus } from './events';
import { createLogger } from './logger';
import type { OutboundPolicy } from './outbound';
import { Queue } from './queue';
import { sign, verifySignature, WebhookSender, type Delivery } from './webhooks';

const OPEN: OutboundPolicy = { allowHttp: true, allowPrivateNetworks: true };
const GUARDED: OutboundPolicy = { allowHttp: true, allowPrivateNetworks: false };
const logger = createLogger('silent');
const source = { service: 'control-plane', resourceType: 'task', resourceId: 'task_1' };

describe('sign / verifySignature', () => {
  const body = '{"hello":"world"}';
  it('signs as sha256=<hex HMAC-SHA256>', () => {
    assert.equal(sign('s3cret', body), `sha256=${createHmac('sha256', 's3cret').update(body).digest('hex')}`);
  });
  it('verifies with or without the prefix, and refuses anything else', () => {
    const header = sign('s3cret', body);
    assert.equal(verifySignature('s3cret', body, header), true);
    assert.equal(verifySignature('s3cret', Buffer.from(body), header.slice('sha256='.length)), true);
    assert.equal(verifySignature('s3cret', body, header.toUpperCase().replace('SHA256=', 'sha256=')), true);
    assert.equal(verifySignature('other', body, header), false);
    assert.equal(verifySignature('s3cret', body + ' ', header), false);
    assert.equal(verifySignature('s3cret', body, header.slice(0, -2)), false);
    assert.equal(verifySignature('s3cret', body, ''), false);
    assert.equal(verifySignature('', body, header), false);
  });
  it('refuses to sign with an empty secret', () => assert.throws(() => sign('', body), TypeError));
});

describe('WebhookSender', () => {
  let tdb: TestDatabase;
  let db: DataSource;
  let events: EventBus;
  // Answers 200 unless a test says otherwise; `received` is its log, emptied after each test.
  const receiver = webhookReceiver();
  const received = receiver.requests;
  let url: string;
  const encryptionKey = randomBytes(32);
  let queue: Queue | undefined;

  /** A queue and a sender whose worker runs on it; one at a time, as they share the job table. */
  async function start(opts: { policy?: OutboundPolicy; maxAttempts?: number; backoffMs?: number; timeoutMs?: number } = {}) {
    queue = new Queue({ db, events, logger, pollMs: 20 });
    const sender = new WebhookSender({ db, queue, logger, encryptionKey, policy: opts.policy ?? OPEN, ...opts });
    sender.registerWorker();
    await queue.start();
    return sender;
  }

  async function settled(sender: WebhookSender, id: string, timeoutMs = 10_000): Promise<Delivery> {
    const d = await untilValue(
      `delivery ${id} to settle`,
      () => sender.get(id),
      (d) => d === null || d.state !== 'pending',
      { timeoutMs, everyMs: 25 },
    );
    assert.ok(d, `delivery ${id} exists`);
    return d;
  }

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = createDataSource({ url: tdb.url, migrations: kernelMigrations });
    await db.initialize();
    await db.runMigrations();
    events = await createEventBus({ kind: 'memory' }, logger);
    url = `${(await receiver.start()).url}/hook`;
  });

  afterEach(async () => {
    await queue?.stop({ graceMs: 1000 });
    queue = undefined;
    received.length = 0;
    receiver.reply = () => 200;
  });

  afterAll(async () => {
    await receiver.close();
    await events.close();
    await db.destroy();
    await tdb.drop();
  });

  it('delivers a signed request the receiver can verify against the raw body', async () => {
    receiver.reply = () => 204;
    const sender = await start();
    const payload = { taskId: 'task_1', status: 'completed', note: 'naïve ✓ "quoted"' };
    const id = await sender.send({ url, secret: 'whsec_test', event: 'task.completed', payload, source });
    const d = await settled(sender, id);

    assert.equal(d.state, 'delivered');
    assert.ok(d.deliveredAt instanceof Date);
    assert.equal(d.signed, true);
    assert.deepEqual(d.source, source);
    assert.equal(d.attempts.length, 1);
    assert.equal(d.attempts[0].status, 204);
    assert.equal(d.attempts[0].error, null);

    assert.equal(received.length, 1);
    const { headers, raw } = received[0];
    assert.equal(raw, JSON.stringify(payload));
    const expected = `sha256=${createHmac('sha256', 'whsec_test').update(raw).digest('hex')}`;
    assert.equal(headers['x-svc-signature'], expected);
    assert.equal(verifySignature('whsec_test', raw, String(headers['x-svc-signature'])), true);
    assert.equal(headers['x-svc-event'], 'task.completed');
    assert.equal(headers['x-svc-delivery'], id);
    assert.equal(headers['content-type'], 'application/json');
    assert.equal(headers['user-agent'], 'automation-platform-webhooks/1');
  });

  it('sends no signature header when no secret was given', async () => {
    receiver.reply = () => ({ status: 200, body: 'ok' });
    const sender = await start();
    const id = await sender.send({ url, event: 'task.created', payload: { a: 1 }, source });
    const d = await settled(sender, id);
    assert.equal(d.state, 'delivered');
    assert.equal(d.signed, false);
    assert.equal(received[0].headers['x-svc-signature'], undefined);
  });

  it('retries after 500s with backoff, sending identical bytes, and logs every attempt', async () => {
    receiver.reply = () => (received.length <= 2 ? 500 : 200);
    const backoffMs = 100;
    const sender = await start({ maxAttempts: 6, backoffMs });
    const id = await sender.send({ url, secret: 'whsec_retry', event: 'task.failed', payload: { list: [1, 2, 3] }, source });
    const d = await settled(sender, id);

    assert.equal(d.state, 'delivered');
    assert.deepEqual(
      d.attempts.map((a) => [a.attempt, a.status, a.error]),
      [
        [1, 500, 'HTTP 500'],
        [2, 500, 'HTTP 500'],
        [3, 200, null],
      ],
    );
    assert.equal(received.length, 3);
    for (const r of received) {
      assert.deepEqual(r.raw, received[0].raw);
      assert.equal(r.headers['x-svc-signature'], received[0].headers['x-svc-signature']);
      assert.equal(r.headers['x-svc-delivery'], id);
      assert.equal(verifySignature('whsec_retry', r.raw, String(r.headers['x-svc-signature'])), true);
    }
    // Full jitter draws each delay from [0, backoff * 2^(n-1)]: attempts are ordered in time and
    // each gap stays under its growing bound (plus polling slack).
    const times = d.attempts.map((a) => a.at.getTime());
    for (let n = 1; n < times.length; n++) {
      const gap = times[n] - times[n - 1];
      assert.ok(gap >= 0, `attempt ${n + 1} after attempt ${n}`);
      assert.ok(gap <= backoffMs * 2 ** (n - 1) + 1000, `gap ${n} = ${gap} ms`);
    }
    assert.equal(d.deliveredAt?.getTime(), d.attempts[2].at.getTime());
  });

  it('fails permanently after maxAttempts', async () => {
    receiver.reply = () => ({ status: 503, body: 'busy' });
    const sender = await start({ maxAttempts: 3, backoffMs: 20 });
    const id = await sender.send({ url, secret: 'x', event: 'task.failed', payload: {}, source });
    const d = await settled(sender, id);

    assert.equal(d.state, 'failed');
    assert.equal(d.deliveredAt, null);
    assert.deepEqual(
      d.attempts.map((a) => [a.attempt, a.status, a.error]),
      [
        [1, 503, 'HTTP 503'],
        [2, 503, 'HTTP 503'],
        [3, 503, 'HTTP 503'],
      ],
    );
    // No fourth request, and the queue's job ended failed too.
    await sleep(200);
    assert.equal(received.length, 3);
    const [job] = await db.query(`SELECT state, attempt FROM platform.jobs WHERE data->>'deliveryId' = $1`, [id]);
    assert.deepEqual(job, { state: 'failed', attempt: 3 });
  });

  it('records a timed-out attempt and retries it', async () => {
    // The first request is left hanging far past the attempt's timeout.
    receiver.reply = () => (received.length > 1 ? { status: 200, body: 'ok' } : { status: 200, delayMs: 60_000 });
    const sender = await start({ maxAttempts: 3, backoffMs: 20, timeoutMs: 300 });
    const id = await sender.send({ url, event: 'task.completed', payload: {}, source });
    const d = await settled(sender, id);

    assert.equal(d.state, 'delivered');
    assert.equal(d.attempts.length, 2);
    assert.equal(d.attempts[0].status, null);
    assert.match(d.attempts[0].error!, /^timeout: /);
    assert.ok(d.attempts[0].durationMs >= 280 && d.attempts[0].durationMs < 2000, `duration ${d.attempts[0].durationMs}`);
    assert.equal(d.attempts[1].status, 200);
  });

  it('records a network error as an attempt without a status', async () => {
    const closedUrl = `http://127.0.0.1:${await freePort()}/`;

    const sender = await start({ maxAttempts: 2, backoffMs: 10 });
    const d = await settled(sender, await sender.send({ url: closedUrl, event: 'e', payload: {}, source }));
    assert.equal(d.state, 'failed');
    assert.deepEqual(
      d.attempts.map((a) => a.status),
      [null, null],
    );
    assert.match(d.attempts[0].error!, /^upstream_error: .*ECONNREFUSED/);
  });

  it('refuses private destinations at send time and, in the worker, at connect time', async () => {
    const guarded = await start({ policy: GUARDED, maxAttempts: 5, backoffMs: 10 });
    await assert.rejects(
      guarded.send({ url, event: 'e', payload: {}, source }),
      (err) => err instanceof AppError && err.code === 'WEBHOOK_INVALID' && err.details.reason === 'private_address',
    );
    await assert.rejects(
      guarded.send({ url: 'http://localhost:1/x', event: 'e', payload: {}, source }),
      (err) => err instanceof AppError && err.code === 'WEBHOOK_INVALID',
    );

    // A delivery stored under a permissive policy is still refused by a guarded worker, once.
    const permissive = new WebhookSender({ db, queue: queue!, logger, encryptionKey, policy: OPEN });
    const id = await permissive.send({ url, event: 'e', payload: {}, source });
    const d = await settled(guarded, id);
    assert.equal(d.state, 'failed');
    assert.equal(d.attempts.length, 1);
    assert.equal(d.attempts[0].status, null);
    assert.match(d.attempts[0].error!, /^WEBHOOK_INVALID: Destination address is not allowed/);
    assert.equal(received.length, 0);
  });

  it('refuses http:// unless allowed', async () => {
    const httpsOnly = new WebhookSender({
      db,
      queue: new Queue({ db, events, logger }),
      logger,
      encryptionKey,
      policy: { allowHttp: false, allowPrivateNetworks: true },
    });
    await assert.rejects(
      httpsOnly.send({ url, event: 'e', payload: {}, source }),
      (err) => err instanceof AppError && err.code === 'WEBHOOK_INVALID' && err.details.reason === 'protocol_not_allowed',
    );
  });

  it('stores the secret encrypted and never returns it', async () => {
    const sender = await start();
    const secret = `whsec_${randomBytes(12).toString('hex')}`;
    const id = await sender.send({ url, secret, event: 'task.completed', payload: { x: 1 }, source: { ...source, resourceId: 'secret-check' } });
    await settled(sender, id);

    const rows: Record<string, unknown>[] = await db.query(`SELECT * FROM platform.webhook_deliveries WHERE id = $1`, [id]);
    assert.equal(rows.length, 1);
    const enc = rows[0].secret_enc as Buffer;
    assert.ok(Buffer.isBuffer(enc) && enc.length > secret.length);
    assert.equal(enc.includes(Buffer.from(secret)), false);
    for (const [column, value] of Object.entries(rows[0])) {
      const text = Buffer.isBuffer(value) ? value.toString('latin1') : JSON.stringify(value);
      assert.equal(text?.includes(secret) ?? false, false, `column ${column} holds the secret`);
    }
    const jobs: { data: unknown }[] = await db.query(`SELECT data FROM platform.jobs`);
    assert.equal(JSON.stringify(jobs).includes(secret), false);

    const got = await sender.get(id);
    const listed = await sender.list({ resourceType: 'task', resourceId: 'secret-check' });
    assert.equal(listed.length, 1);
    for (const value of [got, listed]) {
      assert.equal(JSON.stringify(value).includes(secret), false);
      assert.equal(JSON.stringify(value).includes('secret_enc'), false);
    }
    // And the receiver did get a signature made with it.
    assert.equal(verifySignature(secret, received[0].raw, String(received[0].headers['x-svc-signature'])), true);
  });

  it('enlists in the caller transaction: a rollback leaves no delivery and no job', async () => {
    const sender = new WebhookSender({ db, queue: new Queue({ db, events, logger }), logger, encryptionKey, policy: OPEN });
    let id = '';
    await assert.rejects(
      withTransaction(db, async (tx) => {
        id = await sender.send({ url, event: 'e', payload: {}, source }, tx);
        throw new Error('rollback');
      }),
      /rollback/,
    );
    assert.ok(id);
    assert.equal(await sender.get(id), null);
    const jobs = await db.query(`SELECT 1 FROM platform.jobs WHERE data->>'deliveryId' = $1`, [id]);
    assert.equal(jobs.length, 0);
  });

  it('lists by resource, newest first, and get returns null for unknown ids', async () => {
    const sender = new WebhookSender({ db, queue: new Queue({ db, events, logger }), logger, encryptionKey, policy: OPEN });
    const s = { service: 'infra', resourceType: 'deployment', resourceId: 'dep_9' };
    const first = await sender.send({ url, event: 'deployment.started', payload: {}, source: s });
    const second = await sender.send({ url, event: 'deployment.finished', payload: {}, source: s });
    await sender.send({ url, event: 'deployment.started', payload: {}, source: { ...s, resourceId: 'dep_10' } });

    const listed = await sender.list({ resourceType: 'deployment', resourceId: 'dep_9' });
    assert.deepEqual(
      listed.map((d) => d.id),
      [second, first],
    );
    assert.ok(listed.every((d) => d.state === 'pending' && d.attempts.length === 0));
    assert.equal((await sender.list({ resourceType: 'deployment', limit: 1 })).length, 1);
    assert.equal(await sender.get('00000000-0000-0000-0000-000000000000'), null);
    assert.equal(await sender.get('not-a-uuid'), null);
    // Leave nothing for later queues to deliver.
    await db.query(`DELETE FROM platform.jobs WHERE state = 'queued'`);
  });

  it('rejects a bad encryption key', () => {
    assert.throws(() => new WebhookSender({ db, queue: new Queue({ db, events, logger }), logger, encryptionKey: randomBytes(16), policy: OPEN }), /32-byte/);
  });
});
