import { isExpression } from './core';
import { NodeError, isPlainObject, type Item, type NodeDefinition, type NodeServices } from './types';

/**
 * Nodes that use the platform's other services through their public operations: `agent` runs a
 * control-plane task, `prompt` a prompt-library test. Once per item, one at a time (each may call
 * a model); expressions in the parameters resolve per item like any other node's.
 */

const MAX_TASK_TIMEOUT_S = 3600;
const PRIORITIES = ['low', 'normal', 'high', 'critical'];

async function perItem(
  ctx: Parameters<NodeDefinition['execute']>[0],
  run: (p: Record<string, unknown>, item: Item) => Promise<Record<string, unknown>>,
): Promise<{ outputs: Item[][] }> {
  const params = await ctx.parameters();
  const out: Item[] = [];
  for (let i = 0; i < ctx.items.length; i++) {
    if (ctx.signal.aborted) throw ctx.signal.reason ?? new Error('aborted');
    out.push({ json: await run(params[i]!, ctx.items[i]!) });
  }
  return { outputs: [out] };
}

function service<K extends 'runTask' | 'testPrompt'>(services: NodeServices, name: K): NonNullable<NodeServices[K]> {
  const fn = services[name];
  if (!fn) throw new NodeError('This node needs the platform’s other services, which this process cannot reach', { reason: 'no_operations' });
  return fn as NonNullable<NodeServices[K]>;
}

export const agent: NodeDefinition = {
  name: 'agent',
  description:
    'Runs a control-plane agent task (`agentId`, `taskType`, `context` object; optional `timeout` seconds 5–3600 and `priority`) to its end and passes on {taskId, agentId, taskType, status, result, duration}. A failed or cancelled task fails the node; canceling the execution cancels the task.',
  missing: (p) => ['agentId', 'taskType'].filter((k) => !(typeof p[k] === 'string' && p[k].trim())),
  invalid: (p) => {
    if (p.context !== undefined && !isPlainObject(p.context) && !isExpression(p.context)) return { parameter: 'context', message: 'must be an object' };
    if (
      p.timeout !== undefined &&
      !isExpression(p.timeout) &&
      !(Number.isInteger(Number(p.timeout)) && Number(p.timeout) >= 5 && Number(p.timeout) <= MAX_TASK_TIMEOUT_S)
    ) {
      return { parameter: 'timeout', message: `must be seconds from 5 to ${MAX_TASK_TIMEOUT_S}` };
    }
    if (p.priority !== undefined && !isExpression(p.priority) && !PRIORITIES.includes(String(p.priority))) {
      return { parameter: 'priority', message: `must be one of ${PRIORITIES.join(', ')}` };
    }
    return undefined;
  },
  execute: (ctx) =>
    perItem(ctx, async (p) => {
      const context = p.context === undefined || p.context === null || p.context === '' ? {} : p.context;
      if (!isPlainObject(context)) throw new NodeError('context must be an object', { parameter: 'context' });
      return service(ctx.services, 'runTask')(
        {
          agentId: String(p.agentId ?? '').trim(),
          taskType: String(p.taskType ?? '').trim(),
          context,
          ...(p.timeout !== undefined && p.timeout !== '' ? { timeout: Number(p.timeout) } : {}),
          ...(p.priority ? { priority: String(p.priority) } : {}),
        },
        ctx.signal,
      );
    }),
};

export const prompt: NodeDefinition = {
  name: 'prompt',
  description:
    'Runs a prompt-library test of `promptId` (latest version, or `version`) with `variables` on `model` (default the first of LLM_MODELS), `temperature`, `maxTokens`, and passes on {output, metadata: {model, tokensUsed, latency, temperature, promptId, version, testId}}.',
  missing: (p) => (typeof p.promptId === 'string' && p.promptId.trim() ? [] : ['promptId']),
  invalid: (p) => {
    if (p.variables !== undefined && !isPlainObject(p.variables) && !isExpression(p.variables)) return { parameter: 'variables', message: 'must be an object' };
    if (p.temperature !== undefined && !isExpression(p.temperature) && !(Number(p.temperature) >= 0 && Number(p.temperature) <= 1)) {
      return { parameter: 'temperature', message: 'must be from 0.0 to 1.0' };
    }
    return undefined;
  },
  execute: (ctx) =>
    perItem(ctx, async (p) => {
      const variables = p.variables === undefined || p.variables === null || p.variables === '' ? {} : p.variables;
      if (!isPlainObject(variables)) throw new NodeError('variables must be an object', { parameter: 'variables' });
      const num = (v: unknown) => (v === undefined || v === null || v === '' ? undefined : Number(v));
      return service(ctx.services, 'testPrompt')(
        {
          promptId: String(p.promptId ?? '').trim(),
          variables,
          ...(p.model ? { model: String(p.model) } : {}),
          ...(num(p.temperature) !== undefined ? { temperature: num(p.temperature) } : {}),
          ...(num(p.maxTokens) !== undefined ? { maxTokens: num(p.maxTokens) } : {}),
          ...(num(p.version) !== undefined ? { version: num(p.version) } : {}),
        },
        ctx.signal,
      );
    }),
};
