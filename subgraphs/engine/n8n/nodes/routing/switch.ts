import { ownEntry } from '../../../../../kernel/names';
import { versionOf, isPlainObject, NodeError, objectOf, type Item, type NodeContext, type NodeDefinition } from '../../../nodes';
import { editorSettings, filterPasses, looseTypeValidation, type FilterEditorRule } from './conditions';
import { compareLegacy, CONDITION_DEFAULTS, SWITCH_OPERATIONS, toMillis, type LegacyType } from './conditions.legacy';
import { failedItem, filterFailure, isExpression, itemParameters, routed, zoneOf, type Params } from './items';

/**
 * n8n's Switch. Mode `expression`: an output index per item. Mode `rules`: version 1 and 2
 * compare one `value1` with each rule's `value2` (version 1 sends to the rule's `output` of four,
 * version 2 has one output per rule), the first match wins, else `fallbackOutput` (-1: none);
 * version 3's rules are filters (conditions.ts), one output per rule, `options.fallbackOutput`
 * none / extra (an added last output) / an output index, `options.allMatchingOutputs`.
 * Outputs are created from the first item's parameters; an item that fails becomes
 * `{ error }` on output 0 when the node goes on after failures.
 */

const VERSIONS = [1, 2, 3, 3.1, 3.2] as const;

const FILTER_RULE: FilterEditorRule = { looseParameterSince: 3.1, filterVersion2Since: 3.2 };

/** Version 3's rules when an export leaves them at n8n's default: one rule, '' equals ''. */
const DEFAULT_RULES = {
  values: [
    {
      conditions: {
        options: { caseSensitive: true, leftValue: '', typeValidation: 'strict' },
        conditions: [{ leftValue: '', rightValue: '', operator: { type: 'string', operation: 'equals' } }],
        combinator: 'and',
      },
    },
  ],
};

/** Defaults n8n fills into a version 1 / 2 rule, by data type (a date's value2 defaults to 0 here). */
const RULE_DEFAULTS: Record<LegacyType, { operation: string; value2: unknown }> = {
  boolean: { operation: 'equal', value2: false },
  dateTime: { operation: 'after', value2: 0 },
  number: { operation: 'smaller', value2: 0 },
  string: { operation: 'equal', value2: '' },
};

interface Router {
  /** The outputs, created from the first item's parameters (none when they failed). */
  outputs(first: Params | undefined): Item[][];
  /** The outputs (keys into the list) an item goes to; none drops it. */
  route(params: Params, itemIndex: number, outputs: Item[][], first: Params): unknown[];
}

const list = (v: unknown): Params[] => (Array.isArray(v) ? v.map((r) => (isPlainObject(r) ? r : {})) : []);
const emptyOutputs = (n: number): Item[][] => Array.from({ length: n }, () => []);
const mode = (params: Params): unknown => params.mode ?? 'rules';

/** Versions 1 and 2: an index outside the outputs fails the item. */
function checkRange(index: unknown, outputs: Item[][]): void {
  // JavaScript's comparisons, as n8n's: a string index passes when it reads as one in range.
  if ((index as number) < 0 || (index as number) >= outputs.length) {
    throw new NodeError(`The output ${String(index)} is not allowed. It has to be between 0 and ${outputs.length - 1}!`);
  }
}

/** Version 3's check (the output after the last is refused with a hint about zero-based indexes). */
function checkRangeV3(index: unknown, outputs: Item[][]): void {
  const n = outputs.length;
  if (Number(index) === n) {
    throw new NodeError(`The output ${String(index)} is not allowed.`, {
      description: `Output indexes are zero based, if you want to use the extra output use ${Number(index) - 1}`,
    });
  }
  if ((index as number) < 0 || (index as number) > n) {
    throw new NodeError(`The output ${String(index)} is not allowed`, { description: `It has to be between 0 and ${n - 1}` });
  }
}

