import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { testClock } from '../test/support/clock';
import { createTestDatabase, type TestDatabase } from '../test/support/database';
import { readUntil, sleep, until } from '../test/support/until';
import { createDataSource } from './db/data-source';
import { kernelMigrations } from './db/migrations';
import { withTransaction } from './db/transaction';
import { createEventBus, type EventBus } from './events';
import { createLogger } from './logger';
import type { AnyNames } from './topics';
import { realClock, sqlNow } from './clock';
import { JobAbortedError, Queue, addJobFrom, claimSql, jobsCompletedSql, type JobContext, type JobHandler } from './queue';

const logger = createLogger('silent');
let database: TestDatabase;
let ds: DataSource;
let bus: EventBus;
// Each test makes up its own job names (no other test's worker claims them), hence an open registry.
const queues: Queue<AnyNames>[] = [];

/** A handler for the payload this test enqueues under its own made-up name (AnyNames types payloads as unknown). */
function payloadOf<T>(handler: (ctx: JobContext<T>) => Promise<unknown>): JobHandler<unknown> {
  return (ctx) => handler(ctx as JobContext<T>);
}

beforeAll(async () => {
  database = await createTestDatabase();
  ds = createDataSource({ url: database.url, migrations: kernelMigrations });
  await ds.initialize();
  await ds.runMigrations();
  bus = await createEventBus({ kind: 'memory' }, logger);
});

// Each test's queues stop with it, so no other queue sweeps or claims the next test's jobs.
afterEach(async () => {
  await Promise.all(queues.splice(0).map((q) => q.stop({ graceMs: 0 })));
});

afterAll(async () => {
  await bus.close();
  await ds.destroy();
  await database.drop();
});

/** A queue with fast timers; stopped after the test. */
function makeQueue(opts: Partial<ConstructorParameters<typeof Queue>[0]> = {}): Queue<AnyNames> {
  const q = new Queue<AnyNames>({ db: ds, events: bus, logger, pollMs: 50, heartbeatMs: 100, staleAfterMs: 1000, ...opts });
  queues.push(q);
  return q;
}

const untilAborted = (signal: AbortSignal) => new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));

const name = (base: string) => `${base}-${randomUUID().slice(0, 8)}`;

