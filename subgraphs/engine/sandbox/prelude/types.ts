import type * as Luxon from 'luxon';
import type { Codec } from './codec';

/**
 * What the prelude (prelude.ts) hands its extension tables (the .dates, .strings
 * and .values files), and what they give back; apart so that the tables, which the prelude
 * imports, do not import it back.
 */

/**
 * An extension: the value it is called on (a table is picked by the value's type: `T`), and the
 * call's arguments as a list. The signature is a method's, so an entry may declare the arguments it
 * reads (`[unit]: [string?]`) and a table of one type stands among the others.
 */
export type ExtensionFn<T = unknown> = { extension(value: T, args: unknown[]): unknown }['extension'];
export type ExtensionTable<T = unknown> = Record<string, ExtensionFn<T>>;

/** What the extension tables get from the prelude. */
export interface Lib {
  luxon: typeof Luxon;
  codec: Codec;
  /** Throws one of n8n's expression errors: it fails the node (other errors in n8n expressions only give undefined). */
  fail(message: string): never;
  /** Deep equality of JSON-like values (lodash's isEqual for what expressions handle). */
  isEqual(a: unknown, b: unknown): boolean;
  /** Without null, undefined, "nil", "" and empty objects, recursively (arrays become objects, as in n8n). */
  compactObject(o: object): Record<string, unknown>;
  stringToDateTime(s: string, format?: string): Luxon.DateTime;
  numberToDateTime(n: number, format?: string): Luxon.DateTime;
  parseDateTime(v: unknown): Luxon.DateTime;
}
