import { NodeError, type Item, type NodeContext } from '../../../nodes';
import { fieldReader, flattenKeys, isEqual, lt, pickPaths, type Json } from './paths';
import { NESTED_FIELD_HINT, collection, fieldList, firstItemParams, namedFields, shows } from './params';

/**
 * Remove Duplicates (and Item Lists' operation): of items equal on the compared fields, the
 * first stays. `compare` picks the fields: all (every leaf path any item has), all except some
 * (the first item's leaf paths minus those), or selected ones; `removeOtherFields` keeps only
 * the compared fields. As n8n does, the items are sorted by the compared values and neighbours
 * compared, which decides the errors (a field missing from an item, one whose type varies).
 */

export interface RemoveDuplicatesVariant {
  /** Item Lists 1-2 list fields as `{ fields: [{ fieldName }] }`; later versions as comma-separated text. */
  lists: 'collection' | 'text';
  /**
   * What a field whose type varies between items does: fail (`strict`); fail unless the value is
   * null, naming the items (`nullTolerant`, Remove Duplicates 1.1 and 2); nothing, the sort
   * grouping values by type first (`none`, Item Lists 3.1).
   */
  types: 'strict' | 'nullTolerant' | 'none';
}

export async function removeDuplicates(ctx: NodeContext, variant: RemoveDuplicatesVariant): Promise<Item[]> {
  const items = ctx.items;
  if (!items.length) return [];
  const { raw, p } = await firstItemParams(ctx);
  const options = shows(raw.compare, 'allFields', 'allFieldsExcept', 'selectedFields') ? collection(p.options) : {};
  const dotless = Boolean(options.disableDotNotation);
  const keys = comparedKeys(items, p, dotless, variant);

  // As n8n does, values are read from a copy of each item that also holds its index.
  const read = fieldReader(dotless);
  const values = items.map((item, i) => {
    const json = { ...item.json, __INDEX: i };
    return keys.map((key) => read(json, key));
  });
  const order = items.map((_, i) => i).sort((a, b) => compare(values[a]!, values[b]!, variant.types === 'none'));
  validate(keys, order, values, dotless, variant);

  const removed = new Set<number>();
  let kept = order[0]!;
  for (const index of order.slice(1)) {
    if (values[index]!.every((v, k) => isEqual(v, values[kept]![k]))) removed.add(index);
    else kept = index;
  }
  const out = items.filter((_, i) => !removed.has(i));
  return options.removeOtherFields ? out.map((item) => ({ json: pickPaths(item.json, keys) })) : out;
}

function comparedKeys(items: Item[], p: Json, dotless: boolean, variant: RemoveDuplicatesVariant): string[] {
  const keysOf = dotless ? Object.keys : flattenKeys;
  const list = (value: unknown, label: string) => (variant.lists === 'collection' ? namedFields(value) : fieldList(value, label));
  const compare = p.compare ?? 'allFields';
  if (compare === 'allFieldsExcept') {
    const excluded = list(p.fieldsToExclude, 'Fields To Exclude');
    if (!excluded.length) throw new NodeError('No fields specified. Please add a field to exclude from comparison');
    return (dotless ? allKeys(items, keysOf) : flattenKeys(items[0]!.json)).filter((key) => !excluded.includes(key));
  }
  if (compare === 'selectedFields') {
    const selected = list(p.fieldsToCompare, 'Fields To Compare');
    if (!selected.length) throw new NodeError('No fields specified. Please add a field to compare on');
    return selected.map((key) => String(key).trim());
  }
  return allKeys(items, keysOf);
}

/** Every key any item has, in the order first seen. */
function allKeys(items: Item[], keysOf: (json: Json) => string[]): string[] {
  const seen = new Set<string>();
  for (const item of items) for (const key of keysOf(item.json)) seen.add(key);
  return [...seen];
}

function compare(a: unknown[], b: unknown[], byTypeFirst: boolean): number {
  for (let k = 0; k < a.length; k++) {
    if (byTypeFirst) {
      const diff = typeRank(a[k]) - typeRank(b[k]);
      if (diff !== 0) return diff;
    }
    if (!isEqual(a[k], b[k])) return lt(a[k], b[k]) ? -1 : 1;
  }
  return 0;
}

/** n8n's typeToNumber: the order of types when Item Lists 3.1 sorts mixed values. */
function typeRank(v: unknown): number {
  if (Array.isArray(v)) return 9;
  if (v === null) return 10;
  return { string: 1, number: 2, bigint: 3, boolean: 4, symbol: 5, undefined: 6, object: 7, function: 8 }[typeof v];
}

function validate(keys: string[], order: number[], values: unknown[][], dotless: boolean, variant: RemoveDuplicatesVariant): void {
  keys.forEach((key, k) => {
    let type: string | undefined;
    order.forEach((index, i) => {
      if (key === '') throw new NodeError('Name of field to compare is blank');
      const value = values[index]![k];
      if (value === null && variant.types === 'nullTolerant') return;
      if (value === undefined) {
        const message = `'${key}' field is missing from some input items`;
        throw dotless && key.includes('.') ? new NodeError(message, { description: NESTED_FIELD_HINT }) : new NodeError(message);
      }
      if (variant.types !== 'none' && type !== undefined && type !== typeof value) {
        const where = variant.types === 'nullTolerant' ? `, in item [${i - 1}] it's a ${type} and in item [${i}] it's a ${typeof value} ` : '';
        throw new NodeError(`'${key}' isn't always the same type`, { description: `The type of this field varies between items${where}` });
      }
      type = typeof value;
    });
  });
}
