import { inOrderOf } from '../../../kernel/db/grouped';
import { exec, one, prepared, rows, type Queryable } from '../../../kernel/db/rows';
import type { ExecutionErrorInfo, LogEntry, NodeRun, Progress } from '../executor';
import type { Item } from '../expressions';
import type { NotifyConfig } from './types';
import { BINARIES_INSERT, BINARY_PARAMS, binaryParams, type BinaryRow } from './binary.store';
import type { BinaryKeeper } from './binary';
import type { WorkflowVersion } from '../workflows';

/**
 * How executions are kept: the row in engine.executions, run data in execution_nodes, log lines
 * in execution_logs, and (for webhook-started ones) the request's entry in webhook_logs, all
 * written by one statement per write (runner.ts decides when). Changes made outside a
 * run (cancel, resume, lost jobs, maintenance) are in state.store.ts, reads in
 * reads.store.ts.
 */

export const EXECUTION_STATUSES = ['running', 'success', 'error', 'waiting', 'canceled'] as const;
export type ExecutionStatus = (typeof EXECUTION_STATUSES)[number];
export const EXECUTION_MODES = ['manual', 'webhook', 'schedule', 'retry', 'subworkflow', 'test', 'error'] as const;
export type ExecutionMode = (typeof EXECUTION_MODES)[number];

/** The columns of an execution a view is made from (EXECUTION_COLUMNS), with its workflow's name where joined. */
export interface ExecutionViewRow {
  id: string;
  workflow_id: string;
  workflow_version: number;
  status: ExecutionStatus;
  mode: ExecutionMode;
  nodes_total: number;
  nodes_completed: number;
  current_node: string | null;
  result: unknown;
  error: ExecutionErrorInfo | null;
  wait_till: Date | null;
  resume_state: unknown;
  original_execution_id: string | null;
  parent_execution_id: string | null;
  webhook_id: string | null;
  started_at: Date;
  finished_at: Date | null;
  failed_at: Date | null;
  canceled_at: Date | null;
  duration_ms: number | null;
  /** The trace of the request or job that started it, when that was traced. */
  trace_id: string | null;
  workflow_name?: string;
  /** bigint, read as text: raised by every change of the row. */
  version: string;
}

/** Every column of engine.executions (`SELECT e.*`). */
export interface ExecutionRow extends ExecutionViewRow {
  input: Item[];
  start_node: string | null;
  /** The key it runs as (null: the platform; workflows/authority.ts). */
  run_as: string | null;
  /** Milliseconds it ran before its last wait (its running-time budget goes on from there). */
  ran_ms: number;
  job_id: string | null;
  /** A control-plane trigger's webhook subscription (notify.ts). */
  notify: NotifyConfig | null;
  heartbeat_at: Date;
  updated_at: Date;
}

export interface ExecutionView {
  id: string;
  workflowId: string;
  workflowName: string;
  workflowVersion: number;
  status: ExecutionStatus;
  mode: ExecutionMode;
  progress: Progress;
  result: unknown;
  error: ExecutionErrorInfo | null;
  startedAt: Date;
  finishedAt: Date | null;
  failedAt: Date | null;
  canceledAt: Date | null;
  durationMs: number | null;
  waitTill: Date | null;
  resumeUrl: string | null;
  originalExecutionId: string | null;
  parentExecutionId: string | null;
  webhookId: string | null;
  /** The trace of the request or job that started it, when that was traced (absent: not known here). */
  traceId?: string | null;
  version: number;
}

/** A webhook request log entry, decided by how the execution ended (or by its enqueueing). */
export interface RequestLog {
  webhookId: string;
  method: string;
  sourceIp: string | null;
  test: boolean;
  entry(outcome: { status: ExecutionStatus; error: ExecutionErrorInfo | null }): {
    status: 'success' | 'failed' | 'rejected';
    reason: string | null;
    statusCode: number;
    responseTimeMs: number;
  };
}

