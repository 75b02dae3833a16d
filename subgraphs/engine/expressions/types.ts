/**
 * The data expressions read (engine.ts): the items of n8n's data model and what a node's
 * expressions see of its execution. Apart from the evaluator so that paths.ts (which
 * the evaluator imports) reads them without importing it back; engine.ts re-exports them.
 */

/**
 * n8n's binary item data: a file an item carries beside its JSON. While a run holds it in memory
 * `data` is the file as base64; in stored run data `data` is empty and `id` names the stored bytes.
 */
export interface BinaryData {
  data: string;
  mimeType: string;
  fileName?: string;
  fileExtension?: string;
  /** n8n's display size ("1.2 kB"); `bytes` is the exact size. */
  fileSize?: string;
  bytes?: number;
  /** text, json, image, audio, video, pdf or html, from the MIME type (n8n's fileType). */
  fileType?: string;
  directory?: string;
  /** Set once the bytes are stored outside the run data. */
  id?: string;
}

export interface Item {
  json: Record<string, unknown>;
  /** Files by key (`data` by default), n8n's `item.binary`. */
  binary?: Record<string, BinaryData>;
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
