import type { ArtifactKind } from './task.store';

/**
 * The files of an agent's answer as text: a path kept inside the task's tree, lines counted, the
 * paths the task's context says exist already, and what a file's name and content say it is.
 * Shared by reading the answer (task.results.ts) and measuring it (task.outputs.ts, task.checks.ts).
 */

export interface FileDraft {
  path: string;
  content: string;
  kind: ArtifactKind;
  lines: number;
  bytes: number;
}

const SAFE_PATH = /^[A-Za-z0-9._@+-][A-Za-z0-9._@+/-]*$/;

/** A relative path with no way out of the task's tree, or null. */
export function safePath(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const p = value.trim().replace(/^\.\/+/, '');
  if (!p || p.length > 300 || !SAFE_PATH.test(p)) return null;
  const segments = p.split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..')) return null;
  return p;
}

export function countLines(content: string): number {
  if (!content) return 0;
  const n = content.split('\n').length;
  return content.endsWith('\n') ? n - 1 : n;
}

/** Paths the task's context says already exist (so writing them modifies them). */
export function existingPaths(context: Record<string, unknown>): Set<string> {
  const out = new Set<string>();
  const add = (v: unknown) => {
    const p = safePath(typeof v === 'string' ? v : (v as { path?: unknown } | null)?.path);
    if (p) out.add(p);
  };
  for (const key of ['files', 'existingFiles', 'sourceFiles']) {
    const list = context[key];
    if (Array.isArray(list)) list.forEach(add);
  }
  if (typeof context.docPath === 'string') add(context.docPath);
  return out;
}

export const extOf = (p: string) => (/\.([A-Za-z0-9]+)$/.exec(p)?.[1] ?? '').toLowerCase();
export const isMarkdown = (p: string) => ['md', 'markdown', 'mdx'].includes(extOf(p));
export const isYaml = (p: string) => ['yaml', 'yml'].includes(extOf(p));

/** The JSON a text holds, or undefined. */
export function tryJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A field of the JSON object a text holds; undefined when the text is not one. */
export function jsonField(text: string, key: string): unknown {
  const value = tryJson(text);
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>)[key] : undefined;
}
