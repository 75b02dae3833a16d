/**
 * Names a client chose (a metric, a node type, a sort key, an output key) used as keys of plain
 * objects: a plain `table[name]` reads Object.prototype for `constructor` or `__proto__`, and a plain
 * `target[name] = value` with `__proto__` replaces the prototype. Only own entries count here.
 */

/** The own entry `name` of `table` (any value, boxed), or undefined: inherited names find nothing. */
export function ownEntry<T>(table: Readonly<Record<string, T>>, name: unknown): T | undefined;
export function ownEntry(table: unknown, name: unknown): unknown;
export function ownEntry(table: unknown, name: unknown): unknown {
  if (table === null || table === undefined || (typeof name !== 'string' && typeof name !== 'number')) return undefined;
  const boxed = Object(table) as Record<string | number, unknown>;
  return Object.hasOwn(boxed, name) ? boxed[name] : undefined;
}

/** Sets `name` on `target` as an own, enumerable entry, `__proto__` too. */
export function setOwn(target: object, name: string, value: unknown): void {
  if (name === '__proto__') Object.defineProperty(target, name, { value, writable: true, enumerable: true, configurable: true });
  else (target as Record<string, unknown>)[name] = value;
}
