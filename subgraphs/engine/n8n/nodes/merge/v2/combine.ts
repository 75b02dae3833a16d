import { NodeError, type Item } from '../../../../nodes';
import type { ByFields, Clash, JoinMode, Prefer } from '../config';
import { fieldReader, findMatches, type FieldPair, type Matches } from '../fields';
import { mergeMethod, withSuffix } from '../objects';

/**
 * n8n's Merge "Combine" modes of versions 2 and 3 (by matching fields, by position, all
 * combinations) and "Choose Branch". Items are `{json}`: n8n's binary data and paired-item
 * bookkeeping have no counterpart here. `shared` belongs to one execution (see mergeMethod).
 */

type Json = Record<string, unknown>;
type Shared = WeakMap<object, unknown>;

const item = (json: Json): Item => ({ json });

function suffixed(items: Item[], suffix: string): Item[] {
  return items.map((i) => item(withSuffix(i.json, suffix)));
}

/** n8n's `checkMatchFieldsInput`. */
function checkPairs(pairs: FieldPair[]): FieldPair[] {
  if (pairs.length === 1 && pairs[0]!.field1 === '' && pairs[0]!.field2 === '') {
    throw new NodeError('You need to define at least one pair of fields in "Fields to Match" to match on', { parameter: 'fieldsToMatch' });
  }
  pairs.forEach((pair, i) => {
    if (pair.field1 === '' || pair.field2 === '') {
      throw new NodeError(
        `You need to define both fields in "Fields to Match" for pair ${i + 1}, field 1 = '${String(pair.field1)}', field 2 = '${String(pair.field2)}'`,
        {
          parameter: 'fieldsToMatch',
          pair: i + 1,
        },
      );
    }
  });
  return pairs;
}

/** Version 2's `checkInput`: a field no item of its input has is an error. */
function requirePresent(items: Item[], fields: unknown[], disableDotNotation: boolean, label: string): void {
  for (const field of fields) {
    const read = fieldReader(field, false);
    const has = disableDotNotation ? (json: Json) => Object.prototype.hasOwnProperty.call(json, String(field)) : (json: Json) => read(json) !== undefined;
    if (!items.some((i) => has(i.json))) throw new NodeError(`Field '${String(field)}' is not present in any of items in '${label}'`, { field, input: label });
  }
}

/** Matched records folded into one item each; unset clash handling prefers input 2, or input 1 when enriching input 2. */
function mergeMatched(matched: Matches['matched'], clash: Clash, joinMode: JoinMode | undefined, shared: Shared): Item[] {
  const merge = mergeMethod(clash.merge, shared);
  const prefer: Prefer = clash.prefer ?? (joinMode === 'enrichInput2' ? 'first' : 'last');
  return matched.map(({ entry, matches }) => {
    if (prefer === 'suffix') return item(merge(withSuffix(entry.json, '1'), ...matches.map((m) => withSuffix(m.json, '2'))));
    if (prefer === 'first') {
      const [first, ...rest] = matches;
      return item(merge(first!.json, ...rest.map((m) => m.json), entry.json));
    }
    return item(merge(entry.json, ...matches.map((m) => m.json)));
  });
}

/** What n8n outputs when one input is empty: nothing to match, so the other input (or nothing). */
function oneSided(c: ByFields, input1: Item[], input2: Item[]): Item[] {
  if (c.joinMode === 'keepNonMatches' && c.outputDataFrom !== 'both' && !(c.outputDataFrom === 'input1' ? input1 : input2).length) return [];
  if (c.joinMode === 'keepMatches') return [];
  if ((c.joinMode === 'enrichInput1' && !input1.length) || (c.joinMode === 'enrichInput2' && !input2.length)) return [];
  return [...input1, ...input2];
}