describe('Queue', () => {
  test('runs the highest priority first', async () => {
    const q = makeQueue({ concurrency: 1 });
    const job = name('prio');
    const order: string[] = [];
    q.register(
      job,
      payloadOf(async ({ data }: JobContext<{ label: string }>) => void order.push(data.label)),
    );
    await q.enqueue(job, { label: 'low' }, { priority: 'low' });
    await q.enqueue(job, { label: 'normal' });
    await q.enqueue(job, { label: 'critical' }, { priority: 'critical' });
    await q.enqueue(job, { label: 'high' }, { priority: 'high' });
    await q.start();
    await until('all four jobs', () => q.stats().completed === 4);
    assert.deepEqual(order, ['critical', 'high', 'normal', 'low']);
    assert.deepEqual(q.stats(), { running: 0, claimed: 4, completed: 4, failed: 0 });
  });

  test('aborts the signal at the timeout and fails the job', async () => {
    const q = makeQueue();
    const job = name('slow');
    const reasons: unknown[] = [];
    q.register(job, async ({ signal }) => {
      signal.addEventListener('abort', () => reasons.push(signal.reason));
      await untilAborted(signal);
    });
    await q.start();
    const id = await q.enqueue(job, {}, { timeoutMs: 100 });
    const info = await until('failed', async () => ((await q.get(id))?.state === 'failed' ? q.get(id) : null));
    assert.equal(info.lastError, 'timeout: Job exceeded its timeout of 100 ms');
    assert.ok(reasons[0] instanceof JobAbortedError);
    assert.equal((reasons[0] as JobAbortedError).code, 'timeout');
    assert.equal((reasons[0] as JobAbortedError).message, 'Job exceeded its timeout of 100 ms');
  });

  test('fails a job whose handler ignores the abort, one second after its timeout', async () => {
    const q = makeQueue();
    const job = name('stuck');
    q.register(job, () => new Promise(() => undefined));
    await q.start();
    const started = Date.now();
    const id = await q.enqueue(job, {}, { timeoutMs: 100 });
    await until('failed', async () => (await q.get(id))?.state === 'failed');
    assert.ok(Date.now() - started >= 1100);
    assert.match((await q.get(id))!.lastError!, /^timeout: /);
  });

  test('retries with backoff, then succeeds', async () => {
    const q = makeQueue();
    const job = name('flaky');
    const attempts: Array<{ attempt: number; at: number }> = [];
    q.register(job, async ({ attempt }) => {
      attempts.push({ attempt, at: Date.now() });
      if (attempt < 3) throw new Error(`flake ${attempt}`);
    });
    await q.start();
    const id = await q.enqueue(job, {}, { maxAttempts: 3, backoffMs: 100 });
    await until('completed', async () => (await q.get(id))?.state === 'completed');
    assert.deepEqual(
      attempts.map((a) => a.attempt),
      [1, 2, 3],
    );
    // full jitter: at most base * 2^(attempt-1), plus a poll interval and slack
    assert.ok(attempts[1].at - attempts[0].at < 100 + 250);
    assert.ok(attempts[2].at - attempts[1].at < 200 + 250);
    const info = (await q.get(id))!;
    assert.equal(info.attempt, 3);
    assert.equal(info.lastError, 'job_failed: flake 2');
  });

  test('calls onFinalFailure when attempts run out', async () => {
    const q = makeQueue();
    const job = name('doomed');
    const failures: Array<{ attempt: number; code: string; message: string }> = [];
    q.register(
      job,
      async () => {
        throw Object.assign(new Error('upstream said no'), { code: 'upstream_error' });
      },
      { onFinalFailure: async (ctx, error) => void failures.push({ attempt: ctx.attempt, ...error }) },
    );
    await q.start();
    const id = await q.enqueue(job, {}, { maxAttempts: 2, backoffMs: 10 });
    await until('onFinalFailure', () => failures.length === 1);
    assert.deepEqual(failures, [{ attempt: 2, code: 'upstream_error', message: 'upstream said no' }]);
    const info = (await q.get(id))!;
    assert.equal(info.state, 'failed');
    assert.equal(info.lastError, 'upstream_error: upstream said no');
    assert.ok(info.finishedAt);
  });

  test('fails at once on an error that is not retryable', async () => {
    const q = makeQueue();
    const job = name('fatal');
    let calls = 0;
    q.register(job, async () => {
      calls++;
      throw Object.assign(new Error('bad input'), { code: 'validation_error', retryable: false });
    });
    await q.start();
    const id = await q.enqueue(job, {}, { maxAttempts: 5, backoffMs: 10 });
    await until('failed', async () => (await q.get(id))?.state === 'failed');
    assert.equal(calls, 1);
  });

  test('cancels a queued job at once', async () => {
    const q = makeQueue();
    const job = name('later');
    let ran = false;
    q.register(job, async () => void (ran = true));
    await q.start();
    const id = await q.enqueue(job, {}, { runAt: new Date(Date.now() + 60_000) });
    assert.equal(await q.cancel(id, 'not needed'), 'cancelled');
    const info = (await q.get(id))!;
    assert.equal(info.state, 'cancelled');
    assert.equal(info.lastError, 'cancelled: not needed');
    assert.equal(await q.cancel(id), 'cancelled', 'a finished job keeps its state');
    assert.equal(await q.cancel(randomUUID()), null);
    assert.equal(await q.cancel('not-a-uuid'), null);
    assert.equal(ran, false);
  });

  test('cancel of a running job reaches its AbortSignal within a second', async () => {
    const q = makeQueue();
    const job = name('long');
    let started = 0;
    let reason: unknown;
    q.register(job, async ({ signal }) => {
      started = Date.now();
      await untilAborted(signal).catch((err) => {
        reason = err;
        return 'finished anyway'; // the job still ends cancelled
      });
    });
    await q.start();
    const id = await q.enqueue(job, {});
    await until('start', () => started);
    const cancelledAt = Date.now();
    assert.equal(await q.cancel(id, 'user asked'), 'cancelled');
    assert.ok(reason instanceof JobAbortedError);
    assert.equal((reason as JobAbortedError).code, 'cancelled');
    assert.ok(Date.now() - cancelledAt < 1000);
    assert.equal((await q.get(id))!.state, 'cancelled');
  });

  test('a cancel whose event was lost still reaches the handler within a second', async () => {
    const q = makeQueue();
    const job = name('deaf');
    let started = false;
    let abortedAt = 0;
    q.register(job, async ({ signal }) => {
      started = true;
      await untilAborted(signal).catch(() => (abortedAt = Date.now()));
    });
    await q.start();
    const id = await q.enqueue(job, {});
    await until('start', () => started);
    const requestedAt = Date.now();
    await ds.query(`UPDATE platform.jobs SET cancel_requested = true WHERE id = $1`, [id]);
    await until('abort', () => abortedAt);
    assert.ok(abortedAt - requestedAt < 1000, `aborted after ${abortedAt - requestedAt} ms`);
    await until('cancelled', async () => (await q.get(id))?.state === 'cancelled');
  });

  test('stop() hands an in-flight job back, and another queue completes it', async () => {
    const job = name('handover');
    const first = makeQueue();
    let firstStarted = false;
    first.register(job, async ({ signal }) => {
      firstStarted = true;
      await untilAborted(signal);
    });
    await first.start();
    const id = await first.enqueue(job, { n: 1 });
    await until('first start', () => firstStarted);
    await first.stop({ graceMs: 50 });
    const handedBack = (await first.get(id))!;
    assert.equal(handedBack.state, 'queued');
    assert.equal(handedBack.attempt, 0, 'the interrupted attempt is not consumed');

    const second = makeQueue();
    const seen: Array<JobContext<{ n: number }>['data']> = [];
    second.register(
      job,
      payloadOf(async ({ data }: JobContext<{ n: number }>) => void seen.push(data)),
    );
    await second.start();
    await until('completed', async () => (await second.get(id))?.state === 'completed');
    assert.deepEqual(seen, [{ n: 1 }]);
    assert.equal((await second.get(id))!.attempt, 1);
  });

  test('stop() waits for in-flight jobs within the grace period', async () => {
    const q = makeQueue();
    const job = name('brief');
    let started = false;
    q.register(job, async () => {
      started = true;
      await sleep(100);
    });
    await q.start();
    const id = await q.enqueue(job, {});
    await until('start', () => started);
    await q.stop({ graceMs: 2000 });
    assert.equal((await q.get(id))!.state, 'completed');
  });

  describe('jobs claimed ahead of the free slots', () => {
    const row = async (id: string) =>
      (await ds.query(`SELECT state, attempt, started_at IS NOT NULL AS started FROM platform.jobs WHERE id = $1`, [id]))[0] as {
        state: string;
        attempt: number;
        started: boolean;
      };

    /** One slot busy with `first` until released; the jobs enqueued after it wait (one started ahead, the next held). */
    async function busyQueue(job: string, ran: string[]) {
      const q = makeQueue({ concurrency: 1 });
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      q.register(
        job,
        payloadOf(async ({ data, signal }: JobContext<{ label: string }>) => {
          ran.push(data.label);
          if (data.label === 'first') await Promise.race([released, untilAborted(signal)]);
        }),
      );
      const first = await q.enqueue(job, { label: 'first' });
      const next = await q.enqueue(job, { label: 'next' });
      const held = await q.enqueue(job, { label: 'held' });
      await q.start();
      await until('first runs', () => ran.includes('first'));
      await until('next started ahead, held held', async () => (await row(next)).started && (await row(held)).state === 'running');
      return { q, release, first, next, held };
    }

    test('a job claimed but cancelled before it starts never runs, whether it was held or started ahead', async () => {
      const job = name('held-cancel');
      const ran: string[] = [];
      const { q, release, first, next, held } = await busyQueue(job, ran);
      assert.deepEqual(await row(held), { state: 'running', attempt: 0, started: false }, 'held: claimed, attempt not counted');
      assert.equal(await q.cancel(held, 'not needed'), 'cancelled');
      assert.equal(await q.cancel(next, 'not needed either'), 'cancelled');
      release();
      await until('first completed', async () => (await q.get(first))?.state === 'completed');
      await sleep(200);
      assert.deepEqual(ran, ['first']);
      assert.equal((await q.get(held))!.state, 'cancelled');
      assert.equal((await q.get(next))!.state, 'cancelled');
      assert.equal((await q.get(next))!.lastError, 'cancelled: not needed either');
    });

    test('stop() gives the jobs it held back without consuming their attempts', async () => {
      const job = name('held-stop');
      const ran: string[] = [];
      const { q, first, next, held } = await busyQueue(job, ran);
      await q.stop({ graceMs: 0 });
      for (const id of [first, next, held]) assert.deepEqual(await row(id), { state: 'queued', attempt: 0, started: true === (id !== held) });
      assert.deepEqual(ran, ['first']);
    });

    test('jobs held longer than a second by a worker whose slots stay busy are handed back, and another worker runs them', async () => {
      const job = name('held-handover');
      const ran: string[] = [];
      const { release, first, next, held } = await busyQueue(job, ran);
      const other = makeQueue({ concurrency: 2 });
      const otherRan: string[] = [];
      other.register(
        job,
        payloadOf(async ({ data }: JobContext<{ label: string }>) => void otherRan.push(data.label)),
      );
      await other.start();
      await until('the other worker ran both', async () => (await row(next)).state === 'completed' && (await row(held)).state === 'completed', 5000);
      assert.deepEqual(otherRan.sort(), ['held', 'next']);
      assert.deepEqual(ran, ['first']);
      release();
      await until('first completed', async () => (await row(first)).state === 'completed');
    });
  });

  test('a claim walks the claim index in order and stops at its limit, even over a backlog that grew faster than the statistics', async () => {
    const job = name('backlog');
    await ds.query(`ANALYZE platform.jobs`); // statistics of the table as it is now, small
    await ds.query(`INSERT INTO platform.jobs (name, priority) SELECT $1, (g % 4)::smallint FROM generate_series(1, 5000) g`, [job]);
    try {
      const params: unknown[] = [randomUUID(), [job], 10, 10];
      const [{ 'QUERY PLAN': plan }] = await ds.query(`EXPLAIN (FORMAT JSON) ${claimSql(sqlNow(realClock, params))}`, params);
      type PlanNode = { 'Node Type': string; 'Index Name'?: string; Plans?: PlanNode[] };
      const nodes: PlanNode[] = [];
      const walk = (n: PlanNode) => {
        nodes.push(n);
        for (const c of n.Plans ?? []) walk(c);
      };
      walk(plan[0].Plan);
      assert.ok(!nodes.some((n) => n['Node Type'] === 'Sort' || n['Node Type'].startsWith('Bitmap')), JSON.stringify(nodes.map((n) => n['Node Type'])));
      assert.ok(nodes.some((n) => n['Node Type'] === 'Index Scan' && n['Index Name'] === 'jobs_claim_idx'));
    } finally {
      await ds.query(`DELETE FROM platform.jobs WHERE name = $1`, [job]);
    }
  });

  describe('recovery', () => {
    async function orphan(job: string, attempt: number, maxAttempts: number, deadWorker: 'stale' | 'gone'): Promise<string> {
      const worker = randomUUID();
      if (deadWorker === 'stale') {
        await ds.query(`INSERT INTO platform.workers (id, heartbeat_at, started_at) VALUES ($1, now() - interval '1 hour', now() - interval '2 hours')`, [
          worker,
        ]);
      }
      const [row] = await ds.query(
        `INSERT INTO platform.jobs (name, data, state, attempt, max_attempts, locked_by, locked_at, started_at)
         VALUES ($1, '{}', 'running', $2, $3, $4, now() - interval '1 hour', now() - interval '1 hour') RETURNING id`,
        [job, attempt, maxAttempts, worker],
      );
      return row.id;
    }

    test('a job locked by a dead worker is claimed again and completed', async () => {
      const job = name('orphan');
      const id = await orphan(job, 1, 2, 'stale');
      const q = makeQueue();
      const attempts: number[] = [];
      q.register(job, async ({ attempt }) => void attempts.push(attempt));
      await q.start();
      await until('completed', async () => (await q.get(id))?.state === 'completed');
      assert.deepEqual(attempts, [2]);
      const [{ count }] = await ds.query(`SELECT count(*)::int AS count FROM platform.workers WHERE heartbeat_at < now() - interval '1 minute'`);
      assert.equal(count, 0, 'dead worker rows are removed');
    });

    test('a job whose worker row is gone and has no attempts left fails with worker_lost', async () => {
      const job = name('orphan-final');
      const id = await orphan(job, 1, 1, 'gone');
      const q = makeQueue();
      const failures: Array<{ code: string; message: string }> = [];
      q.register(job, async () => assert.fail('must not run again'), {
        onFinalFailure: async (_ctx, error) => void failures.push(error),
      });
      await q.start();
      await until('failed', async () => (await q.get(id))?.state === 'failed');
      assert.equal((await q.get(id))!.lastError, 'worker_lost: the worker running this job stopped');
      await until('onFinalFailure', () => failures.length);
      assert.deepEqual(failures, [{ code: 'worker_lost', message: 'the worker running this job stopped' }]);
    });

    test('a job a lost worker held without starting it is given back without consuming an attempt', async () => {
      const job = name('orphan-held');
      const id = await orphan(job, 0, 1, 'gone');
      await ds.query(`UPDATE platform.jobs SET started_at = NULL WHERE id = $1`, [id]);
      const q = makeQueue();
      const attempts: number[] = [];
      q.register(job, async ({ attempt }) => void attempts.push(attempt));
      await q.start();
      await until('completed', async () => (await q.get(id))?.state === 'completed');
      assert.deepEqual(attempts, [1]);
      assert.equal((await q.get(id))!.lastError, null);
    });

    test('a worker that stopped heartbeating is swept by another while running', async () => {
      const job = name('stale');
      const id = await orphan(job, 1, 3, 'stale');
      await ds.query(`UPDATE platform.workers SET heartbeat_at = now() WHERE id = (SELECT locked_by FROM platform.jobs WHERE id = $1)`, [id]);
      const q = makeQueue({ staleAfterMs: 1500 });
      q.register(job, async () => undefined);
      await q.start();
      assert.equal((await q.get(id))!.state, 'running', 'a live heartbeat is respected');
      await until('completed', async () => (await q.get(id))?.state === 'completed', 5000);
    });
  });

  test('enqueue inside a rolled-back transaction leaves no job; a committed one runs', async () => {
    const q = makeQueue({ pollMs: 100 });
    const job = name('outbox');
    const ran: string[] = [];
    q.register(
      job,
      payloadOf(async ({ data }: JobContext<{ v: string }>) => void ran.push(data.v)),
    );
    await q.start();
    await assert.rejects(
      withTransaction(ds, async (tx) => {
        await q.enqueue(job, { v: 'rolled back' }, {}, tx);
        throw new Error('abort the transaction');
      }),
    );
    let id = '';
    await withTransaction(ds, async (tx) => {
      id = await q.enqueue(job, { v: 'committed' }, {}, tx);
      await sleep(50); // the wake-up arrives before the commit
    });
    await until('committed job', async () => (await q.get(id))?.state === 'completed', 2000);
    const [{ count }] = await ds.query(`SELECT count(*)::int AS count FROM platform.jobs WHERE name = $1`, [job]);
    assert.equal(count, 1);
    assert.deepEqual(ran, ['committed']);
  });

  test('a job enqueued in a transaction starts promptly after COMMIT (not at the poll), never after a rollback', async () => {
    // A poll far longer than the test: only the after-commit wake-up can start the job in time.
    const q = makeQueue({ pollMs: 60_000 });
    const job = name('after-commit');
    const started: { v: string; at: number }[] = [];
    q.register(
      job,
      payloadOf(async ({ data }: JobContext<{ v: string }>) => void started.push({ v: data.v, at: Date.now() })),
    );
    await q.start();
    await sleep(50); // the start's own claim round is over
    await assert.rejects(
      withTransaction(ds, async (tx) => {
        await q.enqueue(job, { v: 'rolled back' }, {}, tx);
        throw new Error('abort the transaction');
      }),
    );
    const viaAddJob = await withTransaction(ds, async (tx) => {
      const [{ id }] = await tx.manager.query(`SELECT ${addJobFrom('$1::jsonb')} AS id`, [JSON.stringify(q.jobSpec(job, { v: 'add_job' }))]);
      tx.afterCommit(() => q.added(job));
      await sleep(100); // a wake-up sent now would find nothing to claim
      return id as string;
    });
    let committedAt = 0;
    const id = await withTransaction(ds, async (tx) => {
      const id = await q.enqueue(job, { v: 'committed' }, {}, tx);
      await sleep(100);
      committedAt = Date.now();
      return id;
    });
    await until('both committed jobs', () => started.length === 2, 2000);
    for (const s of started) assert.ok(s.at - committedAt < 1000, `started ${s.at - committedAt} ms after commit`);
    assert.deepEqual(started.map((s) => s.v).sort(), ['add_job', 'committed']);
    for (const jobId of [id, viaAddJob]) await until('completed', async () => (await q.get(jobId))?.state === 'completed', 2000);
    const [{ count }] = await ds.query(`SELECT count(*)::int AS count FROM platform.jobs WHERE name = $1`, [job]);
    assert.equal(count, 2, 'the rolled-back job was never written');
  });

  test('an idempotency key returns the unfinished job; a finished key may be enqueued again', async () => {
    const q = makeQueue();
    const job = name('keyed');
    q.register(job, async () => undefined);
    const a = await q.enqueue(job, { n: 1 }, { key: 'deploy-42' });
    const b = await q.enqueue(job, { n: 2 }, { key: 'deploy-42' });
    assert.equal(a, b);
    await q.start();
    await until('completed', async () => (await q.get(a))?.state === 'completed');
    const c = await q.enqueue(job, { n: 3 }, { key: 'deploy-42' });
    assert.notEqual(c, a);
  });

  test("addJobFrom writes each row's job inside the caller's statement: the rows and their jobs, or none of them", async () => {
    await ds.query(`CREATE TABLE IF NOT EXISTS public.orders (id uuid PRIMARY KEY, job_id uuid NOT NULL, total int NOT NULL CHECK (total > 0))`);
    const q = makeQueue();
    const job = name('order');
    const seen: string[] = [];
    q.register(
      job,
      payloadOf(async ({ data }: JobContext<{ order: string }>) => void seen.push(data.order)),
    );
    const insertMany = async (orders: { order: string; total: number }[]) => {
      const rows = orders.map(({ order, total }) => ({ id: order, total, job: q.jobSpec(job, { order }, { key: `order:${order}` }) }));
      const added = await ds.query(
        `INSERT INTO public.orders (id, job_id, total)
         SELECT o.id, ${addJobFrom('o.job')}, o.total FROM jsonb_to_recordset($1::jsonb) AS o(id uuid, total int, job jsonb) RETURNING job_id`,
        [JSON.stringify(rows)],
      );
      await q.added(job);
      return added as { job_id: string }[];
    };
    const [first, second, refused, alongside] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const both = await insertMany([
      { order: first, total: 1 },
      { order: second, total: 2 },
    ]);
    assert.equal(new Set(both.map((r) => r.job_id)).size, 2);
    await assert.rejects(
      insertMany([
        { order: alongside, total: 5 },
        { order: refused, total: 0 },
      ]),
      /check constraint/,
    );
    assert.equal(
      (await ds.query(`SELECT count(*)::int AS n FROM platform.jobs WHERE key = ANY($1)`, [[`order:${refused}`, `order:${alongside}`]]))[0].n,
      0,
      'the refused row took its job and the other row with it',
    );
    await q.start();
    // The handler runs before the queue records its end: wait for the records, not the handler.
    for (const { job_id } of both) await until('the order jobs to complete', async () => (await q.get(job_id))?.state === 'completed');
    assert.deepEqual(seen.sort(), [first, second].sort());
  });

  test('a handler may end its job in its own statement (completion); if that statement rolls back, the queue ends it', async () => {
    const q = makeQueue();
    const job = name('inline');
    const states: string[] = [];
    q.register(
      job,
      payloadOf(async ({ data, completion }: JobContext<{ commit: boolean }>) => {
        const end = completion();
        await ds
          .transaction(async (m) => {
            states.push(
              (
                await m.query(`WITH ended AS (${jobsCompletedSql('(SELECT $1::uuid AS id, $2::uuid AS worker_id)')}) SELECT state FROM ended`, [
                  end.jobId,
                  end.workerId,
                ])
              )[0].state,
            );
            if (!data.commit) throw new Error('rolled back');
          })
          .then(
            () => end.done(),
            () => undefined,
          );
      }),
    );
    await q.start();
    const committed = await q.enqueue(job, { commit: true });
    const rolledBack = await q.enqueue(job, { commit: false });
    await until('both', () => q.stats().completed === 2);
    assert.deepEqual(states, ['completed', 'completed']);
    for (const id of [committed, rolledBack]) assert.equal((await q.get(id))?.state, 'completed');
  });

  test("a job is due on the queue's clock: one planned an hour ahead runs once the clock gets there", async () => {
    const clock = testClock();
    const q = makeQueue({ clock });
    const job = name('planned');
    const ran: string[] = [];
    q.register(
      job,
      payloadOf(async ({ data }: JobContext<{ v: string }>) => void ran.push(data.v)),
    );
    await q.start();
    const id = await q.enqueue(job, { v: 'in an hour' }, { runAt: new Date(clock.now().getTime() + 3_600_000) });
    await q.enqueue(job, { v: 'now' });
    await until('the job due now', () => ran.length === 1);
    await sleep(200); // four polls: the planned job is not claimed before its time
    assert.deepEqual(ran, ['now']);
    assert.equal((await q.get(id))?.state, 'queued');
    clock.advance(3_600_000);
    await until('the planned job', async () => (await q.get(id))?.state === 'completed');
    assert.deepEqual(ran, ['now', 'in an hour']);
  });

  test('rejects invalid options', async () => {
    const q = makeQueue();
    await assert.rejects(q.enqueue('x', {}, { priority: 'urgent' as never }), /priority/);
    await assert.rejects(q.enqueue('x', {}, { timeoutMs: 0 }), /timeoutMs/);
    await assert.rejects(q.enqueue('x', {}, { maxAttempts: 1.5 }), /maxAttempts/);
  });

  test('two processes: wake-up and cancel cross a postgres event bus', async () => {
    const notify = (ch: string, p: string) => ds.query('SELECT pg_notify($1, $2)', [ch, p]);
    const workerBus = await createEventBus({ kind: 'postgres', url: database.url, notify }, logger);
    const apiBus = await createEventBus({ kind: 'postgres', url: database.url, notify }, logger);
    // polling so slow that only the NOTIFY wake-up can explain a prompt start
    const worker = new Queue<AnyNames>({ db: ds, events: workerBus, logger, pollMs: 60_000 });
    const api = new Queue<AnyNames>({ db: ds, events: apiBus, logger });
    const job = name('remote');
    let startedAt = 0;
    let abortedAt = 0;
    worker.register(job, async ({ signal }) => {
      startedAt = Date.now();
      await untilAborted(signal).catch(() => (abortedAt = Date.now()));
    });
    try {
      await worker.start();
      await sleep(100); // let the initial claim pass
      const enqueuedAt = Date.now();
      const id = await api.enqueue(job, {});
      await until('remote start', () => startedAt, 2000);
      assert.ok(startedAt - enqueuedAt < 500, `started ${startedAt - enqueuedAt} ms after enqueue`);
      const cancelledAt = Date.now();
      assert.equal(await api.cancel(id), 'cancelled');
      assert.ok(abortedAt - cancelledAt < 1000, `aborted ${abortedAt - cancelledAt} ms after cancel`);
    } finally {
      await worker.stop({ graceMs: 0 });
      await workerBus.close();
      await apiBus.close();
    }
  });
});

