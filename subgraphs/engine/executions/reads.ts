import { createHmac, timingSafeEqual } from 'node:crypto';
import { UUID } from '../../../kernel/ids';
import type { StoredRun } from '../executor';
import type { Item } from '../expressions';
import type { RunnerDeps } from './context';
import type { ExecutionRow, ExecutionView, ExecutionViewRow } from './writes.store';
import { executionReads as store, toView } from './reads.store';

/**
 * Reading executions back: a row, its view (with the resume URL a waiting one is called on, an
 * HMAC of its id), and the node outputs a stored execution continues from. Every part of the
 * runner reads through here; the statements are reads.store.ts's.
 */
export class ExecutionReads {
  constructor(private readonly deps: Pick<RunnerDeps, 'db' | 'secret'>) {}

  resumeToken(executionId: string): string {
    return createHmac('sha256', this.deps.secret).update(`engine-resume:${executionId}`).digest('hex').slice(0, 40);
  }

  resumeUrl(executionId: string): string {
    return `/webhook/resume/${executionId}/${this.resumeToken(executionId)}`;
  }

  checkResumeToken(executionId: string, token: string): boolean {
    const expected = Buffer.from(this.resumeToken(executionId));
    const given = Buffer.from(String(token));
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  async load(id: string): Promise<ExecutionRow | null> {
    if (!UUID.test(id)) return null;
    return (await store.load(this.deps.db, id)) ?? null;
  }

  async view(id: string): Promise<ExecutionView | null> {
    if (!UUID.test(id)) return null;
    const row = await store.viewRow(this.deps.db, id);
    return row ? this.toView(row) : null;
  }

  toView(row: ExecutionViewRow): ExecutionView {
    return toView(row, (id) => this.resumeUrl(id));
  }

  /**
   * The runs an execution has stored: `done`, each node's last output (the legacy order runs a
   * node once), and `stored`, every run by run index with the node's context after it (v1 replay);
   * and what they weigh against its run data budget (nodes/budgets.ts), the stored contexts by node.
   */
  async loadDone(id: string): Promise<{
    done: Map<string, Item[][]>;
    stored: Map<string, StoredRun[]>;
    nextSeq: number;
    runDataBytes: number;
    storedStates: Map<string, { runIndex: number; bytes: number }>;
  }> {
    const rows = await store.storedRuns(this.deps.db, id);
    const done = new Map<string, Item[][]>();
    const stored = new Map<string, StoredRun[]>();
    const storedStates = new Map<string, { runIndex: number; bytes: number }>();
    let nextSeq = 0;
    let runDataBytes = 0;
    for (const r of rows) {
      done.set(r.node_name, r.output);
      let runs = stored.get(r.node_name);
      if (!runs) stored.set(r.node_name, (runs = []));
      runs[r.run_index] = { output: r.output, state: r.state };
      nextSeq = Math.max(nextSeq, r.seq + 1);
      runDataBytes += Buffer.byteLength(JSON.stringify(r.output));
      if (r.state) {
        const bytes = Buffer.byteLength(JSON.stringify(r.state));
        runDataBytes += bytes;
        storedStates.set(r.node_name, { runIndex: r.run_index, bytes });
      }
    }
    return { done, stored, nextSeq, runDataBytes, storedStates };
  }
}
