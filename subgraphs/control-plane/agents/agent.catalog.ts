import { z } from 'zod';
import { ownEntry } from '../../../kernel/names';
import { STAGES, type StageName } from '../gates';
import catalogue from './agent.catalog.json';

/**
 * The control plane's agents are data (agent.catalog.json, documented in docs/control-plane.md); this
 * file types them, checks the file once at start (a broken entry stops the process, naming its path)
 * and turns path templates and input checks into functions. Instructions live in the prompt library
 * (prompts.seed.ts) so they can be edited without a release.
 */

export const DOMAINS = ['orchestration', 'automation', 'engineering', 'devops', 'documentation', 'prompts', 'incident'] as const;
export type Domain = (typeof DOMAINS)[number];

/** A check on one input's value beyond "present": the problem, or null when it is fine. */
export type InputCheck = (value: unknown) => string | null;

export interface ArtifactSpec {
  /** The main file's path, from the task's context (always relative, see safePath). */
  path: (context: Record<string, unknown>) => string;
  /** What the file holds: decides how it is checked and how a fallback file is written. */
  format: 'markdown' | 'yaml' | 'json' | 'code' | 'text';
  /** The main file changes an existing file (the context names it) rather than creating one. */
  modifies?: boolean;
}

export interface TaskTypeSpec {
  taskType: string;
  title: string;
  /** What the task produces, for the catalogue and the prompt. */
  description: string;
  required: string[];
  optional: string[];
  checks?: Record<string, InputCheck>;
  artifact: ArtifactSpec;
  /** Headings a complete main document has (documentation quality, plan completeness). */
  sections?: string[];
  /** Task-specific instructions for the model (the prompt's body). */
  instructions: string;
  /** Seconds; the estimate until the task type has history. */
  typicalSeconds: number;
}

export interface AgentSpec {
  agentId: string;
  name: string;
  domain: Domain;
  forgeStage: StageName;
  version: string;
  /** The agent's role, first line of each of its prompts. */
  description: string;
  taskTypes: TaskTypeSpec[];
  /** Output name -> type description (the fields of `result.output`). */
  outputs: Record<string, string>;
}

export const CUSTOM_TASK_TYPE = 'custom';

// ---------------------------------------------------------------------------------------------
// Helpers for paths and checks

/** A short path segment from a free text: lowercase words joined by "-" (at most 6 words, 60 chars). */
export function slugify(value: unknown, fallback: string): string {
  const text = typeof value === 'string' ? value : value === undefined || value === null ? '' : JSON.stringify(value);
  const slug = text
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim()
    .split(/\s+/)
    .filter(Boolean)
    .slice(0, 6)
    .join('-')
    .slice(0, 60)
    .replace(/-+$/, '');
  return slug || fallback;
}

function pascal(value: unknown, fallback: string): string {
  const words = slugify(value, '').split('-').filter(Boolean);
  return words.length ? words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join('') : fallback;
}

const EXTENSIONS: Record<string, string> = {
  typescript: 'ts',
  ts: 'ts',
  javascript: 'js',
  js: 'js',
  node: 'js',
  python: 'py',
  py: 'py',
  go: 'go',
  golang: 'go',
  java: 'java',
  kotlin: 'kt',
  ruby: 'rb',
  rust: 'rs',
  csharp: 'cs',
  'c#': 'cs',
  php: 'php',
  swift: 'swift',
  scala: 'scala',
  elixir: 'ex',
  sql: 'sql',
  bash: 'sh',
  shell: 'sh',
};

export function extensionFor(language: unknown, fallback = 'ts'): string {
  return typeof language === 'string' ? (ownEntry(EXTENSIONS, language.trim().toLowerCase()) ?? fallback) : fallback;
}

const LANGUAGES: Record<string, string> = {
  ts: 'typescript',
  tsx: 'typescript',
  js: 'javascript',
  jsx: 'javascript',
  py: 'python',
  go: 'go',
  java: 'java',
  kt: 'kotlin',
  rb: 'ruby',
  rs: 'rust',
  cs: 'csharp',
  php: 'php',
  swift: 'swift',
  scala: 'scala',
  ex: 'elixir',
  sql: 'sql',
  sh: 'bash',
};

/** The programming language of a file extension, or null (documents, data). */
export function languageOf(extension: string): string | null {
  return ownEntry(LANGUAGES, extension.toLowerCase()) ?? null;
}

const oneOf =
  (values: readonly string[], caseless = false): InputCheck =>
  (v) => {
    const s = typeof v === 'string' ? (caseless ? v.trim().toLowerCase() : v.trim()) : undefined;
    return s !== undefined && values.includes(s) ? null : `must be one of ${values.join(', ')}`;
  };
const isText: InputCheck = (v) => (typeof v === 'string' ? null : 'must be a string');
const isList: InputCheck = (v) => (Array.isArray(v) ? null : 'must be an array');
const textOrObject: InputCheck = (v) => (typeof v === 'string' || (v !== null && typeof v === 'object') ? null : 'must be a string or an object');

