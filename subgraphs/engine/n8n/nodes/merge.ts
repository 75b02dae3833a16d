import type { NodeDefinition } from '../../nodes/types';

export const mergeNodes: NodeDefinition[] = [];
