import { AppError, errors, type FieldError } from '../../kernel/errors';

/**
 * Template rendering, pure: the caller loads the fragments a template reaches and passes a lookup.
 * Values are inserted in one pass, never rendered again, so user data cannot inject `{{…}}`; fragment
 * nesting stops at MAX_FRAGMENT_DEPTH and a cycle is an error. A missing variable is an error, never "".
 */

export const MAX_FRAGMENT_DEPTH = 5;
export const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_-]*$/;
/** Names of prompts, fragments and chains: lowercase letters, digits, `-` and `_`, 1 to 100 characters. */
export const SLUG = /^[a-z0-9](?:[a-z0-9_-]{0,98}[a-z0-9])?$/;
export const SLUG_RULE = 'must be a slug: lowercase letters, digits, "-" and "_", 1 to 100 characters, starting and ending with a letter or digit';

const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;
const FRAGMENT_REF = /^fragment\s*:\s*([^:\s]*)\s*(?::\s*(\S*))?$/;

export interface FragmentRef {
  id: string;
  /** Absent: the newest version. */
  version?: number;
}

export type Token = { kind: 'text'; text: string } | { kind: 'variable'; name: string } | { kind: 'fragment'; ref: FragmentRef; raw: string };

/** Shared by every caller that parses the same text: read-only. */
export interface ParsedTemplate {
  readonly tokens: readonly Readonly<Token>[];
  /** Variables of this text alone, in order of first use. */
  readonly variables: readonly string[];
  /** Fragment references of this text alone, in order of first use, without duplicates. */
  readonly fragments: readonly FragmentRef[];
}

export interface FragmentSource {
  id: string;
  version: number;
  content: string;
}

/** The fragment a reference resolves to (the newest when the reference has no version), or undefined. */
export type FragmentLookup = (ref: FragmentRef) => FragmentSource | undefined;

export const NO_FRAGMENTS: FragmentLookup = () => undefined;

export function refLabel(ref: FragmentRef): string {
  return ref.version === undefined ? ref.id : `${ref.id}:${ref.version}`;
}

/** Templates parsed strictly, remembered by text: agents and tests render the same few again and again. */
const TEMPLATES_KEPT = 1_000;
const parsedTemplates = new Map<string, ParsedTemplate>();

/**
 * Splits a template into text, variables and fragment references. A malformed fragment reference
 * is a 400, or plain text when `lenient` (for text a model wrote). The result is shared: frozen.
 */
export function parseTemplate(template: string, field = 'template', lenient = false): ParsedTemplate {
  if (lenient) return parse(template, field, true);
  let parsed = parsedTemplates.get(template);
  if (!parsed) {
    parsed = parse(template, field, false);
    if (parsedTemplates.size >= TEMPLATES_KEPT) parsedTemplates.clear();
    parsedTemplates.set(template, parsed);
  }
  return parsed;
}

function parse(template: string, field: string, lenient: boolean): ParsedTemplate {
  const tokens: Token[] = [];
  const variables: string[] = [];
  const fragments: FragmentRef[] = [];
  const seenFragments = new Set<string>();
  let last = 0;
  const text = (s: string) => {
    if (!s) return;
    const prev = tokens[tokens.length - 1];
    if (prev?.kind === 'text') prev.text += s;
    else tokens.push({ kind: 'text', text: s });
  };
  for (const match of template.matchAll(PLACEHOLDER)) {
    const [raw, inner] = match as unknown as [string, string];
    const at = match.index!;
    text(template.slice(last, at));
    last = at + raw.length;
    if (/^fragment\s*:/.test(inner)) {
      const fragment = FRAGMENT_REF.exec(inner);
      const id = fragment?.[1] ?? '';
      const version = fragment?.[2];
      if (!fragment || !SLUG.test(id) || (version !== undefined && !/^[1-9]\d{0,8}$/.test(version))) {
        if (lenient) {
          text(raw);
          continue;
        }
        throw errors.field(field, `${raw} is not a fragment reference: write {{fragment:<fragment_id>}} or {{fragment:<fragment_id>:<version>}}`);
      }
      const ref: FragmentRef = Object.freeze(version === undefined ? { id } : { id, version: Number(version) });
      tokens.push({ kind: 'fragment', ref, raw });
      const label = refLabel(ref);
      if (!seenFragments.has(label)) {
        seenFragments.add(label);
        fragments.push(ref);
      }
    } else if (VARIABLE_NAME.test(inner)) {
      tokens.push({ kind: 'variable', name: inner });
      if (!variables.includes(inner)) variables.push(inner);
    } else {
      text(raw);
    }
  }
  text(template.slice(last));
  for (const token of tokens) Object.freeze(token);
  return Object.freeze({ tokens: Object.freeze(tokens), variables: Object.freeze(variables), fragments: Object.freeze(fragments) });
}

export interface Expansion {
  /** The template with every fragment inlined: text and variables only. */
  parts: ({ kind: 'text'; text: string } | { kind: 'variable'; name: string })[];
  /** Every variable of the template and of the fragments it reaches, in order of first use. */
  variables: string[];
  /** Every fragment version used, in order of first use. */
  fragments: { fragmentId: string; version: number }[];
}

