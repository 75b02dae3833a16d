import { ownEntry, setOwn } from '../../../../../kernel/names';
import { NodeError, type Item, type NodeContext } from '../../../nodes';
import { fieldReader, type FieldReader, type Json } from './paths';
import { collection, entries, firstItemParams, text } from './params';

/**
 * Summarize (and Item Lists' operation): aggregations of fields over all items, or over the
 * groups of items that share the values of the "split by" fields. Each aggregation is a key
 * named after it and its field (`sum_amount`, `unique_count_id`, …). The output is one item per
 * group, or one item nesting the groups by value (`outputFormat: singleItem`).
 */

export interface SummarizeVariant {
  /** Item Lists 1-2: min and max consider numbers only (Infinity when there are none). */
  numericMinMax: boolean;
  /**
   * Output key names: as built (Item Lists 1); with brackets and quotes dropped, spaces and dots
   * turned to `_` and the changed keys moved last (Item Lists 2-3); changed in place (Summarize).
   */
  names: 'raw' | 'moved' | 'normalised';
  /**
   * A field no item has fails the node before summarizing (Item Lists 1, 2.0), or after unless
   * `continueIfFieldNotFound` (Summarize 1), or is only reported (`hint`, Summarize 1.1).
   */
  check: 'before' | 'after' | 'hint' | 'none';
  /**
   * Group values become object keys, ordered as an object orders them (Item Lists), strings in
   * the order first seen (Summarize 1), or stay values of their own type (Summarize 1.1).
   */
  groups: 'object' | 'string' | 'typed';
  /** The Summarize node: `includeEmpty` also counts empty values; split fields follow the aggregations. */
  standalone: boolean;
}

const PREFIX: Record<string, string> = {
  append: 'appended_',
  average: 'average_',
  concatenate: 'concatenated_',
  count: 'count_',
  countUnique: 'unique_count_',
  max: 'max_',
  min: 'min_',
  sum: 'sum_',
};

const ENTRY_DEFAULTS = { aggregation: 'count', field: '', includeEmpty: false, separateBy: ',', customSeparator: '' };

interface Aggregation {
  aggregation: string;
  field: string;
  includeEmpty: boolean;
  separator: string;
}

type Group = { rows: Json[] } | { field: string; groups: [unknown, Group][] };

export async function summarize(ctx: NodeContext, variant: SummarizeVariant): Promise<Item[]> {
  const { p } = await firstItemParams(ctx);
  const options = collection(p.options);
  const splitBy = text(p.fieldsToSplitBy, 'Fields to Split By')
    .split(',')
    .map((f) => f.trim())
    .filter((f) => f);
  const aggregations: Aggregation[] = entries(p.fieldsToSummarize, 'values', ENTRY_DEFAULTS, [ENTRY_DEFAULTS]).map((e) => ({
    aggregation: String(e.aggregation),
    field: String(e.field),
    includeEmpty: Boolean(e.includeEmpty),
    separator: String(e.separateBy === 'other' ? e.customSeparator : e.separateBy),
  }));
  if (!aggregations.some((a) => a.field !== '')) {
    throw new NodeError("You need to add at least one aggregation to 'Fields to Summarize' with non empty 'Field'");
  }
  const read = fieldReader(options.disableDotNotation);
  // As n8n does, fields are read from copies of the items that also hold their index.
  const rows = ctx.items.map((item, i) => ({ ...item.json, _itemIndex: i }));
  if (variant.check === 'before') {
    const absent = absentField(rows, aggregations, read);
    if (absent !== undefined) throw notFound(absent);
  }
  const tree = group(rows, splitBy, read, variant, Boolean(options.skipEmptySplitFields));
  const leaf = (g: { rows: Json[] }) => summary(g.rows, aggregations, read, variant);
  if (variant.check === 'after' || variant.check === 'hint') {
    const absent = absentField(rows, aggregations, read);
    if (absent !== undefined && variant.check === 'after' && !options.continueIfFieldNotFound) throw notFound(absent);
    // n8n shows this as an execution hint.
    if (absent !== undefined) ctx.log(notFound(absent).message, 'warn');
  }
  const out = options.outputFormat === 'singleItem' ? [nested(tree, leaf)] : variant.standalone ? flatAfter(tree, leaf) : flatBefore(tree, leaf, variant, {});
  return out.map((json) => ({ json }));
}

function notFound(field: string): NodeError {
  return new NodeError(`The field '${field}' does not exist in any items`);
}

function absentField(rows: Json[], aggregations: Aggregation[], read: FieldReader): string | undefined {
  return aggregations.find((a) => a.field !== '' && !rows.some((row) => read(row, a.field) !== undefined))?.field;
}

function isEmpty(v: unknown): boolean {
  return v === undefined || v === null || v === '';
}

function group(rows: Json[], splitBy: string[], read: FieldReader, variant: SummarizeVariant, skipEmpty: boolean): Group {
  if (!splitBy.length) return { rows };
  const [field, ...rest] = splitBy as [string, ...string[]];
  const groups = new Map<unknown, Json[]>();
  for (const row of rows) {
    const key = groupKey(read(row, field), variant);
    if (skipEmpty && typeof key !== 'number' && !key) continue;
    // Item Lists groups in a plain object, so by the key's text.
    const mapKey = variant.groups === 'object' ? String(key) : key;
    const list = groups.get(mapKey);
    if (list) list.push(row);
    else groups.set(mapKey, [row]);
  }
  const keys = variant.groups === 'object' ? objectKeyOrder([...groups.keys()] as string[]) : [...groups.keys()];
  return { field, groups: keys.map((key) => [key, group(groups.get(key)!, rest, read, variant, skipEmpty)]) };
}

