import { NodeError, type Item, type NodeContext } from '../../../nodes';
import { LOOSE_TYPE_HINT } from './conditions';

/** What If, Filter and Switch share: parameters per item, items sent on, failures per item. */

export type Params = Record<string, unknown>;

/**
 * Each item's parameters with expressions resolved, in one batch. When the node goes on after
 * failures (continueOnFail), an expression failing for one item must fail that item only, as in
 * n8n, which resolves item by item: the batch is then redone one item at a time.
 */
export async function itemParameters(ctx: NodeContext): Promise<(Params | Error)[]> {
  try {
    return await ctx.parameters();
  } catch (err) {
    if (!ctx.continueOnFail || ctx.signal.aborted) throw err;
    return Promise.all(
      ctx.items.map((_, i) =>
        ctx.parameters([i]).then(
          ([params]) => params!,
          (e: unknown) => (e instanceof Error ? e : new Error(String(e))),
        ),
      ),
    );
  }
}

/** An input item as it leaves by an output, with its files, paired with its input item (n8n's pairedItem). */
export function routed(item: Item, index: number): Item {
  return item.binary ? { json: item.json, binary: item.binary, pairedItem: { item: index } } : { json: item.json, pairedItem: { item: index } };
}

/** The item n8n emits instead of one that failed, when the node goes on after failures. */
export function failedItem(err: unknown, index: number): Item {
  return { json: { error: err instanceof Error ? err.message : String(err) }, pairedItem: { item: index } };
}

/** A failure of a filter for one item, naming it; under strict type validation n8n hints at loose validation. */
export function filterFailure(err: unknown, itemIndex: number, strict: boolean): NodeError {
  const details = err instanceof NodeError ? err.details : {};
  const description = details.description ?? (strict ? LOOSE_TYPE_HINT : undefined);
  const message = err instanceof Error ? err.message : String(err);
  return new NodeError(message, { ...details, itemIndex, ...(description === undefined ? {} : { description }) });
}

/** The time zone date strings without an offset are read in (the workflow's; the engine's default UTC). */
export function zoneOf(ctx: NodeContext): string {
  return ctx.expressionData.workflow.timezone ?? 'UTC';
}

export const isExpression = (v: unknown): v is string => typeof v === 'string' && v.startsWith('=');
