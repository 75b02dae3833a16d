import { ownEntry } from '../../../kernel/names';
import { hasPermission, type Principal } from '../../../kernel/auth/principal';
import { AppError } from '../../../kernel/errors';
import { UUID } from '../../../kernel/ids';
import { isExpression, NodeError, isPlainObject } from '../nodes';

/**
 * Whose permissions a workflow's platform nodes (`engine.agent`, `engine.prompt`, which call out as the
 * platform) act with. At save, every such node the definition reaches, at any depth, is checked against
 * the saving key (reachedPermissions); at run time, before each call out, the execution's `runAs` key
 * must still be valid and hold the permission (checkRunAs), covering what only a run can know.
 * `runAs` is the key that caused the execution: the caller, the webhook trigger's registrant, the
 * schedule's creator (for a node schedule, who last saved or activated); children inherit it.
 * `null` is the platform itself.
 */

/** Node types that act with the platform's authority, and the permission calling them directly needs. */
export const NODE_PERMISSIONS: Readonly<Record<string, string>> = { 'engine.agent': 'agent:execute', 'engine.prompt': 'prompt:test' };

const N8N_EXECUTE_WORKFLOW = ['n8n-nodes-base.executeWorkflow', '@n8n/n8n-nodes-base.executeWorkflow'];
/** Nesting followed at save time, as deep as runs may nest (executions/context.ts MAX_DEPTH). */
const MAX_WALK_DEPTH = 10;

/** The key an execution of this caller runs as (null: the platform). */
export function runAsOf(principal: Principal): string | null {
  if (principal.kind === 'apiKey') return principal.keyId;
  if (principal.kind === 'service') return null;
  // Only keys reach the engine's operations; anything else gets no authority at all.
  throw new AppError('insufficient_permissions', 'Workflows are started with an API key', { required: 'an API key', has: principal.kind });
}

/** A platform node reachable from a workflow, and how: node names, with the workflows passed through. */
export interface Reached {
  permission: string;
  type: string;
  path: string[];
}

/** A stored workflow's nodes, by id (null when there is none). */
export type NodesOf = (workflowId: string) => Promise<unknown[] | null>;

/**
 * Every platform node `nodes` reach as far as a definition shows it: their own, those of the
 * workflows their Execute Workflow nodes name by a literal id or resource locator (transitively,
 * each workflow once), and those of workflows given inline as JSON. A target computed by an
 * expression is left to the run-time check. `nodes` may be unchecked JSON (an inline workflow).
 */
export async function reachedPermissions(nodes: unknown[], nodesOf: NodesOf, self?: string): Promise<Reached[]> {
  const out: Reached[] = [];
  const seen = new Set<string>(self ? [self] : []);
  const walk = async (list: unknown[], path: string[], depth: number): Promise<void> => {
    for (const node of list) {
      if (!isPlainObject(node) || typeof node.type !== 'string') continue;
      const name = typeof node.name === 'string' ? node.name : '?';
      const here = [...path, name];
      const permission = ownEntry(NODE_PERMISSIONS, node.type);
      if (permission) out.push({ permission, type: node.type, path: here });
      if (depth >= MAX_WALK_DEPTH) continue;
      const target = callTarget(node);
      if (target?.inline) await walk(target.inline, [...here, '(inline workflow)'], depth + 1);
      if (target?.workflowId && UUID.test(target.workflowId) && !seen.has(target.workflowId)) {
        seen.add(target.workflowId);
        const inner = await nodesOf(target.workflowId);
        if (inner) await walk(inner, [...here, `(workflow ${target.workflowId})`], depth + 1);
      }
    }
  };
  await walk(nodes, [], 0);
  return out;
}

/** What an Execute Workflow node runs, when its parameters say it without an expression. */
function callTarget(node: Record<string, unknown>): { workflowId?: string; inline?: unknown[] } | undefined {
  const p = isPlainObject(node.parameters) ? node.parameters : {};
  if (node.type === 'engine.executeWorkflow') {
    return typeof p.workflowId === 'string' && !isExpression(p.workflowId) ? { workflowId: p.workflowId.trim() } : undefined;
  }
  if (typeof node.type !== 'string' || !N8N_EXECUTE_WORKFLOW.includes(node.type)) return undefined;
  // n8n's parameters are expressions when they start with `=`.
  const literal = (v: unknown): v is string => typeof v === 'string' && !v.startsWith('=');
  if ((p.source ?? 'database') === 'parameter') {
    let json: unknown = p.workflowJson;
    if (literal(json)) {
      try {
        json = JSON.parse(json);
      } catch {
        return undefined;
      }
    }
    return isPlainObject(json) && Array.isArray(json.nodes) ? { inline: json.nodes } : undefined;
  }
  const id: unknown = isPlainObject(p.workflowId) ? p.workflowId.value : p.workflowId;
  return literal(id) ? { workflowId: id.trim() } : undefined;
}

/** The 403 for a saving key that lacks what a reached node needs. */
export function unreachable(reached: Reached, has: string[]): AppError {
  const through = reached.path.length > 1 ? ` (through ${reached.path.map((n) => `"${n}"`).join(' → ')})` : '';
  return new AppError(
    'insufficient_permissions',
    `This workflow reaches ${reached.type}${through}: it can only be saved by a key holding ${reached.permission}`,
    { required: reached.permission, has, node: reached.path[0], path: reached.path },
  );
}

/** What the run-time check reads of a key: the platform's key store (kernel/auth). */
export interface KeyStanding {
  id: string;
  name: string;
  permissions: string[];
  revokedAt: Date | null;
  expiresAt: Date | null;
}

export type KeyLookup = (keyId: string) => Promise<KeyStanding | null>;

/**
 * Before a platform node calls out: the key the execution runs as still holds `permission`, now.
 * A failure is the node's (NODE_EXECUTION_FAILED, details.code insufficient_permissions).
 */
export async function checkRunAs(runAs: string | null, permission: string, keys: KeyLookup, now = new Date()): Promise<void> {
  if (runAs === null) return;
  const key = await keys(runAs);
  const deny = (why: string, has: string[], reason?: string) =>
    new NodeError(`This node needs ${permission}: the execution runs as API key ${key ? `"${key.name}" ` : ''}(${runAs}), ${why}`, {
      code: 'insufficient_permissions',
      required: permission,
      has,
      keyId: runAs,
      ...(reason ? { reason } : {}),
    });
  if (!key) throw deny('which no longer exists', [], 'key_missing');
  if (key.revokedAt) throw deny('which was revoked', [], 'key_revoked');
  if (key.expiresAt && key.expiresAt.getTime() <= now.getTime()) throw deny('which has expired', [], 'key_expired');
  if (!hasPermission(key.permissions, permission)) throw deny('which does not hold it', key.permissions);
}
