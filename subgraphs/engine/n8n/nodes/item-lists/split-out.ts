import { setOwn } from '../../../../../kernel/names';
import { NodeError, type Item, type NodeContext } from '../../../nodes';
import { deepCopy, fieldReader, reachesPrototype, setPath, unsetPath, type FieldReader, type Json } from './paths';
import { NESTED_FIELD_HINT, collection, fieldList, fieldNotFound, namedFields, text, type Params } from './params';

/**
 * Split Out (and Item Lists' "Split Out Items"): a list inside each item becomes one item per
 * entry. Several fields (comma-separated) split side by side, entry n of each going into item n;
 * an object splits into its values; `destinationFieldName` renames the split fields; `include`
 * copies none, all, or selected other fields of the item. An object entry of a single field
 * without a destination becomes the item itself. Items here carry no binary data, so `$binary`
 * splits into nothing and `includeBinary` has nothing to copy.
 */

export interface SplitOutVariant {
  /** Item Lists 1: one field, a list only, the other fields placed before the split one. */
  legacy: boolean;
  /** How the field names are read: comma-separated text (Item Lists), or text or a list (Split Out). */
  fields: 'text' | 'list';
  /** Item Lists 3 and Split Out accept `$json.field` and read their options per item. */
  current: boolean;
  /** Item Lists 1-2 list the fields to include as `{ fields: [{ fieldName }] }`. */
  includeList: 'collection' | 'text';
  /** A field that an item lacks fails the node (Item Lists 1, 2.0) or splits into nothing. */
  missingFails: boolean;
  /** A value that is neither list nor object fails the node (Item Lists 2.0, 2.1) or is split as a list of one. */
  scalarFails: boolean;
  /** Split Out reports fields that no item has (an execution hint in n8n). */
  hints: boolean;
}

interface Settings {
  fields: string[];
  /** `destinationFieldName` as given (Item Lists 1), and split at commas (later versions). */
  destination: string;
  destinations: string[];
  include: string;
  dotless: boolean;
  params: Params;
}

export async function splitOutItems(ctx: NodeContext, variant: SplitOutVariant): Promise<Item[]> {
  const all = await ctx.parameters();
  const out: Item[] = [];
  const seen = new Map<string, boolean>();
  // Checked as each list is found, before its items are made: one list may hold more entries than an execution may output.
  const entries = (count: number) => ctx.checkOutput(out.length + count);
  ctx.items.forEach((item, i) => {
    const s = settings(all[i] ?? {}, all[0] ?? {}, variant);
    const split = variant.legacy ? splitLegacy(item.json, i, s, entries) : splitFields(item.json, i, s, variant, seen, entries);
    for (const json of split) out.push({ json });
  });
  if (variant.hints) for (const [field, found] of seen) if (!found) fieldNotFound(ctx, field);
  return out;
}

function settings(p: Params, first: Params, variant: SplitOutVariant): Settings {
  const options = collection(p.options);
  const names = fieldNames(p.fieldToSplitOut, variant);
  const destination = text(options.destinationFieldName, 'Destination Field Name');
  const destinations = destination
    .split(',')
    .filter((f) => f.trim() !== '')
    .map((f) => f.trim());
  if (!variant.legacy && destinations.length && destinations.length !== names.length) {
    throw new NodeError('If multiple fields to split out are given, the same number of destination fields must be given');
  }
  // A destination is a dot-notation path; one through an object's prototype is refused, not written.
  if (!variant.legacy && destinations.some(reachesPrototype)) {
    throw new NodeError('Invalid destination field name', { description: `'${destination}' would write into an object's prototype` });
  }
  // Before Item Lists 3, "disable dot notation" is read once, at the first item.
  const dotless = Boolean(variant.current ? options.disableDotNotation : collection(first.options).disableDotNotation);
  return { fields: names, destination, destinations, include: String(p.include ?? 'noOtherFields'), dotless, params: p };
}

function fieldNames(value: unknown, variant: SplitOutVariant): string[] {
  if (variant.legacy) return [text(value, 'Field To Split Out')];
  const names =
    variant.fields === 'list'
      ? fieldList(value, 'Fields To Split Out').map(String)
      : text(value, 'Fields To Split Out')
          .split(',')
          .map((f) => f.trim());
  return variant.current ? names.map((f) => f.replace(/^\$json\./, '')) : names;
}

