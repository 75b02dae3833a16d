import { NodeError, type NodeDefinition } from '../../../nodes';
import { fixedOption } from '../item-lists/params';

/**
 * n8n's Debug Helper, its deterministic categories: "Do Nothing" passes the items on, "Throw
 * Error" fails with the given message (its error type only changes how n8n's editor shows it).
 * "Out Of Memory" (which would exhaust the memory of this process on purpose) and "Generate
 * Random Data" (whose output cannot be compared) are refused at import.
 */

const CATEGORIES = ['doNothing', 'throwError'];
const REFUSED: Record<string, string> = {
  oom: 'the "Out Of Memory" category exhausts memory on purpose and is not run here',
  randomData: 'the "Generate Random Data" category is not supported here',
};
const ERROR_TYPES = ['NodeApiError', 'NodeOperationError', 'Error'];

export const debugHelper: NodeDefinition = {
  name: 'debugHelper',
  description: "n8n's Debug Helper: do nothing, or throw an error with a given message.",
  n8n: {
    versions: [1],
    unsupported(p) {
      const category = fixedOption(p.category, 'throwError');
      if (Object.prototype.hasOwnProperty.call(REFUSED, category)) return { option: 'category', message: REFUSED[category]! };
      return undefined;
    },
  },
  inProcess: true,
  invalid(p) {
    const category = fixedOption(p.category, 'throwError');
    if (!CATEGORIES.includes(category) && !Object.prototype.hasOwnProperty.call(REFUSED, category)) {
      return { parameter: 'category', message: `must be one of ${[...CATEGORIES, ...Object.keys(REFUSED)].join(', ')}` };
    }
    if (category === 'throwError' && !ERROR_TYPES.includes(fixedOption(p.throwErrorType, 'NodeApiError'))) {
      return { parameter: 'throwErrorType', message: `must be one of ${ERROR_TYPES.join(', ')}` };
    }
    return undefined;
  },
  async execute(ctx) {
    const category = fixedOption(ctx.node.parameters?.category, 'throwError');
    if (category === 'doNothing') return { outputs: [ctx.items] };
    const [p] = await ctx.parameters([0]);
    const message = p?.throwErrorMessage ?? 'Node has thrown an error';
    throw new NodeError(String(message), { reason: 'debugHelper', errorType: fixedOption(ctx.node.parameters?.throwErrorType, 'NodeApiError') });
  },
};