export interface Pending {
  rows: PendingRow[];
  logs: LogEntry[];
  since: number;
  /** Node runs whose stored context the next write drops: a later run of the node now carries it. */
  clear: { node_name: string; run_index: number }[];
}

/**
 * A node run as a write takes it: its row as JSON text (serialised once, when the run ended, and
 * measured against the execution's budget then), and the node's live context until the runner
 * seals it into the row of the node's latest pending run (in-flight.ts).
 */
export interface PendingRow {
  node: string;
  type: string;
  runIndex: number;
  json: string;
  state?: Record<string, unknown>;
}

export interface RowUpdate {
  nodes_completed: number;
  current_node: string | null;
  status?: ExecutionStatus;
  result?: unknown;
  error?: ExecutionErrorInfo;
  resume_state?: unknown;
  wait_till?: Date | null;
  job_id?: string | null;
  /** Milliseconds it has run so far, waits not counted (written when it starts waiting). */
  ran_ms?: number;
}

/** What a write needs to know about the execution (the runner's context). */
export interface StoreTarget {
  id: string;
  version: WorkflowVersion;
  mode: ExecutionMode;
  input: Item[];
  startNode: string | null;
  /** The key it runs as (null: the platform; workflows/authority.ts). */
  runAs: string | null;
  startedAt: Date;
  /** Whether the row exists yet: inline runs insert it with their first write. */
  stored: boolean;
  requestLog?: RequestLog;
  meta: Pick<ExecutionView, 'originalExecutionId' | 'parentExecutionId' | 'webhookId'>;
  /** The trace of the request that started an inline run (currentTraceId), written with its row. */
  traceId?: string | null;
  /** A control-plane trigger's webhook subscription, stored with the row (notify.ts). */
  notify?: NotifyConfig | null;
  /** JSON texts of its input items' json, made when the request was measured (not made again). */
  known?: KnownJson;
  /** Its binary data on the way to storage: the rows its next write inserts (binary.ts). */
  binaries?: BinaryKeeper;
  /** The input as its row keeps it (binaries by id), once made; else `input` has no binary data. */
  storedInput?: Item[];
}

/**
 * JSON texts already made for objects of a run — the json of its input items, serialised once
 * when the request's size was checked — reused for its input column and its trigger's output
 * instead of serialising a payload of megabytes twice more.
 */
export type KnownJson = WeakMap<object, { text: string; bytes: number }>;

/** `JSON.stringify(value)` and its UTF-8 bytes, the items (in lists of any depth) whose json is known spliced in as text. */
export function measuredJson(value: unknown, known: KnownJson | undefined): { text: string; bytes: number } {
  if (!known) {
    const text = JSON.stringify(value) ?? 'null';
    return { text, bytes: Buffer.byteLength(text) };
  }
  if (Array.isArray(value)) {
    const parts = value.map((v) => measuredJson(v === undefined ? null : v, known));
    return { text: `[${concat(parts.map((p) => p.text))}]`, bytes: parts.reduce((n, p) => n + p.bytes, 1 + Math.max(parts.length, 1)) };
  }
  const json = value !== null && typeof value === 'object' ? (value as { json?: unknown }).json : undefined;
  const text = json !== null && typeof json === 'object' ? known.get(json) : undefined;
  if (!text) return measuredJson(value, undefined);
  // An item: its keys in order, as JSON.stringify writes them (a value it leaves out left out).
  let bytes = 2;
  const parts: string[] = [];
  for (const key of Object.keys(value as object)) {
    const piece = key === 'json' ? text.text : JSON.stringify((value as Record<string, unknown>)[key]);
    if (piece === undefined) continue;
    const name = JSON.stringify(key);
    parts.push(`${name}:${piece}`);
    bytes += Buffer.byteLength(name) + 1 + (key === 'json' ? text.bytes : Buffer.byteLength(piece));
  }
  return { text: `{${concat(parts)}}`, bytes: bytes + Math.max(parts.length - 1, 0) };
}

