import type { FieldError } from '../../kernel/errors';
import type { StoredStep } from './chain.types';
import { SLUG, SLUG_RULE, VARIABLE_NAME } from './render';

/**
 * The shape rules of a chain's steps (pure; prompt existence is checked by the service):
 *  - orders are integers 1..N with no gap; a step's results are `step_<order>`;
 *  - steps sharing an order must all set `parallel: true` (they run at once);
 *  - `outputKey` names the step's output, unique within its order;
 *  - `inputMapping` maps a prompt variable to `step_<order>.<outputKey>` of an earlier order.
 */

export const MAX_STEPS = 50;
const REFERENCE = /^step_(\d+)\.(.+)$/;

export interface StepInput {
  order: number;
  promptId: string;
  version?: number | null;
  inputMapping?: Record<string, unknown> | null;
  outputKey: string;
  agentId?: string | null;
  parallel?: boolean | null;
}

export function validateSteps(steps: StepInput[] | undefined | null, field = 'steps'): { steps: StoredStep[]; problems: FieldError[] } {
  const problems: FieldError[] = [];
  if (!Array.isArray(steps) || steps.length === 0) {
    problems.push({ field, message: 'must list at least one step' });
    return { steps: [], problems };
  }
  if (steps.length > MAX_STEPS) {
    problems.push({ field, message: `must list at most ${MAX_STEPS} steps` });
    return { steps: [], problems };
  }
  const byOrder = new Map<number, { step: StepInput; index: number }[]>();
  steps.forEach((step, index) => {
    const at = `${field}.${index}`;
    if (!Number.isInteger(step.order) || step.order < 1) problems.push({ field: `${at}.order`, message: 'must be an integer of at least 1' });
    else byOrder.set(step.order, [...(byOrder.get(step.order) ?? []), { step, index }]);
    if (typeof step.promptId !== 'string' || !SLUG.test(step.promptId)) problems.push({ field: `${at}.promptId`, message: SLUG_RULE });
    if (step.version != null && !(Number.isInteger(step.version) && step.version >= 1))
      problems.push({ field: `${at}.version`, message: 'must be an integer of at least 1' });
    if (typeof step.outputKey !== 'string' || !VARIABLE_NAME.test(step.outputKey)) {
      problems.push({ field: `${at}.outputKey`, message: 'must be a name: letters, digits, "_" and "-", not starting with a digit or "-"' });
    }
    if (step.agentId != null && (typeof step.agentId !== 'string' || step.agentId.length > 100)) {
      problems.push({ field: `${at}.agentId`, message: 'must be a string of at most 100 characters' });
    }
    const mapping = step.inputMapping;
    if (mapping != null && (typeof mapping !== 'object' || Array.isArray(mapping)))
      problems.push({ field: `${at}.inputMapping`, message: 'must be an object' });
  });
  const orders = [...byOrder.keys()].sort((a, b) => a - b);
  if (orders.some((order, i) => order !== i + 1)) {
    problems.push({ field, message: `orders must run 1 to ${orders.length} without gaps; found ${orders.join(', ')}` });
  }
  for (const [order, group] of byOrder) {
    if (group.length > 1) {
      for (const { step, index } of group) {
        if (step.parallel !== true) problems.push({ field: `${field}.${index}.parallel`, message: `must be true: ${group.length} steps share order ${order}` });
      }
    }
    const keys = new Set<string>();
    for (const { step, index } of group) {
      if (keys.has(step.outputKey))
        problems.push({ field: `${field}.${index}.outputKey`, message: `"${step.outputKey}" is already the output of another step of order ${order}` });
      keys.add(step.outputKey);
    }
  }
  // Mappings: a reference to an existing output of an earlier order.
  steps.forEach((step, index) => {
    const mapping = step.inputMapping;
    if (mapping == null || typeof mapping !== 'object' || Array.isArray(mapping)) return;
    for (const [variable, ref] of Object.entries(mapping)) {
      const at = `${field}.${index}.inputMapping.${variable}`;
      if (!VARIABLE_NAME.test(variable)) {
        problems.push({ field: at, message: `"${variable}" is not a variable name` });
        continue;
      }
      const match = typeof ref === 'string' ? REFERENCE.exec(ref) : null;
      if (!match) {
        problems.push({ field: at, message: `${JSON.stringify(ref)} is not a reference of the form step_<order>.<outputKey>` });
        continue;
      }
      const source = Number(match[1]);
      const key = match[2]!;
      const group = byOrder.get(source);
      if (!group) {
        problems.push({ field: at, message: `step_${source} does not exist (orders are ${orders.join(', ')})` });
      } else if (Number.isInteger(step.order) && source >= step.order) {
        problems.push({ field: at, message: `step_${source} does not run before this step (order ${step.order})` });
      } else if (!group.some(({ step: s }) => s.outputKey === key)) {
        const outputs = group.map(({ step: s }) => s.outputKey).join(', ');
        problems.push({ field: at, message: `step_${source} has no output "${key}" (its outputs: ${outputs})` });
      }
    }
  });
  // Kept in the client's order (problems name steps by their index); the runner groups by order.
  const stored: StoredStep[] = steps.map((s) => ({
    order: s.order,
    promptId: s.promptId,
    ...(s.version != null && { version: s.version }),
    inputMapping: (s.inputMapping ?? {}) as Record<string, string>,
    outputKey: s.outputKey,
    ...(s.agentId != null && { agentId: s.agentId }),
    ...(s.parallel != null && { parallel: s.parallel }),
  }));
  return { steps: stored, problems };
}

/** Number of distinct orders: the executions' totalSteps. */
export function orderCount(steps: StoredStep[]): number {
  return new Set(steps.map((s) => s.order)).size;
}
