/**
 * Names a client chose (a metric, a sort key, a language, an output key, a gate criterion) used as
 * keys of plain objects. A plain `table[name]` reads Object.prototype for `constructor`,
 * `toString` or `__proto__`, and a plain `target[name] = value` with `__proto__` replaces the
 * prototype: only own entries count here, and every name is stored as an entry of its own.
 */

/** The entry `name` of `table`, or undefined when the table has no such entry of its own. */
export function ownEntry<T>(table: Readonly<Record<string, T>>, name: string): T | undefined {
  return Object.hasOwn(table, name) ? table[name] : undefined;
}

/** Sets `name` on `target` as an own, enumerable entry — `__proto__` too. */
export function setOwn<T>(target: Record<string, T>, name: string, value: T): void {
  Object.defineProperty(target, name, { value, writable: true, enumerable: true, configurable: true });
}