/**
 * Texts joined by commas without copying them: `+` makes a rope that is flattened once, when the
 * statement's parameter is encoded (Array#join would copy a payload of megabytes once more).
 */
function concat(texts: readonly string[]): string {
  let out = '';
  for (let i = 0; i < texts.length; i++) out = i ? out + ',' + texts[i] : texts[i]!;
  return out;
}

/**
 * What a write reads back: the columns the database decides (times, duration); the rest of the
 * row is what the write itself set, filled in from the run (no JSON parsed back for nothing).
 */
const WRITTEN_COLUMNS = `e.id, e.status, e.nodes_total, e.nodes_completed, e.current_node, e.wait_till, e.started_at, e.finished_at,
  e.failed_at, e.canceled_at, e.duration_ms, e.version`;

export const EXECUTION_COLUMNS = `e.id, e.workflow_id, e.workflow_version, e.status, e.mode, e.nodes_total, e.nodes_completed, e.current_node,
  e.result, e.error, e.wait_till, e.resume_state, e.original_execution_id, e.parent_execution_id, e.webhook_id,
  e.started_at, e.finished_at, e.failed_at, e.canceled_at, e.duration_ms, e.trace_id, e.version`;

/**
 * One statement: the pending node rows and log lines, and the execution row, inserted by the
 * first write of an inline run, else updated (only while it is running, so that a cancel that
 * landed first wins). A final write also carries the webhook request's log entry. Returns
 * the execution row, or null when nothing was updated.
 */
