import type { NodeDefinition } from '../../../nodes';

/** n8n's No Operation node: its items pass on unchanged. */
export const noOp: NodeDefinition = {
  name: 'noOp',
  description: "n8n's No Operation: passes its items on unchanged.",
  n8n: { versions: [1] },
  inProcess: true,
  execute: async (ctx) => ({ outputs: [ctx.items] }),
};