/** Versions 1 and 2 in rules mode: the index (in the rules) of the first rule value1 matches, or the fallback. */
function firstMatch(params: Params, first: Params, onMatch: (rule: Params, index: number) => unknown): unknown[] {
  const dataType = String(first.dataType ?? 'number') as LegacyType;
  const defaults: Partial<(typeof RULE_DEFAULTS)[LegacyType]> = ownEntry(RULE_DEFAULTS, dataType) ?? {};
  const given = Object.hasOwn(params, 'value1') ? params.value1 : ownEntry(CONDITION_DEFAULTS, dataType)?.value1;
  const value1 = dataType === 'dateTime' ? toMillis(given) : given;
  const rules = list(objectOf(params.rules).rules);
  for (let r = 0; r < rules.length; r++) {
    const rule = { ...defaults, ...rules[r] };
    if (compareLegacy(dataType, { value1, operation: rule.operation, value2: rule.value2 }, SWITCH_OPERATIONS)) return [onMatch(rule, r)];
  }
  const fallback = params.fallbackOutput ?? -1;
  return fallback === -1 ? [] : [fallback];
}

const version1: Router = {
  outputs: () => emptyOutputs(4),
  route(params, _i, outputs, first) {
    const targets =
      mode(params) === 'expression'
        ? [params.output ?? 0]
        : mode(params) === 'rules'
          ? firstMatch(params, first, (rule) => ('output' in rule ? rule.output : 0))
          : [];
    targets.forEach((t) => checkRange(t, outputs));
    return targets;
  },
};

const version2: Router = {
  outputs(first) {
    if (first && mode(first) === 'expression') return emptyOutputs(Number(first.outputsAmount ?? 4));
    return first && mode(first) === 'rules' ? emptyOutputs(list(objectOf(first.rules).rules).length) : [];
  },
  route(params, _i, outputs, first) {
    if (mode(params) === 'expression') {
      const target = params.output ?? '';
      checkRange(target, outputs);
      return [target];
    }
    if (mode(params) !== 'rules') return [];
    const targets = firstMatch(params, first, (_rule, index) => index);
    targets.forEach((t) => checkRange(t, outputs));
    return targets;
  },
};

const rulesV3 = (params: Params) => list(objectOf(params.rules === undefined ? DEFAULT_RULES : params.rules).values);

/** The Output Index parameter is validated as a number: "2" reads as 2, "two" fails. */
function outputIndex(value: unknown, itemIndex: number): unknown {
  if (value === null || value === undefined || typeof value === 'number') return value ?? undefined;
  const n = Number(value);
  if (!Number.isNaN(n)) return n;
  const got = typeof value === 'object' ? (Array.isArray(value) ? 'array' : 'object') : `'${String(value)}'`;
  throw new NodeError(`Invalid input for 'Output Index' [item ${itemIndex}]`, { description: `'output' expects a number but we got ${got}` });
}

function version3(version: number, zone: string): Router {
  const passes = (conditions: unknown, params: Params, itemIndex: number) => {
    try {
      return filterPasses(conditions, { itemIndex, zone, fallback: editorSettings(params, version, FILTER_RULE) });
    } catch (err) {
      throw filterFailure(err, itemIndex, !looseTypeValidation(params, version, FILTER_RULE));
    }
  };
  return {
    outputs(first) {
      if (first && mode(first) === 'expression') return emptyOutputs(Number(first.numberOutputs ?? 4));
      const rules = first && mode(first) === 'rules' ? rulesV3(first).length : 0;
      return rules ? emptyOutputs(rules + (objectOf(first!.options).fallbackOutput === 'extra' ? 1 : 0)) : [];
    },
    route(params, itemIndex, outputs) {
      if (mode(params) === 'expression') {
        const target = outputIndex(params.output, itemIndex);
        checkRangeV3(target, outputs);
        return [target];
      }
      const rules = mode(params) === 'rules' ? rulesV3(params) : [];
      if (!rules.length) return [];
      const options: Params = isPlainObject(params.options) ? params.options : {};
      const targets: number[] = [];
      for (let r = 0; r < rules.length; r++) {
        if (!passes(rules[r]!.conditions, params, itemIndex)) continue;
        targets.push(r);
        if (!options.allMatchingOutputs) return targets;
      }
      const fallback = options.fallbackOutput;
      if (targets.length || fallback === undefined || fallback === 'none') return targets;
      if (fallback === 'extra') return [outputs.length - 1];
      checkRangeV3(fallback, outputs);
      return [fallback];
    },
  };
}

