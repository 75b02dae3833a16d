import { isPlainObject, NodeError } from '../../../nodes';
import { regex } from './conditions';

/**
 * The comparisons of n8n's first node versions (If 1, Filter 1, Switch 1 and 2): `value1`,
 * `operation`, `value2`, grouped by data type. Values are compared as they come, without
 * conversion (`equal` is `===`); only dates are read as timestamps first. The operation is looked
 * up in one table whatever the data type, as n8n does (a string condition may use `larger`).
 */

/** The data types in the order n8n checks them, whatever order the export lists them in. */
export const LEGACY_TYPES = ['boolean', 'dateTime', 'number', 'string'] as const;
export type LegacyType = (typeof LEGACY_TYPES)[number];

export interface LegacyComparison {
  value1: unknown;
  operation: unknown;
  value2: unknown;
}

/** n8n's defaults for a condition (its exports leave out parameters at their default). */
export const CONDITION_DEFAULTS: Record<LegacyType, LegacyComparison> = {
  boolean: { value1: false, operation: 'equal', value2: false },
  dateTime: { value1: '', operation: 'after', value2: '' },
  number: { value1: 0, operation: 'smaller', value2: 0 },
  string: { value1: '', operation: 'equal', value2: '' },
};

type Operation = (value1: unknown, value2: unknown) => boolean;

// n8n compares with JavaScript's own operators: `||` then `>` on whatever the values are.
const orZero = (v: unknown) => (v || 0) as number;
const text = (v: unknown) => String(v || '');

function stringValue(v: unknown, operation: string): string {
  if (typeof v !== 'string')
    throw new NodeError(`The operation "${operation}" needs a string as value 1, not ${v === null ? 'null' : Array.isArray(v) ? 'a list' : typeof v}`);
  return v;
}

const matches = (v1: unknown, v2: unknown) => regex(text(v2), false).test(text(v1));

/** Switch 1 and 2's operations. */
export const SWITCH_OPERATIONS: Readonly<Record<string, Operation>> = {
  after: (a, b) => orZero(a) > orZero(b),
  before: (a, b) => orZero(a) < orZero(b),
  larger: (a, b) => orZero(a) > orZero(b),
  largerEqual: (a, b) => orZero(a) >= orZero(b),
  smaller: (a, b) => orZero(a) < orZero(b),
  smallerEqual: (a, b) => orZero(a) <= orZero(b),
  equal: (a, b) => a === b,
  notEqual: (a, b) => a !== b,
  contains: (a, b) => text(a).includes(text(b)),
  notContains: (a, b) => !text(a).includes(text(b)),
  startsWith: (a, b) => stringValue(a, 'startsWith').startsWith(b as string),
  notStartsWith: (a, b) => !stringValue(a, 'notStartsWith').startsWith(b as string),
  endsWith: (a, b) => stringValue(a, 'endsWith').endsWith(b as string),
  notEndsWith: (a, b) => !stringValue(a, 'notEndsWith').endsWith(b as string),
  regex: matches,
  notRegex: (a, b) => !matches(a, b),
};

const isEmpty = (v: unknown) => [undefined, null, '', NaN].includes(v as string) || (typeof v === 'object' && v !== null && Object.keys(v).length === 0);

/** If 1 and Filter 1 also know emptiness. */
export const CONDITION_OPERATIONS: Readonly<Record<string, Operation>> = {
  ...SWITCH_OPERATIONS,
  isEmpty,
  isNotEmpty: (v) => !isEmpty(v),
};

/** A date as n8n's first versions read it: a string through `new Date`, a number as milliseconds. */
export function toMillis(value: unknown): number {
  const ms = typeof value === 'string' ? new Date(value).getTime() : typeof value === 'number' ? value : Number.NaN;
  if (Number.isNaN(ms)) throw new NodeError(`The value "${String(value)}" is not a valid DateTime.`);
  return ms;
}

/** One comparison; dates are read first, then the operation runs (an unknown one fails the node, as in n8n). */
export function compareLegacy(type: string, c: LegacyComparison, operations: Readonly<Record<string, Operation>>): boolean {
  const dates = type === 'dateTime';
  const value1 = dates ? toMillis(c.value1) : c.value1;
  const value2 = dates ? toMillis(c.value2) : c.value2;
  const operation = Object.hasOwn(operations, String(c.operation)) ? operations[String(c.operation)] : undefined;
  if (!operation) throw new NodeError(`The ${type} condition has an unknown operation "${String(c.operation)}"`);
  return operation(value1, value2);
}

/**
 * If 1 / Filter 1: the conditions of every type, combined as `all` (the first failing one
 * decides) or `any` (the first passing one decides); with neither, an item never passes.
 */
export function legacyConditionsPass(conditions: unknown, combine: 'all' | 'any' | undefined): boolean {
  const byType = isPlainObject(conditions) ? conditions : {};
  for (const type of LEGACY_TYPES) {
    const list: unknown[] = Array.isArray(byType[type]) ? byType[type] : [];
    for (const entry of list) {
      const pass = compareLegacy(type, { ...CONDITION_DEFAULTS[type], ...(isPlainObject(entry) ? entry : {}) }, CONDITION_OPERATIONS);
      if (pass && combine === 'any') return true;
      if (!pass && combine === 'all') return false;
    }
  }
  return combine === 'all';
}
