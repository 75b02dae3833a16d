import { CronExpressionParser } from 'cron-parser';
import { yaml } from '../../../kernel/yaml';
import { extOf, isYaml, tryJson, type FileDraft } from './task.files';

/**
 * Static checks of what an agent wrote, reported in its task's output: YAML and JSON files that
 * do not parse, cron schedules (their next runs, and pairs firing in the same minute), and the
 * usual risks of a CI workflow or a dependency manifest. Each is a finding to read, never a failure.
 */

/** Every YAML and JSON file parses (a YAML file with no document is a problem too). */
export function validateFiles(files: FileDraft[]): { valid: boolean; problems: string[] } {
  const problems: string[] = [];
  for (const f of files) {
    if (isYaml(f.path)) {
      const docs = yaml().parseAllDocuments(f.content);
      const list = Array.isArray(docs) ? docs : [docs];
      const errs = list.flatMap((d) => d.errors ?? []);
      if (errs.length) problems.push(`${f.path}: ${errs[0]!.message.split('\n')[0]}`);
      else if (!list.some((d) => d.contents !== null && d.contents !== undefined)) problems.push(`${f.path}: no YAML document`);
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

export const CRON_LINE = /(?:^|\n)\s*(?:[-*]\s*)?`?cron`?\s*[:=]\s*`?["']?([^`"'\n]+?)["']?`?\s*(?=\n|$)/gi;

interface ScheduleCheck {
  name: string;
  cron: string;
  valid: boolean;
  nextRuns?: string[];
  error?: string;
}

export function checkSchedule(name: string, cron: string, tz: string, from: Date): ScheduleCheck {
  try {
    const expr = CronExpressionParser.parse(cron, { tz, currentDate: from });
    const nextRuns = expr.take(3).map((d) => d.toISOString()!);
    return { name, cron, valid: true, nextRuns };
  } catch (err) {
    return { name, cron, valid: false, error: (err as Error).message };
  }
}

/** Pairs of valid schedules firing in the same minute within 24 hours of `from`. */
export function scheduleConflicts(list: ScheduleCheck[], tz: string, from: Date): { a: string; b: string; at: string }[] {
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
export function auditPipeline(text: string): Finding[] {
  const findings: Finding[] = [];
  for (const m of text.matchAll(/uses:\s*["']?([^\s"'#]+)@([^\s"'#]+)/g)) {
    const [, action, ref] = m as unknown as [string, string, string];
    if (action.startsWith('./') || action.startsWith('docker://')) continue;
    if (!/^[0-9a-f]{40}$/.test(ref))
      findings.push({ rule: 'unpinned-action', severity: 'medium', message: `${action}@${ref} is not pinned to a full commit SHA` });
  }
  if (!/^\s*permissions\s*:/m.test(text))
    findings.push({
      rule: 'default-token-permissions',
      severity: 'medium',
      message: 'no `permissions:` block: the token gets the repository default, often read-write',
    });
  if (/permissions\s*:\s*write-all/.test(text))
    findings.push({ rule: 'write-all-permissions', severity: 'high', message: '`permissions: write-all` grants the token every scope' });
  if (/echo[^\n]*\$\{\{\s*secrets\./.test(text)) findings.push({ rule: 'secret-in-log', severity: 'high', message: 'a secret is echoed in a run step' });
  if (/run\s*:[^\n]*\$\{\{\s*github\.event\.(issue|pull_request|comment|head_commit)\./.test(text)) {
    findings.push({
      rule: 'script-injection',
      severity: 'high',
      message: 'untrusted event data is interpolated into a run step; pass it through an environment variable',
    });
  }
  if (/pull_request_target/.test(text))
    findings.push({
      rule: 'pull-request-target',
      severity: 'medium',
      message: '`pull_request_target` runs with secrets on code from forks; check out the base ref only',
    });
  return findings;
}

/** Static checks of a dependency manifest (package.json shape, or its text). */
export function auditManifest(manifest: unknown): Finding[] {
  const data = typeof manifest === 'string' ? tryJson(manifest) : manifest;
  if (!data || typeof data !== 'object')
    return [{ rule: 'unreadable-manifest', severity: 'low', message: 'the manifest is not JSON; only the model review applies' }];
  const findings: Finding[] = [];
  for (const group of ['dependencies', 'devDependencies', 'optionalDependencies', 'peerDependencies']) {
    const deps = (data as Record<string, unknown>)[group];
    if (!deps || typeof deps !== 'object') continue;
    for (const [name, version] of Object.entries(deps as Record<string, unknown>)) {
      const v = String(version);
      if (v === '*' || v === 'latest' || v === '')
        findings.push({ rule: 'floating-version', severity: 'high', message: `${group}.${name} is "${v}": any version installs` });
      else if (/^(git|github:|https?:|file:)/.test(v))
        findings.push({ rule: 'non-registry-source', severity: 'medium', message: `${group}.${name} comes from ${v.split(':')[0]}, outside the registry` });
      else if (/^[\^~>]/.test(v)) findings.push({ rule: 'range-version', severity: 'low', message: `${group}.${name} is a range (${v}); rely on a lockfile` });
    }
  }
  const scripts = (data as { scripts?: Record<string, unknown> }).scripts ?? {};
  for (const hook of ['preinstall', 'install', 'postinstall']) {
    if (scripts[hook]) findings.push({ rule: 'install-script', severity: 'medium', message: `an ${hook} script runs on every install` });
  }
  return findings;
}