describe('pools', () => {
  test('a pool runs its own jobs with its own slots, and starts and drains with its queue', async () => {
    const main = makeQueue({ concurrency: 1 });
    const pool = main.pool({ name: 'slow', concurrency: 2 });
    const events: string[] = [];
    main.onLifecycle(
      () => events.push('started'),
      () => events.push('stopping'),
    );
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const running: string[] = [];
    pool.register('slow.job', async ({ id }) => {
      running.push(id);
      await gate;
    });
    main.register('fast.job', async () => undefined);
    await main.start();
    assert.deepEqual(events, ['started']);
    const slow = [await pool.enqueue('slow.job', {}), await pool.enqueue('slow.job', {})];
    const fast = await main.enqueue('fast.job', {});
    // Both slow jobs hold the pool's two slots while the main queue's one slot stays free.
    await readUntil(
      () => running.length,
      (n) => n >= 2,
    );
    assert.deepEqual(running.sort(), [...slow].sort());
    assert.equal(
      await readUntil(
        async () => (await main.get(fast))?.state,
        (state) => state === 'completed',
      ),
      'completed',
    );
    release();
    await readUntil(
      async () => (await pool.get(slow[1]!))?.state,
      (state) => state === 'completed',
    );
    await main.stop({ graceMs: 1000 });
    assert.deepEqual(events, ['started', 'stopping']);
    assert.equal((await pool.get(slow[0]!))?.state, 'completed');
    assert.equal(pool.stats().running, 0);
  });
});
