import { type Item, type NodeContext, type NodeResult, isPlainObject } from '../../../../nodes';
import { ItemWriter } from '../paths';

/**
 * Set 1 and 2: `values.boolean`, `values.number` and `values.string` lists of {name, value},
 * written in that order (booleans first, whatever the order in the node) onto a copy of the
 * item, or onto an empty item with `keepOnlySet`. A boolean is the value's truthiness; version
 * 2 turns a number field's numeric text into a number, version 1 keeps the text. Names use dot
 * notation unless `options.dotNotation` is false.
 */

type Params = Record<string, unknown>;

interface ValueKind {
  kind: 'boolean' | 'number' | 'string';
  /** n8n's default for a value the node does not store. */
  empty: unknown;
  convert(value: unknown, version: number): unknown;
}

const KINDS: readonly ValueKind[] = [
  { kind: 'boolean', empty: false, convert: (v) => !!v },
  {
    kind: 'number',
    empty: 0,
    convert: (v, version) => (version >= 2 && typeof v === 'string' && !Number.isNaN(Number(v)) ? Number(v) : v),
  },
  { kind: 'string', empty: '', convert: (v) => v },
];

/** n8n's default name for a value whose name the node does not store. */
const DEFAULT_NAME = 'propertyName';

export async function executeSetV1(ctx: NodeContext, version: number): Promise<NodeResult> {
  // n8n runs Set 1/2 once on an empty item when it receives none.
  const items: Item[] = ctx.items.length ? ctx.items : [{ json: {} }];
  const params = await ctx.parameters();
  return { outputs: [items.map((item, i) => ({ json: setValues(item.json, params[i]!, version), pairedItem: { item: i } }))] };
}

function setValues(json: Record<string, unknown>, p: Params, version: number): Record<string, unknown> {
  const options = isPlainObject(p.options) ? p.options : {};
  const writer = new ItemWriter(p.keepOnlySet ? {} : { ...json }, options.dotNotation !== false, false);
  const values = isPlainObject(p.values) ? p.values : {};
  for (const { kind, empty, convert } of KINDS) {
    const list: unknown[] = Array.isArray(values[kind]) ? values[kind] : [];
    for (const entry of list) {
      if (!isPlainObject(entry)) continue;
      const name = 'name' in entry ? entry.name : DEFAULT_NAME;
      writer.set(name, convert('value' in entry ? entry.value : empty, version));
    }
  }
  return writer.root;
}
