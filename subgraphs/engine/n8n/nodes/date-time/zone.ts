import { DateTime } from 'luxon';
import { NodeError, type NodeContext } from '../../../nodes';

/**
 * The workflow's time zone, for what n8n reads with `this.getTimezone()`: the workflow's
 * settings.timezone, passed to expressions and nodes as `workflow.timezone`. Without one it is
 * UTC, this platform's documented default (n8n's is its instance's GENERIC_TIMEZONE).
 */
export function workflowTimezone(ctx: NodeContext): string {
  return ctx.expressionData.workflow.timezone ?? 'UTC';
}

/**
 * moment's "local" time: the server's own time zone (TZ), which n8n's version-1 node reads and
 * writes dates in when no time zone option is set. Production containers run in UTC.
 */
export const SERVER_ZONE = 'system';

const known = new Map<string, boolean>();

export function isZone(name: unknown): name is string {
  if (typeof name !== 'string' || name === '') return false;
  let valid = known.get(name);
  if (valid === undefined) {
    valid = DateTime.now().setZone(name).isValid;
    if (known.size > 1000) known.clear();
    known.set(name, valid);
  }
  return valid;
}

/** The zone, or a failure naming it (moment-timezone would quietly fall back to UTC). */
export function zoneNamed(name: string): string {
  if (!isZone(name)) throw new NodeError(`The time zone "${name}" is not valid: use an IANA name such as Europe/Berlin`);
  return name;
}
