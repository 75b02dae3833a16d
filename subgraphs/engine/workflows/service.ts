import { withTransaction } from '../../../kernel/db/transaction';
import type { DataSource, EntityManager } from 'typeorm';
import { yaml } from '../../../kernel/yaml';
import { hasPermission, type Principal } from '../../../kernel/auth/principal';
import { AppError, errors, type FieldError } from '../../../kernel/errors';
import { reachedPermissions, runAsOf, unreachable } from './authority';
import { validateDefinition } from '../executor';
import { type WorkflowDefinition, type WorkflowNode, isPlainObject } from '../nodes';
import { importWorkflow, stickyNoteNode, type StickyNote } from '../n8n';
import { UUID } from '../../../kernel/ids';
import { byKey, defineLoader, type LoaderDefinition } from '../../../kernel/loaders';
import { toRecord, toStats, workflowStore as store, type WorkflowFilter, type WorkflowRecord, type WorkflowStats } from './store';

/** Workflow definitions: CRUD, activation, duplicate, export and import. No GraphQL here. */

export type { WorkflowRecord, WorkflowStats } from './store';

export interface WorkflowInput {
  name?: string;
  description?: string | null;
  tags?: string[];
  nodes?: unknown;
  connections?: unknown;
  active?: boolean;
  settings?: unknown;
}

const NO_STATISTICS: WorkflowStats = { executions: 0, successRate: 0, averageDuration: 0, lastExecuted: null };

export type { WorkflowFilter as WorkflowListFilter } from './store';

/** A definition version as executions need it. */
export interface WorkflowVersion {
  workflowId: string;
  version: number;
  name: string;
  active: boolean;
  definition: WorkflowDefinition;
  /** The key that saved or activated this version (null: the platform): its scheduleTrigger runs act as it (authority.ts). */
  savedBy: string | null;
}

export interface WorkflowHooks {
  /** After a committed change (schedules follow activation and cron edits). */
  changed?(record: WorkflowRecord): Promise<void>;
  /** Before a workflow is deleted (its running executions are canceled). */
  deleting?(id: string): Promise<void>;
  /** After a workflow was deleted. */
  deleted?(id: string): Promise<void>;
  /**
   * The nodes with their `credentials` references resolved to stored credentials (by id, then
   * name), before a definition is saved; refuses one that names no stored credential.
   */
  credentials?(nodes: unknown[]): Promise<unknown[]>;
}

const MAX_TAGS = 20;

