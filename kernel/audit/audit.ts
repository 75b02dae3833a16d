import type { GraphQLFieldResolver } from 'graphql';
import type { DataSource, EntityManager } from 'typeorm';
import type { Principal } from '../auth/principal';
import type { PageWindow } from '../db/page';
import type { Logger } from '../logger';
import { grouped } from '../db/grouped';
import { carriedHere, carrying, carryingNothing, type Carried } from '../db/transaction';
import { auditStore, type AuditFilter, type AuditRow, type NewAuditRow } from './audit.store';

/**
 * The audit trail: every change made through any surface, recorded once. Every REST route that
 * changes something runs a GraphQL mutation through the gateway, and a subgraph's process runs
 * its mutations wherever the gateway is, so the subgraph's Mutation resolvers are the one place
 * that sees every change (buildSubgraph wraps each of them with `recordMutations`).
 *
 * When: in the transaction of the change. The wrapper opens a scope carrying the entry
 * (kernel/db/transaction.ts `carrying`); the first transaction that commits within it writes the
 * entry just before its COMMIT — a service's `withTransaction`, a lone write outside any
 * transaction (kernel/db/rows.ts gives it one), or a grouped write that hands its callers' entries
 * to `tx.carry` (task creation). So the entry exists exactly when the change does: an entry that
 * cannot be written rolls the change back and the mutation fails, and a change that rolls back
 * takes its entry with it. A mutation that throws before committing anything leaves none. One
 * that committed nothing (no write of its own in the database, or a write that changed no row) is
 * recorded after the fact once it succeeded: it has no transaction for its entry to ride on. The
 * routes a service answers itself run their change through `recording` as the mutation would.
 *
 * A create's id is only in its answer, which comes after the COMMIT: the first row the change
 * inserts with an `id` names it, or the service names it with `auditResource` where it makes it.
 *
 * What: who (the key's id and name, or the person's id), from where (address, User-Agent), which
 * operation, which resource (its type from the operation's name, its id from the arguments or the
 * answer) and which fields the caller gave — their names only: no value is ever stored, so no
 * secret, password or key can reach the trail.
 */
/** What the trail reads of a resolver's context (kernel/subgraph.ts AuditContext). */
export interface AuditContext {
  principal: Principal;
  requestId?: string;
  ip?: string;
  userAgent?: string;
}

export class AuditTrail {
  /** Entries of mutations that end together are written in one statement: a hot mutation (executeTask) pays a share of one insert. */
  private readonly insert = grouped(async (rows: readonly NewAuditRow[]) => {
    await auditStore.insertMany(this.db, rows);
    return rows.map(() => undefined);
  });

  constructor(
    private readonly db: DataSource,
    private readonly logger: Logger,
  ) {}

  /**
   * Runs a change with its entry carried into the first transaction that commits within it
   * (kernel/db/transaction.ts): the entry commits or rolls back with the change. A call that
   * committed none (it changed nothing in the database) is recorded after the fact once it succeeded.
   * A route a service answers itself runs its change here too, under its mutation's name.
   */
  async recording<T>(context: AuditContext, subgraph: string, operation: string, args: Record<string, unknown>, change: () => Promise<T>): Promise<T> {
    const draft = draftOf(context, subgraph, operation, args);
    if (!draft) return change();
    const carried: Carried<AuditDraft> = {
      row: draft,
      write: writeDrafts,
      alongside: draftsAlongside,
      state: 'pending',
      named: (id) => void (draft.entry.resource_id ??= id.slice(0, 200)),
    };
    let result: T;
    try {
      result = await carrying(carried, change);
    } catch (err) {
      // Work the change left running in its scope (a timer, a background write) carries nothing once it failed.
      if (carried.state === 'pending') carried.state = 'written';
      throw err;
    }
    if (carried.state === 'pending') {
      carried.state = 'written';
      await this.recordAfter(draft, args, result);
    }
    return result;
  }

  private async recordAfter(draft: AuditDraft, args: Record<string, unknown>, result: unknown): Promise<void> {
    const { entry } = draft;
    entry.resource_id ??= resourceIdOf(args, result, entry.resource_type);
    try {
      await this.insert(entry);
    } catch (err) {
      this.logger.error('audit entry not written', { err, operation: entry.operation, requestId: entry.request_id });
    }
  }

  list(filter: AuditFilter, window: PageWindow): Promise<{ rows: AuditRow[]; total: number }> {
    return auditStore.list(this.db, filter, window);
  }

  /** Deletes entries past the retention; the table refuses any other DELETE. */
  sweep(retentionDays: number): Promise<number> {
    return auditStore.sweep(this.db, retentionDays);
  }

  private timer?: NodeJS.Timeout;

