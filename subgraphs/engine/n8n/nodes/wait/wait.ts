import { NodeError, type NodeDefinition, type ResumeWebhookOptions, webhookAnswerOptions } from '../../../nodes';

/**
 * n8n's Wait (1, 1.1). `resume`: timeInterval (`amount` of `unit`; version 1 defaults to 1 hour,
 * 1.1 to 5 seconds), specificTime (`dateTime`), webhook (until `$execution.resumeUrl` is called;
 * with `limitWaitTime`, at most `resumeAmount` `resumeUnit` or until `maxDateAndTime`, after which
 * the items pass on as they came). As n8n, a wait shorter than 65 s is slept in memory; a longer
 * one puts the execution into `waiting` (stored, resumed by a job in any process, also after a
 * restart). A webhook resume takes n8n's options for its URL (method, suffix, bots, allowed
 * addresses, answer, files: resumeOptions, applied by webhooks/inbound.ts), and answers the call
 * as its `responseMode` says: at once (onReceived), or once the resumed run has reached its last
 * node (lastNode) or a Respond to Webhook (responseNode). The form resume is refused at import.
 */

const UNIT_MS: Record<string, number> = { seconds: 1000, minutes: 60_000, hours: 3_600_000, days: 86_400_000 };
/** n8n sleeps waits shorter than this in memory instead of storing the execution. */
const IN_MEMORY_MS = 65_000;
const MAX_WAIT_MS = 366 * 86_400_000;
const RESUMES = ['timeInterval', 'specificTime', 'webhook'];

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'];

/** The resume URL's options, from the evaluated parameters (n8n keeps most under `options`). */
export function resumeOptions(p: Record<string, unknown>): ResumeWebhookOptions {
  const o = (p.options && typeof p.options === 'object' ? p.options : {}) as Record<string, unknown>;
  const out: ResumeWebhookOptions = {};
  if (p.httpMethod !== undefined && p.httpMethod !== '') {
    const method = String(p.httpMethod).toUpperCase();
    if (!METHODS.includes(method)) throw new NodeError(`The HTTP method "${String(p.httpMethod)}" is not one of ${METHODS.join(', ')}`);
    out.httpMethod = method;
  }
  // Its answer: a status, headers and a text now, or the workflow's answer once it has run on (lastNode, responseNode).
  Object.assign(out, webhookAnswerOptions(p));
  if (typeof o.webhookSuffix === 'string' && o.webhookSuffix.replace(/^\/+|\/+$/g, '') !== '') out.webhookSuffix = o.webhookSuffix.replace(/^\/+|\/+$/g, '');
  if (o.ignoreBots === true) out.ignoreBots = true;
  if (typeof o.ipWhitelist === 'string' && o.ipWhitelist.trim() !== '')
    out.ipWhitelist = o.ipWhitelist
      .split(',')
      .map((a) => a.trim())
      .filter(Boolean);
  if (o.rawBody === true) out.rawBody = true;
  if (p.binaryData === true || o.binaryData === true) out.binaryData = true;
  const name = o.binaryPropertyName ?? p.binaryPropertyName;
  if (typeof name === 'string' && name.trim()) out.binaryPropertyName = name.trim();
  return out;
}

/** Milliseconds of `amount` `unit`; NodeError when they are not a non-negative number and a unit. */
function duration(amount: unknown, unit: unknown, what: string): number {
  const ms = typeof unit === 'string' && Object.prototype.hasOwnProperty.call(UNIT_MS, unit) ? UNIT_MS[unit]! : undefined;
  if (ms === undefined) throw new NodeError(`The ${what} unit "${String(unit)}" is not one of seconds, minutes, hours, days`);
  const n = typeof amount === 'number' ? amount : typeof amount === 'string' && amount.trim() !== '' ? Number(amount) : NaN;
  if (!Number.isFinite(n) || n < 0) throw new NodeError(`The ${what} amount must be a number of ${unit} of at least 0, not ${JSON.stringify(amount)}`);
  return Math.min(n * ms, MAX_WAIT_MS);
}

function dateOf(v: unknown): Date | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  const d = new Date(v instanceof Date ? v.getTime() : typeof v === 'number' ? v : String(v));
  return Number.isNaN(d.getTime()) ? undefined : d;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const done = () => {
      signal.removeEventListener('abort', stop);
      resolve();
    };
    const timer = setTimeout(done, ms);
    const stop = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', stop, { once: true });
  });
}

export const wait: NodeDefinition = {
  name: 'wait',
  description: "n8n's Wait: pauses the execution for a time, until a date, or until its resume URL is called.",
  n8n: {
    versions: [1, 1.1],
    unsupported(p) {
      const resume = p.resume ?? 'timeInterval';
      if (resume === 'form') return { option: 'resume', message: 'the resume mode "form" (n8n form pages) is not supported: resume on a webhook instead' };
      if (typeof resume === 'string' && !resume.startsWith('=') && !RESUMES.includes(resume))
        return { option: 'resume', message: `the resume mode "${resume}" is not one of ${RESUMES.join(', ')}` };
      return undefined;
    },
  },
  async execute(ctx) {
    const [p] = await ctx.parameters([0]);
    const version = ctx.node.typeVersion ?? 1;
    const now = (ctx.services.now?.() ?? new Date()).getTime();
    const resume = p!.resume ?? 'timeInterval';
    if (resume === 'webhook') {
      let until: Date | null = null;
      if (p!.limitWaitTime === true) {
        if ((p!.limitType ?? 'afterTimeInterval') === 'atSpecifiedTime') {
          until = dateOf(p!.maxDateAndTime) ?? null;
          if (!until)
            throw new NodeError(
              'Cannot put execution to wait because `maxDateAndTime` parameter is not a valid date. Please pick a specific date and time to wait until.',
            );
        } else until = new Date(now + duration(p!.resumeAmount ?? 1, p!.resumeUnit ?? 'hours', 'time limit'));
      }
      const resume = resumeOptions(p!);
      return { outputs: [ctx.items], wait: { until, webhook: true, ...(Object.keys(resume).length ? { resume } : {}) } };
    }
    let waitMs: number;
    if (resume === 'specificTime') {
      const at = dateOf(p!.dateTime);
      if (!at)
        throw new NodeError(
          'Cannot put execution to wait because `dateTime` parameter is not a valid date. Please pick a specific date and time to wait until.',
        );
      waitMs = at.getTime() - now;
    } else if (resume === 'timeInterval') {
      waitMs = duration(p!.amount ?? (version >= 1.1 ? 5 : 1), p!.unit ?? (version >= 1.1 ? 'seconds' : 'hours'), 'wait');
    } else throw new NodeError(`The resume mode "${String(resume)}" is not one of ${RESUMES.join(', ')}`);
    if (waitMs < IN_MEMORY_MS) {
      if (waitMs > 0) await sleep(waitMs, ctx.signal);
      return { outputs: [ctx.items] };
    }
    return { outputs: [ctx.items], wait: { until: new Date(now + waitMs), webhook: false } };
  },
};