/** A workflow's name as the slug `workflowId` may be given as: lower case, runs of other characters as `-`. */
export function slugify(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

export function workflowNotFound(id: string): AppError {
  return new AppError('WORKFLOW_NOT_FOUND', `Workflow ${id} not found`, { workflowId: id });
}

export class WorkflowService {
  private readonly versions = new Map<string, WorkflowVersion>();

  constructor(
    private readonly db: DataSource,
    private readonly hooks: WorkflowHooks = {},
  ) {}

  /** `pinData` and `stickyNotes`: what an import or a copy keeps beside the nodes, written in the same transaction. */
  async create(
    principal: Principal,
    input: WorkflowInput,
    { pinData, stickyNotes }: { pinData?: Record<string, unknown>; stickyNotes?: StickyNote[] } = {},
  ): Promise<WorkflowRecord> {
    const meta = checkMeta(input, true);
    const def = validateDefinition({ nodes: await this.withCredentials(input.nodes), connections: input.connections, settings: input.settings });
    await this.checkReach(principal, def.nodes);
    const record = await withTransaction(this.db, async ({ manager: m }) => {
      const row = await store.insert(
        m,
        {
          name: meta.name!,
          description: meta.description ?? null,
          tags: meta.tags ?? [],
          active: input.active === true,
          nodes: def.nodes,
          connections: def.connections,
          settings: def.settings,
        },
        runAsOf(principal),
      );
      const rec = toRecord(row);
      await this.storeVersion(m, rec);
      if (pinData) await store.setPinData(m, rec.id, pinData);
      if (stickyNotes?.length) {
        await store.setStickyNotes(m, rec.id, stickyNotes);
        rec.stickyNotes = stickyNotes;
      }
      return rec;
    });
    await this.hooks.changed?.(record);
    return record;
  }

  async get(id: string, manager?: EntityManager): Promise<WorkflowRecord> {
    if (!UUID.test(id)) throw workflowNotFound(id);
    const row = await store.byId(manager ?? this.db, id);
    if (!row) throw workflowNotFound(id);
    return toRecord(row);
  }

  /** A workflow by id, or by its name as a slug (`Order intake` as `order-intake`); a slug several names share is 409. */
  async resolve(ref: string): Promise<WorkflowRecord> {
    if (typeof ref !== 'string' || !ref.trim()) throw workflowNotFound(String(ref ?? ''));
    if (UUID.test(ref)) return this.get(ref);
    const slug = slugify(ref);
    if (!slug) throw workflowNotFound(ref);
    const rows = await store.bySlug(this.db, slug);
    if (!rows.length) throw workflowNotFound(ref);
    if (rows.length > 1) {
      throw errors.conflict(`Several workflows have the slug "${slug}"; give the workflowId`, { slug, workflowIds: rows.map((r) => r.id) });
    }
    return toRecord(rows[0]!);
  }

  async list(filter: WorkflowFilter): Promise<{ records: WorkflowRecord[]; total: number }> {
    const { rows, total } = await store.list(this.db, filter);
    return { records: rows.map(toRecord), total };
  }

  /** Applies the given fields; `version` increases when anything changed. */
  update(id: string, input: WorkflowInput, principal: Principal): Promise<WorkflowRecord> {
    return this.change(id, input, principal, true);
  }

  /**
   * Activation is a save like any other (the key must hold what the nodes need, and the
   * workflow's scheduleTrigger runs act as it from then on); deactivation asks for nothing and
   * leaves that key as it was.
   */
  setActive(id: string, active: boolean, principal: Principal): Promise<WorkflowRecord> {
    return this.change(id, { active }, principal, active);
  }

  /** `vouch`: the change is checked against, and saved under, `principal`. */
  private async change(id: string, input: WorkflowInput, principal: Principal, vouch: boolean): Promise<WorkflowRecord> {
    const meta = checkMeta(input, false);
    const nodes = input.nodes === undefined ? undefined : await this.withCredentials(input.nodes);
    const result = await withTransaction(this.db, async ({ manager: m }) => {
      const current = await this.lock(m, id);
      const def =
        input.nodes !== undefined || input.connections !== undefined || input.settings !== undefined
          ? validateDefinition({
              nodes: nodes ?? current.nodes,
              connections: input.connections ?? current.connections,
              settings: input.settings ?? current.settings,
            })
          : { nodes: current.nodes, connections: current.connections, settings: current.settings };
      const next = {
        name: meta.name ?? current.name,
        description: meta.description !== undefined ? meta.description : current.description,
        tags: meta.tags ?? current.tags,
        active: input.active ?? current.active,
        ...def,
      };
      const changed = (Object.keys(next) as (keyof typeof next)[]).some((k) => JSON.stringify(next[k]) !== JSON.stringify(current[k]));
      if (!changed) return { record: current, changed: false };
      // Any change to a workflow reaching agent or prompt nodes (its nodes, but also its wiring,
      // settings or name) needs what running those nodes needs: permissions follow what a change does.
      if (vouch) await this.checkReach(principal, next.nodes, id);
      const record = toRecord(await store.update(m, id, next, vouch ? runAsOf(principal) : current.savedBy));
      await this.storeVersion(m, record);
      return { record, changed: true };
    });
    if (result.changed) await this.hooks.changed?.(result.record);
    return result.record;
  }

  async delete(id: string): Promise<{ workflowId: string; deletedAt: Date }> {
    await this.get(id);
    await this.hooks.deleting?.(id);
    const deletedAt = await store.deleteById(this.db, id);
    if (!deletedAt) throw workflowNotFound(id);
    for (const key of this.versions.keys()) if (key.startsWith(`${id}:`)) this.versions.delete(key);
    await this.hooks.deleted?.(id);
    return { workflowId: id, deletedAt };
  }

  async duplicate(principal: Principal, id: string, name: string): Promise<WorkflowRecord> {
    const source = await this.get(id);
    return this.create(
      principal,
      {
        name,
        description: source.description,
        tags: source.tags,
        nodes: source.nodes,
        connections: source.connections,
        settings: source.settings,
        active: false,
      },
      { stickyNotes: source.stickyNotes },
    );
  }

  async export(id: string, format: string): Promise<{ format: string; workflow: unknown }> {
    if (format !== 'json' && format !== 'yaml') throw errors.field('format', 'must be json or yaml');
    const w = await this.get(id);
    // Sticky notes travel as n8n carries them: nodes of their own type, which an import sets aside again.
    const nodes = [...w.nodes, ...w.stickyNotes.map(stickyNoteNode)];
    const workflow = { name: w.name, nodes, connections: w.connections, settings: w.settings, ...(w.tags.length ? { tags: w.tags } : {}) };
    return { format, workflow: format === 'yaml' ? yaml().stringify(workflow) : workflow };
  }

  /** Our format or an n8n export (a YAML text of either is accepted too). The copy starts inactive. */
  async import(principal: Principal, raw: unknown, name?: string): Promise<WorkflowRecord> {
    let source = raw;
    if (typeof source === 'string') {
      try {
        source = yaml().parse(source);
      } catch (err) {
        throw errors.field('workflow', `is neither a workflow object nor JSON/YAML text: ${(err as Error).message}`);
      }
    }
    if (!isPlainObject(source)) throw errors.field('workflow', 'must be a workflow object {name, nodes, connections}');
    if (!Array.isArray(source.nodes)) throw errors.field('workflow.nodes', 'must be a list of nodes');
    const mapped = importWorkflow(source);
    const finalName = name ?? mapped.name;
    if (!finalName) throw errors.field('name', 'is required (the workflow has no name)');
    return this.create(
      principal,
      {
        name: finalName,
        tags: mapped.tags.slice(0, MAX_TAGS),
        nodes: mapped.nodes,
        connections: mapped.connections,
        settings: mapped.settings,
        description: typeof source.description === 'string' ? source.description : undefined,
        active: false,
      },
      { pinData: mapped.pinData, stickyNotes: mapped.stickyNotes },
    );
  }

  /** A definition version (immutable, so cached). */
  async version(workflowId: string, version: number): Promise<WorkflowVersion> {
    const key = `${workflowId}:${version}`;
    const cached = this.versions.get(key);
    if (cached) return cached;
    const row = await store.version(this.db, workflowId, version);
    if (!row) throw workflowNotFound(workflowId);
    const v: WorkflowVersion = {
      workflowId,
      version,
      name: row.name,
      active: row.active,
      definition: { nodes: row.nodes, connections: row.connections, settings: row.settings },
      savedBy: row.saved_by,
    };
    if (this.versions.size > 2_000) this.versions.delete(this.versions.keys().next().value!);
    this.versions.set(key, v);
    return v;
  }

  /** The current version of a workflow as executions need it, reusing the cache. */
  async current(id: string): Promise<WorkflowVersion> {
    if (!UUID.test(id)) throw workflowNotFound(id);
    const row = await store.currentVersion(this.db, id);
    if (!row) throw workflowNotFound(id);
    return this.version(id, row.version);
  }

  /** Workflows by id (null for a missing one): federation references. */
  readonly byId: LoaderDefinition<string, WorkflowRecord | null> = defineLoader('engine.workflowsById', async (keys) => {
    const ids = keys.filter((id) => UUID.test(id));
    const rows = ids.length ? await store.byIds(this.db, ids) : [];
    return byKey(keys, rows, (r) => r.id, null, toRecord);
  });

  /**
   * Statistics from the executions that exist (pruning removes old ones), zeros for a workflow
   * without any: one aggregate over every workflow of the request.
   */
  readonly statisticsByWorkflow: LoaderDefinition<string, WorkflowStats> = defineLoader('engine.statisticsByWorkflow', async (keys) => {
    const ids = keys.filter((id) => UUID.test(id));
    const rows = ids.length ? await store.statistics(this.db, ids) : [];
    return byKey(keys, rows, (r) => r.workflow_id, null, toStats).map((stats) => stats ?? { ...NO_STATISTICS });
  });

  /**
   * The saving key holds what every agent or prompt node the workflow reaches needs: its own,
   * those of the workflows it calls by id and of those it carries inline (authority.ts).
   */
  private async withCredentials(nodes: unknown): Promise<unknown> {
    return Array.isArray(nodes) && this.hooks.credentials ? this.hooks.credentials(nodes) : nodes;
  }

  private async checkReach(principal: Principal, nodes: WorkflowNode[], self?: string): Promise<void> {
    if (principal.kind !== 'apiKey' && principal.kind !== 'user') return;
    const reached = await reachedPermissions(nodes, (id) => this.nodesOf(id), self);
    const missing = reached.find((r) => !hasPermission(principal.permissions, r.permission));
    if (missing) throw unreachable(missing, principal.permissions);
  }

  private async nodesOf(id: string): Promise<unknown[] | null> {
    try {
      return (await this.current(id)).definition.nodes;
    } catch (err) {
      if (err instanceof AppError && err.code === 'WORKFLOW_NOT_FOUND') return null;
      throw err;
    }
  }

  private async lock(m: EntityManager, id: string): Promise<WorkflowRecord> {
    if (!UUID.test(id)) throw workflowNotFound(id);
    const row = await store.lockForUpdate(m, id);
    if (!row) throw workflowNotFound(id);
    return toRecord(row);
  }

  private async storeVersion(m: EntityManager, r: WorkflowRecord): Promise<void> {
    await store.insertVersion(m, r);
  }
}

function checkMeta(input: WorkflowInput, creating: boolean): { name?: string; description?: string | null; tags?: string[] } {
  const problems: FieldError[] = [];
  if (creating || input.name !== undefined) {
    if (typeof input.name !== 'string' || input.name.trim() === '' || input.name.length > 200) {
      problems.push({ field: 'name', message: creating && input.name === undefined ? 'is required' : 'must be 1 to 200 characters' });
    }
  }
  if (creating && input.nodes === undefined) problems.push({ field: 'nodes', message: 'is required' });
  if (creating && input.connections === undefined) problems.push({ field: 'connections', message: 'is required' });
  if (input.description !== undefined && input.description !== null && (typeof input.description !== 'string' || input.description.length > 10_000)) {
    problems.push({ field: 'description', message: 'must be at most 10000 characters' });
  }
  if (input.tags !== undefined) {
    if (!Array.isArray(input.tags) || input.tags.length > MAX_TAGS || input.tags.some((t) => typeof t !== 'string' || t.trim() === '' || t.length > 50)) {
      problems.push({ field: 'tags', message: `must be at most ${MAX_TAGS} tags of 1 to 50 characters` });
    }
  }
  if (problems.length) throw errors.validation(problems);
  return {
    name: input.name?.trim(),
    description: input.description,
    tags: input.tags ? [...new Set(input.tags.map((t) => t.trim()))] : undefined,
  };
}
