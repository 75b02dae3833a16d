import { cronProblem, validTimezone } from './cron';
import { isOneOf, isPlainObject, truthy, type Item, type NodeDefinition } from './types';

/** Start nodes, routing and shaping: the nodes that never leave the process. */

const passThrough = async (ctx: { items: Item[] }) => ({ outputs: [ctx.items] });

export const manualTrigger: NodeDefinition = {
  name: 'manualTrigger',
  inProcess: true,
  description: 'Start node of executions started through the API: emits the execution data as one item.',
  trigger: true,
  inputs: () => 0,
  execute: passThrough,
};

export const webhook: NodeDefinition = {
  name: 'webhook',
  inProcess: true,
  description: 'Start node of executions started by a registered webhook trigger: emits {headers, params, query, body, method, path, webhookUrl}.',
  trigger: true,
  inputs: () => 0,
  execute: passThrough,
};

export const scheduleTrigger: NodeDefinition = {
  name: 'scheduleTrigger',
  inProcess: true,
  description:
    'Start node run on a cron schedule (`cron`: 5 fields, or 6 with seconds first; `timezone`, default the workflow’s or UTC) while the workflow is active: emits {timestamp, cron, timezone, scheduleId, scheduledFor, missedRuns}.',
  trigger: true,
  inputs: () => 0,
  missing: (p) => (typeof p.cron === 'string' && p.cron.trim() ? [] : ['cron']),
  invalid: (p) => {
    if (p.timezone !== undefined && !validTimezone(p.timezone)) return { parameter: 'timezone', message: `unknown time zone "${p.timezone}"` };
    const problem = cronProblem(p.cron, String(p.timezone ?? 'UTC'));
    return problem ? { parameter: 'cron', message: `invalid cron expression: ${problem}`, code: 'SCHEDULE_INVALID' } : undefined;
  },
  execute: passThrough,
};

export { validTimezone };

export const noOp: NodeDefinition = {
  name: 'noOp',
  inProcess: true,
  description: 'Passes its items on unchanged.',
  execute: passThrough,
};

/** Sets `a.b.c` inside a copy of `json` (only the objects on the path are copied). */
function setPath(json: Record<string, unknown>, name: string, value: unknown): Record<string, unknown> {
  const keys = name.split('.');
  const top = { ...json };
  let cur: Record<string, unknown> = top;
  for (let i = 0; i < keys.length - 1; i++) {
    const next = cur[keys[i]!];
    const copy = isPlainObject(next) ? { ...next } : {};
    cur[keys[i]!] = copy;
    cur = copy;
  }
  cur[keys[keys.length - 1]!] = value;
  return top;
}

export const set: NodeDefinition = {
  name: 'set',
  inProcess: true,
  description: 'Merges `values` ({name: value or expression}; dotted names set nested fields) into each item; `keepOnlySet` drops the other fields.',
  invalid: (p) =>
    p.values !== undefined && !isPlainObject(p.values) && !isExpression(p.values)
      ? { parameter: 'values', message: 'must be an object of name: value' }
      : undefined,
  async execute(ctx) {
    const params = await ctx.parameters();
    const out = ctx.items.map((item, i) => {
      const p = params[i]!;
      let json: Record<string, unknown> = p.keepOnlySet === true || p.keepOnlySet === 'true' ? {} : item.json;
      const values = isPlainObject(p.values) ? p.values : {};
      for (const [name, value] of Object.entries(values)) json = setPath(json, name, value);
      if (json === item.json) json = { ...json };
      return { json };
    });
    return { outputs: [out] };
  },
};

export const ifNode: NodeDefinition = {
  name: 'if',
  inProcess: true,
  description: 'Items whose `condition` is true leave by output 0, the others by output 1.',
  outputs: () => 2,
  missing: (p) => (p.condition === undefined || p.condition === '' ? ['condition'] : []),
  bareExpressions: ['condition'],
  async execute(ctx) {
    const params = await ctx.parameters();
    const yes: Item[] = [];
    const no: Item[] = [];
    ctx.items.forEach((item, i) => (truthy(params[i]!.condition) ? yes : no).push(item));
    return { outputs: [yes, no] };
  },
};

export const filter: NodeDefinition = {
  name: 'filter',
  inProcess: true,
  description: 'Keeps the items whose `condition` is true.',
  missing: (p) => (p.condition === undefined || p.condition === '' ? ['condition'] : []),
  bareExpressions: ['condition'],
  async execute(ctx) {
    const params = await ctx.parameters();
    return { outputs: [ctx.items.filter((_, i) => truthy(params[i]!.condition))] };
  },
};

