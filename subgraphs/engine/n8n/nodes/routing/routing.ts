import { versionOf, type Item, type NodeContext, type NodeDefinition } from '../../../nodes';
import { editorSettings, filterPasses, looseTypeValidation, type FilterEditorRule } from './conditions';
import { legacyConditionsPass } from './conditions.legacy';
import { filterFailure, itemParameters, routed, zoneOf, type Params } from './items';
import { switchNode } from './switch';

/**
 * n8n's If and Filter. Version 1 has conditions keyed by data type (value1 / operation /
 * value2, conditions.legacy.ts) and a combine parameter; 2.x has one filter parameter
 * (conditions.ts). If sends the items that pass by output 0 (true), the others by output 1
 * (false); Filter keeps those that pass (n8n shows the discarded ones in its editor only: the
 * node has one output). From 2 on, an item that fails goes to false / is discarded when the node
 * goes on after failures; version 1 fails as a whole.
 */

interface Version1Combine {
  parameter: string;
  all: string;
  any: string;
}

interface SplitNode {
  combine: Version1Combine;
  /** Version 2.x's filter options follow these node parameters (If/Filter typeOptions.filter). */
  filter: FilterEditorRule;
}

const IF: SplitNode = {
  combine: { parameter: 'combineOperation', all: 'all', any: 'any' },
  filter: { looseParameterSince: 2.1, filterVersion2Since: 2.2 },
};

const FILTER: SplitNode = {
  combine: { parameter: 'combineConditions', all: 'AND', any: 'OR' },
  filter: IF.filter,
};

const VERSIONS = [1, 2, 2.1, 2.2] as const;

type Decide = (params: Params, itemIndex: number) => boolean;

function version1(node: SplitNode): Decide {
  const { parameter, all, any } = node.combine;
  return (params) => {
    const combine = params[parameter] ?? all;
    return legacyConditionsPass(params.conditions, combine === all ? 'all' : combine === any ? 'any' : undefined);
  };
}

function version2(node: SplitNode, version: number, zone: string): Decide {
  return (params, itemIndex) => {
    try {
      return filterPasses(params.conditions, { itemIndex, zone, fallback: editorSettings(params, version, node.filter) });
    } catch (err) {
      throw filterFailure(err, itemIndex, !looseTypeValidation(params, version, node.filter));
    }
  };
}

/** The items that pass and those that do not, in input order. */
async function split(ctx: NodeContext, node: SplitNode): Promise<[Item[], Item[]]> {
  const version = versionOf(ctx.node);
  const decide = version < 2 ? version1(node) : version2(node, version, zoneOf(ctx));
  const perItemFailures = version >= 2 && ctx.continueOnFail;
  const params = await itemParameters(ctx);
  const passed: Item[] = [];
  const failed: Item[] = [];
  ctx.items.forEach((item, i) => {
    try {
      const p = params[i]!;
      if (p instanceof Error) throw p;
      (decide(p, i) ? passed : failed).push(routed(item, i));
    } catch (err) {
      if (!perItemFailures) throw err;
      failed.push(routed(item, i));
    }
  });
  return [passed, failed];
}

const ifNode: NodeDefinition = {
  name: 'if',
  description: "n8n's If: the items meeting the conditions leave by output 0 (true), the others by output 1 (false).",
  n8n: { versions: VERSIONS },
  inProcess: true,
  outputs: () => 2,
  execute: async (ctx) => ({ outputs: await split(ctx, IF) }),
};

const filterNode: NodeDefinition = {
  name: 'filter',
  description: "n8n's Filter: keeps the items meeting the conditions.",
  n8n: { versions: VERSIONS },
  inProcess: true,
  outputs: () => 1,
  execute: async (ctx) => ({ outputs: [(await split(ctx, FILTER))[0]] }),
};

export const routingNodes: NodeDefinition[] = [ifNode, filterNode, switchNode];
