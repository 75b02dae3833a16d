import type { NodeDefinition } from '../../nodes/types';

export const dateCryptoNodes: NodeDefinition[] = [];
