import { NodeError, type Item, type NodeContext } from '../../nodes';

/**
 * What the Date & Time and Crypto nodes share with n8n's per-item loop: each input item gives
 * one output item (or none), a failure names its item, and with n8n's continueOnFail
 * (`ctx.continueOnFail`) a failed item becomes `{error}` in its place while the others go on —
 * as n8n does inside these nodes, not for the node as a whole.
 */

/** One output item per input item from `each` (undefined: the item is left out). */
export function eachItem(ctx: NodeContext, each: (index: number) => Item | undefined): Item[] {
  const out: Item[] = [];
  for (let i = 0; i < ctx.items.length; i++) {
    try {
      const item = each(i);
      if (item) out.push(item);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (!ctx.continueOnFail) throw new NodeError(message, { ...(err instanceof NodeError ? err.details : {}), itemIndex: i });
      out.push({ json: { error: message }, pairedItem: { item: i } });
    }
  }
  return out;
}

/** lodash's set() ignores these keys (so does n8n's `set(item, ['json', name], value)`). */
const UNSAFE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * The input item's fields with `name` set to `value`. n8n writes the name as one key even when
 * it holds dots (`set(item, ['json', name])`): "a.b" is a key "a.b", not a nested field.
 */
export function withField(json: Record<string, unknown>, name: unknown, value: unknown): Record<string, unknown> {
  const out = { ...json };
  const key = String(name);
  if (!UNSAFE_KEYS.has(key)) out[key] = value;
  return out;
}
