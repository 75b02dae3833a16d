import type { ExtensionTable, Lib } from './types';

/**
 * n8n's number, boolean, array and object extensions (docs.n8n.io, "Data transformation
 * functions"), written for the expression prelude. Their source text runs in the sandbox: each
 * function must not reference anything outside its body except `lib`.
 */

export function numberExtensions(lib: Lib): ExtensionTable<number> {
  const round = (n: number, [places = 0]: [number?]) => +n.toFixed(places);
  const integer = (n: number, name: string) => {
    if (!Number.isInteger(n)) lib.fail(`${name}() is only callable on integers`);
  };
  return {
    ceil: (n) => Math.ceil(n),
    floor: (n) => Math.floor(n),
    format: (n, [locales = 'en-US', options = {}]: [(string | string[])?, Intl.NumberFormatOptions?]) => new Intl.NumberFormat(locales, options).format(n),
    round,
    abs: (n) => Math.abs(n),
    isInteger: (n) => Number.isInteger(n),
    isEven: (n) => (integer(n, 'isEven'), n % 2 === 0),
    isOdd: (n) => (integer(n, 'isOdd'), Math.abs(n) % 2 === 1),
    toBoolean: (n) => n !== 0,
    toInt: (n) => round(n, []),
    toFloat: (n) => n,
    toDateTime: (n, [format]: [string?]) => lib.numberToDateTime(n, format),
  };
}

export function booleanExtensions(): ExtensionTable<boolean> {
  const toInt = (b: boolean) => (b ? 1 : 0);
  return { toBoolean: (b) => b, toInt, toFloat: toInt, toNumber: toInt, toDateTime: () => undefined };
}

export function arrayExtensions(lib: Lib): ExtensionTable<unknown[]> {
  const numbers = (list: unknown[], name: string): number[] => {
    if (list.some((v) => typeof v !== 'number')) lib.fail(`${name}(): all array elements must be numbers`);
    return list as number[];
  };
  const sum = (list: unknown[]) => numbers(list, 'sum').reduce((total, n) => total + n, 0);
  const arrayArg = (arg: unknown, name: string, example: string): unknown[] => {
    if (!Array.isArray(arg)) lib.fail(`${name}(): expected array arg, e.g. .${name}(${example})`);
    return arg as unknown[];
  };
  const has = (list: unknown[], v: unknown) => list.some((w) => lib.isEqual(w, v));

  /** Deep-equal duplicates go, the first one stays; with field names, objects compare on those fields only. */
  function unique(list: unknown[], fields: string[]) {
    const key = (v: unknown) =>
      fields.length && v && typeof v === 'object' ? Object.fromEntries(fields.map((f) => [f, (v as Record<string, unknown>)[f]])) : v;
    const kept: unknown[] = [];
    const keys: unknown[] = [];
    for (const v of list) {
      const k = key(v);
      if (!has(keys, k)) {
        keys.push(k);
        kept.push(v);
      }
    }
    return kept;
  }

  /** `base` with the keys of `other` it lacks (base's values win). */
  function mergeInto(base: unknown, other: unknown): Record<string, unknown> {
    if (!other) return base as Record<string, unknown>;
    if (typeof other !== 'object') lib.fail('merge(): expected object arg');
    const out: Record<string, unknown> = { ...(base as object) };
    for (const [k, v] of Object.entries(other as object)) if (!(k in out)) out[k] = v;
    return out;
  }

  function chunk(list: unknown[], [size]: [number?]) {
    if (typeof size !== 'number' || size === 0) lib.fail('chunk(): expected non-zero numeric arg, e.g. .chunk(5)');
    const out: unknown[][] = [];
    for (let i = 0; i < list.length; i += size!) out.push(list.slice(i, i + size!));
    return out;
  }

  const undefinedFor = () => undefined;
  const table: ExtensionTable<unknown[]> = {
    removeDuplicates: unique,
    unique,
    first: (list) => list[0],
    last: (list) => list[list.length - 1],
    pluck(list, fields: string[]) {
      if (!fields.length) return list;
      const out: unknown[] = [];
      for (const v of list) {
        if (!v || typeof v !== 'object') continue;
        // In the object's key order (not the arguments'), once per matching argument.
        const found = Object.keys(v).flatMap((k) => fields.filter((f) => f === k).map(() => (v as Record<string, unknown>)[k]));
        if (found.length) out.push(found.length === 1 ? found[0] : found);
      }
      return out;
    },
    randomItem: (list) => (list.length ? list[Math.floor(Math.random() * list.length)] : undefined),
    sum,
    min: (list) => Math.min(...numbers(list, 'min')),
    max: (list) => Math.max(...numbers(list, 'max')),
    average: (list) => (numbers(list, 'average').length ? sum(list) / list.length : 0),
    isNotEmpty: (list) => list.length > 0,
    isEmpty: (list) => list.length === 0,
    compact: (list) =>
      list
        .filter((v) => !(v && typeof v === 'object' && Object.keys(v).length === 0) && v !== null && v !== undefined && v !== 'nil' && v !== '')
        .map((v) => (v !== null && typeof v === 'object' ? lib.compactObject(v) : v)),
    smartJoin(list, [keyField, valueField]: [string?, string?]) {
      if (!keyField || !valueField || typeof keyField !== 'string' || typeof valueField !== 'string') {
        lib.fail('smartJoin(): expected two string args, e.g. .smartJoin("name", "value")');
      }
      const out: Record<string, unknown> = {};
      for (const v of list) {
        if (v !== null && typeof v === 'object' && keyField! in v && valueField! in v)
          out[(v as Record<string, unknown>)[keyField!] as string] = (v as Record<string, unknown>)[valueField!];
      }
      return out;
    },
    chunk,
    renameKeys(list, names: string[]) {
      if (names.length === 0 || names.length % 2 !== 0) {
        lib.fail('renameKeys(): expected an even amount of args: from1, to1 [, from2, to2, ...]. e.g. .renameKeys("name", "title")');
      }
      return list.map((v) => {
        if (typeof v !== 'object' || v === null) return v;
        const out: Record<string, unknown> = { ...v };
        for (let i = 0; i < names.length; i += 2) {
          const [from, to] = [names[i]!, names[i + 1]!];
          if (from in out) {
            out[to] = out[from];
            delete out[from];
          }
        }
        return out;
      });
    },
    merge(list, [others]: [unknown?]) {
      if (others === undefined) {
        return list.reduce<Record<string, unknown>>((acc, v) => (v !== null && typeof v === 'object' && !Array.isArray(v) ? mergeInto(acc, v) : acc), {});
      }
      const other = arrayArg(others, 'merge', '[{ id: 1, otherValue: 3 }]');
      let merged: Record<string, unknown> = {};
      for (let i = 0; i < Math.max(list.length, other.length); i++) {
        if (list[i] !== undefined && typeof list[i] === 'object' && typeof other[i] === 'object') merged = Object.assign(merged, mergeInto(list[i], other[i]));
      }
      return merged;
    },
    union(list, [others]: [unknown?]) {
      const out = list.slice();
      for (const v of arrayArg(others, 'union', '[1, 2, 3, 4]')) if (!has(out, v)) out.push(v);
      return unique(out, []);
    },
    difference(list, [others]: [unknown?]) {
      const other = arrayArg(others, 'difference', '[1, 2, 3, 4]');
      return unique(
        list.filter((v) => !has(other, v)),
        [],
      );
    },
    intersection(list, [others]: [unknown?]) {
      const other = arrayArg(others, 'intersection', '[1, 2, 3, 4]');
      return unique([...list.filter((v) => has(other, v)), ...other.filter((v) => has(list, v))], []);
    },
    append: (list, values) => list.concat(values),
    toJsonString: (list) => JSON.stringify(list),
    toInt: undefinedFor,
    toFloat: undefinedFor,
    toBoolean: undefinedFor,
    toDateTime: undefinedFor,
  };
  return table;
}

