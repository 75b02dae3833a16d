import { NodeError, isPlainObject, type NodeDefinition } from '../../../nodes';
import { fixedOption } from '../item-lists/params';

/**
 * n8n's Stop and Error (1): the execution fails at this node with n8n's message. `errorType`
 * errorMessage (the default) fails with `errorMessage`; errorObject parses `errorObject` (JSON)
 * and takes its `message`, else its `description`, else its `error` (the first non-empty text),
 * else `Error: <the object as JSON>`; the object's `description` and `type` and the object itself
 * (`metadata`) go into the error's details. The node has no output; parameters are read from the
 * first item.
 */

const ERROR_TYPES = ['errorMessage', 'errorObject'];

const nonEmpty = (v: unknown): v is string => typeof v === 'string' && v.length > 0;

/** The message and details an errorObject gives (n8n's rule). */
export function errorFromObject(object: Record<string, unknown>): { message: string; details: Record<string, unknown> } {
  const message =
    (nonEmpty(object.message) ? object.message : '') ||
    (nonEmpty(object.description) ? object.description : '') ||
    (nonEmpty(object.error) ? object.error : '') ||
    `Error: ${JSON.stringify(object)}`;
  const details: Record<string, unknown> = { reason: 'stopAndError', metadata: object };
  if (nonEmpty(object.description)) details.description = object.description;
  if (nonEmpty(object.type)) details.type = object.type;
  return { message, details };
}

function parseObject(value: unknown): Record<string, unknown> {
  if (isPlainObject(value)) return value;
  let parsed: unknown;
  try {
    parsed = JSON.parse(String(value ?? ''));
  } catch (err) {
    throw new NodeError(`The error object is not valid JSON: ${(err as Error).message}`, { reason: 'stopAndError' });
  }
  if (!isPlainObject(parsed)) throw new NodeError('The error object must be a JSON object', { reason: 'stopAndError' });
  return parsed;
}

export const stopAndError: NodeDefinition = {
  name: 'stopAndError',
  description: "n8n's Stop and Error: fails the execution here with a message or an error object.",
  n8n: { versions: [1] },
  inProcess: true,
  outputs: () => 0,
  invalid(p) {
    const type = p.errorType;
    if (typeof type === 'string' && !type.startsWith('=') && !ERROR_TYPES.includes(type))
      return { parameter: 'errorType', message: `must be one of ${ERROR_TYPES.join(', ')}` };
    return undefined;
  },
  async execute(ctx) {
    const [p] = await ctx.parameters([0]);
    if (fixedOption(p!.errorType, 'errorMessage') === 'errorObject') {
      const { message, details } = errorFromObject(parseObject(p!.errorObject));
      throw new NodeError(message, details);
    }
    throw new NodeError(String(p!.errorMessage ?? ''), { reason: 'stopAndError' });
  },
};