/** The other fields to copy (`selectedOtherFields`); asked only of an item that splits into something. */
function includedFields(s: Settings, list: SplitOutVariant['includeList']): string[] {
  const names = list === 'collection' ? namedFields(s.params.fieldsToInclude) : fieldList(s.params.fieldsToInclude, 'Fields To Include');
  if (!names.length) throw new NodeError('No fields specified', { description: 'Please add a field to include' });
  return names;
}

function missing(field: string, dotless: boolean, itemIndex: number): NodeError {
  const message = `Couldn't find the field '${field}' in the input data`;
  return dotless && field.includes('.') ? new NodeError(message, { description: NESTED_FIELD_HINT }) : new NodeError(message, { itemIndex });
}

function splitLegacy(json: Json, i: number, s: Settings, entries: (count: number) => void): Json[] {
  const field = s.fields[0]!;
  const read = fieldReader(s.dotless);
  const list = read(json, field);
  if (list === undefined) throw missing(field, s.dotless, i);
  if (!Array.isArray(list)) throw new NodeError(`The provided field '${field}' is not an array`, { itemIndex: i });
  entries(list.length);
  const included = s.include === 'selectedOtherFields' && list.length ? includedFields(s, 'collection') : [];
  return list.map((element) => {
    let item: Json = {};
    if (s.include === 'selectedOtherFields') {
      for (const name of included) if (name !== field) setOwn(item, name, read(json, name));
    } else if (s.include === 'allOtherFields') {
      item = deepCopy(json);
      unsetPath(item, field);
    }
    // typeof null is 'object' too: a null entry becomes an empty item in this version.
    if (typeof element === 'object' && s.include === 'noOtherFields' && s.destination === '') return { ...item, ...element };
    setOwn(item, s.destination || field, element);
    return item;
  });
}

function splitFields(json: Json, i: number, s: Settings, variant: SplitOutVariant, seen: Map<string, boolean>, entries: (count: number) => void): Json[] {
  const read = fieldReader(s.dotless);
  const single = s.fields.length === 1;
  const rows: Json[] = [];
  s.fields.forEach((field, f) => {
    const destination = s.destinations[f] || '';
    const list = variant.current && field === '$binary' ? [] : splittable(json, field, i, s, read, variant, seen);
    entries(Math.max(rows.length, list.length));
    list.forEach((element, e) => {
      const row = (rows[e] ??= {});
      if (element !== null && typeof element === 'object' && s.include === 'noOtherFields' && destination === '' && single) {
        rows[e] = { ...row, ...element };
      } else if (destination && !s.dotless) {
        setPath(row, destination, element);
      } else {
        setOwn(row, destination || field, element);
      }
    });
  });
  if (s.include === 'allOtherFields' && rows.length) {
    const rest = withoutFields(json, s);
    return rows.map((row) => ({ ...deepCopy(rest), ...row }));
  }
  const included = s.include === 'selectedOtherFields' && rows.length ? includedFields(s, variant.includeList) : [];
  for (const row of rows) for (const name of included) setOwn(row, name, read(json, name));
  return rows;
}

/** A copy of the item without the fields split out of it. */
function withoutFields(json: Json, s: Settings): Json {
  const rest = deepCopy(json);
  for (const field of s.fields) {
    if (s.dotless) delete rest[field];
    else unsetPath(rest, field);
  }
  return rest;
}

/** The entries one field splits into. */
function splittable(json: Json, field: string, i: number, s: Settings, read: FieldReader, variant: SplitOutVariant, seen: Map<string, boolean>): unknown[] {
  let value = read(json, field);
  if (variant.hints) seen.set(field, (seen.get(field) ?? false) || value !== undefined);
  if (value === undefined) {
    if (variant.missingFails) throw missing(field, s.dotless, i);
    return [];
  }
  if (value === null || typeof value !== 'object') {
    if (variant.scalarFails) throw new NodeError(`The provided field '${field}' is not an array or object`, { itemIndex: i });
    value = [value];
  }
  return Array.isArray(value) ? value : Object.values(value as Json);
}
