import { setOwn } from '../../../../../kernel/names';
import { NodeError, isPlainObject, type Item, type NodeDefinition } from '../../../nodes';
import { deepCopy, getPath, setPath, unsetPath, type Json } from '../item-lists/paths';
import { collection, entries, type Params } from '../item-lists/params';

/**
 * n8n's Rename Keys: each `keys.key` entry moves the value at `currentKey` to `newKey` (both
 * dot-notation paths, the old one removed), in the order given; then each regex replacement
 * renames the keys matching `searchRegex`, down to `depth` levels (-1: all, 0: the top only).
 * An entry without both keys, or with the same key twice, changes nothing.
 */

const KEY_DEFAULTS = { currentKey: '', newKey: '' };
const REPLACEMENT_DEFAULTS = { searchRegex: '', replaceRegex: '' };

export function renameKeysOf(json: Json, p: Params, itemIndex: number): Json {
  const out = deepCopy(json);
  for (const { currentKey, newKey } of entries(p.keys, 'key', KEY_DEFAULTS)) {
    const from = String(currentKey);
    const to = String(newKey);
    if (from === '' || to === '' || from === to) continue;
    const value = getPath(out, from);
    if (value === undefined) continue;
    setPath(out, to, value);
    unsetPath(out, from);
  }
  let renamed = out;
  for (const r of regexReplacements(p)) {
    const options = collection(r.options);
    let regex: RegExp;
    try {
      regex = new RegExp(String(r.searchRegex), options.caseInsensitive ? 'gi' : 'g');
    } catch (err) {
      throw new NodeError(`Invalid regular expression: ${String(r.searchRegex)}`, { itemIndex, description: (err as Error).message });
    }
    const depth = typeof options.depth === 'number' ? options.depth : -1;
    renamed = renameMatching(renamed, regex, String(r.replaceRegex), depth) as Json;
  }
  return renamed;
}

function regexReplacements(p: Params): Params[] {
  const regex = collection(collection(p.additionalOptions).regexReplacement);
  return entries(regex.replacements === undefined ? undefined : regex, 'replacements', REPLACEMENT_DEFAULTS).filter((r) => r.searchRegex !== '');
}

/** A copy of `value` with the keys matching `regex` renamed, `depth` levels down (-1: all). */
function renameMatching(value: unknown, regex: RegExp, replacement: string, depth: number, level = 0): unknown {
  if (Array.isArray(value)) return value.map((v) => renameMatching(v, regex, replacement, depth, level));
  if (!isPlainObject(value)) return value;
  const out: Json = {};
  for (const key of Object.keys(value)) {
    const name = depth === -1 || level <= depth ? key.replace(regex, replacement) : key;
    const child = depth === -1 || level < depth ? renameMatching(value[key], regex, replacement, depth, level + 1) : value[key];
    setOwn(out, name, child);
  }
  return out;
}

export const renameKeys: NodeDefinition = {
  name: 'renameKeys',
  description: "n8n's Rename Keys: moves values to new keys (dot notation), and renames keys matching regular expressions.",
  n8n: { versions: [1] },
  inProcess: true,
  async execute(ctx) {
    const params = await ctx.parameters();
    const items = ctx.items.map((item, i): Item => ({ json: renameKeysOf(item.json, params[i] ?? {}, i), pairedItem: { item: i } }));
    return { outputs: [items] };
  },
};