/**
 * Inlines the fragments a template reaches. Throws a 400 for an unknown fragment or version, a
 * cycle, or nesting deeper than `maxDepth`. Each fragment version is parsed once per expansion.
 */
export function expandTemplate(template: string, lookup: FragmentLookup, opts: { field?: string; maxDepth?: number } = {}): Expansion {
  const field = opts.field ?? 'template';
  const maxDepth = opts.maxDepth ?? MAX_FRAGMENT_DEPTH;
  const parsed = new Map<string, ParsedTemplate>();
  const out: Expansion = { parts: [], variables: [], fragments: [] };
  const used = new Set<string>();

  const walk = (tokens: readonly Token[], stack: string[]) => {
    for (const token of tokens) {
      if (token.kind === 'text') {
        const prev = out.parts[out.parts.length - 1];
        if (prev?.kind === 'text') prev.text += token.text;
        else out.parts.push({ kind: 'text', text: token.text });
      } else if (token.kind === 'variable') {
        out.parts.push(token);
        if (!out.variables.includes(token.name)) out.variables.push(token.name);
      } else {
        const source = lookup(token.ref);
        if (!source) {
          const message =
            token.ref.version === undefined ? `fragment "${token.ref.id}" does not exist` : `fragment "${token.ref.id}" has no version ${token.ref.version}`;
          throw new AppError('validation_error', `${field}: ${message}`, {
            errors: [{ field, message }],
            fragment: refLabel(token.ref),
          });
        }
        const key = `${source.id}:${source.version}`;
        const path = [...stack, key];
        if (stack.includes(key)) {
          const message = `fragments form a cycle: ${path.join(' → ')}`;
          throw new AppError('validation_error', `${field}: ${message}`, { errors: [{ field, message }], cycle: path });
        }
        if (path.length > maxDepth) {
          const message = `fragments nest deeper than ${maxDepth} levels: ${path.join(' → ')}`;
          throw new AppError('validation_error', `${field}: ${message}`, { errors: [{ field, message }], path });
        }
        if (!used.has(key)) {
          used.add(key);
          out.fragments.push({ fragmentId: source.id, version: source.version });
        }
        let inner = parsed.get(key);
        if (!inner) {
          inner = parseTemplate(source.content, field);
          parsed.set(key, inner);
        }
        walk(inner.tokens, path);
      }
    }
  };
  walk(parseTemplate(template, field).tokens, []);
  return out;
}

export interface Rendering {
  text: string;
  /** The variables the template (and its fragments) used. */
  variables: string[];
  fragments: { fragmentId: string; version: number }[];
}

/** Renders a template: fragments inlined, then every variable replaced by its value, literally. */
export function renderTemplate(
  template: string,
  values: Record<string, unknown>,
  lookup: FragmentLookup = NO_FRAGMENTS,
  opts: { field?: string; variablesField?: string; maxDepth?: number } = {},
): Rendering {
  const expansion = expandTemplate(template, lookup, opts);
  return renderExpansion(expansion, values, opts.variablesField);
}

export function renderExpansion(expansion: Expansion, values: Record<string, unknown>, variablesField = 'variables'): Rendering {
  const missing = expansion.variables.filter((name) => !hasValue(values, name));
  if (missing.length) throw missingVariables(missing, variablesField);
  const text = expansion.parts.map((p) => (p.kind === 'text' ? p.text : valueText(values[p.name]))).join('');
  return { text, variables: expansion.variables, fragments: expansion.fragments };
}

export function missingVariables(names: string[], variablesField = 'variables'): AppError {
  const list = names.map((n) => `"${n}"`).join(', ');
  return new AppError('validation_error', `Missing variable${names.length > 1 ? 's' : ''} ${list} required by the template`, {
    errors: names.map((name) => ({ field: `${variablesField}.${name}`, message: 'is required by the template' })),
    missingVariables: names,
  });
}

function hasValue(values: Record<string, unknown>, name: string): boolean {
  return values !== null && typeof values === 'object' && Object.hasOwn(values, name) && values[name] !== null && values[name] !== undefined;
}

/** Strings as they are; numbers and booleans as written in JSON; objects and arrays as JSON. */
function valueText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return JSON.stringify(value);
}

/**
 * The declared `variables` of a prompt must be exactly the variables its template (fragments
 * included) uses: every problem is reported under `field`.
 */
export function checkDeclaredVariables(declared: string[], used: readonly string[], field = 'variables'): void {
  const problems: FieldError[] = [];
  declared.forEach((name, i) => {
    if (typeof name !== 'string' || !VARIABLE_NAME.test(name)) {
      problems.push({ field: `${field}.${i}`, message: `"${name}" is not a variable name (letters, digits, "_" and "-", not starting with a digit or "-")` });
    } else if (!used.includes(name)) {
      problems.push({
        field,
        message: `"${name}" is not used by the template (it uses ${used.length ? used.map((u) => `{{${u}}}`).join(', ') : 'no variables'})`,
      });
    }
  });
  for (const name of used) {
    if (!declared.includes(name)) problems.push({ field, message: `the template uses {{${name}}}: add "${name}"` });
  }
  if (problems.length) throw errors.validation(problems);
}