export async function writeExecution(db: Queryable, ctx: StoreTarget, pending: Pending, set: RowUpdate): Promise<ExecutionViewRow | null> {
  const nodes = rowsJson(pending.rows.splice(0));
  const clear = pending.clear.splice(0);
  const logs = logLines(pending.logs.splice(0));
  pending.since = 0;
  const final = set.status !== undefined && set.status !== 'running';
  const requestLog = final && ctx.requestLog ? [requestLogRow(ctx.requestLog, { status: set.status!, error: set.error ?? null }, ctx.id)] : [];
  const params: unknown[] = [ctx.id, nodes, JSON.stringify(logs), JSON.stringify(requestLog), set.nodes_completed, set.current_node];
  const json = (v: unknown) => (v === undefined ? undefined : JSON.stringify(v));
  const fields: [string, unknown, string?][] = [
    ['status', set.status],
    ['result', json(set.result), '::jsonb'],
    ['error', json(set.error), '::jsonb'],
    ['resume_state', json(set.resume_state), '::jsonb'],
    ['wait_till', set.wait_till],
    ['job_id', set.job_id],
    ['ran_ms', set.ran_ms],
  ];
  let statement: string;
  if (ctx.stored) {
    const assign = [`nodes_completed = $5`, `current_node = $6`, `heartbeat_at = now()`, `updated_at = now()`];
    for (const [column, value, cast = ''] of fields) if (value !== undefined) assign.push(`${column} = $${params.push(value)}${cast}`);
    statement = `UPDATE engine.executions e SET ${assign.join(', ')} WHERE e.id = $1 AND e.status = 'running' RETURNING ${WRITTEN_COLUMNS}`;
  } else {
    const columns = [
      'id',
      'workflow_id',
      'workflow_version',
      'mode',
      'input',
      'start_node',
      'run_as',
      'nodes_total',
      'nodes_completed',
      'current_node',
      'original_execution_id',
      'parent_execution_id',
      'webhook_id',
      'started_at',
    ];
    const values = [
      '$1',
      `$${params.push(ctx.version.workflowId)}`,
      `$${params.push(ctx.version.version)}`,
      `$${params.push(ctx.mode)}`,
      `$${params.push(measuredJson(ctx.storedInput ?? ctx.input, ctx.known).text)}::jsonb`,
      `$${params.push(ctx.startNode)}`,
      `$${params.push(ctx.runAs)}::uuid`,
      `$${params.push(ctx.version.definition.nodes.length)}`,
      '$5',
      '$6',
      `$${params.push(ctx.meta.originalExecutionId)}`,
      `$${params.push(ctx.meta.parentExecutionId)}`,
      `$${params.push(ctx.meta.webhookId)}`,
    ];
    const startedAt = `$${params.push(ctx.startedAt)}::timestamptz`;
    values.push(startedAt);
    if (ctx.traceId) {
      columns.push('trace_id');
      values.push(`$${params.push(ctx.traceId)}`);
    }
    if (ctx.notify) {
      columns.push('notify');
      values.push(`$${params.push(JSON.stringify(ctx.notify))}::jsonb`);
    }
    for (const [column, value, cast = ''] of [['status', set.status ?? 'running'] as [string, unknown], ...fields.slice(1)]) {
      if (value === undefined) continue;
      columns.push(column);
      values.push(`$${params.push(value)}${cast}`);
    }
    statement = `INSERT INTO engine.executions AS e (${columns.join(', ')}) VALUES (${values.join(', ')}) RETURNING ${WRITTEN_COLUMNS}`;
  }
  // Only the statements that drop an older context carry this part (each text is prepared once).
  const cleared = clear.length
    ? `, c AS (
      UPDATE engine.execution_nodes x SET state = NULL FROM e, jsonb_to_recordset($${params.push(JSON.stringify(clear))}::jsonb) AS r(node_name text, run_index int)
      WHERE x.execution_id = e.id AND x.node_name = r.node_name AND x.run_index = r.run_index)`
    : '';
  const binaries = ctx.binaries?.take() ?? [];
  const kept = binaries.length ? `, b AS (${BINARIES_INSERT(params.push(...binaryParams(binaries)) - BINARY_PARAMS + 1)})` : '';
  const sql = `
    WITH e AS (${statement}), n AS (${NODES_INSERT('SELECT e.id, $2::jsonb FROM e')}
    ), l AS (${LOGS_INSERT('SELECT e.id, $3::jsonb FROM e')}
    ), w AS (${REQUEST_LOG_INSERT('$4')})${cleared}${kept}
    SELECT * FROM e`;
  try {
    // Prepared: a run writes with a handful of texts (which columns it sets), each parsed and planned once per connection.
    const row = await one<WrittenRow>(db, prepared(sql), params);
    if (row) return viewRowOf(ctx, set, row);
    // Not updated (a cancel or a delete landed first): the files kept for this write are nobody's.
    await ctx.binaries?.discard(binaries);
    return null;
  } catch (err) {
    // The workflow was deleted meanwhile: nothing left to record, its files included.
    if ((err as { code?: string }).code === '23503') {
      await ctx.binaries?.discard(binaries);
      return null;
    }
    throw err;
  }
}

/** What a write reads back (WRITTEN_COLUMNS). */
type WrittenRow = Omit<ExecutionViewRow, 'workflow_name'>;

/** The written row, completed from the run: its own fields, and the result, error and resume state the write set (a row is only written while it runs, so it has none of its own). */
function viewRowOf(ctx: StoreTarget, set: RowUpdate, row: WrittenRow): ExecutionViewRow {
  ctx.stored = true;
  return {
    ...row,
    workflow_id: ctx.version.workflowId,
    workflow_version: ctx.version.version,
    mode: ctx.mode,
    result: set.result ?? null,
    error: set.error ?? null,
    resume_state: set.resume_state ?? null,
    original_execution_id: ctx.meta.originalExecutionId,
    parent_execution_id: ctx.meta.parentExecutionId,
    webhook_id: ctx.meta.webhookId,
  };
}

