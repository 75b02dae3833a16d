import { setOwn } from '../../../../../kernel/names';
import { NodeError, type Item, type NodeContext } from '../../../nodes';
import { fieldReader, ownValue, setPath, type FieldReader, type Json } from './paths';
import { NESTED_FIELD_HINT, collection, entries, fieldList, fieldNotFound, firstItemParams, namedFields, shows, text, type Params } from './params';

/**
 * Aggregate (and Item Lists' "Concatenate Items"): every input item into one. "Individual
 * fields" gathers each named field's values into a list (renamed on request, nested by dot
 * notation, lists merged with `mergeLists`, missing and null values kept with `keepMissing`);
 * "all item data" puts the items' json, optionally with only some fields, in one list field.
 * Items here carry no binary data, so `includeBinaries` has nothing to add.
 */

export interface AggregateVariant {
  /** Item Lists 1-2 list fields as `{ fields: [{ fieldName }] }`; later versions as comma-separated text. */
  lists: 'collection' | 'text';
  /** Item Lists 1 and 2.0 refuse a blank field and one that no item has before aggregating. */
  checkFields: boolean;
  /** The Aggregate node reports a field that no item has (an execution hint in n8n). */
  hints: boolean;
  /** The Aggregate node's `groupByFields` option: one output item per distinct value of those fields. */
  groups?: boolean;
}

const FIELD_DEFAULTS = { fieldToAggregate: '', renameField: false };

interface FieldSpec {
  input: string;
  rename: boolean;
  output: string | undefined;
}

export async function aggregateItems(ctx: NodeContext, variant: AggregateVariant): Promise<Item[]> {
  const { raw, p } = await firstItemParams(ctx);
  const one = (items: Item[]): Json =>
    (p.aggregate ?? 'aggregateIndividualFields') === 'aggregateIndividualFields'
      ? individualFields(ctx, items, raw, p, variant)
      : allItemData(items, raw, p, variant);
  const options = collection(p.options);
  const by = variant.groups ? groupFields(options.groupByFields) : [];
  if (!by.length) return [{ json: one(ctx.items) }];
  // Each group's values lead its item, then what was aggregated over the group's items.
  const dotless = Boolean(options.disableDotNotation);
  const read = fieldReader(dotless);
  return groupItems(ctx.items, by, read).map(({ values, items }) => {
    const json: Json = {};
    by.forEach((field, i) => (dotless ? setOwn(json, field, values[i]) : setPath(json, field, values[i])));
    const aggregated = one(items);
    for (const key of Object.keys(aggregated)) setOwn(json, key, aggregated[key]);
    return { json };
  });
}

function groupFields(value: unknown): string[] {
  if (value === undefined || value === null || value === '') return [];
  const list = Array.isArray(value) ? value.map(String) : text(value, 'Group By Fields').split(',');
  return list.map((f) => f.trim()).filter((f) => f !== '');
}

/** The items by their values of `fields`, the groups in the order their first item comes. */
function groupItems(items: Item[], fields: string[], read: FieldReader): { values: unknown[]; items: Item[] }[] {
  const groups = new Map<string, { values: unknown[]; items: Item[] }>();
  for (const item of items) {
    const values = fields.map((f) => read(item.json, f));
    const key = JSON.stringify(values.map((v) => (v === undefined ? null : v)));
    const group = groups.get(key);
    if (group) group.items.push(item);
    else groups.set(key, { values, items: [item] });
  }
  return [...groups.values()];
}