export function combineByFields(c: ByFields, [input1 = [], input2 = []]: Item[][], shared: Shared): Item[] {
  const pairs = checkPairs(c.pairs);
  if (c.requireFields) {
    requirePresent(
      input1,
      pairs.map((p) => p.field1),
      c.disableDotNotation,
      'Input 1',
    );
    requirePresent(
      input2,
      pairs.map((p) => p.field2),
      c.disableDotNotation,
      'Input 2',
    );
  }
  if (!input1.length || !input2.length) return oneSided(c, input1, input2);
  if (!pairs.length) return c.joinMode === 'keepMatches' || c.joinMode === 'keepEverything' || c.joinMode === 'enrichInput2' ? [] : input1;
  const m = findMatches(input1, input2, pairs, {
    fuzzyCompare: c.fuzzyCompare,
    disableDotNotation: c.disableDotNotation,
    multipleMatches: c.multipleMatches,
    pairEachMatch: c.outputDataFrom === 'both' || c.joinMode === 'enrichInput1' || c.joinMode === 'enrichInput2',
  });
  const suffix = c.clash.prefer === 'suffix';
  const unmatched1 = () => (suffix ? suffixed(m.unmatched1, '1') : m.unmatched1);
  const unmatched2 = () => (suffix ? suffixed(m.unmatched2, '2') : m.unmatched2);
  switch (c.joinMode) {
    case 'keepNonMatches':
      if (c.outputDataFrom === 'input1') return m.unmatched1;
      if (c.outputDataFrom === 'input2') return m.unmatched2;
      return [...m.unmatched1.map((i) => item({ ...i.json, _source: 'input1' })), ...m.unmatched2.map((i) => item({ ...i.json, _source: 'input2' }))];
    case 'enrichInput1':
      return [...mergeMatched(m.matched, c.clash, c.joinMode, shared), ...unmatched1()];
    case 'enrichInput2':
      return [...mergeMatched(m.matched, c.clash, c.joinMode, shared), ...unmatched2()];
    default: {
      const kept =
        c.outputDataFrom === 'input1'
          ? m.matched.map((r) => r.entry)
          : c.outputDataFrom === 'input2'
            ? m.matched2
            : mergeMatched(m.matched, c.clash, undefined, shared);
      return c.joinMode === 'keepEverything' ? [...kept, ...unmatched1(), ...unmatched2()] : kept;
    }
  }
}

/** Input 1 and 2 swapped when input 1's version wins (it is merged last), suffixed for addSuffix. */
function orderedPair(clash: Clash, input1: Item[], input2: Item[]): [Item[], Item[]] {
  if (clash.prefer === 'first') return [input2, input1];
  if (clash.prefer === 'suffix') return [suffixed(input1, '1'), suffixed(input2, '2')];
  return [input1, input2];
}

/** Version 2 "Merge By Position": an empty input passes the other one on unchanged. */
export function byPositionV2(clash: Clash, includeUnpaired: boolean, [input1 = [], input2 = []]: Item[][], shared: Shared): Item[] {
  if (!input1.length || !input2.length) return [...input1, ...input2];
  const [a, b] = orderedPair(clash, input1, input2);
  const merge = mergeMethod(clash.merge, shared);
  const count = includeUnpaired ? Math.max(a.length, b.length) : Math.min(a.length, b.length);
  return Array.from({ length: count }, (_, i) => (i >= a.length ? b[i]! : i >= b.length ? a[i]! : item(merge(a[i]!.json, b[i]!.json))));
}

/**
 * Version 3 "Combine by Position" over all inputs: the preferred input (input 1, or the last) is
 * merged last. With addSuffix n8n keeps the preferred input unsuffixed for that last merge, so
 * the last input's fields appear a second time without suffix; that is its output, kept here.
 */
export function byPositionV3(clash: Clash, includeUnpaired: boolean, inputs: Item[][], shared: Shared): Item[] {
  const preferred = inputs[clash.prefer === 'first' ? 0 : inputs.length - 1] ?? [];
  const all = clash.prefer === 'suffix' ? inputs.map((input, i) => suffixed(input, String(i + 1))) : inputs;
  const lengths = [...all.map((input) => input.length), preferred.length];
  const count = includeUnpaired ? Math.max(...lengths) : Math.min(...lengths);
  const merge = mergeMethod(clash.merge, shared);
  return Array.from({ length: count }, (_, i) => item(merge({}, ...all.map((input) => input[i]?.json ?? {}), preferred[i]?.json ?? {})));
}

/** "Multiplex" / "All Possible Combinations": every item of one input with every item of the other. */
export function allCombinations(clash: Clash, [input1 = [], input2 = []]: Item[][], shared: Shared): Item[] {
  const [a, b] = orderedPair(clash, input1, input2);
  const merge = mergeMethod(clash.merge, shared);
  return a.flatMap((x) => b.map((y) => item(merge(x.json, y.json))));
}

/**
 * "Choose Branch". n8n requires data on inputs 1 and 2 for this mode (`requiredInputs`): without
 * it the node does not run, so nothing is output.
 */
export function chooseBranch(output: 'empty' | { input: unknown }, inputs: Item[][]): Item[] {
  if (!inputs[0]?.length || !inputs[1]?.length) return [];
  if (output === 'empty') return [item({})];
  const n = Number(output.input);
  if (output.input === null || output.input === '' || Number.isNaN(n)) {
    throw new NodeError(`useDataOfInput must be a number, not ${JSON.stringify(output.input)}`, { parameter: 'useDataOfInput' });
  }
  if (n > inputs.length) {
    throw new NodeError(`Input ${n} doesn't exist`, { description: `The node has only ${inputs.length} inputs, so selecting input ${n} is not possible.` });
  }
  return inputs[n - 1] ?? [];
}