function switchOutputs(p: Record<string, unknown>): number {
  const rules: unknown[] = Array.isArray(p.rules) ? p.rules : [];
  let n = rules.length;
  for (const r of rules) if (isPlainObject(r) && typeof r.output === 'number' && Number.isInteger(r.output)) n = Math.max(n, r.output + 1);
  if (p.fallbackOutput === 'extra') n += 1;
  else if (typeof p.fallbackOutput === 'number' && Number.isInteger(p.fallbackOutput)) n = Math.max(n, p.fallbackOutput + 1);
  return Math.max(n, 1);
}

export const switchNode: NodeDefinition = {
  name: 'switch',
  inProcess: true,
  description:
    'An item leaves by the output of the first rule whose `condition` it meets (rule i is output i, or its `output`); items meeting none leave by `fallbackOutput` (an index, or "extra" for one output after the rules) or are dropped.',
  outputs: switchOutputs,
  missing: (p) => (Array.isArray(p.rules) && p.rules.length > 0 ? [] : ['rules']),
  invalid: (p) => {
    if (!Array.isArray(p.rules)) return { parameter: 'rules', message: 'must be a list of {condition}' };
    const bad = p.rules.findIndex((r: unknown) => !isPlainObject(r) || r.condition === undefined);
    if (bad >= 0) return { parameter: `rules.${bad}`, message: 'must be an object with a condition' };
    const fb = p.fallbackOutput;
    if (fb !== undefined && fb !== null && fb !== 'extra' && fb !== 'none' && !(typeof fb === 'number' && Number.isInteger(fb) && fb >= 0)) {
      return { parameter: 'fallbackOutput', message: 'must be an output index, "extra" or "none"' };
    }
    return undefined;
  },
  bareExpressions: ['rules.*.condition'],
  async execute(ctx) {
    const params = await ctx.parameters();
    const count = switchOutputs(params[0] ?? {});
    const outputs: Item[][] = Array.from({ length: count }, () => []);
    ctx.items.forEach((item, i) => {
      const p = params[i]!;
      // invalid() has made each rule an object with a condition.
      const rules = p.rules as { condition: unknown; output?: unknown }[];
      const hit = rules.findIndex((r) => truthy(r.condition));
      if (hit >= 0) {
        const output = Number.isInteger(rules[hit]!.output) ? (rules[hit]!.output as number) : hit;
        outputs[output]?.push(item);
      } else if (p.fallbackOutput === 'extra') outputs[count - 1]!.push(item);
      else if (typeof p.fallbackOutput === 'number' && Number.isInteger(p.fallbackOutput)) outputs[p.fallbackOutput]?.push(item);
    });
    return { outputs };
  },
};

const MERGE_MODES = ['append', 'combineByPosition', 'chooseBranch'];

export const merge: NodeDefinition = {
  name: 'merge',
  inProcess: true,
  description:
    'Waits for its inputs (2, or `numberInputs` up to 10), then: `append` (default) their items in input order; `combineByPosition` merges the json of the i-th item of every input; `chooseBranch` passes on the input named by `output` ("input1" default, "input2", …).',
  inputs: (p) => (typeof p.numberInputs === 'number' && Number.isInteger(p.numberInputs) ? p.numberInputs : 2),
  invalid: (p) => {
    if (p.mode !== undefined && !isOneOf(MERGE_MODES, p.mode)) return { parameter: 'mode', message: `must be one of ${MERGE_MODES.join(', ')}` };
    if (
      p.numberInputs !== undefined &&
      !(typeof p.numberInputs === 'number' && Number.isInteger(p.numberInputs) && p.numberInputs >= 2 && p.numberInputs <= 10)
    ) {
      return { parameter: 'numberInputs', message: 'must be an integer from 2 to 10' };
    }
    if (p.output !== undefined && !/^input\d+$/.test(String(p.output))) return { parameter: 'output', message: 'must be input1, input2, …' };
    return undefined;
  },
  async execute(ctx) {
    const [p] = await ctx.parameters([0]);
    const mode = p!.mode ?? 'append';
    if (mode === 'chooseBranch') {
      const n = Number(String(p!.output ?? 'input1').slice('input'.length)) - 1;
      return { outputs: [ctx.inputs[n] ?? []] };
    }
    if (mode === 'combineByPosition') {
      const present = ctx.inputs.filter((l) => l.length > 0);
      const length = present.length ? Math.min(...present.map((l) => l.length)) : 0;
      const out: Item[] = [];
      for (let i = 0; i < length; i++) out.push({ json: Object.assign({}, ...present.map((l) => l[i]!.json)) });
      return { outputs: [out] };
    }
    return { outputs: [ctx.inputs.flat()] };
  },
};

export function isExpression(v: unknown): boolean {
  return typeof v === 'string' && v.includes('{{');
}
