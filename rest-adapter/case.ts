/** snake_case <-> camelCase for the surfaces whose bodies are snake_case. */
export const toCamel = (s: string) => s.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
export const toSnake = (s: string) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** Converts object keys deeply, except the contents of `opaque` keys (client data kept verbatim). */
export function convertKeys(value: unknown, convert: (k: string) => string, opaque: ReadonlySet<string> = new Set()): unknown {
  if (Array.isArray(value)) return value.map((v) => convertKeys(v, convert, opaque));
  if (value === null || typeof value !== 'object' || value instanceof Date) return value;
  // fromEntries keeps every key an entry of its own (an assignment of `__proto__` would set the prototype).
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => {
      const key = convert(k);
      return [key, opaque.has(k) || opaque.has(key) ? v : convertKeys(v, convert, opaque)];
    }),
  );
}
