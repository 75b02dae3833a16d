import type { NodeDefinition } from '../../nodes/types';

export const routingNodes: NodeDefinition[] = [];
