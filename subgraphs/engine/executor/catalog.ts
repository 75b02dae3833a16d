import {
  code,
  filter,
  ifNode,
  manualTrigger,
  merge,
  noOp,
  scheduleTrigger,
  set,
  switchNode,
  webhook,
  executeWorkflow,
  respondToWebhook,
  wait,
  httpRequest,
  agent,
  prompt,
  type NodeDefinition,
} from '../nodes';
import { N8N_NODE_PREFIX, N8N_NODES } from '../n8n';

/**
 * Every node type a workflow may use, as `engine.<name>`, and n8n's core
 * nodes under their own names (n8n/nodes). `agent` and `prompt` reach the control plane and the
 * prompt library through their public operations.
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

export const NODE_TYPES: ReadonlyMap<string, NodeDefinition> = new Map([
  ...all.map((n): [string, NodeDefinition] => [`${NODE_PREFIX}${n.name}`, n]),
  ...N8N_NODES.map((n): [string, NodeDefinition] => [`${N8N_NODE_PREFIX}${n.name}`, n]),
]);

export function nodeType(type: string): NodeDefinition | undefined {
  return NODE_TYPES.get(type);
}

export type { NodeDefinition } from '../nodes';