/** Node rows given as JSON arrays, one per execution: `source` selects (execution id, jsonb array) pairs. */
const NODES_INSERT = (source: string) => `
      INSERT INTO engine.execution_nodes (execution_id, node_name, run_index, seq, node_type, status, started_at, duration_ms, tries, reused, output, error, state)
      SELECT s.id, x.node_name, coalesce(x.run_index, 0), x.seq, x.node_type, x.status, x.started_at, x.duration_ms, x.tries, false, x.output, x.error, x.state
      FROM (${source}) AS s(id, nodes), jsonb_to_recordset(s.nodes) AS x(node_name text, run_index int, seq int, node_type text, status text, started_at timestamptz,
                                                duration_ms int, tries int, output jsonb, error jsonb, state jsonb)
      ON CONFLICT (execution_id, node_name, run_index) DO UPDATE SET seq = EXCLUDED.seq, node_type = EXCLUDED.node_type, status = EXCLUDED.status,
        started_at = EXCLUDED.started_at, duration_ms = EXCLUDED.duration_ms, tries = EXCLUDED.tries, reused = false,
        output = EXCLUDED.output, error = EXCLUDED.error, state = EXCLUDED.state`;

/** Log lines given as JSON arrays, one per execution, inserted in their order: `source` selects (execution id, jsonb array) pairs. */
const LOGS_INSERT = (source: string) => `
      INSERT INTO engine.execution_logs (execution_id, at, level, node, message)
      SELECT s.id, (x.v->>'at')::timestamptz, x.v->>'level', x.v->>'node', x.v->>'message'
      FROM (${source}) AS s(id, logs), jsonb_array_elements(s.logs) WITH ORDINALITY AS x(v, o)
      ORDER BY s.id, x.o`;

/** A run whose first write is also its last (writeExecution's insert of a finished run), for insertFinished. */
export interface FinishedRun {
  ctx: StoreTarget;
  pending: Pending;
  set: RowUpdate & { status: ExecutionStatus };
}

/**
 * Runs that finish at their first write, several in one statement (the runner groups them): each
 * row inserted finished, with its node rows, log lines and webhook request log entry, as
 * writeExecution writes one. Answers each run's row in order; alone, a run whose workflow was
 * deleted meanwhile answers null (in a group that fails the statement, which is then retried run
 * by run).
 */
export async function insertFinished(db: Queryable, runs: readonly FinishedRun[]): Promise<(ExecutionViewRow | null)[]> {
  const requestLogs: unknown[] = [];
  // Read, not taken (as the node rows): a group whose statement fails writes each run again alone.
  const binaries = runs.flatMap((r) => r.ctx.binaries?.pending ?? []);
  const input = runs.map(({ ctx, pending, set }) => {
    if (ctx.requestLog) requestLogs.push(requestLogRow(ctx.requestLog, { status: set.status, error: set.error ?? null }, ctx.id));
    const run = {
      id: ctx.id,
      workflow_id: ctx.version.workflowId,
      workflow_version: ctx.version.version,
      mode: ctx.mode,
      start_node: ctx.startNode,
      run_as: ctx.runAs,
      nodes_total: ctx.version.definition.nodes.length,
      nodes_completed: set.nodes_completed,
      current_node: set.current_node,
      original_execution_id: ctx.meta.originalExecutionId,
      parent_execution_id: ctx.meta.parentExecutionId,
      webhook_id: ctx.meta.webhookId,
      started_at: ctx.startedAt.toISOString(),
      notify: ctx.notify ?? null,
      trace_id: ctx.traceId ?? null,
      status: set.status,
      result: set.result ?? null,
      error: set.error ?? null,
      logs: logLines(pending.logs),
    };
    // The node rows are JSON text already. Read, not taken: a group whose statement fails writes each run again alone.
    return `${JSON.stringify(run).slice(0, -1)},"input":${measuredJson(ctx.storedInput ?? ctx.input, ctx.known).text},"nodes":${rowsJson(pending.rows)}}`;
  });
  try {
    const written = await rows<WrittenRow>(
      db,
      prepared(`
        WITH i AS (
          SELECT * FROM jsonb_to_recordset($1::jsonb) AS i(id uuid, workflow_id uuid, workflow_version int, mode text, input jsonb, start_node text,
            run_as uuid, nodes_total int, nodes_completed int, current_node text, original_execution_id uuid, parent_execution_id uuid, webhook_id uuid,
            started_at timestamptz, notify jsonb, trace_id text, status text, result jsonb, error jsonb, nodes jsonb, logs jsonb)
        ), e AS (
          INSERT INTO engine.executions AS e (id, workflow_id, workflow_version, mode, input, start_node, run_as, nodes_total, nodes_completed, current_node,
            original_execution_id, parent_execution_id, webhook_id, started_at, notify, trace_id, status, result, error)
          SELECT id, workflow_id, workflow_version, mode, input, start_node, run_as, nodes_total, nodes_completed, current_node,
            original_execution_id, parent_execution_id, webhook_id, started_at, notify, trace_id, status, result, error FROM i
          RETURNING ${WRITTEN_COLUMNS}
        ), n AS (${NODES_INSERT('SELECT e.id, i.nodes FROM e JOIN i ON i.id = e.id')}
        ), l AS (${LOGS_INSERT('SELECT e.id, i.logs FROM e JOIN i ON i.id = e.id')}
        ), w AS (${REQUEST_LOG_INSERT('$2')})${binaries.length ? `, b AS (${BINARIES_INSERT(3)})` : ''}
        SELECT * FROM e`),
      [`[${input.join(',')}]`, JSON.stringify(requestLogs), ...(binaries.length ? binaryParams(binaries) : [])],
    );
    for (const r of runs) r.ctx.binaries?.take();
    return inOrderOf(
      runs.map((r) => r.ctx.id),
      written,
      (r) => r.id,
    ).map((row, i) => (row ? viewRowOf(runs[i]!.ctx, runs[i]!.set, row) : null));
  } catch (err) {
    if (runs.length === 1 && (err as { code?: string }).code === '23503') {
      // The workflow was deleted meanwhile: the run's files are nobody's.
      const keeper = runs[0]!.ctx.binaries;
      await keeper?.discard(keeper.take());
      return [null];
    }
    throw err;
  }
}

