import { NodeError, isOneOf, isPlainObject, type Item, type NodeDefinition } from '../../../nodes';

/**
 * n8n's Execute Workflow node (1, 1.1, 1.2): runs a stored workflow (`source: database`, the id
 * as text or, from 1.1, a resource locator) or one given inline (`source: parameter`,
 * `workflowJson`), with all items at once (`mode: once`) or once per item (`mode: each`), and
 * passes on the items of its last node; `options.waitForSubWorkflow: false` passes the input on
 * without waiting for a result (the sub-workflow still runs to its end first here: it is not
 * detached). 1.2's `workflowInputs` either pass the items through or map each item to the
 * fields defined below. Files and URLs as sources are refused: nothing here reads them.
 */

type Params = Record<string, unknown>;

const SOURCES = ['database', 'parameter'];

function workflowId(p: Params): string {
  const id = isPlainObject(p.workflowId) ? p.workflowId.value : p.workflowId;
  return String(id ?? '').trim();
}

/** What one run of the sub-workflow receives: the items as they are, or 1.2's mapped inputs. */
function inputsFor(items: Item[], params: Params[]): Item[] {
  return items.map((item, i) => {
    const mapped = params[i]?.workflowInputs;
    if (!isPlainObject(mapped) || mapped.mappingMode !== 'defineBelow' || !isPlainObject(mapped.value) || Object.keys(mapped.value).length === 0) return item;
    return { json: { ...mapped.value }, pairedItem: { item: i } };
  });
}

export const executeWorkflow: NodeDefinition = {
  name: 'executeWorkflow',
  description: "n8n's Execute Workflow: runs a stored workflow (by id) or one given inline, and passes on the items of its last node.",
  n8n: {
    versions: [1, 1.1, 1.2],
    unsupported(p) {
      const source = p.source ?? 'database';
      if (!isOneOf(SOURCES, source))
        return {
          option: `source: ${source}`,
          message: `the source "${source}" is not supported: store the workflow and call it by id, or paste its JSON (source "parameter")`,
        };
      if (isPlainObject(p.workflowInputs) && p.workflowInputs.attemptToConvertTypes === true) {
        return {
          option: 'workflowInputs.attemptToConvertTypes',
          message: 'converting the mapped inputs to the sub-workflow’s declared types is not supported: convert them in the expressions',
        };
      }
      return undefined;
    },
  },
  missing: (p) => {
    if ((p.source ?? 'database') === 'parameter') return typeof p.workflowJson === 'string' && p.workflowJson.trim() ? [] : ['workflowJson'];
    return workflowId(p) ? [] : ['workflowId'];
  },
  invalid: (p) => {
    if ((p.source ?? 'database') !== 'parameter' || typeof p.workflowJson !== 'string' || p.workflowJson.startsWith('=')) return undefined;
    try {
      const parsed = JSON.parse(p.workflowJson);
      if (!isPlainObject(parsed) || !Array.isArray(parsed.nodes)) return { parameter: 'workflowJson', message: 'must be a workflow: {nodes, connections}' };
    } catch (err) {
      return { parameter: 'workflowJson', message: `is not JSON: ${(err as Error).message}` };
    }
    return undefined;
  },
  async execute(ctx) {
    const params = await ctx.parameters();
    const p = params[0]!;
    const inline = (p.source ?? 'database') === 'parameter';
    const run = async (items: Item[]): Promise<Item[]> => {
      if (!inline) return ctx.services.runWorkflow(workflowId(p), items, ctx.signal);
      if (!ctx.services.runInline) throw new NodeError('Inline workflows cannot run in this process');
      let json: unknown;
      try {
        json = typeof p.workflowJson === 'string' ? JSON.parse(p.workflowJson) : p.workflowJson;
      } catch (err) {
        throw new NodeError(`The workflow JSON is not valid: ${(err as Error).message}`);
      }
      return ctx.services.runInline(json, items, ctx.signal);
    };
    const inputs = inputsFor(ctx.items, params);
    let out: Item[];
    if ((p.mode ?? 'once') === 'each') {
      out = [];
      for (let i = 0; i < inputs.length; i++) for (const item of await run([inputs[i]!])) out.push({ json: item.json, pairedItem: { item: i } });
    } else {
      out = await run(inputs);
    }
    const wait = !isPlainObject(p.options) || p.options.waitForSubWorkflow !== false;
    return { outputs: [wait ? out : ctx.items] };
  },
};
