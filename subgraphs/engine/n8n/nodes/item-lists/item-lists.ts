import { ownEntry } from '../../../../../kernel/names';
import { type Item, type NodeContext, type NodeDefinition } from '../../../nodes';
import { aggregateItems, type AggregateVariant } from './aggregate';
import { fixedOption } from './params';
import { removeDuplicates, type RemoveDuplicatesVariant } from './remove-duplicates';
import { limitItems, sortItems } from './sort';
import { splitOutItems, type SplitOutVariant } from './split-out';
import { summarize, type SummarizeVariant } from './summarize';

/**
 * n8n's item-list nodes: Item Lists (every version n8n still runs) and the standalone nodes
 * that replaced its operations (Aggregate, Limit, Remove Duplicates, Sort, Split Out,
 * Summarize). Each operation has one implementation; what differs between nodes and versions
 * is data (the variants below), taken from n8n's own per-version behaviour.
 */

type Operation = (ctx: NodeContext, version: number) => Promise<Item[]>;

const output = (run: Operation) => async (ctx: NodeContext) => ({ outputs: [await run(ctx, ctx.node.typeVersion ?? 1)] });

// --- Item Lists: per-version behaviour -------------------------------------------------------

function itemListsAggregate(version: number): AggregateVariant {
  return { lists: version < 3 ? 'collection' : 'text', checkFields: version < 2.1, hints: false };
}

function itemListsSplitOut(version: number): SplitOutVariant {
  return {
    legacy: version === 1,
    fields: 'text',
    current: version >= 3,
    includeList: version < 3 ? 'collection' : 'text',
    missingFails: version < 2.1,
    scalarFails: version < 2.2,
    hints: false,
  };
}

function itemListsRemoveDuplicates(version: number): RemoveDuplicatesVariant {
  return { lists: version < 3 ? 'collection' : 'text', types: version >= 3.1 ? 'none' : 'strict' };
}

function itemListsSummarize(version: number): SummarizeVariant {
  return {
    numericMinMax: version < 3,
    names: version === 1 ? 'raw' : 'moved',
    check: version < 2.1 ? 'before' : 'none',
    groups: 'object',
    standalone: false,
  };
}

/** Item Lists 1-2 call concatenation `aggregateItems`; 3 calls it `concatenateItems`. */
const ITEM_LISTS_OPERATIONS: Record<string, (version: number) => boolean> = {
  aggregateItems: (v) => v < 3,
  concatenateItems: (v) => v >= 3,
  limit: () => true,
  removeDuplicates: () => true,
  sort: () => true,
  splitOutItems: () => true,
  summarize: () => true,
};

const ITEM_LISTS_RUN: Record<string, Operation> = {
  aggregateItems: (ctx, v) => aggregateItems(ctx, itemListsAggregate(v)),
  concatenateItems: (ctx, v) => aggregateItems(ctx, itemListsAggregate(v)),
  limit: (ctx) => limitItems(ctx),
  removeDuplicates: (ctx, v) => removeDuplicates(ctx, itemListsRemoveDuplicates(v)),
  sort: (ctx) => sortItems(ctx),
  splitOutItems: (ctx, v) => splitOutItems(ctx, itemListsSplitOut(v)),
  summarize: (ctx, v) => summarize(ctx, itemListsSummarize(v)),
};

const itemListsOperation = (params: Record<string, unknown> | undefined) => fixedOption(params?.operation, 'splitOutItems');

export const itemLists: NodeDefinition = {
  name: 'itemLists',
  description: "n8n's Item Lists: concatenate (aggregate) items, limit, remove duplicates, sort, split out items, or summarize, as each of its versions does.",
  n8n: { versions: [1, 2, 2.1, 2.2, 3, 3.1] },
  inProcess: true,
  raw: ['code'],
  invalid: (p, version) => {
    const op = itemListsOperation(p);
    if (ownEntry(ITEM_LISTS_OPERATIONS, op)?.(version)) return undefined;
    const known = Object.keys(ITEM_LISTS_OPERATIONS).filter((o) => ITEM_LISTS_OPERATIONS[o]!(version));
    return { parameter: 'operation', message: `"${op}" is not an operation of Item Lists ${version} (it has ${known.join(', ')})` };
  },
  execute: output((ctx, v) => ownEntry(ITEM_LISTS_RUN, itemListsOperation(ctx.node.parameters))!(ctx, v)),
};

