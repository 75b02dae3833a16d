import { NodeError, isPlainObject, type NodeDefinition } from './types';
import { isExpression } from './core';

/** Nodes that act on the execution itself: waiting, answering the webhook, running another workflow. */

const MAX_WAIT_SECONDS = 366 * 24 * 3600;

export const wait: NodeDefinition = {
  name: 'wait',
  description:
    'Suspends the execution (status waiting) for `seconds`, or until `until` (a timestamp), or until its resume URL is called (`resume: "webhook"`; the URL is `$execution.resumeUrl`, and the request becomes the item). It then passes its items on, also after a restart.',
  missing: (p) => (p.seconds === undefined && p.until === undefined && p.resume === undefined ? ['seconds | until | resume'] : []),
  invalid: (p) => {
    if (p.resume !== undefined && p.resume !== 'webhook' && p.resume !== 'timer')
      return { parameter: 'resume', message: 'must be "webhook" (or "timer" with seconds or until)' };
    if (
      p.seconds !== undefined &&
      !isExpression(p.seconds) &&
      !(Number.isFinite(Number(p.seconds)) && Number(p.seconds) >= 0 && Number(p.seconds) <= MAX_WAIT_SECONDS)
    ) {
      return { parameter: 'seconds', message: `must be a number of seconds from 0 to ${MAX_WAIT_SECONDS}` };
    }
    if (p.until !== undefined && !isExpression(p.until) && Number.isNaN(Date.parse(String(p.until))))
      return { parameter: 'until', message: 'must be an ISO 8601 timestamp' };
    if (p.resume === 'timer' && p.seconds === undefined && p.until === undefined) return { parameter: 'seconds', message: 'a timer needs seconds or until' };
    return undefined;
  },
  async execute(ctx) {
    const [p] = await ctx.parameters([0]);
    if (p!.resume === 'webhook') return { outputs: [ctx.items], wait: { until: null, webhook: true } };
    const now = (ctx.services.now?.() ?? new Date()).getTime();
    let until: Date;
    if (p!.until !== undefined && p!.until !== null && p!.until !== '') {
      until = new Date(String(p!.until));
      if (Number.isNaN(until.getTime())) throw new NodeError(`until is not a timestamp: ${String(p!.until)}`);
    } else {
      const seconds = Number(p!.seconds);
      if (!Number.isFinite(seconds) || seconds < 0) throw new NodeError(`seconds must be a non-negative number, not ${String(p!.seconds)}`);
      until = new Date(now + Math.min(seconds, MAX_WAIT_SECONDS) * 1000);
    }
    if (until.getTime() <= now) return { outputs: [ctx.items] };
    return { outputs: [ctx.items], wait: { until, webhook: false } };
  },
};

export const respondToWebhook: NodeDefinition = {
  name: 'respondToWebhook',
  inProcess: true,
  description:
    "Shapes the answer to the webhook request that started the execution (trigger in responseMode lastNode): `statusCode` (default 200), `headers`, `body` (default: the first item's json). The answer is sent at once; the execution goes on. Passes its items on.",
  invalid: (p) => {
    if (
      p.statusCode !== undefined &&
      !isExpression(p.statusCode) &&
      !(Number.isInteger(Number(p.statusCode)) && Number(p.statusCode) >= 100 && Number(p.statusCode) <= 599)
    ) {
      return { parameter: 'statusCode', message: 'must be an HTTP status from 100 to 599' };
    }
    if (p.headers !== undefined && !isPlainObject(p.headers) && !isExpression(p.headers)) return { parameter: 'headers', message: 'must be an object' };
    return undefined;
  },
  async execute(ctx) {
    const [p] = await ctx.parameters([0]);
    const status = p!.statusCode === undefined || p!.statusCode === null || p!.statusCode === '' ? 200 : Number(p!.statusCode);
    if (!Number.isInteger(status) || status < 100 || status > 599) throw new NodeError(`statusCode must be an HTTP status, not ${String(p!.statusCode)}`);
    const headers: Record<string, string> = {};
    if (isPlainObject(p!.headers)) for (const [k, v] of Object.entries(p!.headers)) if (v !== undefined && v !== null) headers[k.toLowerCase()] = String(v);
    const body = p!.body === undefined ? (ctx.items[0]?.json ?? {}) : p!.body;
    return { outputs: [ctx.items], reply: { status, headers, body } };
  },
};

export const executeWorkflow: NodeDefinition = {
  name: 'executeWorkflow',
  description: 'Runs the workflow `workflowId` with the items (its start node emits them) and passes on the items of its last node.',
  missing: (p) => (typeof p.workflowId === 'string' && p.workflowId.trim() ? [] : ['workflowId']),
  async execute(ctx) {
    const [p] = await ctx.parameters([0]);
    const id = String(p!.workflowId ?? '').trim();
    if (!id) throw new NodeError('workflowId is empty');
    const items = await ctx.services.runWorkflow(id, ctx.items, ctx.signal);
    return { outputs: [items] };
  },
};
