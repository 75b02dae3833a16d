import { ownEntry } from '../../../../../kernel/names';
import { isPlainObject, NodeError } from '../../../nodes';
import { parseObjectLiteral } from './literal';

/**
 * Set 3.x's field types: each value is converted to its field's type with n8n's rules (a number
 * from any text Number() reads, "", " " and [] included; a boolean from true/false in any case
 * or anything that is the number 0 or 1; an array or object from JSON text, an object also from
 * a JavaScript object literal). A value that does not convert fails the item with n8n's
 * message, or, with "Ignore Type Conversion Errors", is kept as it is.
 */

const FAIL = Symbol('not convertible');
type Parse = (value: unknown) => unknown;

const PARSERS: Record<string, Parse> = {
  // n8n's Set validates strings without parsing them (the text was made beforehand).
  string: (v) => v,
  number: (v) => {
    const n = Number(v);
    return Number.isNaN(n) ? FAIL : n;
  },
  boolean: (v) => {
    if (typeof v === 'boolean') return v;
    if (typeof v === 'string' && ['true', 'false'].includes(v.toLowerCase())) return v.toLowerCase() === 'true';
    if (!(typeof v === 'string' && v.trim() === '')) {
      const n = Number(v);
      if (n === 0) return false;
      if (n === 1) return true;
    }
    return FAIL;
  },
  array: (v) => {
    if (Array.isArray(v)) return v;
    const parsed = parseJson(String(v)) ?? parseJson(String(v).replace(/'/g, '"'));
    return Array.isArray(parsed) ? parsed : FAIL;
  },
  object: (v) => {
    if (isPlainObject(v)) return v;
    const text = String(v);
    let parsed = parseJson(text);
    if (parsed === undefined) {
      try {
        parsed = parseObjectLiteral(text);
      } catch {
        return FAIL;
      }
    }
    // JSON `null` is an object to n8n: the field becomes null.
    return typeof parsed === 'object' && !Array.isArray(parsed) ? parsed : FAIL;
  },
};

/**
 * Types n8n's field validation knows that are not implemented here (none is offered by the
 * Set's editor except binary): what an import is refused with.
 */
const UNSUPPORTED_TYPES: Record<string, string> = {
  binary: 'a binary field needs binary item data (files), which this engine does not have',
  datetime: "this would need n8n's date parsing into Luxon DateTimes on the item, which is not implemented; use a string field with an ISO date",
  time: "this would need n8n's time-of-day validation, which is not implemented; use a string field",
  url: "this would need n8n's URL validation, which is not implemented; use a string field",
  jwt: "this would need n8n's JWT validation, which is not implemented; use a string field",
  'string-alphanumeric': "this would need n8n's alphanumeric validation, which is not implemented; use a string field",
  options: 'this would need the option list n8n validates against, which a Set node does not have; use a string field',
  'form-fields': "this would need n8n's form-field parsing, which is not implemented; use an array field",
};

/** Why a field type cannot run here, or undefined (expressions are checked when they run). */
export function typeGap(type: unknown): string | undefined {
  return typeof type === 'string' && !type.startsWith('=') ? ownEntry(UNSUPPORTED_TYPES, type.toLowerCase()) : undefined;
}

export interface FieldSpec {
  name: string;
  /** The type as the node stores it ("string", "number", …). */
  type: unknown;
  value: unknown;
}

/** n8n's validateEntry: the field's value converted to its type, for item `item` of a Set node at `version`. */
export function convertField(field: FieldSpec, item: number, ignoreErrors: boolean, version: number): unknown {
  const { name, type } = field;
  let value = field.value;
  if (version >= 3.2 && (value === undefined || value === null)) return null;
  if (type === 'string') {
    if (version > 3 && (value === undefined || value === null)) {
      if (ignoreErrors) return null;
      throw conversionError(name, `'${name}' expects a string but we got ${describeValue(value)} [item ${item}]`, item);
    }
    value = typeof value === 'object' ? JSON.stringify(value) : String(value);
  }
  if (value === undefined || value === null) return null;
  if (typeof type !== 'string') throw new NodeError(`The field "${name}" has no type`, { itemIndex: item });
  const gap = typeGap(type);
  if (gap) throw new NodeError(`The field "${name}" has the type ${type}: ${gap}`, { itemIndex: item });
  const parse = ownEntry(PARSERS, type.toLowerCase());
  if (!parse) return value;
  const converted = parse(value);
  if (converted !== FAIL) return converted ?? null;
  if (ignoreErrors) return value;
  throw conversionError(name, `'${name}' expects a ${type} but we got ${describeValue(value)} [item ${item}]`, item);
}

function conversionError(name: string, message: string, item: number): NodeError {
  return new NodeError(message, {
    itemIndex: item,
    description: `To fix the error try to change the type for the field "${name}" or activate the option “Ignore Type Conversion Errors” to apply a less strict type validation`,
  });
}

/** n8n's wording for a value in messages. */
function describeValue(value: unknown): string {
  if (value === null) return "'null'";
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'object') return 'object';
  return `'${String(value)}'`;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The JSON object of "JSON Output" (raw mode) or of an expression object field (Set 3.0–3.2):
 * text that is not JSON gets n8n's repair (single quotes, unquoted keys, trailing commas).
 * JSON `null` passes, as in n8n.
 */
export function parseJsonObject(data: unknown, item: number, entryName?: string): Record<string, unknown> | null {
  const location = entryName ? `entry "${entryName}" inside 'Fields to Set'` : "'JSON Output'";
  let parsed = data;
  if (typeof data === 'string') {
    parsed = parseJson(data);
    if (parsed === undefined) {
      const repaired = data
        .replace(/'/g, '"')
        .replace(/(['"])?([a-zA-Z0-9_]+)(['"])?:/g, '"$2":')
        .replace(/,\s*([\]}])/g, '$1')
        .replace(/,+$/, '');
      parsed = parseJson(repaired);
      if (parsed === undefined) {
        const description = repaired === data ? data : `${repaired};\n Original input: ${data}`;
        throw new NodeError(`The ${location} in item ${item} contains invalid JSON`, { itemIndex: item, description });
      }
    }
  }
  if (parsed === undefined || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new NodeError(`The ${location} in item ${item} does not contain a valid JSON object`, { itemIndex: item });
  }
  return parsed as Record<string, unknown> | null;
}