// --- The standalone nodes --------------------------------------------------------------------

export const aggregate: NodeDefinition = {
  name: 'aggregate',
  description: "n8n's Aggregate: individual fields of every item into lists, or all item data into one list, in a single item.",
  n8n: { versions: [1] },
  inProcess: true,
  execute: output((ctx) => aggregateItems(ctx, { lists: 'text', checkFields: false, hints: true, groups: true })),
};

export const limit: NodeDefinition = {
  name: 'limit',
  description: "n8n's Limit: keeps the first or last `maxItems` items.",
  n8n: { versions: [1] },
  inProcess: true,
  execute: output((ctx) => limitItems(ctx)),
};

export const sort: NodeDefinition = {
  name: 'sort',
  description: "n8n's Sort: by fields, at random, or by a comparison written in JavaScript (run in the code sandbox).",
  n8n: { versions: [1] },
  inProcess: true,
  raw: ['code'],
  execute: output((ctx) => sortItems(ctx)),
};

export const splitOut: NodeDefinition = {
  name: 'splitOut',
  description: "n8n's Split Out: a list (or several side by side) inside each item becomes one item per entry.",
  n8n: { versions: [1] },
  inProcess: true,
  execute: output((ctx) =>
    splitOutItems(ctx, { legacy: false, fields: 'list', current: true, includeList: 'text', missingFails: false, scalarFails: false, hints: true }),
  ),
};

export const summarizeNode: NodeDefinition = {
  name: 'summarize',
  description: "n8n's Summarize: append, average, concatenate, count, count unique, max, min or sum fields, over all items or split by fields.",
  n8n: { versions: [1, 1.1] },
  inProcess: true,
  execute: output((ctx, v) =>
    summarize(ctx, { numericMinMax: false, names: 'normalised', check: v === 1 ? 'after' : 'hint', groups: v === 1 ? 'string' : 'typed', standalone: true }),
  ),
};

/** What Remove Duplicates 2 does beyond the current input: a history kept across executions. */
const STORED_OPERATIONS: Record<string, string> = {
  removeItemsSeenInPreviousExecutions: 'Remove Items Processed in Previous Executions',
  clearDeduplicationHistory: 'Clear Deduplication History',
};

export const removeDuplicatesNode: NodeDefinition = {
  name: 'removeDuplicates',
  description: "n8n's Remove Duplicates: of the input items equal on the compared fields, the first stays.",
  n8n: {
    versions: [1, 1.1, 2],
    unsupported: (p, version) => {
      const op = version >= 2 ? fixedOption(p?.operation, 'removeDuplicateInputItems') : 'removeDuplicateInputItems';
      const stored = ownEntry(STORED_OPERATIONS, op);
      if (!stored) return undefined;
      return {
        option: 'operation',
        message: `Remove Duplicates' operation "${stored}" (${op}) keeps a history of values across executions, which needs a deduplication store this engine does not have; only "Remove Items Repeated Within Current Input" (removeDuplicateInputItems) runs here`,
      };
    },
  },
  inProcess: true,
  invalid: (p, version) => {
    const op = fixedOption(p?.operation, 'removeDuplicateInputItems');
    if (version < 2 || op === 'removeDuplicateInputItems' || ownEntry(STORED_OPERATIONS, op)) return undefined;
    return { parameter: 'operation', message: `"${op}" is not an operation of Remove Duplicates 2` };
  },
  execute: output((ctx, v) => removeDuplicates(ctx, { lists: 'text', types: v === 1 ? 'strict' : 'nullTolerant' })),
};

export const itemListNodes: NodeDefinition[] = [itemLists, aggregate, limit, sort, splitOut, summarizeNode, removeDuplicatesNode];
