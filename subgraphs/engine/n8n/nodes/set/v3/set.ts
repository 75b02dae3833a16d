import { ownEntry } from '../../../../../../kernel/names';
import { type Item, type NodeContext, type NodeResult, isPlainObject, listOf, NodeError, objectOf } from '../../../../nodes';
import { convertField, parseJsonObject } from '../convert';
import { ItemWriter } from '../paths';

/**
 * Edit Fields (Set) 3 to 3.4. Per item, the new fields come from the manual mapping (3.0–3.2:
 * `fields.values` with `type` and `<type>Value`; 3.3+: `assignments.assignments` with
 * {name, value, type}) or from the JSON of raw mode (`jsonOutput`). They are written, in the
 * order of their keys, onto the input fields chosen by `include` (3.3+: only when
 * `includeOtherFields`, otherwise none): all, none, selected (listed fields first, a dotted
 * one under its last key) or all except the listed ones. The input's files pass on only when
 * `includeBinary` is set (before 3.4), or unless `stripBinary` is set or no input field is kept (3.4+).
 */

type Params = Record<string, unknown>;
type Json = Record<string, unknown>;

interface Options {
  include: unknown;
  dotNotation: boolean;
  ignoreConversionErrors: boolean;
  includeFields: unknown;
  excludeFields: unknown;
  keepBinary: boolean;
}

/** The new fields of item `i` (null when the JSON is `null`). */
type FieldsOf = (p: Params, i: number, options: Options) => Json | null;

/** n8n's JSON Output when the node stores none. */
const JSON_OUTPUT_DEFAULT = '{\n  "my_field_1": "value",\n  "my_field_2": 1\n}\n';

/** Values n8n gives a 3.0–3.2 field that does not store its value (an object field's `={}` is JSON text, parsed per item). */
const FIELD_DEFAULTS: Record<string, unknown> = { stringValue: '', numberValue: '', booleanValue: 'true', arrayValue: '', objectValue: '{}' };

export async function executeSetV3(ctx: NodeContext, version: number): Promise<NodeResult> {
  const raw = ctx.node.parameters;
  const mode = raw.mode ?? 'manual';
  const fieldsOf = mode === 'raw' ? rawFields : version >= 3.3 ? assignedFields(version) : listedFields(raw, version);
  const params = await parametersOf(ctx);
  const out: Item[] = [];
  ctx.items.forEach((item, i) => {
    try {
      const p = params[i]!;
      if (p instanceof Error) throw p;
      const options = optionsOf(p, version);
      const json = compose(item.json, fieldsOf(p, i, options), options);
      out.push(options.keepBinary && item.binary ? { json, binary: item.binary, pairedItem: { item: i } } : { json, pairedItem: { item: i } });
    } catch (err) {
      if (!ctx.continueOnFail || ctx.signal.aborted) throw err;
      // n8n's shapes: the manual mode puts pairedItem inside the json.
      const error = err instanceof Error ? err.message : String(err);
      out.push(mode === 'raw' ? { json: { error }, pairedItem: { item: i } } : { json: { error, pairedItem: { item: i } } });
    }
  });
  return { outputs: [duplicated(out, params[0], ctx.expressionData.execution.mode)] };
}

/**
 * The parameters for each item. When the node continues on failure, n8n fails only the items
 * whose expressions fail: then each item is resolved on its own.
 */
async function parametersOf(ctx: NodeContext): Promise<(Params | Error)[]> {
  try {
    return await ctx.parameters();
  } catch (err) {
    if (!ctx.continueOnFail || ctx.signal.aborted) throw err;
    const one = (i: number) =>
      ctx.parameters([i]).then(
        (p) => p[0]!,
        (e: unknown) => (e instanceof Error ? e : new Error(String(e))),
      );
    return Promise.all(ctx.items.map((_, i) => one(i)));
  }
}

function optionsOf(p: Params, version: number): Options {
  const options = isPlainObject(p.options) ? p.options : {};
  const include = version >= 3.3 && !p.includeOtherFields ? 'none' : (p.include ?? 'all');
  return {
    include,
    dotNotation: options.dotNotation !== false,
    ignoreConversionErrors: !!options.ignoreConversionErrors,
    includeFields: p.includeFields ?? '',
    excludeFields: p.excludeFields ?? '',
    keepBinary: version >= 3.4 ? !options.stripBinary && include !== 'none' : !!options.includeBinary,
  };
}