/** The list of an output key (as JavaScript indexes an array: "1" is 1, 1.5 or "x" is no output). */
function slot(outputs: Item[][], key: unknown): Item[] {
  const found: unknown = (outputs as unknown as Record<string, unknown>)[String(key)];
  if (!Array.isArray(found))
    throw new NodeError(`The item cannot be sent to output ${JSON.stringify(key) ?? String(key)}: the node has outputs 0 to ${outputs.length - 1}`);
  return found as Item[];
}

async function execute(ctx: NodeContext) {
  const version = versionOf(ctx.node);
  const router = version < 2 ? version1 : version < 3 ? version2 : version3(version, zoneOf(ctx));
  const params = await itemParameters(ctx);
  const first = params[0] instanceof Error ? undefined : params[0];
  const outputs = router.outputs(first);
  ctx.items.forEach((item, i) => {
    try {
      const p = params[i]!;
      if (p instanceof Error) throw p;
      for (const key of router.route(p, i, outputs, first ?? {})) slot(outputs, key).push(routed(item, i));
    } catch (err) {
      // n8n puts the failure on output 0; with no outputs created yet, the node fails (as n8n's does).
      if (!ctx.continueOnFail || !outputs[0]) throw err;
      outputs[0].push(failedItem(err, i));
    }
  });
  return { outputs: version >= 3 && outputs.length === 0 ? [[]] : outputs };
}

// ---------------------------------------------------------------------------------------------
// Checked when the workflow is saved: the number of outputs must be known then.

function outputCount(params: Params, version: number): number {
  if (version < 2) return 4;
  if (mode(params) === 'expression') return Math.max(0, Number((version < 3 ? params.outputsAmount : params.numberOutputs) ?? 4)) || 0;
  if (version < 3) return list(objectOf(params.rules).rules).length;
  return rulesV3(params).length + (objectOf(params.options).fallbackOutput === 'extra' ? 1 : 0);
}

/** Parameters that decide the outputs, given as expressions: their value is only known when an item runs. */
function unsupported(params: Params, version: number): { option: string; message: string } | undefined {
  if (version < 2) return undefined;
  const deciding: [string, unknown][] = [['mode', params.mode]];
  if (mode(params) === 'expression') {
    const counts = version < 3 ? 'outputsAmount' : 'numberOutputs';
    deciding.push([counts, params[counts]]);
  } else {
    deciding.push(
      ['rules', params.rules],
      [version < 3 ? 'rules.rules' : 'rules.values', version < 3 ? objectOf(params.rules).rules : objectOf(params.rules).values],
    );
    if (version >= 3) deciding.push(['options.fallbackOutput', objectOf(params.options).fallbackOutput]);
  }
  const found = deciding.find(([, value]) => isExpression(value));
  if (!found) return undefined;
  return {
    option: found[0],
    message: `${found[0]} is an expression; the Switch's outputs must be known when the workflow is saved, so set ${found[0]} to a fixed value`,
  };
}

function invalid(params: Params, version: number): { parameter: string; message: string } | undefined {
  if (version < 2 || mode(params) !== 'expression') return undefined;
  const name = version < 3 ? 'outputsAmount' : 'numberOutputs';
  const n = params[name];
  if (n === undefined || isExpression(n) || (typeof n === 'number' && Number.isInteger(n) && n >= 0)) return undefined;
  return { parameter: name, message: 'must be a whole number of outputs (0 or more)' };
}

export const switchNode: NodeDefinition = {
  name: 'switch',
  description: "n8n's Switch: routes each item to an output by rules or by an expression giving the output's index.",
  n8n: { versions: VERSIONS, unsupported },
  inProcess: true,
  outputs: outputCount,
  invalid,
  execute,
};