/** Pending rows as one JSON array (their texts joined, not parsed again). */
function rowsJson(rows: readonly PendingRow[]): string {
  return `[${concat(rows.map((r) => r.json))}]`;
}

/** Log lines as the statements take them. */
function logLines(logs: readonly LogEntry[]) {
  return logs.map((l) => ({ at: l.at.toISOString(), level: l.level, node: l.node ?? null, message: l.message.slice(0, 10_000) }));
}

/** Inserts the 0 or 1 webhook request log entries given as JSON in `param`. */
export const REQUEST_LOG_INSERT = (param: string) => `
  INSERT INTO engine.webhook_logs (webhook_id, method, source_ip, status, reason, status_code, response_time_ms, execution_id, test)
  SELECT x.webhook_id, x.method, x.source_ip, x.status, x.reason, x.status_code, x.response_time_ms, x.execution_id, x.test
  FROM jsonb_to_recordset(${param}::jsonb) AS x(webhook_id uuid, method text, source_ip text, status text, reason text,
                                                status_code int, response_time_ms int, execution_id uuid, test boolean)`;

export function requestLogRow(log: RequestLog, outcome: { status: ExecutionStatus; error: ExecutionErrorInfo | null }, executionId: string) {
  const entry = log.entry(outcome);
  return {
    webhook_id: log.webhookId,
    method: log.method,
    source_ip: log.sourceIp,
    status: entry.status,
    reason: entry.reason,
    status_code: entry.statusCode,
    response_time_ms: Math.max(0, Math.round(entry.responseTimeMs)),
    execution_id: executionId,
    test: log.test,
  };
}

/**
 * A run's row as JSON text, and the bytes of its output (what the execution's run data budget
 * counts); `run_index` only when it says something (legacy runs: 0). Its context is added when
 * the row is written (PendingRow).
 */
