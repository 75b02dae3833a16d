import type { AgentSpec, TaskTypeSpec } from '../agents';
import type { ArtifactKind } from './task.store';
import { countLines, existingPaths, extOf, safePath, type FileDraft } from './task.files';
import { domainOutput } from './task.outputs';

/**
 * From a model's answer to a task's result (pure): the files it wrote and its domain `output`. Whatever
 * the model answers, the task ends with at least its main file (an unusable answer becomes that file),
 * and output figures are measured on the files (task.outputs.ts), never taken from the model's claims.
 */

export interface BuiltResult {
  output: Record<string, unknown>;
  files: FileDraft[];
  filesCreated: string[];
  filesModified: string[];
  linesWritten: number;
}

const MAX_FILES = 50;
const MAX_FILE_BYTES = 1024 * 1024;
const MAX_TOTAL_BYTES = 4 * 1024 * 1024;
const MAX_SUMMARY = 2000;

/** The JSON object in a model's answer (code fences and surrounding prose tolerated), or null. */
export function parseAnswer(text: string): Record<string, unknown> | null {
  const candidates = [text.trim()];
  const fenced = /```(?:json)?\s*\n([\s\S]*?)\n```/i.exec(text);
  if (fenced) candidates.push(fenced[1]!);
  const first = text.indexOf('{');
  const last = text.lastIndexOf('}');
  if (first >= 0 && last > first) candidates.push(text.slice(first, last + 1));
  for (const c of candidates) {
    try {
      const v = JSON.parse(c);
      if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
    } catch {
      // try the next reading
    }
  }
  return null;
}

function draft(path: string, content: string, kind: ArtifactKind): FileDraft {
  return { path, content, kind, lines: countLines(content), bytes: Buffer.byteLength(content) };
}

const humanize = (key: string) =>
  key
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .replace(/[-_]+/g, ' ')
    .replace(/^./, (c) => c.toUpperCase());

/** The main file written from an answer that came without usable files. */
function fallbackContent(spec: TaskTypeSpec, json: Record<string, unknown> | null, text: string, summary: string): string {
  if (!json) return text.endsWith('\n') ? text : `${text}\n`;
  if (typeof json.content === 'string' && json.content.trim()) return json.content;
  const rest = Object.fromEntries(Object.entries(json).filter(([k]) => !['summary', 'files', 'content'].includes(k)));
  switch (spec.artifact.format) {
    case 'markdown': {
      const parts = [`# ${spec.title}`, '', summary];
      for (const [k, v] of Object.entries(rest)) {
        const body = Array.isArray(v)
          ? v.map((x) => `- ${typeof x === 'string' ? x : JSON.stringify(x)}`).join('\n')
          : typeof v === 'string'
            ? v
            : `\`\`\`json\n${JSON.stringify(v, null, 2)}\n\`\`\``;
        parts.push('', `## ${humanize(k)}`, '', body);
      }
      return `${parts.join('\n')}\n`;
    }
    case 'yaml': {
      const comment = [spec.title, ...summary.split('\n')].map((l) => `# ${l}`).join('\n');
      const keys = Object.keys(rest);
      return `${comment}\n${keys.length ? JSON.stringify(rest, null, 2) : ''}\n`;
    }
    case 'json':
      return `${JSON.stringify(Object.keys(rest).length ? rest : { summary }, null, 2)}\n`;
    default:
      return `${summary}\n`;
  }
}

export function buildResult(agent: AgentSpec, spec: TaskTypeSpec, context: Record<string, unknown>, answer: string): BuiltResult {
  const json = parseAnswer(answer);
  const notes: string[] = [];
  const primaryPath = safePath(spec.artifact.path(context)) ?? `${agent.agentId}/${spec.taskType}.md`;
  const existing = existingPaths(context);
  if (spec.artifact.modifies) existing.add(primaryPath);

  const byPath = new Map<string, FileDraft>();
  let total = 0;
  if (json && Array.isArray(json.files)) {
    let dropped = 0;
    for (const f of json.files as unknown[]) {
      const file = f as { path?: unknown; content?: unknown; action?: unknown } | null;
      const path = safePath(file?.path);
      const content = typeof file?.content === 'string' ? file.content : null;
      const bytes = content === null ? 0 : Buffer.byteLength(content);
      if (!path || content === null || bytes > MAX_FILE_BYTES || total + bytes > MAX_TOTAL_BYTES || (byPath.size >= MAX_FILES && !byPath.has(path))) {
        dropped++;
        continue;
      }
      total += bytes;
      const kind: ArtifactKind = file?.action === 'modify' || existing.has(path) ? 'modified' : 'created';
      byPath.set(path, draft(path, content, kind));
    }
    if (dropped)
      notes.push(
        `${dropped} file(s) of the answer were left out: a relative path and text content are required, at most ${MAX_FILES} files and ${MAX_TOTAL_BYTES / 1024 / 1024} MB`,
      );
  }

  let summary = typeof json?.summary === 'string' ? json.summary.trim().slice(0, MAX_SUMMARY) : '';
  if (byPath.size === 0) {
    if (!summary) summary = firstSentence(json ? '' : answer) || `${spec.title} by ${agent.name}`;
    const content = fallbackContent(spec, json, answer, summary);
    byPath.set(primaryPath, draft(primaryPath, content, existing.has(primaryPath) ? 'modified' : 'created'));
    notes.push(json ? `The answer had no usable files; its fields were written to ${primaryPath}` : `The answer was not JSON; it was stored as ${primaryPath}`);
  }
  const files = [...byPath.values()];
  const primary = byPath.get(primaryPath) ?? files.find((f) => sameFormat(f.path, primaryPath)) ?? files[0]!;
  if (!summary) summary = firstSentence(stripHeadings(primary.content)) || `${spec.title} by ${agent.name}`;

  const output: Record<string, unknown> = { summary, ...domainOutput(agent, spec, context, primary, files) };
  if (notes.length) output.notes = notes;
  return {
    output,
    files,
    filesCreated: files.filter((f) => f.kind === 'created').map((f) => f.path),
    filesModified: files.filter((f) => f.kind === 'modified').map((f) => f.path),
    linesWritten: files.reduce((n, f) => n + f.lines, 0),
  };
}

const sameFormat = (a: string, b: string) => extOf(a) === extOf(b);

function firstSentence(text: string): string {
  const line = text
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l && !l.startsWith('#') && !l.startsWith('```'));
  return (line ?? '').slice(0, 300);
}

function stripHeadings(text: string): string {
  return text.replace(/^#+ .*$/gm, '');
}
