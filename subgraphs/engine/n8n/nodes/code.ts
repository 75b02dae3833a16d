import type { NodeDefinition } from '../../nodes/types';

export const codeNodes: NodeDefinition[] = [];
