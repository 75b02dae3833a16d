import { code } from './code';
import { filter, ifNode, manualTrigger, merge, noOp, scheduleTrigger, set, switchNode, webhook } from './core';
import { executeWorkflow, respondToWebhook, wait } from './flow';
import { httpRequest } from './http-request';
import { agent, prompt } from './platform';
import type { NodeDefinition } from './types';

/**
 * Every node type a workflow may use, as `engine.<name>` (CONTRACT.md section 8). `agent` and
 * `prompt` reach the control plane and the prompt library through their public operations.
 */
export const NODE_PREFIX = 'engine.';

const all: NodeDefinition[] = [
  manualTrigger,
  webhook,
  scheduleTrigger,
  set,
  ifNode,
  switchNode,
  filter,
  merge,
  code,
  httpRequest,
  wait,
  respondToWebhook,
  executeWorkflow,
  agent,
  prompt,
  noOp,
];

export const NODE_TYPES: ReadonlyMap<string, NodeDefinition> = new Map(all.map((n) => [`${NODE_PREFIX}${n.name}`, n]));

export function nodeType(type: string): NodeDefinition | undefined {
  return NODE_TYPES.get(type);
}

export type { NodeDefinition } from './types';
