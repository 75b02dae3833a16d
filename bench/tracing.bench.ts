import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'pg';
import type { V1 } from '../test/support/answers';
import { jsonClient, round } from './load';

/**
 * The tracing phase's parts (bench/run.ts runs it): a local OTLP/HTTP collector that takes every
 * export and counts it (what a collector costs is not the platform's), and agent-task rounds on two
 * platforms side by side, tracing off and tracing on, alternating.
 */

export interface OtlpSink {
  url: string;
  /** Export requests and their bytes received so far. */
  received: { requests: number; bytes: number };
  close(): Promise<void>;
}

/** Answers every `POST /v1/traces` 200 (an empty protobuf ExportTraceServiceResponse), counting it, never decoding it. */
export async function startOtlpSink(): Promise<OtlpSink> {
  const received = { requests: 0, bytes: 0 };
  const server = http.createServer((req, res) => {
    req.on('data', (c: Buffer) => (received.bytes += c.length));
    req.on('end', () => {
      received.requests++;
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A platform of the tracing phase: its URL, its scratch database and keys that may run agent tasks. */
export interface TaskSide {
  url: string;
  dbUrl: string;
  taskKeys: string[];
}

export interface TaskRoundFigures {
  tasksPerSecond: number;
  tasks: number;
  failed: number;
  seconds: number;
  roundTasksPerSecond: number[];
}

const CLIENTS = 64;

async function inParallel(n: number, width: number, fn: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, n) }, async () => {
      while (next < n) await fn(next++);
    }),
  );
}

/**
 * Agent tasks end to end on each side (`n` async POSTs from 64 clients with the offline model,
 * until all have ended; time from the first POST to the last end, from the tasks' own timestamps),
 * after a discarded warm-up round of each, in `rounds` rounds whose order alternates.
 */
export async function taskRounds<K extends string>(
  sides: Record<K, TaskSide>,
  n: number,
  rounds: number,
  warmup: number,
): Promise<Record<K, TaskRoundFigures>> {
  const names = Object.keys(sides) as K[];
  const open = names.map((name) => {
    const side = sides[name];
    return { name, side, client: jsonClient(side.url, CLIENTS), db: new Pool({ connectionString: side.dbUrl, max: 2 }), k: 0 };
  });
  try {
    const round1 = async (o: (typeof open)[number], count: number, label: string) => {
      const ids: string[] = [];
      const t0 = new Date();
      await inParallel(count, CLIENTS, async (i) => {
        const res = await o.client<V1<{ taskId: string }>>('POST', '/v1/control-plane/agents/execute', o.side.taskKeys[o.k++ % o.side.taskKeys.length]!, {
          agentId: 'docs-author',
          taskType: 'write-guide',
          context: { topic: `${label} ${i}`, audience: 'operators' },
        });
        if (res.status !== 202) throw new Error(`execute answered ${res.status}: ${JSON.stringify(res.body)}`);
        ids.push(res.body.data.taskId);
      });
      const deadline = Date.now() + 120_000;
      let left = ids;
      while (left.length && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 250));
        left = (await o.db.query(`SELECT id FROM control_plane.tasks WHERE id = ANY($1::uuid[]) AND status IN ('queued','running')`, [left])).rows.map(
          (r: { id: string }) => r.id,
        );
      }
      const { rows } = await o.db.query(
        `SELECT count(*) FILTER (WHERE status = 'completed')::int AS completed, count(*) FILTER (WHERE status <> 'completed')::int AS failed,
                extract(epoch FROM max(coalesce(completed_at, failed_at)) - $2::timestamptz) AS seconds
           FROM control_plane.tasks WHERE id = ANY($1::uuid[])`,
        [ids, t0],
      );
      return { completed: rows[0].completed as number, failed: rows[0].failed as number, seconds: Number(rows[0].seconds) };
    };
    for (const o of open) await round1(o, warmup, 'warm-up');
    const measured = new Map<K, Awaited<ReturnType<typeof round1>>[]>(names.map((name) => [name, []]));
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 ? [...open].reverse() : open;
      for (const o of order) measured.get(o.name)!.push(await round1(o, n, `round ${r}`));
    }
    const out = {} as Record<K, TaskRoundFigures>;
    for (const name of names) {
      const list = measured.get(name)!;
      const tasks = list.reduce((a, x) => a + x.completed, 0);
      const seconds = list.reduce((a, x) => a + x.seconds, 0);
      out[name] = {
        tasksPerSecond: round(tasks / seconds, 0),
        tasks,
        failed: list.reduce((a, x) => a + x.failed, 0),
        seconds: round(seconds, 2),
        roundTasksPerSecond: list.map((x) => round(x.completed / x.seconds, 0)),
      };
    }
    return out;
  } finally {
    await Promise.all(open.map((o) => o.db.end()));
  }
}