const rawFields: FieldsOf = (p, i) => parseJsonObject(p.jsonOutput ?? JSON_OUTPUT_DEFAULT, i);

/** 3.3+: `assignments.assignments`, in order (a repeated name keeps its first place and last value). */
function assignedFields(version: number): FieldsOf {
  return (p, i, options) => {
    const list: unknown[] = listOf(objectOf(p.assignments).assignments);
    const fields = list.filter(isPlainObject).map((a) => {
      const name = String(a.name);
      return [name, convertField({ name, type: a.type, value: a.value }, i, options.ignoreConversionErrors, version)] as const;
    });
    return Object.fromEntries(fields);
  };
}

/**
 * 3.0–3.2: `fields.values`. An object field given as an expression (`={…}`) is the JSON its
 * text makes once its `{{ }}` are replaced (n8n keys these by the stored name, so a name that
 * is itself an expression is converted as a plain object field).
 */
function listedFields(raw: Params, version: number): FieldsOf {
  const rawList: unknown[] = listOf(objectOf(raw.fields).values);
  const jsonTemplates = new Set(
    rawList
      .filter(
        (e): e is Params =>
          isPlainObject(e) && e.type === 'objectValue' && (e.objectValue === undefined || (typeof e.objectValue === 'string' && e.objectValue.startsWith('='))),
      )
      .map((e) => e.name ?? ''),
  );
  return (p, i, options) => {
    const list: unknown[] = listOf(objectOf(p.fields).values);
    const fields: Json = {};
    for (const entry of list) {
      if (!isPlainObject(entry)) continue;
      const type = String(entry.type ?? 'stringValue');
      const name = String(entry.name ?? '');
      let value = Object.hasOwn(entry, type) ? entry[type] : ownEntry(FIELD_DEFAULTS, type);
      if (type === 'objectValue' && jsonTemplates.has(name) && value !== undefined && value !== null) value = parseJsonObject(value, i, name);
      const fieldType = type.replace('Value', '');
      fields[name] = convertField({ name, type: fieldType, value }, i, options.ignoreConversionErrors, version);
    }
    return fields;
  };
}

/** The output item's json: the included input fields, then the new fields written in order. */
function compose(input: Json, fields: Json | null, options: Options): Json {
  const writer = included(input, options);
  // n8n reads the keys of a JSON `null` and fails with JavaScript's message.
  if (fields === null) throw new NodeError('Cannot convert undefined or null to object');
  for (const key of Object.keys(fields)) writer.set(key, fields[key]);
  return writer.root;
}

function included(input: Json, o: Options): ItemWriter {
  switch (o.include) {
    case 'all':
      return new ItemWriter({ ...input }, o.dotNotation, true);
    case 'none':
      return new ItemWriter({}, o.dotNotation, true);
    case 'selected': {
      const writer = new ItemWriter({}, o.dotNotation, true);
      for (const key of fieldList(o.includeFields)) {
        const keyToSet = o.dotNotation && key.includes('.') ? key.slice(key.lastIndexOf('.') + 1) : key;
        writer.set(keyToSet, writer.get(input, key));
      }
      return writer;
    }
    case 'except': {
      const writer = new ItemWriter({ ...input }, o.dotNotation, true);
      for (const key of fieldList(o.excludeFields)) writer.unset(key);
      return writer;
    }
    default:
      throw new NodeError(`The include option "${String(o.include)}" is not known!`);
  }
}

/** A comma-separated list of field names. */
function fieldList(v: unknown): string[] {
  return String(v)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/**
 * "Duplicate Item" (a node setting for testing): n8n repeats each output item `duplicateCount`
 * more times in manual runs only, and ignores it when the workflow runs otherwise.
 */
function duplicated(out: Item[], first: Params | Error | undefined, executionMode: string): Item[] {
  if (!first || first instanceof Error || !first.duplicateItem || executionMode !== 'manual') return out;
  const count = Number(first.duplicateCount ?? 0);
  const result: Item[] = [];
  for (const item of out) {
    for (let j = 0; j <= count; j++) result.push(j === 0 ? item : { ...item, json: structuredClone(item.json) });
  }
  return result;
}