export function objectExtensions(lib: Lib): ExtensionTable<Record<string, unknown>> {
  /** application/x-www-form-urlencoded, as URLSearchParams writes it. */
  const form = (s: string) =>
    lib.codec
      .utf8(s)
      .map((b) =>
        /[A-Za-z0-9*\-._]/.test(String.fromCharCode(b)) && b < 0x80
          ? String.fromCharCode(b)
          : b === 0x20
            ? '+'
            : '%' + b.toString(16).toUpperCase().padStart(2, '0'),
      )
      .join('');
  const undefinedFor = () => undefined;
  const table: ExtensionTable<Record<string, unknown>> = {
    isEmpty: (o) => Object.keys(o).length === 0,
    isNotEmpty: (o) => Object.keys(o).length > 0,
    hasField: (o, [name]: [string?]) => (name as string) in o,
    removeField(o, [name]: [string?]) {
      if (!((name as string) in o)) return o;
      const out = { ...o };
      delete out[name as string];
      return out;
    },
    removeFieldsContaining(o, [match]: [string?]) {
      if (typeof match !== 'string' || match === '') lib.fail('removeFieldsContaining(): expected non-empty string arg');
      return Object.fromEntries(Object.entries(o).filter(([, v]) => !(typeof v === 'string' && v.includes(match!))));
    },
    keepFieldsContaining(o, [match]: [string?]) {
      if (typeof match !== 'string' || match === '') lib.fail('argument of keepFieldsContaining must be a non-empty string');
      return Object.fromEntries(Object.entries(o).filter(([, v]) => typeof v === 'string' && v.includes(match!)));
    },
    compact: (o) => lib.compactObject(o),
    urlEncode: (o) =>
      Object.entries(o)
        .map(([k, v]) => `${form(k)}=${form(String(v))}`)
        .join('&'),
    keys: (o) => Object.keys(o),
    values: (o) => Object.values(o),
    toJsonString: (o) => JSON.stringify(o),
    toInt: undefinedFor,
    toFloat: undefinedFor,
    toBoolean: undefinedFor,
    toDateTime: undefinedFor,
  };
  return table;
}
