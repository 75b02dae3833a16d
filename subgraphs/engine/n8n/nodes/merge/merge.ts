import { NodeError, type Item, type NodeDefinition } from '../../../nodes';
import { allCombinations, byPositionV2, byPositionV3, chooseBranch, combineByFields } from './v2/combine';
import { inputCount, MergeProblem, readConfig, type MergeConfig } from './config';
import { runV1 } from './v1/merge';

/**
 * n8n's Merge node (`n8n-nodes-base.merge`) at every typeVersion n8n still imports: 1 (the
 * original modes), 2 and 2.1 (append, combine, choose branch; 2.1 no longer fails on a field
 * missing from all items) and 3, 3.1, 3.2 (up to 10 inputs; they differ only in the SQL Query
 * mode, which is refused). The executor hands the node all its inputs at once.
 */

const VERSIONS = [1, 2, 2.1, 3, 3.1, 3.2] as const;

function run(config: MergeConfig, inputs: Item[][]): Item[] {
  // One execution's private copies for n8n's in-place nested merges (see mergeMethod).
  const shared = new WeakMap<object, unknown>();
  switch (config.kind) {
    case 'append':
      return inputs.flat();
    case 'v1':
      return runV1(config, inputs);
    case 'byFields':
      return combineByFields(config, inputs, shared);
    case 'byPosition':
      return config.v2
        ? byPositionV2(config.clash, config.includeUnpaired, inputs, shared)
        : byPositionV3(config.clash, config.includeUnpaired, inputs, shared);
    case 'all':
      return allCombinations(config.clash, inputs, shared);
    case 'chooseBranch':
      return chooseBranch(config.output, inputs);
  }
}

function configAtRun(params: Record<string, unknown>, version: number): MergeConfig {
  try {
    return readConfig(params, version, false);
  } catch (err) {
    if (err instanceof MergeProblem) throw new NodeError(err.message, { option: err.option });
    throw err;
  }
}

export const merge: NodeDefinition = {
  name: 'merge',
  description:
    "n8n's Merge: waits for its inputs, then appends them, combines their items (by matching fields, by position, or every combination) or passes one input on, with n8n's options and per-version behaviour.",
  n8n: {
    versions: VERSIONS,
    unsupported(params, version) {
      try {
        readConfig(params, version, true);
        return undefined;
      } catch (err) {
        if (err instanceof MergeProblem) return { option: err.option, message: err.message };
        throw err;
      }
    },
  },
  inProcess: true,
  inputs: inputCount,
  // n8n (v1 order): from 2 on, Choose Branch runs only once both inputs have data; the other
  // modes run with whatever arrived once nothing else is left to run. Merge 1 waits for nothing.
  requiredInputs: (p, version) => (version < 2 ? 0 : p.mode === 'chooseBranch' ? [0, 1] : 1),
  async execute(ctx) {
    const version = ctx.node.typeVersion ?? 1;
    // n8n reads the Merge node's parameters once, at item 0 of input 1.
    const [params] = await ctx.parameters([0]);
    const config = configAtRun(params ?? {}, version);
    // Every combination of two inputs can be far more items than either: counted before they are made.
    if (config.kind === 'all' || (config.kind === 'v1' && config.mode === 'multiplex')) {
      ctx.checkOutput((ctx.inputs[0]?.length ?? 0) * (ctx.inputs[1]?.length ?? 0));
    }
    return { outputs: [run(config, ctx.inputs)] };
  },
};

export const mergeNodes: NodeDefinition[] = [merge];
