import type { Item } from '../../../../nodes';
import type { MergeConfig } from '../config';
import { pathReader } from '../fields';

/**
 * n8n's Merge version 1 (still imported by n8n, marked "old version"): two inputs; keys are
 * compared as text (a number key matches its digits), only string, number and null keys take
 * part, and an input 2 item whose key is empty, 0 or false is never a match.
 */

type V1 = Extract<MergeConfig, { kind: 'v1' }>;
type Json = Record<string, unknown>;

const item = (json: Json): Item => ({ json });

function byIndex(join: V1['join'], input1: Item[], input2: Item[]): Item[] {
  if (!input1.length) return join === 'outer' ? input2 : [];
  if (!input2.length) return join === 'inner' ? [] : input1;
  const count = join === 'inner' ? Math.min(input1.length, input2.length) : join === 'outer' ? Math.max(input1.length, input2.length) : input1.length;
  return Array.from({ length: count }, (_, i) =>
    i >= input1.length ? input2[i]! : i >= input2.length ? input1[i]! : item({ ...input1[i]!.json, ...input2[i]!.json }),
  );
}

/** The text a key compares as, or undefined when the value cannot be a key. */
function keyText(value: unknown): string | undefined {
  if (value === null) return 'null';
  return typeof value === 'string' || typeof value === 'number' ? String(value) : undefined;
}

function mergedByKey(c: V1, entry: Item, match: Item): Item {
  const json: Json = { ...entry.json };
  for (const key of Object.keys(match.json)) {
    if (key === c.property2) continue;
    const replace =
      c.overwrite === 'always' ||
      (c.overwrite === 'undefined' && !Object.prototype.hasOwnProperty.call(json, key)) ||
      (c.overwrite === 'blank' && (json[key] === null || json[key] === undefined || json[key] === ''));
    if (replace) json[key] = match.json[key];
  }
  return item(json);
}

/** keepKeyMatches, removeKeyMatches and mergeByKey: input 1's items looked up by key in input 2. */
function byKey(c: V1, input1: Item[], input2: Item[]): Item[] {
  if (!c.property1 || !c.property2) return c.mode === 'keepKeyMatches' ? [] : input1;
  const read1 = pathReader(c.property1);
  const read2 = pathReader(c.property2);
  const byKeyText = new Map<string, Item>();
  for (const entry of input2) {
    const key = read2(entry.json);
    // n8n indexes a plain object by String(key): later items win; "__proto__" never lands.
    if (key && String(key) !== '__proto__') byKeyText.set(String(key), entry);
  }
  const out: Item[] = [];
  for (const entry of input1) {
    const text = keyText(read1(entry.json));
    const match = text === undefined ? undefined : byKeyText.get(text);
    if (c.mode === 'removeKeyMatches') {
      if (!match) out.push(entry);
    } else if (c.mode === 'keepKeyMatches') {
      if (match) out.push(entry);
    } else if (text !== undefined) {
      out.push(match ? mergedByKey(c, entry, match) : entry);
    }
  }
  return out;
}

export function runV1(c: V1, [input1 = [], input2 = []]: Item[][]): Item[] {
  switch (c.mode) {
    case 'append':
      return [...input1, ...input2];
    case 'mergeByIndex':
      return byIndex(c.join, input1, input2);
    case 'multiplex':
      return input1.flatMap((a) => input2.map((b) => item({ ...a.json, ...b.json })));
    case 'passThrough':
      return c.output === 'input1' ? input1 : input2;
    case 'wait':
      return [item({})];
    default:
      return byKey(c, input1, input2);
  }
}
