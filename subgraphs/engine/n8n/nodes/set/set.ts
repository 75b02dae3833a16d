import { type NodeDefinition, isOneOf, isPlainObject, listOf, objectOf } from '../../../nodes';
import { typeGap } from './convert';
import { executeSetV1 } from './v1/set';
import { executeSetV3 } from './v3/set';

/**
 * n8n's Set node ("Edit Fields (Set)"), natively: versions 1 and 2 (typed value lists,
 * keepOnlySet) and 3 to 3.4 (manual mapping or JSON, typed fields, include options), with
 * n8n's parameters, defaults, conversions, key order and messages (v1/set.ts, v3/set.ts).
 */

type Params = Record<string, unknown>;

const MODES = ['manual', 'raw'];

/** The fields a 3.x manual mapping stores, with their types as the conversion reads them. */
function storedFields(params: Params, version: number): { name: unknown; type: unknown }[] {
  if (version >= 3.3) {
    const list: unknown[] = listOf(objectOf(params.assignments).assignments);
    return list.filter(isPlainObject).map((a) => ({ name: a.name, type: a.type }));
  }
  const list: unknown[] = listOf(objectOf(params.fields).values);
  return list.filter(isPlainObject).map((e) => ({ name: e.name, type: typeof e.type === 'string' ? e.type.replace('Value', '') : e.type }));
}

export const setNode: NodeDefinition = {
  name: 'set',
  description: "n8n's Edit Fields (Set): adds, converts and removes item fields (versions 1 to 3.4).",
  n8n: {
    versions: [1, 2, 3, 3.1, 3.2, 3.3, 3.4],
    unsupported(params, version) {
      if (version < 3 || (params.mode ?? 'manual') !== 'manual') return undefined;
      for (const { name, type } of storedFields(params, version)) {
        const gap = typeGap(type);
        if (gap) return { option: `field type ${String(type)}`, message: `the field "${String(name)}" has the type ${String(type)}: ${gap}` };
      }
      return undefined;
    },
  },
  inProcess: true,
  invalid(params, version) {
    const mode = params.mode ?? 'manual';
    if (version >= 3 && !isOneOf(MODES, mode)) {
      return { parameter: 'mode', message: `is "${String(mode)}"; the Set node's modes are "manual" (Manual Mapping) and "raw" (JSON)` };
    }
    return undefined;
  },
  execute: (ctx) => {
    const version = ctx.node.typeVersion ?? 1;
    return version < 3 ? executeSetV1(ctx, version) : executeSetV3(ctx, version);
  },
};

export const setNodes: NodeDefinition[] = [setNode];
