import { randomInt } from 'node:crypto';
import { SandboxError } from '../../../sandbox';
import { NodeError, toItems, type Item, type NodeContext } from '../../../nodes';
import { fieldReader, isEqual, lt } from './paths';
import { NESTED_FIELD_HINT, collection, entries, firstItemParams, shows, text, type Params } from './params';

/**
 * Sort and Limit (standalone, and as Item Lists operations; every version sorts alike).
 * Sort `simple` orders by fields, each ascending or descending, text case-insensitively and
 * anything else as lodash's `lt` compares it; `random` shuffles; `code` runs the user's
 * comparison (`a`, `b`: items) in the code sandbox, never in this process. Limit keeps the first
 * or last `maxItems` items.
 */

/** n8n's default comparison code (the node shows it until the user writes their own). */
const DEFAULT_CODE = `// The two items to compare are in the variables a and b
// Access the fields in a.json and b.json
// Return -1 if a should go before b
// Return 1 if b should go before a
// Return 0 if there's no difference

fieldName = 'myField';

if (a.json[fieldName] < b.json[fieldName]) {
	return -1;
}
if (a.json[fieldName] > b.json[fieldName]) {
	return 1;
}
return 0;`;

export async function sortItems(ctx: NodeContext): Promise<Item[]> {
  const { raw, p } = await firstItemParams(ctx);
  const type = p.type ?? 'simple';
  if (type === 'random') return shuffled(ctx.items);
  if (type === 'simple') return sortedByFields(ctx.items, p, shows(raw.type, 'simple', 'simple') ? collection(p.options) : {});
  return sortedByCode(ctx, text(p.code, 'Code', DEFAULT_CODE));
}

function shuffled(items: Item[]): Item[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = randomInt(i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

function sortedByFields(items: Item[], p: Params, options: Params): Item[] {
  const fields = entries(p.sortFieldsUi ?? {}, 'sortField', { fieldName: '', order: 'ascending' }).map((e) => ({
    fieldName: String(e.fieldName),
    order: e.order,
  }));
  if (!fields.length) throw new NodeError('No sorting specified. Please add a field to sort by');
  const dotless = Boolean(options.disableDotNotation);
  const read = fieldReader(dotless);
  for (const { fieldName } of fields) {
    const found = items.some((item) => (dotless ? Object.prototype.hasOwnProperty.call(item.json, fieldName) : read(item.json, fieldName) !== undefined));
    if (found) continue;
    const message = `Couldn't find the field '${fieldName}' in the input data`;
    throw dotless && fieldName.includes('.') ? new NodeError(message, { description: NESTED_FIELD_HINT }) : new NodeError(message);
  }
  const directions = fields.map((f) => (f.order === 'ascending' ? 1 : -1));
  // Each item's sort values are read once; the comparison is n8n's, on the same values.
  const keys = items.map((item) =>
    fields.map(({ fieldName }) => {
      const v = read(item.json, fieldName);
      return typeof v === 'string' ? v.toLowerCase() : v;
    }),
  );
  const order = items.map((_, i) => i);
  order.sort((a, b) => {
    for (let f = 0; f < directions.length; f++) {
      const va = keys[a]![f];
      const vb = keys[b]![f];
      if (!isEqual(va, vb)) return (lt(va, vb) ? -1 : 1) * directions[f]!;
    }
    return 0;
  });
  return order.map((i) => items[i]!);
}

async function sortedByCode(ctx: NodeContext, code: string): Promise<Item[]> {
  if (!/\breturn\b/.test(code)) throw new NodeError("Sort code doesn't return. Please add a 'return' statement to your code");
  const timeoutMs = typeof ctx.node.timeout === 'number' ? ctx.node.timeout * 1000 : undefined;
  let answer: { items?: unknown[]; error?: string };
  try {
    const input = JSON.stringify({ code, items: ctx.items.map((i) => i.json) });
    answer = JSON.parse(await ctx.services.codeSandbox.run({ body: SORT_RUNNER, input, timeoutMs, signal: ctx.signal, prelude: 'bare' }));
  } catch (err) {
    if (err instanceof SandboxError) throw new NodeError(`Sort code failed: ${err.message}`, { reason: err.reason });
    throw err;
  }
  if (answer.error !== undefined) throw new NodeError(`Sort code failed: ${answer.error}`, { reason: 'script' });
  return toItems(answer.items, 'Sort code results');
}

/**
 * Runs inside the sandbox: n8n's very `items.sort((a, b) => { <code> })`, in sloppy mode as in
 * n8n's runner (its default code assigns an undeclared `fieldName`).
 */
const SORT_RUNNER = `
const P = JSON.parse($0);
const items = P.items.map((json) => ({ json }));
try {
  const sorted = new Function('items', 'return items.sort((a, b) => { ' + P.code + ' })')(items);
  return JSON.stringify({ items: Array.isArray(sorted) ? sorted : [] });
} catch (err) {
  return JSON.stringify({ error: err && err.name ? err.name + ': ' + err.message : String(err) });
}
`;

export async function limitItems(ctx: NodeContext): Promise<Item[]> {
  const { p } = await firstItemParams(ctx);
  const max = Number(p.maxItems ?? 1);
  const items = ctx.items;
  if (max > items.length) return items;
  return (p.keep ?? 'firstItems') === 'firstItems' ? items.slice(0, max) : items.slice(items.length - max, items.length);
}