/** The order of these keys in a JavaScript object: integer-like ones first, ascending. */
function objectKeyOrder(keys: string[]): string[] {
  const o: Record<string, true> = Object.create(null);
  for (const k of keys) o[k] = true;
  return Object.keys(o);
}

function groupKey(value: unknown, variant: SummarizeVariant): unknown {
  if (variant.groups === 'object') return typeof value === 'object' ? JSON.stringify(value) : value;
  const key = value && typeof value === 'object' ? JSON.stringify(value) : value;
  return variant.groups === 'string' ? String(key) : key;
}

/** The aggregations over one group's rows, keyed as the variant names them. */
function summary(rows: Json[], aggregations: Aggregation[], read: FieldReader, variant: SummarizeVariant): Json {
  if (variant.names === 'normalised') {
    return Object.fromEntries(aggregations.map((a) => [normalise(`${ownEntry(PREFIX, a.aggregation)}${a.field}`), aggregate(rows, a, read, variant)]));
  }
  const out: Json = {};
  for (const a of aggregations) setOwn(out, `${ownEntry(PREFIX, a.aggregation)}${a.field}`, aggregate(rows, a, read, variant));
  if (variant.names === 'moved') {
    moveKeys(out, /[\][\"]/, (k) => k.replace(/[\][\"]/g, ''));
    moveKeys(out, /[ .]/, (k) => k.replace(/[ .]/g, '_'));
  }
  return out;
}

/** Item Lists 2-3 rename a key by adding the new one (last) and deleting the old. */
function moveKeys(out: Json, match: RegExp, rename: (key: string) => string): void {
  for (const key of Object.keys(out)) {
    if (!match.test(key)) continue;
    const value = out[key];
    setOwn(out, rename(key), value);
    delete out[key];
  }
}

function normalise(name: string): string {
  return name.replace(/[\][\"]/g, '').replace(/[ .]/g, '_');
}

function aggregate(rows: Json[], a: Aggregation, read: FieldReader, variant: SummarizeVariant): unknown {
  const numeric = a.aggregation === 'average' || a.aggregation === 'sum' || (variant.numericMinMax && (a.aggregation === 'min' || a.aggregation === 'max'));
  let values: unknown[] = rows.map((row) => read(row, a.field));
  if (numeric) values = values.filter((v) => typeof v === 'number');
  const present = () => values.filter((v) => !isEmpty(v));
  switch (a.aggregation) {
    case 'append':
      return a.includeEmpty ? values : present();
    case 'concatenate':
      return (a.includeEmpty ? values : present())
        .map((v) => (typeof v === 'object' ? JSON.stringify(v) : v === undefined ? 'undefined' : v))
        .join(a.separator);
    // Numeric aggregations kept numbers only; min and max over other values compare as JavaScript does (strings by code units).
    case 'average':
      return (values as number[]).reduce((sum, v) => sum + v, 0) / values.length;
    case 'sum':
      return (values as number[]).reduce((sum, v) => sum + v, 0);
    case 'min':
      return variant.numericMinMax ? (values as number[]).reduce((m, v) => Math.min(m, v), Infinity) : extreme(values, (v, m) => (v as number) < (m as number));
    case 'max':
      return variant.numericMinMax
        ? (values as number[]).reduce((m, v) => Math.max(m, v), -Infinity)
        : extreme(values, (v, m) => (v as number) > (m as number));
    case 'countUnique':
      return new Set(variant.standalone && a.includeEmpty ? values : present()).size;
    default:
      return variant.standalone && a.includeEmpty ? values.length : present().length;
  }
}

/** n8n's min/max over values of any type (JavaScript's `<` and `>`), empty values skipped; null when none. */
function extreme(values: unknown[], better: (v: unknown, m: unknown) => boolean): unknown {
  let m: unknown;
  for (const v of values) if (!isEmpty(v) && (m === undefined || better(v, m))) m = v;
  return m === undefined ? null : m;
}

/** One object nesting the groups by value (singleItem). */
function nested(tree: Group, leaf: (g: { rows: Json[] }) => Json): Json {
  if ('rows' in tree) return leaf(tree);
  return Object.fromEntries(tree.groups.map(([key, sub]) => [String(key), nested(sub, leaf)]));
}

/** Item Lists: one item per group, the split fields (outer first) before the aggregations. */
function flatBefore(tree: Group, leaf: (g: { rows: Json[] }) => Json, variant: SummarizeVariant, outer: Json): Json[] {
  if ('rows' in tree) return [leaf(tree)];
  const name = variant.names === 'raw' ? tree.field : normalise(tree.field);
  return tree.groups.flatMap(([key, sub]) => {
    const stage = { ...outer };
    setOwn(stage, name, key);
    if ('rows' in sub) return [{ ...stage, ...leaf(sub) }];
    return flatBefore(sub, leaf, variant, stage);
  });
}

/** Summarize: one item per group, the aggregations then the split fields (inner first). */
function flatAfter(tree: Group, leaf: (g: { rows: Json[] }) => Json): Json[] {
  if ('rows' in tree) return [leaf(tree)];
  const name = normalise(tree.field);
  return tree.groups.flatMap(([key, sub]) =>
    flatAfter(sub, leaf).map((row) => {
      setOwn(row, name, key);
      return row;
    }),
  );
}
