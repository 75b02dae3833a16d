import type { DataSource } from 'typeorm';
import { one, exec } from '../../../kernel/db/rows';
import { withTransaction } from '../../../kernel/db/transaction';
import type { Item, WorkflowStaticData } from '../nodes';

/**
 * A workflow's static data (engine.workflows.static_data): read as a run starts, and its changes
 * written back under the workflow row's lock, onto what is stored then. Two executions that change
 * different keys both keep theirs; for one key, the execution that finishes last wins.
 */
export const staticDataStore = {
  /** The static data, and n8n's pinned data kept from the import (null: none). */
  async read(db: DataSource, workflowId: string): Promise<{ staticData: Record<string, unknown>; pinData: Record<string, Item[]> | null }> {
    const row = await one<{ static_data: Record<string, unknown> | null; pin_data: Record<string, Item[]> | null }>(
      db,
      `SELECT static_data, pin_data FROM engine.workflows WHERE id = $1`,
      [workflowId],
    );
    return { staticData: row?.static_data ?? {}, pinData: row?.pin_data ?? null };
  },

  /** Writes nothing when nothing changed; false when the workflow is gone. */
  async save(db: DataSource, workflowId: string, data: WorkflowStaticData): Promise<boolean> {
    const changes = data.changes();
    if (!changes.length) return true;
    return withTransaction(db, async (tx) => {
      const row = await one<{ static_data: Record<string, unknown> | null }>(tx.manager, `SELECT static_data FROM engine.workflows WHERE id = $1 FOR UPDATE`, [
        workflowId,
      ]);
      if (!row) return false;
      const stored: Record<string, Record<string, unknown>> = {};
      for (const [slot, value] of Object.entries(row.static_data ?? {})) {
        if (value !== null && typeof value === 'object' && !Array.isArray(value)) setOwn(stored, slot, { ...(value as Record<string, unknown>) });
      }
      for (const change of changes) {
        const slot = Object.hasOwn(stored, change.slot) ? stored[change.slot]! : {};
        for (const [k, v] of Object.entries(change.set)) setOwn(slot, k, v);
        for (const k of change.removed) delete slot[k];
        setOwn(stored, change.slot, slot);
      }
      await exec(tx.manager, `UPDATE engine.workflows SET static_data = $2::jsonb WHERE id = $1`, [workflowId, JSON.stringify(stored)]);
      return true;
    });
  },
};

function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
