/**
 * The data expressions read (engine.ts): the items of n8n's data model and what a node's
 * expressions see of its execution. Apart from the evaluator so that paths.ts (which
 * the evaluator imports) reads them without importing it back; engine.ts re-exports them.
 */

export interface Item {
  json: Record<string, unknown>;
  /** n8n: the input item this one came from (input 0 unless `input`). */
  pairedItem?: { item: number; input?: number };
}

/** What v1 executions add: the run index and paired items (nodes/types.ts ItemLineage). */
export interface ExpressionLineage {
  readonly runIndex: number;
  /** The item of `node` that input item `itemIndex` came from; undefined when `node` has not run. */
  pairedItem(node: string, itemIndex: number): Item | undefined;
}

export interface ExpressionData {
  /** The items of the node's main input. */
  items: Item[];
  /** The items each completed node passed on (all its outputs, in order), by node name. */
  nodes: ReadonlyMap<string, Item[]>;
  execution: { id: string; mode: string; resumeUrl: string };
  /** timezone: the workflow's settings.timezone (default UTC). */
  workflow: { id: string; name: string; active: boolean; timezone?: string };
  /** n8n's `$vars` (default: none). */
  vars?: Readonly<Record<string, string>>;
  /** n8n's `$prevNode`: the node run that fed the main input. */
  prevNode?: { name: string; outputIndex: number; runIndex: number };
  /** v1 executions: `$runIndex`, and `$('Node').item` / `$node["Node"]` by paired item. */
  lineage?: ExpressionLineage;
}
