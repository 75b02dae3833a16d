import { CronExpressionParser } from 'cron-parser';
import { parseAllDocuments } from 'yaml';
import { STAGES, validateGate } from './gate.catalog';
import { languageOf, type AgentSpec, type TaskTypeSpec } from './agent.catalog';
import type { ArtifactKind } from './artifact.entity';

/**
 * From a model's answer to a task's result: the files it wrote (stored as artifacts) and the
 * `output` object of the agent's domain. Pure, no I/O.
 *
 * The prompts ask for a JSON object `{summary, files: [{path, content, action}]}`. Whatever the
 * model answers, the task ends with at least its main file: an answer that is not JSON, or has no
 * usable `files`, becomes the main file at the task type's path (so the offline provider, whose
 * JSON holds placeholder strings, still yields a real artifact). Output figures (quality,
 * validation, sections, schedules, findings…) are measured on the files, never taken from the
 * model's claims.
 */

export interface FileDraft {
  path: string;
  content: string;
  kind: ArtifactKind;
  lines: number;
  bytes: number;
}

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

/** Paths the task's context says already exist (so writing them modifies them). */
function existingPaths(context: Record<string, unknown>): Set<string> {
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

function draft(path: string, content: string, kind: ArtifactKind): FileDraft {
  return { path, content, kind, lines: countLines(content), bytes: Buffer.byteLength(content) };
}

const humanize = (key: string) => key.replace(/([a-z])([A-Z])/g, '$1 $2').replace(/[-_]+/g, ' ').replace(/^./, (c) => c.toUpperCase());

/** The main file written from an answer that came without usable files. */
function fallbackContent(spec: TaskTypeSpec, json: Record<string, unknown> | null, text: string, summary: string): string {
  if (!json) return text.endsWith('\n') ? text : `${text}\n`;
  if (typeof json.content === 'string' && json.content.trim()) return json.content;
  const rest = Object.fromEntries(Object.entries(json).filter(([k]) => !['summary', 'files', 'content'].includes(k)));
  switch (spec.artifact.format) {
    case 'markdown': {
      const parts = [`# ${spec.title}`, '', summary];
      for (const [k, v] of Object.entries(rest)) {
        const body = Array.isArray(v) ? v.map((x) => `- ${typeof x === 'string' ? x : JSON.stringify(x)}`).join('\n') : typeof v === 'string' ? v : `\`\`\`json\n${JSON.stringify(v, null, 2)}\n\`\`\``;
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
    if (dropped) notes.push(`${dropped} file(s) of the answer were left out: a relative path and text content are required, at most ${MAX_FILES} files and ${MAX_TOTAL_BYTES / 1024 / 1024} MB`);
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

const extOf = (p: string) => (/\.([A-Za-z0-9]+)$/.exec(p)?.[1] ?? '').toLowerCase();
const sameFormat = (a: string, b: string) => extOf(a) === extOf(b);

function firstSentence(text: string): string {
  const line = text.split('\n').map((l) => l.trim()).find((l) => l && !l.startsWith('#') && !l.startsWith('```'));
  return (line ?? '').slice(0, 300);
}

function stripHeadings(text: string): string {
  return text.replace(/^#+ .*$/gm, '');
}

// ---------------------------------------------------------------------------------------------
// Measurements on files

/** Markdown headings outside fenced code. */
export function headingsOf(markdown: string): string[] {
  const out: string[] = [];
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    else if (!fenced) {
      const m = /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line);
      if (m) out.push(m[1]!);
    }
  }
  return out;
}

/** List items ("- x", "* x", "1. x", "- [ ] x") outside fenced code, optionally only under a heading matching `under`. */
function listItems(markdown: string, under?: RegExp): string[] {
  const out: string[] = [];
  let fenced = false;
  let inSection = !under;
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      continue;
    }
    if (fenced) continue;
    const heading = /^#{1,6}\s+(.+)$/.exec(line);
    if (heading) {
      if (under) inSection = under.test(heading[1]!);
      continue;
    }
    const item = /^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?(.+)$/.exec(line);
    if (item && inSection) out.push(item[1]!.trim());
  }
  return out;
}

const isMarkdown = (p: string) => ['md', 'markdown', 'mdx'].includes(extOf(p));
const isYaml = (p: string) => ['yaml', 'yml'].includes(extOf(p));

/** Every YAML and JSON file parses (a YAML file with no document is a problem too). */
function validateFiles(files: FileDraft[]): { valid: boolean; problems: string[] } {
  const problems: string[] = [];
  for (const f of files) {
    if (isYaml(f.path)) {
      const docs = parseAllDocuments(f.content);
      const list = Array.isArray(docs) ? docs : [docs];
      const errs = list.flatMap((d: any) => (d.errors ?? []) as { message: string }[]);
      if (errs.length) problems.push(`${f.path}: ${errs[0]!.message.split('\n')[0]}`);
      else if (!list.some((d: any) => d.contents !== null && d.contents !== undefined)) problems.push(`${f.path}: no YAML document`);
    } else if (extOf(f.path) === 'json') {
      try {
        JSON.parse(f.content);
      } catch (err) {
        problems.push(`${f.path}: ${(err as Error).message}`);
      }
    }
  }
  return { valid: problems.length === 0, problems };
}

function tryJson(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function yamlTopKeys(text: string): string[] {
  try {
    const docs = parseAllDocuments(text);
    const first = (Array.isArray(docs) ? docs[0] : docs) as any;
    const value = first?.toJS?.();
    return value && typeof value === 'object' && !Array.isArray(value) ? Object.keys(value) : [];
  } catch {
    return [];
  }
}

/** Relative links resolve to a file of the task or of its context; anchors to a heading of the page. */
function linksValid(doc: FileDraft, files: FileDraft[], context: Record<string, unknown>): boolean {
  const known = new Set([...files.map((f) => f.path), ...existingPaths(context)]);
  const anchors = new Set(headingsOf(doc.content).map(anchorOf));
  const dir = doc.path.includes('/') ? doc.path.slice(0, doc.path.lastIndexOf('/')) : '';
  for (const m of doc.content.matchAll(/\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const target = m[1]!;
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // absolute URL (https:, mailto:…)
    const [file, anchor] = target.split('#', 2) as [string, string | undefined];
    if (!file) {
      if (anchor && !anchors.has(anchor.toLowerCase())) return false;
      continue;
    }
    const resolved = resolveRelative(dir, file);
    if (!resolved || !known.has(resolved)) return false;
  }
  return true;
}

const anchorOf = (heading: string) => heading.toLowerCase().replace(/[^a-z0-9 -]/g, '').trim().replace(/\s+/g, '-');

function resolveRelative(dir: string, target: string): string | null {
  const parts = target.startsWith('/') ? [] : dir ? dir.split('/') : [];
  for (const seg of target.replace(/^\/+/, '').split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      if (!parts.length) return null;
      parts.pop();
    } else parts.push(seg);
  }
  return parts.join('/') || null;
}

const CRON_LINE = /(?:^|\n)\s*(?:[-*]\s*)?`?cron`?\s*[:=]\s*`?["']?([^`"'\n]+?)["']?`?\s*(?=\n|$)/gi;

interface ScheduleCheck {
  name: string;
  cron: string;
  valid: boolean;
  nextRuns?: string[];
  error?: string;
}

function checkSchedule(name: string, cron: string, tz: string, from: Date): ScheduleCheck {
  try {
    const expr = CronExpressionParser.parse(cron, { tz, currentDate: from });
    const nextRuns = expr.take(3).map((d) => d.toISOString()!);
    return { name, cron, valid: true, nextRuns };
  } catch (err) {
    return { name, cron, valid: false, error: (err as Error).message };
  }
}

/** Pairs of valid schedules firing in the same minute within 24 hours of `from`. */
function scheduleConflicts(list: ScheduleCheck[], tz: string, from: Date): { a: string; b: string; at: string }[] {
  const until = from.getTime() + 24 * 3600_000;
  const runs = list
    .filter((s) => s.valid)
    .map((s) => {
      const minutes = new Map<number, string>();
      try {
        const expr = CronExpressionParser.parse(s.cron, { tz, currentDate: from, endDate: new Date(until) });
        for (let i = 0; i < 1440 && expr.hasNext(); i++) {
          const d = expr.next().toDate();
          minutes.set(Math.floor(d.getTime() / 60_000), d.toISOString());
        }
      } catch {
        // counted as invalid above
      }
      return { name: s.name, minutes };
    });
  const out: { a: string; b: string; at: string }[] = [];
  for (let i = 0; i < runs.length; i++) {
    for (let j = i + 1; j < runs.length; j++) {
      const first = [...runs[i]!.minutes.keys()].sort((x, y) => x - y).find((m) => runs[j]!.minutes.has(m));
      if (first !== undefined) out.push({ a: runs[i]!.name, b: runs[j]!.name, at: runs[i]!.minutes.get(first)! });
    }
  }
  return out;
}

interface Finding {
  rule: string;
  severity: 'high' | 'medium' | 'low';
  message: string;
}

/** Static checks of a CI workflow (GitHub Actions style). */
function auditPipeline(text: string): Finding[] {
  const findings: Finding[] = [];
  for (const m of text.matchAll(/uses:\s*["']?([^\s"'#]+)@([^\s"'#]+)/g)) {
    const [, action, ref] = m as unknown as [string, string, string];
    if (action.startsWith('./') || action.startsWith('docker://')) continue;
    if (!/^[0-9a-f]{40}$/.test(ref)) findings.push({ rule: 'unpinned-action', severity: 'medium', message: `${action}@${ref} is not pinned to a full commit SHA` });
  }
  if (!/^\s*permissions\s*:/m.test(text)) findings.push({ rule: 'default-token-permissions', severity: 'medium', message: 'no `permissions:` block: the token gets the repository default, often read-write' });
  if (/permissions\s*:\s*write-all/.test(text)) findings.push({ rule: 'write-all-permissions', severity: 'high', message: '`permissions: write-all` grants the token every scope' });
  if (/echo[^\n]*\$\{\{\s*secrets\./.test(text)) findings.push({ rule: 'secret-in-log', severity: 'high', message: 'a secret is echoed in a run step' });
  if (/run\s*:[^\n]*\$\{\{\s*github\.event\.(issue|pull_request|comment|head_commit)\./.test(text)) {
    findings.push({ rule: 'script-injection', severity: 'high', message: 'untrusted event data is interpolated into a run step; pass it through an environment variable' });
  }
  if (/pull_request_target/.test(text)) findings.push({ rule: 'pull-request-target', severity: 'medium', message: '`pull_request_target` runs with secrets on code from forks; check out the base ref only' });
  return findings;
}

/** Static checks of a dependency manifest (package.json shape, or its text). */
function auditManifest(manifest: unknown): Finding[] {
  const data = typeof manifest === 'string' ? tryJson(manifest) : manifest;
  if (!data || typeof data !== 'object') return [{ rule: 'unreadable-manifest', severity: 'low', message: 'the manifest is not JSON; only the model review applies' }];
  const findings: Finding[] = [];
  for (const group of ['dependencies', 'devDependencies', 'optionalDependencies', 'peerDependencies']) {
    const deps = (data as Record<string, unknown>)[group];
    if (!deps || typeof deps !== 'object') continue;
    for (const [name, version] of Object.entries(deps as Record<string, unknown>)) {
      const v = String(version);
      if (v === '*' || v === 'latest' || v === '') findings.push({ rule: 'floating-version', severity: 'high', message: `${group}.${name} is "${v}": any version installs` });
      else if (/^(git|github:|https?:|file:)/.test(v)) findings.push({ rule: 'non-registry-source', severity: 'medium', message: `${group}.${name} comes from ${v.split(':')[0]}, outside the registry` });
      else if (/^[\^~>]/.test(v)) findings.push({ rule: 'range-version', severity: 'low', message: `${group}.${name} is a range (${v}); rely on a lockfile` });
    }
  }
  const scripts = (data as { scripts?: Record<string, unknown> }).scripts ?? {};
  for (const hook of ['preinstall', 'install', 'postinstall']) {
    if (scripts[hook]) findings.push({ rule: 'install-script', severity: 'medium', message: `an ${hook} script runs on every install` });
  }
  return findings;
}

const SEVERITY_NAMES: Record<string, string> = { critical: 'SEV1', high: 'SEV2', medium: 'SEV3', low: 'SEV4' };

function severityOf(context: Record<string, unknown>, text: string): string | null {
  const given = typeof context.severity === 'string' ? context.severity.trim().toLowerCase() : '';
  if (/^sev[1-4]$/.test(given)) return given.toUpperCase();
  if (SEVERITY_NAMES[given]) return SEVERITY_NAMES[given]!;
  const found = /\bSEV[\s-]?([1-4])\b/i.exec(text);
  return found ? `SEV${found[1]}` : null;
}

function documentation(spec: TaskTypeSpec, primary: FileDraft, files: FileDraft[], context: Record<string, unknown>) {
  const yaml = isYaml(primary.path);
  const sections = yaml ? yamlTopKeys(primary.content) : headingsOf(primary.content);
  const expected = spec.sections ?? [];
  const found = expected.filter((e) => sections.some((s) => s.toLowerCase().includes(e.toLowerCase()))).length;
  const completeness = expected.length ? Math.round((found / expected.length) * 100) / 100 : sections.length ? 1 : 0;
  const examplesIncluded = files.some((f) => (isMarkdown(f.path) ? /```/.test(f.content) : /\bexamples?\s*:/.test(f.content)));
  const crossReferencesValid = files.filter((f) => isMarkdown(f.path)).every((f) => linksValid(f, files, context));
  return {
    documentationPath: primary.path,
    sections,
    wordCount: primary.content.split(/\s+/).filter(Boolean).length,
    quality: { completeness, examplesIncluded, crossReferencesValid },
  };
}

function domainOutput(agent: AgentSpec, spec: TaskTypeSpec, context: Record<string, unknown>, primary: FileDraft, files: FileDraft[]): Record<string, unknown> {
  const text = primary.content;
  switch (agent.domain) {
    case 'documentation':
      return documentation(spec, primary, files, context);
    case 'engineering':
    case 'automation': {
      if (agent.agentId === 'workflow-architect') {
        const def = tryJson(text);
        const nodes = Array.isArray(def?.nodes) ? def.nodes : null;
        return {
          workflowPath: primary.path,
          nodes: nodes?.length ?? 0,
          nodeTypes: [...new Set((nodes ?? []).map((n: any) => n?.type).filter((t: unknown) => typeof t === 'string'))],
          valid: nodes !== null,
        };
      }
      if (agent.agentId === 'schedule-optimizer') {
        const tz = typeof context.timezone === 'string' && context.timezone ? context.timezone : 'UTC';
        const from = new Date();
        const given = Array.isArray(context.schedules) ? (context.schedules as any[]) : [];
        const checks = given.map((s, i) => checkSchedule(String(s?.name ?? `schedule-${i + 1}`), String(s?.cron ?? s ?? ''), tz, from));
        let n = 0;
        for (const f of files) for (const m of f.content.matchAll(CRON_LINE)) checks.push(checkSchedule(`proposed-${++n}`, m[1]!.trim(), tz, from));
        return { reportPath: primary.path, schedules: checks, conflicts: scheduleConflicts(checks, tz, from) };
      }
      const testFiles = files.filter((f) => /(^|\/)(tests?|__tests__)\/|\.(test|spec)\.[a-z0-9]+$|_test\.[a-z0-9]+$/i.test(f.path)).map((f) => f.path);
      const language = typeof context.language === 'string' ? context.language : languageOf(extOf(primary.path));
      const code = { entryPoint: primary.path, language, testFiles, testsIncluded: testFiles.length > 0 };
      if (agent.agentId === 'webhook-engineer') {
        return { ...code, events: Array.isArray(context.events) ? context.events.filter((e) => typeof e === 'string') : [] };
      }
      return code;
    }
    case 'devops': {
      const out: Record<string, unknown> = { manifestPath: primary.path, validation: validateFiles(files) };
      if (spec.taskType === 'audit-pipeline') out.findings = auditPipeline(String(context.pipeline ?? ''));
      else if (spec.taskType === 'audit-dependencies') out.findings = auditManifest(context.manifest);
      return out;
    }
    case 'prompts': {
      const variables = new Set<string>();
      const fragments = new Set<string>();
      for (const m of text.matchAll(/\{\{\s*([^{}]*?)\s*\}\}/g)) {
        const inner = m[1]!;
        const frag = /^fragment\s*:\s*([a-z0-9_-]+)/.exec(inner);
        if (frag) fragments.add(frag[1]!);
        else if (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(inner)) variables.add(inner);
      }
      const out: Record<string, unknown> = { promptPath: primary.path, variables: [...variables], fragments: [...fragments] };
      if (agent.agentId === 'chain-architect') {
        const def = tryJson(text);
        out.steps = Array.isArray(def?.steps) ? def.steps.length : 0;
        out.valid = Array.isArray(def?.steps);
      }
      if (agent.agentId === 'fragment-curator') out.proposedFragments = (text.match(/^###\s+/gm) ?? []).length;
      return out;
    }
    case 'incident':
      return {
        reportPath: primary.path,
        severity: severityOf(context, text),
        actionItems: listItems(text, /action/i),
        sections: headingsOf(text),
      };
    case 'orchestration': {
      if (agent.agentId === 'forge-gatekeeper') {
        const report = { reportPath: primary.path, sections: headingsOf(text) };
        if (spec.taskType === 'custom') return report;
        const outputs = context.outputs && typeof context.outputs === 'object' && !Array.isArray(context.outputs) ? (context.outputs as Record<string, unknown>) : {};
        const gateType = spec.taskType === 'review-gate' ? (context.gateType as 'entry' | 'exit') : 'exit';
        const gate = validateGate(String(context.stage), gateType, outputs);
        return { ...report, gate, recommendation: gate.passed ? 'proceed' : 'hold' };
      }
      const stages = STAGES.filter((s) => new RegExp(`\\b${s}\\b`).test(text));
      return { planPath: primary.path, stages, workItems: listItems(text).length, sections: headingsOf(text) };
    }
  }
}
