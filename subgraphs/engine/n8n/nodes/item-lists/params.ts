import { NodeError, isPlainObject, type NodeContext } from '../../../nodes';

/**
 * How n8n reads the parameters of its item-list nodes. An export omits every value left at its
 * default, and n8n fills the defaults back in before the node runs; it also drops a parameter
 * whose `displayOptions` do not match the stored values (a stale option left behind by a mode
 * switch is not read). Display is decided on the stored values, where an expression matches any
 * condition; the values themselves are read resolved.
 */

export type Params = Record<string, unknown>;

export interface NodeParams {
  /** The parameters as stored (for display rules). */
  raw: Params;
  /** The parameters with expressions resolved for item 0 (n8n reads these nodes' settings there). */
  p: Params;
}

export async function firstItemParams(ctx: NodeContext): Promise<NodeParams> {
  const [p] = await ctx.parameters([0]);
  return { raw: ctx.node.parameters ?? {}, p: p ?? {} };
}

export function isExpression(v: unknown): boolean {
  return typeof v === 'string' && v.startsWith('=');
}

/** Whether a parameter shown only when `stored` (default `dflt`) is one of `allowed` is read. */
export function shows(stored: unknown, dflt: unknown, ...allowed: unknown[]): boolean {
  return isExpression(stored) || allowed.includes(stored ?? dflt);
}

/** An `options`-type value that cannot hold an expression (n8n drops the `=` of those). */
export function fixedOption(stored: unknown, dflt: string): string {
  return typeof stored === 'string' ? stored.replace(/^=/, '') : dflt;
}

/** A node's `invalid` check that its `operation`, when set, is one of `operations`. */
export function operationIn(operations: readonly string[]): (p: Params) => { parameter: string; message: string } | undefined {
  return (p) =>
    typeof p.operation === 'string' && !operations.includes(fixedOption(p.operation, ''))
      ? { parameter: 'operation', message: `must be one of ${operations.join(', ')}` }
      : undefined;
}

/** A collection of options (`options`): what is set, nothing filled in. */
export function collection(value: unknown): Params {
  return isPlainObject(value) ? value : {};
}

/**
 * The entries of a fixedCollection with many values (`{ [key]: [...] }`), each with its fields'
 * defaults filled in; `dflt` when the parameter is absent.
 */
export function entries(value: unknown, key: string, defaults: Params, dflt: Params[] = []): Params[] {
  if (value === undefined) return dflt.map((e) => ({ ...defaults, ...e }));
  const list = isPlainObject(value) ? value[key] : undefined;
  if (!Array.isArray(list)) return [];
  return list.map((e) => ({ ...defaults, ...(isPlainObject(e) ? withoutUndefined(e) : {}) }));
}

function withoutUndefined(e: Params): Params {
  const out: Params = {};
  for (const [k, v] of Object.entries(e)) if (v !== undefined) out[k] = v;
  return out;
}

/** Field names of Item Lists 1-2's `{ fields: [{ fieldName }] }` collections. */
export function namedFields(value: unknown): string[] {
  return entries(value, 'fields', { fieldName: '' }).map((e) => String(e.fieldName));
}

/** Field names given as comma-separated text or a list (n8n's prepareFieldsArray). */
export function fieldList(value: unknown, label: string): string[] {
  if (value === undefined || value === null) return [];
  if (typeof value === 'string') {
    return value
      .split(',')
      .map((f) => f.trim())
      .filter((f) => f !== '');
  }
  if (Array.isArray(value)) return value;
  throw new NodeError(`The '${label}' parameter must be a string of fields separated by commas or an array of strings.`, { parameter: label });
}

/** Text a parameter must hold (n8n calls string methods on it). */
export function text(value: unknown, label: string, dflt = ''): string {
  if (value === undefined || value === null) return dflt;
  if (typeof value === 'string') return value;
  throw new NodeError(`The '${label}' parameter must be text (it is ${Array.isArray(value) ? 'a list' : typeof value})`, { parameter: label });
}

export const NESTED_FIELD_HINT = "If you're trying to use a nested field, make sure you turn off 'disable dot notation' in the node options";

/** n8n's execution hint about a field that no input item has (shown in n8n's output pane; logged here). */
export function fieldNotFound(ctx: NodeContext, field: string): void {
  ctx.log(`The field '${field}' wasn't found in any input item`, 'warn');
}
