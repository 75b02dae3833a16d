import { NodeError, type Item, type NodeContext, type NodeDefinition, objectOf, type PairedItemData, type SourceData } from '../../../nodes';

/**
 * n8n's Split In Batches / Loop Over Items (1-3). Its context lasts across the node's runs in one
 * execution and holds what n8n's does (`$node["Loop"].context["noItemsLeft"]` reads the same);
 * items passed on later keep their paired item to the first run's input (n8n's sourceOverwrite).
 * The items left are a position in the first run's items and processed items are appended in
 * place, so a turn costs its batch rather than a copy of the whole list.
 */

interface BatchContext {
  /** The items left: an accessor over `Remaining` once the node has run in this process. */
  items?: Item[];
  processedItems?: Item[];
  currentRunIndex?: number;
  maxRunIndex?: number;
  noItemsLeft?: boolean;
  done?: boolean;
  sourceData?: SourceData | null;
}

export const splitInBatches: NodeDefinition = {
  name: 'splitInBatches',
  description: "n8n's Split In Batches / Loop Over Items: passes its items on in batches, one batch per run, within a loop.",
  n8n: { versions: [1, 2, 3] },
  inProcess: true,
  outputs: (_params, version) => (version >= 2 ? 2 : 1),
  invalid: (params) => {
    const size = params.batchSize;
    if (typeof size === 'number' && !(size >= 1)) return { parameter: 'batchSize', message: 'must be at least 1' };
    return undefined;
  },
  execute: async (ctx) => {
    const version = ctx.node.typeVersion ?? 1;
    const [p] = await ctx.parameters([0]);
    const batchSize = batchSizeOf(p!.batchSize, version);
    const context = (ctx.state ?? {}) as BatchContext;
    // Not `context.items`: reading it makes the list of the items left.
    const started = Object.hasOwn(context, REMAINING) || context.items !== undefined;
    const batch = !started || objectOf(p!.options).reset === true ? firstBatch(ctx, context, batchSize, version) : nextBatch(ctx, context, batchSize, version);
    context.noItemsLeft = remaining(context).left === 0;
    if (batch.length === 0) {
      if (version === 1) return { outputs: [[]] };
      context.done = true;
      // A copy: the list goes on growing in place should the loop be entered again.
      const processed = (context.processedItems ?? []).slice();
      return { outputs: version === 2 ? [[], processed] : [processed, []] };
    }
    context.done = false;
    if (version === 1) return { outputs: [batch] };
    return { outputs: version === 2 ? [batch, []] : [[], batch] };
  },
};

/** The items left to pass on: the list the loop goes through and the position reached in it. */
interface Remaining {
  list: Item[];
  next: number;
  readonly left: number;
}

const REMAINING = Symbol('remaining');

/**
 * The context's items left as a position in a list. `items` stays what n8n keeps (the items left,
 * as a list, for expressions and the stored context) but is only made when read; a context read
 * back from storage (a plain list) is taken over as the list at position 0.
 */
function remaining(context: BatchContext): Remaining {
  const own = (context as { [REMAINING]?: Remaining })[REMAINING];
  if (own) return own;
  const r: Remaining = {
    list: context.items ?? [],
    next: 0,
    get left() {
      return this.list.length - this.next;
    },
  };
  Object.defineProperty(context, REMAINING, { value: r, enumerable: false });
  Object.defineProperty(context, 'items', {
    get: () => r.list.slice(r.next),
    set: (items: Item[]) => {
      r.list = items;
      r.next = 0;
    },
    enumerable: true,
    configurable: true,
  });
  return r;
}

/** The first run (or a reset): the input is the set to go through. */
function firstBatch(ctx: NodeContext, context: BatchContext, batchSize: number, version: number): Item[] {
  const r = remaining(context);
  r.list = ctx.items;
  r.next = 0;
  context.currentRunIndex = 0;
  context.maxRunIndex = Math.ceil(r.list.length / batchSize);
  context.sourceData = ctx.inputSource?.[0] ? { ...ctx.inputSource[0] } : null;
  const batch = take(r, batchSize);
  if (version >= 2) context.processedItems = [];
  return batch;
}

/** A later run: the next batch of the kept items; the items that came back count as processed. */
function nextBatch(ctx: NodeContext, context: BatchContext, batchSize: number, version: number): Item[] {
  context.currentRunIndex = (context.currentRunIndex ?? 0) + 1;
  const source = context.sourceData ?? undefined;
  const batch = take(remaining(context), batchSize).map((item) => ({ ...item, pairedItem: withSource(item.pairedItem, source) }));
  if (version >= 2) {
    const from = ctx.inputSource?.[0] ?? undefined;
    const processed = (context.processedItems ??= []);
    ctx.items.forEach((item, index) => processed.push({ ...item, pairedItem: withSource({ item: index }, from) }));
  }
  return batch;
}

function take(r: Remaining, count: number): Item[] {
  const batch = r.list.slice(r.next, r.next + count);
  r.next += batch.length;
  return batch;
}

/** A paired item that points into the run named by `source` (n8n's sourceOverwrite). */
function withSource(paired: Item['pairedItem'], source: SourceData | undefined): PairedItemData {
  const base: PairedItemData = paired ?? { item: 0 };
  return source ? { ...base, sourceOverwrite: source } : base;
}

function batchSizeOf(value: unknown, version: number): number {
  if (value === undefined || value === null || value === '') return version >= 3 ? 1 : 10;
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isFinite(n) || n < 1)
    throw new NodeError(`Batch Size must be a number of at least 1; it is ${JSON.stringify(value)}`, { parameter: 'batchSize' });
  return Math.floor(n);
}