/** The free-form task type every agent takes (the alternate layout's `input`). */
function custom(dir: string, format: ArtifactSpec['format'] = 'markdown', ext = 'md'): TaskTypeSpec {
  return {
    taskType: CUSTOM_TASK_TYPE,
    title: 'Free-form request',
    description: 'Any request in the agent’s field, written in `input`; answered with files like the other task types.',
    required: ['input'],
    optional: ['files', 'constraints'],
    checks: { input: isText },
    artifact: { path: (c) => `${dir}/${slugify(c.input, 'request')}.${ext}`, format },
    instructions:
      'Carry out the request in `input` as this agent would, within its field. If the request is outside the field, say so in the summary and write a short note explaining what the agent can do instead.',
    typicalSeconds: 30,
  };
}

// ---------------------------------------------------------------------------------------------
// The data file: its schema, and what turns an entry into an AgentSpec

/**
 * A main file's path from the task's context. Placeholders: {slug:field|fallback},
 * {pascal:field|fallback}, {ext:field} (file extension of a language), {text:field|fallback} (the
 * value itself when it is a string), {string:field}; `field` may be `a.name??a` (the first that
 * is set). Anything else between braces is refused when the file is read.
 */
const PLACEHOLDER = /\{(\w+):([^|}]+)(?:\|([^}]*))?\}/g;
const FIELD = /^\w+(\.\w+)?(\?\?\w+(\.\w+)?)*$/;
const FORMS = ['slug', 'pascal', 'ext', 'text', 'string'] as const;

function compilePath(template: string): ArtifactSpec['path'] {
  const pick = (context: Record<string, unknown>, field: string) => {
    for (const alternative of field.split('??')) {
      const value = alternative
        .split('.')
        .reduce<unknown>((v, key) => (v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[key] : undefined), context);
      if (value !== undefined && value !== null) return value;
    }
    return undefined;
  };
  return (context) =>
    template.replace(PLACEHOLDER, (_match, form: (typeof FORMS)[number], field: string, fallback = '') => {
      const value = pick(context, field);
      switch (form) {
        case 'slug':
          return slugify(value, fallback);
        case 'pascal':
          return pascal(value, fallback);
        case 'ext':
          return extensionFor(value);
        case 'text':
          return typeof value === 'string' ? value : fallback;
        case 'string':
          return String(value);
      }
    });
}

/** The context fields a path template reads (each must be an input of its task type). */
function placeholderFields(template: string): { form: string; roots: string[] }[] {
  return [...template.matchAll(PLACEHOLDER)].map((m) => ({ form: m[1]!, roots: m[2]!.split('??').map((f) => f.split('.')[0]!) }));
}

const pathTemplate = z.string().superRefine((template, ctx) => {
  if (template.replace(PLACEHOLDER, '').match(/[{}]/))
    ctx.addIssue({ code: 'custom', message: `"${template}" has a brace outside a {form:field} placeholder` });
  for (const m of template.matchAll(PLACEHOLDER)) {
    if (!(FORMS as readonly string[]).includes(m[1]!))
      ctx.addIssue({ code: 'custom', message: `unknown placeholder form "${m[1]}" (known: ${FORMS.join(', ')})` });
    if (!FIELD.test(m[2]!)) ctx.addIssue({ code: 'custom', message: `"${m[2]}" is not a field (name, name.sub, or alternatives joined by ??)` });
  }
});

const checkSchema = z.union([
  z.enum(['text', 'list', 'textOrObject']),
  z.object({ oneOf: z.union([z.literal('stages'), z.array(z.string()).nonempty()]), caseless: z.boolean().optional() }).strict(),
]);
const FORMATS = ['markdown', 'yaml', 'json', 'code', 'text'] as const;
const text = z.string().trim().min(1);

const taskTypeSchema = z
  .object({
    taskType: text.regex(/^[a-z][a-z0-9-]*$/, 'must be lowercase words joined by "-"'),
    title: text,
    description: text,
    required: z.array(text),
    optional: z.array(text),
    checks: z.record(checkSchema).optional(),
    artifact: z.object({ path: pathTemplate, format: z.enum(FORMATS), modifies: z.boolean().optional() }).strict(),
    sections: z.array(text).optional(),
    instructions: text,
    typicalSeconds: z.number().int().positive(),
  })
  .strict()
  .superRefine((t, ctx) => {
    const inputs = new Set([...t.required, ...t.optional]);
    if (t.taskType === CUSTOM_TASK_TYPE)
      ctx.addIssue({ code: 'custom', path: ['taskType'], message: `"${CUSTOM_TASK_TYPE}" is added to every agent; describe it under "custom"` });
    if (t.required.length === 0) ctx.addIssue({ code: 'custom', path: ['required'], message: 'a task type needs at least one required input' });
    for (const name of Object.keys(t.checks ?? {})) {
      if (!inputs.has(name)) ctx.addIssue({ code: 'custom', path: ['checks', name], message: `checks "${name}", which is not an input of the task type` });
    }
    for (const { form, roots } of placeholderFields(t.artifact.path)) {
      for (const root of roots) {
        if (!inputs.has(root))
          ctx.addIssue({ code: 'custom', path: ['artifact', 'path'], message: `{${form}:…} reads "${root}", which is not an input of the task type` });
      }
    }
  });

