import type { NodeDefinition } from '../../nodes/types';

export const itemListNodes: NodeDefinition[] = [];
