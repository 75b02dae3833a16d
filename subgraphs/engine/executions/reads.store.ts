import { page, Where } from '../../../kernel/db/page';
import { one, rows, type Queryable } from '../../../kernel/db/rows';
import { Tally } from '../../../kernel/db/tally';
import type { BinaryData, Item } from '../expressions';
import { withBinaryUrls } from './binary';
import { EXECUTION_COLUMNS, type ExecutionRow, type ExecutionView, type ExecutionViewRow } from './writes.store';

/**
 * Executions read back: rows and their views, pages, the run data and logs the API shows, and
 * the node outputs a stored execution continues from. The writes are in writes.store.ts
 * (a run's) and state.store.ts (the rest).
 */

/** A stored node run an execution continues from (reads.ts loadDone). */
export interface StoredRunRow {
  node_name: string;
  run_index: number;
  seq: number;
  output: Item[][];
  state: Record<string, unknown> | null;
}

export interface ExecutionLogRow {
  timestamp: Date;
  level: string;
  node: string | null;
  message: string;
}

export interface NodeDataRow {
  nodeName: string;
  runIndex: number;
  nodeType: string;
  status: string;
  startedAt: Date;
  duration: number;
  tries: number;
  reused: boolean;
  output: unknown;
  error: unknown;
}

export interface LogLine {
  execution_id: string;
  at: Date;
  level: string;
  node: string | null;
  message: string;
}

export interface NodeRunLine {
  execution_id: string;
  node_name: string;
  run_index: number;
  node_type: string;
  status: string;
  started_at: Date;
  duration_ms: number;
  tries: number;
  reused: boolean;
  output: unknown[] | null;
  error: unknown;
}

export interface ExecutionFilter {
  workflowId?: string;
  status?: string;
  startDate?: Date;
  endDate?: Date;
  limit: number;
  offset: number;
}

/** The log entries an execution answers with (the oldest ones; a runaway loop can log far more). */
const LOG_LIMIT = 5000;

export function toView(row: ExecutionViewRow, resumeUrl: (executionId: string) => string): ExecutionView {
  const state = row.resume_state as { webhook?: boolean } | null;
  return {
    id: row.id,
    workflowId: row.workflow_id,
    workflowName: row.workflow_name!,
    workflowVersion: row.workflow_version,
    status: row.status,
    mode: row.mode,
    progress: { nodesCompleted: row.nodes_completed, nodesTotal: row.nodes_total, currentNode: row.current_node },
    result: row.result,
    error: row.error,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    failedAt: row.failed_at,
    canceledAt: row.canceled_at,
    durationMs: row.duration_ms,
    waitTill: row.wait_till,
    resumeUrl: row.status === 'waiting' && state?.webhook ? resumeUrl(row.id) : null,
    originalExecutionId: row.original_execution_id,
    parentExecutionId: row.parent_execution_id,
    webhookId: row.webhook_id,
    traceId: row.trace_id,
    version: Number(row.version),
  };
}

export function toLogRow(r: LogLine): ExecutionLogRow {
  return { timestamp: r.at, level: r.level, node: r.node, message: r.message };
}

export function toNodeData(r: NodeRunLine): NodeDataRow {
  withBinaryUrls(r.output, r.execution_id);
  return {
    nodeName: r.node_name,
    runIndex: r.run_index,
    nodeType: r.node_type,
    status: r.status,
    startedAt: r.started_at,
    duration: r.duration_ms,
    tries: r.tries,
    reused: r.reused,
    output: r.output === null ? null : { main: r.output },
    error: r.error,
  };
}

/** Executions counted by the columns the list filters on by equality (migration ExecutionTally1763769601750). */
export const EXECUTION_TALLY = new Tally('engine.executions', ['workflow_id', 'status']);

