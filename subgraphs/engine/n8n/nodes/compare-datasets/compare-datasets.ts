import { setOwn } from '../../../../../kernel/names';
import { NodeError, type Item, type NodeContext, type NodeDefinition } from '../../../nodes';
import { deepCopy, fieldReader, isEqual, setPath, type FieldReader, type Json } from '../item-lists/paths';
import { collection, entries, fieldList, fixedOption, type Params } from '../item-lists/params';

/**
 * n8n's Compare Datasets: items of input A and input B matched by pairs of fields, sorted into
 * four outputs: in A only, the same in both, different, in B only. A different pair comes out as
 * A's version, B's, a mix (one version with some fields from the other), or both
 * (`{ keys, same, different: { field: { inputA, inputB } } }`). `skipFields` are left out of the
 * comparison; `fuzzyCompare` takes "3" and 3 (and "true" and true) as equal; `multipleMatches`
 * compares an A item with its first match in B only, or with every one.
 */

const RESOLVE = ['preferInput1', 'preferInput2', 'mix', 'includeBoth'];

interface Settings {
  pairs: { a: string; b: string }[];
  resolve: string;
  prefer: 'input1' | 'input2';
  except: string[];
  skip: string[];
  fuzzy: boolean;
  all: boolean;
  read: FieldReader;
  dotless: boolean;
}

function settings(p: Params): Settings {
  const options = collection(p.options);
  const pairs = entries(p.mergeByFields, 'values', { field1: '', field2: '' }).map((e) => ({ a: String(e.field1).trim(), b: String(e.field2).trim() }));
  if (!pairs.length || pairs.some((f) => f.a === '' || f.b === '')) {
    throw new NodeError('You need to define at least one pair of fields in "Fields to Match" to match on');
  }
  const dotless = Boolean(options.disableDotNotation);
  return {
    pairs,
    resolve: fixedOption(p.resolve, 'includeBoth'),
    prefer: fixedOption(p.preferWhenMix, 'input1') === 'input2' ? 'input2' : 'input1',
    except: p.resolve === 'mix' ? fieldList(p.exceptWhenMix ?? '', 'For Everything Except') : [],
    skip: fieldList(options.skipFields ?? '', 'Fields to Skip Comparing'),
    fuzzy: Boolean(p.fuzzyCompare ?? options.fuzzyCompare),
    all: fixedOption(options.multipleMatches, 'first') === 'all',
    read: fieldReader(dotless),
    dotless,
  };
}

/** Fuzzy: a string that reads as the other value's number or boolean counts as equal to it. */
function same(a: unknown, b: unknown, fuzzy: boolean): boolean {
  if (isEqual(a, b)) return true;
  if (!fuzzy) return false;
  const loose = (v: unknown) =>
    typeof v === 'string' && v.trim() !== '' && !Number.isNaN(Number(v)) ? Number(v) : v === 'true' ? true : v === 'false' ? false : v;
  if ((a === null || a === undefined) && (b === null || b === undefined)) return true;
  return isEqual(loose(a), loose(b));
}

function without(json: Json, fields: string[]): Json {
  const out: Json = {};
  for (const key of Object.keys(json)) if (!fields.includes(key)) setOwn(out, key, json[key]);
  return out;
}

function comparable(json: Json, s: Settings): Json {
  return without(json, s.skip);
}

function equalItems(a: Json, b: Json, s: Settings): boolean {
  const x = comparable(a, s);
  const y = comparable(b, s);
  const keys = new Set([...Object.keys(x), ...Object.keys(y)]);
  for (const key of keys) if (!same(x[key], y[key], s.fuzzy)) return false;
  return true;
}

function both(a: Json, b: Json, s: Settings): Json {
  const keys: Json = {};
  for (const { a: field } of s.pairs) setOwn(keys, field, s.read(a, field));
  const keyFields = new Set(s.pairs.flatMap((f) => [f.a, f.b]));
  const sameFields: Json = {};
  const different: Json = {};
  const skipped: Json = {};
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
    if (keyFields.has(key)) continue;
    const va = a[key] ?? null;
    const vb = b[key] ?? null;
    if (s.skip.includes(key)) setOwn(skipped, key, { inputA: va, inputB: vb });
    else if (same(va, vb, s.fuzzy)) setOwn(sameFields, key, va);
    else setOwn(different, key, { inputA: va, inputB: vb });
  }
  const out: Json = { keys, same: sameFields, different };
  if (s.skip.length) out.skipped = skipped;
  return out;
}

function resolved(a: Json, b: Json, s: Settings): Json {
  switch (s.resolve) {
    case 'preferInput1':
      return deepCopy(a);
    case 'preferInput2':
      return deepCopy(b);
    case 'mix': {
      const [base, other] = s.prefer === 'input1' ? [a, b] : [b, a];
      const out = deepCopy(base);
      for (const field of s.except) {
        const value = s.read(other, field);
        if (s.dotless) setOwn(out, field, value);
        else setPath(out, field, value);
      }
      return out;
    }
    default:
      return both(a, b, s);
  }
}

function matches(a: Json, b: Json, s: Settings): boolean {
  return s.pairs.every(({ a: fa, b: fb }) => {
    const va = s.read(a, fa);
    const vb = s.read(b, fb);
    return va !== undefined && va !== null && vb !== undefined && vb !== null && same(va, vb, s.fuzzy);
  });
}

export function compareDatasets(inputA: Item[], inputB: Item[], p: Params): Item[][] {
  const s = settings(p);
  const onlyA: Item[] = [];
  const sameOut: Item[] = [];
  const differentOut: Item[] = [];
  const matchedB = new Set<number>();
  inputA.forEach((itemA, i) => {
    const found: number[] = [];
    inputB.forEach((itemB, j) => {
      if ((s.all || !found.length) && matches(itemA.json, itemB.json, s)) found.push(j);
    });
    if (!found.length) {
      onlyA.push({ json: itemA.json, pairedItem: { item: i } });
      return;
    }
    for (const j of found) {
      matchedB.add(j);
      const b = inputB[j]!.json;
      if (equalItems(itemA.json, b, s)) sameOut.push({ json: itemA.json, pairedItem: { item: i } });
      else differentOut.push({ json: resolved(itemA.json, b, s), pairedItem: { item: i } });
    }
  });
  const onlyB = inputB.flatMap((item, j): Item[] => (matchedB.has(j) ? [] : [{ json: item.json, pairedItem: { item: j, input: 1 } }]));
  return [onlyA, sameOut, differentOut, onlyB];
}

export const compareDatasetsNode: NodeDefinition = {
  name: 'compareDatasets',
  description: "n8n's Compare Datasets: input A and input B matched by fields, into four outputs (in A only, same, different, in B only).",
  n8n: { versions: [2.3] },
  inProcess: true,
  inputs: () => 2,
  outputs: () => 4,
  invalid(p) {
    const resolve = fixedOption(p.resolve, 'includeBoth');
    return RESOLVE.includes(resolve) ? undefined : { parameter: 'resolve', message: `must be one of ${RESOLVE.join(', ')}` };
  },
  async execute(ctx: NodeContext) {
    // n8n reads the parameters once, at the first item.
    const [p] = await ctx.parameters([0]);
    const outputs = compareDatasets(ctx.inputs[0] ?? [], ctx.inputs[1] ?? [], p ?? {});
    ctx.checkOutput(outputs.reduce((n, list) => n + list.length, 0));
    return { outputs };
  },
};