  /** The retention sweep of the worker role: at once, then daily, until `stopSweeping`. */
  startSweeping(retentionDays: number): void {
    if (this.timer) return;
    const sweep = () =>
      this.sweep(retentionDays).then(
        (deleted) => deleted && this.logger.info('audit entries past their retention deleted', { deleted, retentionDays }),
        (err: unknown) => this.logger.warn('audit retention sweep failed', { err }),
      );
    void sweep();
    this.timer = setInterval(() => void sweep(), SWEEP_EVERY_MS);
    this.timer.unref();
  }

  stopSweeping(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}

const SWEEP_EVERY_MS = 24 * 3_600_000;

/**
 * The caller of an HTTP route a service answers itself rather than through a GraphQL mutation
 * (the OAuth callback's sign-in, a protected link's unlock form): anonymous, with its address and
 * User-Agent. Such a route runs its change through `AuditTrail.recording` as its mutation would.
 */
export function anonymousAuditContext(req: { ip?: string; headers: Record<string, string | string[] | undefined>; requestId?: string }): AuditContext {
  const agent = req.headers['user-agent'];
  return { principal: { kind: 'anonymous' }, ip: req.ip, userAgent: typeof agent === 'string' ? agent : undefined, requestId: req.requestId };
}

/** An entry being made: its resource id from the arguments, or from `auditResource` before its transaction commits. */
interface AuditDraft {
  entry: NewAuditRow;
  /** An id-like argument that may name another thing (`workflowId` of a new schedule): used when nothing better came. */
  argumentId: string | null;
}

/** The platform's own calls (principal `service`) are the consequence of a recorded change or a timer: no draft. */
function draftOf(context: AuditContext, subgraph: string, operation: string, args: Record<string, unknown>): AuditDraft | null {
  const principal = context?.principal;
  if (!principal || principal.kind === 'service') return null;
  const resourceType = resourceTypeOf(operation);
  const named = idIn(args, resourceType, 1);
  return {
    entry: {
      ...actorOf(principal),
      ip: context.ip ?? null,
      user_agent: context.userAgent ? context.userAgent.slice(0, 512) : null,
      request_id: context.requestId ?? null,
      subgraph,
      operation,
      resource_type: resourceType,
      resource_id: named,
      changed_fields: changedFields(args),
    },
    argumentId: named ?? otherIdIn(args, resourceType),
  };
}

/** The entries a transaction carries, in one insert. One function for all, so a grouped write's entries share it. */
function writeDrafts(m: EntityManager, drafts: readonly AuditDraft[]): Promise<void> {
  return auditStore.insertMany(
    m,
    drafts.map((d) => ({ ...d.entry, resource_id: d.entry.resource_id ?? d.argumentId })),
  );
}

/** The entries as an INSERT beside a lone write (kernel/db/rows.ts), named by the id it created when they name none. */
function draftsAlongside(drafts: readonly AuditDraft[], sql: { param: number; createdId: string; guard: string }) {
  return auditStore.insertAlongside(
    drafts.map((d) => ({ ...d.entry, argument_id: d.argumentId })),
    sql,
  );
}

/**
 * Names the thing the current change creates (`resourceType` as the operation's name gives it:
 * `Task` for executeTask), where its id is made: the entry is written before the answer that
 * would tell it. Outside such a change, or once the entry names a resource, it does nothing.
 */
export function auditResource(resourceType: string, id: string): void {
  const carried = carriedHere();
  if (carried?.write !== writeDrafts || carried.state !== 'pending') return;
  const { entry } = carried.row as AuditDraft;
  if (entry.resource_type === resourceType) entry.resource_id ??= id;
}

/**
 * Runs bookkeeping a change does even when it is refused (a failed unlock attempt counted against
 * an address) outside the change's entry: the entry rides on the change's own write, so a refused
 * attempt leaves none.
 */
export function outsideAudit<T>(fn: () => Promise<T>): Promise<T> {
  return carryingNothing(fn);
}

/**
 * Wraps every Mutation resolver of a subgraph so that a success is recorded once, in the
 * transaction of its change (`AuditTrail.recording`); a resolver that throws before committing
 * anything is not recorded.
 */
export function recordMutations(resolvers: Record<string, Record<string, unknown>>, trail: AuditTrail, subgraph: string): void {
  const mutations = resolvers.Mutation;
  if (!mutations) return;
  for (const [field, resolve] of Object.entries(mutations)) {
    if (typeof resolve !== 'function') continue;
    const inner = resolve as GraphQLFieldResolver<unknown, AuditContext>;
    const wrapped: GraphQLFieldResolver<unknown, AuditContext> = (root, args, context, info) =>
      trail.recording(context, subgraph, field, args, async (): Promise<unknown> => inner(root, args, context, info));
    mutations[field] = wrapped;
  }
}

function actorOf(p: Principal): Pick<NewAuditRow, 'actor_kind' | 'actor_id' | 'actor_name' | 'actor_service'> {
  switch (p.kind) {
    case 'apiKey':
      return { actor_kind: 'apiKey', actor_id: p.keyId, actor_name: p.name, actor_service: p.service };
    case 'user':
      return { actor_kind: 'user', actor_id: p.userId, actor_name: null, actor_service: p.service };
    case 'service':
      return { actor_kind: 'service', actor_id: null, actor_name: p.name, actor_service: null };
    default:
      return { actor_kind: 'anonymous', actor_id: null, actor_name: null, actor_service: null };
  }
}

/** Names whose values are secrets: never taken as a resource id (values are never stored anyway). */
export const SECRET_NAME = /pass(word)?|pin$|^pin|secret|token|apikey|api_key|credential(?!id$)|authorization|signature|private|^key$|^code$/i;

const VERBS = new Set([
  'create',
  'update',
  'delete',
  'revoke',
  'cancel',
  'pause',
  'resume',
  'execute',
  'retry',
  'activate',
  'deactivate',
  'duplicate',
  'import',
  'trigger',
  'add',
  'remove',
  'submit',
  'set',
  'vote',
  'unvote',
  'deploy',
  'rollback',
  'test',
  'run',
  'refine',
  'promote',
  'verify',
  'receive',
  'sign',
]);

/** Operations' resource types, worked out once per operation name (a process has a few hundred). */
const resourceTypes = new Map<string, string>();

/** The kind of thing an operation changes, from its name: `updateApiKey` -> `ApiKey`, `controlPlaneCancelExecution` -> `Execution`. */
export function resourceTypeOf(operation: string): string {
  let type = resourceTypes.get(operation);
  if (type === undefined) {
    type = resourceTypeFromName(operation);
    if (resourceTypes.size < 10_000) resourceTypes.set(operation, type);
  }
  return type;
}

function resourceTypeFromName(operation: string): string {
  const words = operation.replace(/^controlPlane(?=[A-Z])/, '').split(/(?=[A-Z])/);
  const first = words[0]!.toLowerCase();
  if (operation === 'infraLogin' || operation === 'infraRefreshToken') return 'InfraSession';
  if (first === 'sign') return 'Session';
  const rest = VERBS.has(first) ? words.slice(1) : words;
  return rest.join('') || operation;
}

const ID_NAME = /^(id|[a-z]+Id|slug|path)$/;

/**
 * The id of what changed: an argument naming it (`id`, or `taskId` for a Task), else the answer's
 * (a created thing's new id), else any other id-like argument or input field (`slug`, `path`),
 * else any id-like field of the answer or of a record it holds.
 */
export function resourceIdOf(args: Record<string, unknown>, result: unknown, resourceType = ''): string | null {
  const answer = isPlain(result) ? result : {};
  const records = Object.values(answer).filter(isPlain);
  return (
    idIn(args, resourceType, 1) ??
    idIn(answer, resourceType, 1) ??
    records.reduce<string | null>((found, r) => found ?? idIn(r, resourceType, 1), null) ??
    otherIdIn(args, resourceType) ??
    idIn(answer, resourceType, 2) ??
    null
  );
}

/** Any id-like argument or input field (`slug`, `path`), when none names the resource. */
function otherIdIn(args: Record<string, unknown>, resourceType: string): string | null {
  return (
    idIn(args, resourceType, 2) ??
    Object.values(args)
      .filter(isPlain)
      .reduce<string | null>((found, i) => found ?? idIn(i, resourceType, 2), null)
  );
}

/** An id-like field's value up to `maxRank`: `id` (0), the one naming the resource type (1: `projectId` for a FeedbackProject, not `workflowId` for a WorkflowSchedule), any other (2). */
function idIn(o: Record<string, unknown>, resourceType: string, maxRank: number): string | null {
  // One pass, no list: the first name (in key order) of the lowest rank whose value is an id.
  let found: string | null = null;
  let foundRank = maxRank + 1;
  for (const n of Object.keys(o)) {
    if (!ID_NAME.test(n)) continue;
    const rank = n === 'id' ? 0 : n.endsWith('Id') && resourceType.toLowerCase().endsWith(n.slice(0, -2).toLowerCase()) ? 1 : 2;
    if (rank >= foundRank || SECRET_NAME.test(n)) continue;
    const v = o[n];
    if ((typeof v === 'string' && v) || typeof v === 'number') {
      found = String(v).slice(0, 200);
      foundRank = rank;
      if (rank === 0) break;
    }
  }
  return found;
}

/** The names of the fields the caller gave: an input object's keys, else the argument's name; the id that names the resource is not a change. */
export function changedFields(args: Record<string, unknown>): string[] {
  const names = new Set<string>();
  for (const [name, value] of Object.entries(args)) {
    if (value === undefined) continue;
    if (isPlain(value)) {
      for (const [key, v] of Object.entries(value)) if (v !== undefined) names.add(key);
    } else if (!ID_NAME.test(name)) names.add(name);
  }
  return [...names].sort();
}

function isPlain(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);
}