const agentSchema = z
  .object({
    agentId: text.regex(/^[a-z][a-z0-9-]*$/, 'must be lowercase words joined by "-"'),
    name: text,
    domain: z.enum(DOMAINS),
    forgeStage: z.enum(STAGES),
    version: text.regex(/^\d+\.\d+\.\d+$/, 'must be a semantic version (1.0.0)'),
    description: text,
    outputs: z.record(text).refine((o) => 'summary' in o, 'every agent outputs a summary'),
    taskTypes: z.array(taskTypeSchema).nonempty(),
    custom: z
      .object({
        dir: text
          .regex(/^[\w./-]+$/, 'must be a relative directory')
          .refine((d) => !d.startsWith('/') && !d.split('/').includes('..'), 'must stay inside the task’s tree'),
        format: z.enum(FORMATS),
        ext: text.regex(/^\w+$/),
      })
      .strict(),
  })
  .strict()
  .superRefine((a, ctx) => {
    const seen = new Set<string>();
    a.taskTypes.forEach((t, i) => {
      if (seen.has(t.taskType)) ctx.addIssue({ code: 'custom', path: ['taskTypes', i, 'taskType'], message: `task type "${t.taskType}" appears twice` });
      seen.add(t.taskType);
    });
  });

const catalogueSchema = z
  .object({ $comment: z.string().optional(), agents: z.array(agentSchema).nonempty() })
  .strict()
  .superRefine((c, ctx) => {
    const seen = new Set<string>();
    c.agents.forEach((a, i) => {
      if (seen.has(a.agentId)) ctx.addIssue({ code: 'custom', path: ['agents', i, 'agentId'], message: `agent "${a.agentId}" appears twice` });
      seen.add(a.agentId);
    });
  });

function inputCheck(check: z.infer<typeof checkSchema>): InputCheck {
  if (check === 'text') return isText;
  if (check === 'list') return isList;
  if (check === 'textOrObject') return textOrObject;
  return oneOf(check.oneOf === 'stages' ? STAGES : check.oneOf, check.caseless);
}

/**
 * Reads a catalogue (the shipped file, or another in tests): every problem is reported at once,
 * each with the path of the entry, e.g. `agents[3].taskTypes[0].artifact.path: {slug:…} reads
 * "topic", which is not an input of the task type`.
 */
export function parseCatalogue(raw: unknown, source = 'agent.catalog.json'): AgentSpec[] {
  const parsed = catalogueSchema.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map(
      (i) => `  ${i.path.reduce<string>((at, key) => (typeof key === 'number' ? `${at}[${key}]` : at ? `${at}.${key}` : key), '') || '(root)'}: ${i.message}`,
    );
    throw new Error(`${source} is not a valid agent catalogue:\n${problems.join('\n')}`);
  }
  return parsed.data.agents.map((a) => ({
    agentId: a.agentId,
    name: a.name,
    domain: a.domain,
    forgeStage: a.forgeStage,
    version: a.version,
    description: a.description,
    outputs: a.outputs,
    taskTypes: [
      ...a.taskTypes.map((t): TaskTypeSpec => ({
        taskType: t.taskType,
        title: t.title,
        description: t.description,
        required: t.required,
        optional: t.optional,
        ...(t.checks && { checks: Object.fromEntries(Object.entries(t.checks).map(([name, check]) => [name, inputCheck(check)])) }),
        artifact: {
          path: compilePath(t.artifact.path),
          format: t.artifact.format,
          ...(t.artifact.modifies !== undefined && { modifies: t.artifact.modifies }),
        },
        ...(t.sections && { sections: t.sections }),
        instructions: t.instructions,
        typicalSeconds: t.typicalSeconds,
      })),
      custom(a.custom.dir, a.custom.format, a.custom.ext),
    ],
  }));
}

export const AGENTS: readonly AgentSpec[] = parseCatalogue(catalogue);

const BY_ID = new Map(AGENTS.map((a) => [a.agentId, a]));

export function findAgent(agentId: string): AgentSpec | undefined {
  return BY_ID.get(agentId);
}

export function findTaskType(agent: AgentSpec, taskType: string): TaskTypeSpec | undefined {
  return agent.taskTypes.find((t) => t.taskType === taskType);
}

/** The prompt of one agent and task type in the prompt library. */
export function promptIdOf(agentId: string, taskType: string): string {
  return `${agentId}-${taskType}`;
}
