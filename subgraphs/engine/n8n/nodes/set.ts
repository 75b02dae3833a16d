import type { NodeDefinition } from '../../nodes/types';

export const setNodes: NodeDefinition[] = [];
