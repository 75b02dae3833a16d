import type { NodeDefinition } from '../../nodes/types';
import { codeNodes } from './code';
import { dateCryptoNodes } from './date-crypto';
import { executeWorkflow } from './execute-workflow';
import { itemListNodes } from './item-lists';
import { mergeNodes } from './merge';
import { noOp } from './no-op';
import { routingNodes } from './routing';
import { setNodes } from './set';
import { splitInBatches } from './split-in-batches';

/**
 * n8n's core nodes run natively under their n8n names (`n8n-nodes-base.<name>`), each at the
 * typeVersions it lists, with n8n's parameters as exported: an import keeps them as they are.
 */
export const N8N_NODE_PREFIX = 'n8n-nodes-base.';

export const N8N_NODES: readonly NodeDefinition[] = [
  noOp,
  ...setNodes,
  ...routingNodes,
  ...mergeNodes,
  ...itemListNodes,
  ...dateCryptoNodes,
  ...codeNodes,
  executeWorkflow,
  splitInBatches,
];
