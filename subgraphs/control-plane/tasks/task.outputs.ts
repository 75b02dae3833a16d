import { yaml } from '../../../kernel/yaml';
import { ownEntry } from '../../../kernel/names';
import { STAGES, validateGate } from '../gates';
import { languageOf, type AgentSpec, type TaskTypeSpec } from '../agents';
import { auditManifest, auditPipeline, checkSchedule, CRON_LINE, scheduleConflicts, validateFiles } from './task.checks';
import { existingPaths, extOf, isMarkdown, isYaml, jsonField, type FileDraft } from './task.files';

/**
 * The `output` object of a task, by the agent's domain: figures measured on the files it wrote
 * (sections, links, list items, nodes, schedules, findings…), never taken from the model's claims.
 */

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

function yamlTopKeys(text: string): string[] {
  try {
    const docs = yaml().parseAllDocuments(text);
    const value: unknown = docs[0]?.toJS();
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

const anchorOf = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^a-z0-9 -]/g, '')
    .trim()
    .replace(/\s+/g, '-');

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

const SEVERITY_NAMES: Record<string, string> = { critical: 'SEV1', high: 'SEV2', medium: 'SEV3', low: 'SEV4' };

function severityOf(context: Record<string, unknown>, text: string): string | null {
  const given = typeof context.severity === 'string' ? context.severity.trim().toLowerCase() : '';
  if (/^sev[1-4]$/.test(given)) return given.toUpperCase();
  const named = ownEntry(SEVERITY_NAMES, given);
  if (named) return named;
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

export function domainOutput(
  agent: AgentSpec,
  spec: TaskTypeSpec,
  context: Record<string, unknown>,
  primary: FileDraft,
  files: FileDraft[],
): Record<string, unknown> {
  const text = primary.content;
  switch (agent.domain) {
    case 'documentation':
      return documentation(spec, primary, files, context);
    case 'engineering':
    case 'automation': {
      if (agent.agentId === 'workflow-architect') {
        const listed = jsonField(text, 'nodes');
        const nodes: unknown[] | null = Array.isArray(listed) ? listed : null;
        return {
          workflowPath: primary.path,
          nodes: nodes?.length ?? 0,
          nodeTypes: [
            ...new Set(
              (nodes ?? [])
                .map((n) => (n !== null && typeof n === 'object' ? (n as { type?: unknown }).type : undefined))
                .filter((t: unknown) => typeof t === 'string'),
            ),
          ],
          valid: nodes !== null,
        };
      }
      if (agent.agentId === 'schedule-optimizer') {
        const tz = typeof context.timezone === 'string' && context.timezone ? context.timezone : 'UTC';
        const from = new Date();
        const given: unknown[] = Array.isArray(context.schedules) ? context.schedules : [];
        const checks = given.map((s, i) => {
          const entry = s !== null && typeof s === 'object' ? (s as { name?: unknown; cron?: unknown }) : undefined;
          return checkSchedule(String(entry?.name ?? `schedule-${i + 1}`), String(entry?.cron ?? s ?? ''), tz, from);
        });
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
        const steps = jsonField(text, 'steps');
        out.steps = Array.isArray(steps) ? steps.length : 0;
        out.valid = Array.isArray(steps);
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
        const outputs =
          context.outputs && typeof context.outputs === 'object' && !Array.isArray(context.outputs) ? (context.outputs as Record<string, unknown>) : {};
        const gateType = spec.taskType === 'review-gate' ? (context.gateType as 'entry' | 'exit') : 'exit';
        const gate = validateGate(String(context.stage), gateType, outputs);
        return { ...report, gate, recommendation: gate.passed ? 'proceed' : 'hold' };
      }
      const stages = STAGES.filter((s) => new RegExp(`\\b${s}\\b`).test(text));
      return { planPath: primary.path, stages, workItems: listItems(text).length, sections: headingsOf(text) };
    }
  }
}