export function nodeRow(run: NodeRun, seq: number, known?: KnownJson): { row: PendingRow; outputBytes: number } {
  const fields: Record<string, unknown> = {
    node_name: run.node,
    seq,
    node_type: run.nodeType,
    status: run.status,
    started_at: run.startedAt.toISOString(),
    duration_ms: run.durationMs,
    tries: run.tries,
    error: run.error ?? null,
  };
  if (run.runIndex) fields.run_index = run.runIndex;
  const output = measuredJson(run.output, known);
  const json = `${JSON.stringify(fields).slice(0, -1)},"output":${output.text}}`;
  const row: PendingRow = { node: run.node, type: run.nodeType, runIndex: run.runIndex, json, ...(run.state ? { state: run.state } : {}) };
  return { row, outputBytes: output.bytes };
}

/** What a queued execution is inserted with (its first log line and job in the same transaction). */
export interface QueuedExecution {
  id: string;
  version: WorkflowVersion;
  mode: ExecutionMode;
  input: Item[];
  startNode: string | null;
  runAs: string | null;
  nodesTotal: number;
  meta: Pick<ExecutionView, 'originalExecutionId' | 'parentExecutionId' | 'webhookId'>;
  jobId: string;
  /** The trace of the request that queued it (currentTraceId), when traced. */
  traceId?: string | null;
  /** The first log line. */
  message: string;
  /** The webhook request's log entry (0 or 1, requestLogRow). */
  requestLog: ReturnType<typeof requestLogRow>[];
  notify: NotifyConfig | null | undefined;
  known?: KnownJson;
  /** The binary rows of its input (binary.ts). */
  binaries?: BinaryRow[];
}

/**
 * One statement: a queued execution's row, its first log line and the webhook request's log
 * entry. Returns when it started (the database's clock).
 */
export async function insertQueued(q: Queryable, x: QueuedExecution): Promise<Date> {
  const row = await one<{ started_at: Date }>(
    q,
    `WITH e AS (
       INSERT INTO engine.executions (id, workflow_id, workflow_version, status, mode, input, start_node, nodes_total,
                                      original_execution_id, parent_execution_id, webhook_id, job_id, notify, run_as, trace_id)
       VALUES ($1, $2, $3, 'running', $4, $5, $6, $7, $8, $9, $10, $11, $14, $15, $16) RETURNING id, started_at
     ), l AS (
       INSERT INTO engine.execution_logs (execution_id, level, message) VALUES ($1, 'info', $12)
     ), w AS (${REQUEST_LOG_INSERT('$13')})${x.binaries?.length ? `, b AS (${BINARIES_INSERT(17)})` : ''}
     SELECT started_at FROM e`,
    [
      x.id,
      x.version.workflowId,
      x.version.version,
      x.mode,
      measuredJson(x.input, x.known).text,
      x.startNode,
      x.nodesTotal,
      x.meta.originalExecutionId,
      x.meta.parentExecutionId,
      x.meta.webhookId,
      x.jobId,
      x.message,
      JSON.stringify(x.requestLog),
      x.notify ? JSON.stringify(x.notify) : null,
      x.runAs,
      x.traceId ?? null,
      ...(x.binaries?.length ? binaryParams(x.binaries) : []),
    ],
  );
  return row!.started_at;
}

/** A retry's copies of the original's node runs it reuses (marked `reused`, not run again). */
export function copyReusedNodes(q: Queryable, executionId: string, fromExecutionId: string, nodes: string[]): Promise<void> {
  return exec(
    q,
    `INSERT INTO engine.execution_nodes (execution_id, node_name, run_index, seq, node_type, status, started_at, duration_ms, tries, reused, output, error, state)
     SELECT $1, node_name, run_index, seq, node_type, status, started_at, duration_ms, tries, true, output, error, state
     FROM engine.execution_nodes WHERE execution_id = $2 AND node_name = ANY($3::text[]) AND output IS NOT NULL`,
    [executionId, fromExecutionId, nodes],
  );
}

/** The inline runs of this process are alive (maintenance fails those whose heartbeat stops). */
export function heartbeat(q: Queryable, ids: string[]): Promise<void> {
  return exec(q, `UPDATE engine.executions SET heartbeat_at = now() WHERE id = ANY($1::uuid[]) AND status = 'running'`, [ids]);
}