function individualFields(ctx: NodeContext, items: Item[], raw: Params, p: Params, variant: AggregateVariant): Json {
  const options = collection(p.options);
  const dotless = Boolean(options.disableDotNotation);
  const read = fieldReader(dotless);
  const rawFields = entries(raw.fieldsToAggregate, 'fieldToAggregate', FIELD_DEFAULTS, [FIELD_DEFAULTS]);
  const fields: FieldSpec[] = entries(p.fieldsToAggregate, 'fieldToAggregate', FIELD_DEFAULTS, [FIELD_DEFAULTS]).map((e, i) => ({
    input: text(e.fieldToAggregate, 'Input Field Name'),
    rename: Boolean(e.renameField),
    // The output name is a parameter only while "Rename Field" is on.
    output: shows(rawFields[i]?.renameField, false, true) ? text(e.outputFieldName, 'Output Field Name') : undefined,
  }));
  if (!fields.length) throw new NodeError('No fields specified', { description: 'Please add a field to aggregate' });
  if (variant.checkFields) checkFields(items, fields, read, dotless, Boolean(options.keepMissing));

  const values: Record<string, unknown[]> = Object.create(null);
  const used: (string | undefined)[] = [];
  for (const field of fields) {
    const name = field.rename ? field.output : field.input;
    if (used.includes(name)) {
      throw new NodeError(`The '${name}' output field is used more than once`, { description: 'Please make sure each output field name is unique' });
    }
    used.push(name);
    if (field.input === '') continue;
    const target = field.output || (!dotless && field.input.includes('.') ? field.input.split('.').pop()! : field.input);
    const { list, found } = collect(items, field.input, read, Boolean(options.keepMissing), Boolean(options.mergeLists));
    values[target] = list;
    if (variant.hints && !found) fieldNotFound(ctx, field.input);
  }
  const out: Json = {};
  for (const key of Object.keys(values)) {
    if (dotless) setOwn(out, key, values[key]);
    else setPath(out, key, values[key]);
  }
  return out;
}

/** The field's values over the items, and whether any item has the field. */
function collect(items: Item[], field: string, read: FieldReader, keepMissing: boolean, mergeLists: boolean): { list: unknown[]; found: boolean } {
  const list: unknown[] = [];
  let found = false;
  for (const item of items) {
    let value = read(item.json, field);
    found ||= value !== undefined;
    if (!keepMissing) {
      if (Array.isArray(value)) value = value.filter((v) => v !== null);
      else if (value === null || value === undefined) continue;
    }
    if (Array.isArray(value) && mergeLists) for (const v of value) list.push(v);
    else list.push(value);
  }
  return { list, found };
}

function checkFields(items: Item[], fields: FieldSpec[], read: FieldReader, dotless: boolean, keepMissing: boolean): void {
  for (const { input } of fields) {
    if (input === '') throw new NodeError('Field to aggregate is blank', { description: 'Please add a field to aggregate' });
    const found = items.some((item) => (dotless ? Object.prototype.hasOwnProperty.call(item.json, input) : read(item.json, input) !== undefined));
    if (found) continue;
    if (dotless && input.includes('.')) throw new NodeError(`Couldn't find the field '${input}' in the input data`, { description: NESTED_FIELD_HINT });
    if (!keepMissing) throw new NodeError(`Couldn't find the field '${input}' in the input data`);
  }
}

function allItemData(items: Item[], raw: Params, p: Params, variant: AggregateVariant): Json {
  const destination = String(p.destinationFieldName ?? 'data');
  const list = (value: unknown, label: string) => (variant.lists === 'collection' ? namedFields(value) : fieldList(value, label));
  const exclude = shows(raw.include, 'allFields', 'allFieldsExcept') ? list(p.fieldsToExclude, 'Fields To Exclude') : [];
  const include = shows(raw.include, 'allFields', 'specifiedFields') ? list(p.fieldsToInclude, 'Fields To Include') : [];
  let data: Json[] = items.map((item) => item.json);
  if (exclude.length || include.length) {
    data = [];
    for (const item of items) {
      const kept: Json = {};
      for (const key of Object.keys(item.json)) {
        if (exclude.length && exclude.includes(key)) continue;
        if (include.length && !include.includes(key)) continue;
        setOwn(kept, key, ownValue(item.json, key));
      }
      if (Object.keys(kept).length) data.push(kept);
    }
  }
  return { [destination]: data };
}