export const executionReads = {
  /** What an execution's event carries besides its status: its workflow and its row's version. */
  announced: (q: Queryable, id: string) =>
    one<{ workflowId: string; version: number }>(q, `SELECT workflow_id AS "workflowId", version::float8 AS version FROM engine.executions WHERE id = $1`, [
      id,
    ]),
  /** Every column, with the workflow's name. */
  load(q: Queryable, id: string): Promise<ExecutionRow | undefined> {
    return one<ExecutionRow>(
      q,
      `SELECT e.*, w.name AS workflow_name FROM engine.executions e JOIN engine.workflows w ON w.id = e.workflow_id WHERE e.id = $1`,
      [id],
    );
  },

  /** The columns of its view, with the workflow's name. */
  viewRow(q: Queryable, id: string): Promise<ExecutionViewRow | undefined> {
    return one<ExecutionViewRow>(
      q,
      `SELECT ${EXECUTION_COLUMNS}, w.name AS workflow_name FROM engine.executions e JOIN engine.workflows w ON w.id = e.workflow_id WHERE e.id = $1`,
      [id],
    );
  },

  viewRows(q: Queryable, ids: string[]): Promise<ExecutionViewRow[]> {
    return rows<ExecutionViewRow>(
      q,
      `SELECT ${EXECUTION_COLUMNS}, w.name AS workflow_name
       FROM engine.executions e JOIN engine.workflows w ON w.id = e.workflow_id WHERE e.id = ANY($1::uuid[])`,
      [ids],
    );
  },

  /** A page, newest first, and the number of matches. */
  list(q: Queryable, filter: ExecutionFilter): Promise<{ rows: ExecutionViewRow[]; total: number }> {
    const where = new Where()
      .equals('e.workflow_id', filter.workflowId)
      .equals('e.status', filter.status)
      .and(filter.startDate, (p) => `e.started_at >= ${p}`)
      .and(filter.endDate, (p) => `e.started_at <= ${p}`);
    // The page's ids first (an index-only scan past the offset), then only those rows joined to
    // their workflows; a window count would read and join every match before the LIMIT. Without
    // a date range the total comes from the tally.
    const counted = { workflow_id: filter.workflowId, status: filter.status, started_at: filter.startDate || filter.endDate };
    return page<ExecutionViewRow>(
      q,
      {
        select: `${EXECUTION_COLUMNS}, w.name AS workflow_name`,
        from: `FROM engine.executions e ${where}`,
        orderBy: 'e.started_at DESC, e.id DESC',
        params: where.params,
      },
      filter,
      {
        keysFirst: { key: 'e.id', join: 'JOIN engine.executions e ON e.id = page.id JOIN engine.workflows w ON w.id = e.workflow_id' },
        total: EXECUTION_TALLY.totalOf(counted),
      },
    );
  },

  /** The average duration of the workflow's last 100 successes (null without any). */
  async averageSuccessMs(q: Queryable, workflowId: string): Promise<number | null> {
    const row = await one<{ avg: number | null }>(
      q,
      `SELECT avg(duration_ms)::float AS avg FROM (
         SELECT duration_ms FROM engine.executions WHERE workflow_id = $1 AND status = 'success' ORDER BY started_at DESC LIMIT 100) d`,
      [workflowId],
    );
    return row?.avg ?? null;
  },

  /** The nodes of an execution with a stored output (a retry may reuse them). */
  async nodesWithOutput(q: Queryable, executionId: string): Promise<string[]> {
    const found = await rows<{ node_name: string }>(q, `SELECT DISTINCT node_name FROM engine.execution_nodes WHERE execution_id = $1 AND output IS NOT NULL`, [
      executionId,
    ]);
    return found.map((r) => r.node_name);
  },

  /**
   * The binary data of the first item a node's latest run output (its outputs in order), or
   * `item: false` when that run output no item. Only that item's files are read, not the output.
   */
  async firstItemBinary(q: Queryable, executionId: string, node: string): Promise<{ item: boolean; binary: Record<string, BinaryData> | null }> {
    const row = await one<{ item: unknown; binary: Record<string, BinaryData> | null }>(
      q,
      `SELECT first.item, first.item->'binary' AS binary FROM (
         SELECT output FROM engine.execution_nodes WHERE execution_id = $1 AND node_name = $2 AND output IS NOT NULL ORDER BY run_index DESC LIMIT 1) n,
       LATERAL (SELECT o->0 AS item FROM jsonb_array_elements(n.output) WITH ORDINALITY AS outs(o, i) WHERE jsonb_typeof(o) = 'array' AND jsonb_array_length(o) > 0 ORDER BY i LIMIT 1) first`,
      [executionId, node],
    );
    return { item: !!row?.item, binary: row?.binary ?? null };
  },

  /** The stored node runs with an output, in the order they ran. */
  storedRuns(q: Queryable, executionId: string): Promise<StoredRunRow[]> {
    return rows<StoredRunRow>(
      q,
      `SELECT node_name, run_index, seq, output, state FROM engine.execution_nodes WHERE execution_id = $1 AND output IS NOT NULL ORDER BY seq`,
      [executionId],
    );
  },

  /** The workflow's running or waiting executions. */
  async activeOfWorkflow(q: Queryable, workflowId: string): Promise<string[]> {
    const found = await rows<{ id: string }>(q, `SELECT id FROM engine.executions WHERE workflow_id = $1 AND status IN ('running','waiting')`, [workflowId]);
    return found.map((r) => r.id);
  },

  /** The running or waiting sub-executions an execution started. */
  async activeChildren(q: Queryable, parentId: string): Promise<string[]> {
    const found = await rows<{ id: string }>(q, `SELECT id FROM engine.executions WHERE parent_execution_id = $1 AND status IN ('running','waiting')`, [
      parentId,
    ]);
    return found.map((r) => r.id);
  },

  /**
   * Each execution's log, oldest first, at most 5000 entries each: one statement whose lateral
   * subquery reads each execution's first entries from the (execution_id, id) index.
   */
  logs(q: Queryable, ids: string[]): Promise<LogLine[]> {
    return rows<LogLine>(
      q,
      `SELECT k.execution_id, l.at, l.level, l.node, l.message
       FROM unnest($1::uuid[]) AS k(execution_id)
       CROSS JOIN LATERAL (SELECT id, at, level, node, message FROM engine.execution_logs
                           WHERE execution_id = k.execution_id ORDER BY id LIMIT ${LOG_LIMIT}) l
       ORDER BY k.execution_id, l.id`,
      [ids],
    );
  },

  /** Each execution's run data, in the order the nodes ran. */
  nodeData(q: Queryable, ids: string[]): Promise<NodeRunLine[]> {
    return rows<NodeRunLine>(
      q,
      `SELECT execution_id, node_name, run_index, node_type, status, started_at, duration_ms, tries, reused, output, error
       FROM engine.execution_nodes WHERE execution_id = ANY($1::uuid[]) ORDER BY execution_id, seq, node_name, run_index`,
      [ids],
    );
  },
};
