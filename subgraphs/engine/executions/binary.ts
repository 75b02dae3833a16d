import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { checkBinary, type ExecutionBudgets } from '../nodes';
import type { BinaryData, Item } from '../expressions';
import type { BinaryRow, BinaryStore } from './binary.store';

/**
 * An execution's binary data on its way to storage and back. Run data is stored with each
 * binary's metadata, `id` and `data: ''`; the bytes go to the BinaryStore once (a binary passed
 * on unchanged by later nodes is the same object, or carries the id and bytes it was loaded
 * with), and are counted against the binary budgets then. Items read back from storage get their
 * bytes again before a run continues from them.
 */
export class BinaryKeeper {
  /** In-memory binaries already kept → their stored form. */
  private readonly kept = new WeakMap<BinaryData, BinaryData>();
  /** Ids whose bytes are stored, with the base64 they were loaded or kept with. */
  private readonly known = new Map<string, string>();
  /** Rows the next write inserts (their bytes, in database mode). */
  readonly pending: BinaryRow[] = [];
  /** The rows of the files this run kept, by id: what a webhook answer reads them back from. */
  private readonly rows = new Map<string, BinaryRow>();

  constructor(
    private readonly store: BinaryStore,
    private readonly executionId: string,
    private readonly budgets: ExecutionBudgets,
    /** Bytes of binary data the execution has stored so far. */
    private total = 0,
  ) {}

  /** The rows the next write inserts, taken. */
  take(): BinaryRow[] {
    return this.pending.splice(0);
  }

  /** Deletes the files of rows a write took but did not record (it lost a race: the execution was no longer running). */
  async discard(rows: readonly BinaryRow[]): Promise<void> {
    for (const row of rows) this.known.delete(row.id);
    await this.store.discard(rows);
  }

  /** A node's outputs as stored (the same lists where no item has binary data). */
  async outputs(output: Item[][], node: { name: string; type: string }): Promise<Item[][]> {
    if (!output.some((items) => items.some(hasBinary))) return output;
    const stored: Item[][] = [];
    for (const items of output) stored.push(await this.items(items, node));
    return stored;
  }

  /** Items as stored: copies whose binaries are kept and refer to their bytes by id (the same list where none has binary data). */
  async items(items: Item[], node: { name: string; type: string }): Promise<Item[]> {
    if (!items.some(hasBinary)) return items;
    const stored: Item[] = [];
    for (const item of items) {
      if (!hasBinary(item)) {
        stored.push(item);
        continue;
      }
      const binary: Record<string, BinaryData> = {};
      for (const [key, b] of Object.entries(item.binary!)) binary[key] = await this.keep(b, node, key);
      stored.push({ ...item, binary });
    }
    return stored;
  }

  private async keep(b: BinaryData, node: { name: string; type: string }, key: string): Promise<BinaryData> {
    const done = this.kept.get(b);
    if (done) return done;
    // A reference already (a retry's input), or bytes loaded from the store unchanged.
    if (b.id && (!b.data || this.known.get(b.id) === b.data)) return { ...b, data: '' };
    const bytes = Buffer.from(b.data ?? '', 'base64');
    checkBinary(bytes.length, this.total + bytes.length, this.budgets, node, key);
    const id = randomUUID();
    const row = await this.store.keep(this.executionId, id, bytes, { mimeType: b.mimeType || 'application/octet-stream', fileName: b.fileName });
    this.pending.push(row);
    this.rows.set(id, row);
    this.total += bytes.length;
    this.known.set(id, b.data);
    const stored: BinaryData = { ...b, data: '', id, bytes: bytes.length };
    this.kept.set(b, stored);
    return stored;
  }

  /**
   * A file of this run's items read from where it is kept, as a stream (a webhook answer's file):
   * one this run kept (its row may not be written yet), or one it was loaded with. Null when the
   * file is kept nowhere yet (made by the node that answers).
   */
  async open(b: BinaryData): Promise<Readable | null> {
    const id = this.kept.get(b)?.id ?? (b.id && (!b.data || this.known.get(b.id) === b.data) ? b.id : undefined);
    if (!id) return null;
    const row = this.rows.get(id);
    if (row) return this.store.openRow(row);
    return (await this.store.open(this.executionId, id))?.body ?? null;
  }

  /** Gives stored items their bytes again, in place (lists read from the database, nobody else's). */
  async load(lists: Iterable<Item[]>): Promise<void> {
    const refs: BinaryData[] = [];
    for (const items of lists) for (const item of items ?? []) for (const b of Object.values(item?.binary ?? {})) if (b?.id && !b.data) refs.push(b);
    if (!refs.length) return;
    const found = await this.store.read(
      this.executionId,
      refs.map((b) => b.id!),
    );
    for (const b of refs) {
      const bytes = found.get(b.id!);
      // A file gone (deleted by hand) stays a reference: a node reading it says it was not loaded.
      if (!bytes) continue;
      b.data = bytes.data.toString('base64');
      this.known.set(b.id!, b.data);
    }
  }
}

function hasBinary(item: Item): boolean {
  return item.binary !== undefined && item.binary !== null && Object.keys(item.binary).length > 0;
}

/** Stored run data as read: each binary with an id gets `url`, where its bytes are downloaded (in place). */
export function withBinaryUrls(output: unknown, executionId: string): void {
  if (!Array.isArray(output)) return;
  for (const items of output) {
    if (!Array.isArray(items)) continue;
    for (const item of items as Item[]) {
      for (const b of Object.values(item?.binary ?? {})) {
        if (b?.id) (b as BinaryData & { url?: string }).url = binaryUrl(executionId, b.id);
      }
    }
  }
}

/** The download route of an execution's binary (the engine surface; authorised as reading the execution). */
export function binaryUrl(executionId: string, binaryId: string): string {
  return `/v1/engine/executions/${executionId}/binary/${binaryId}`;
}
