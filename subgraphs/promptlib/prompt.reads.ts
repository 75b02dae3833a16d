import { pageInfo, type PageInfo } from '../../kernel/graphql-types';
import { SharedReadCache } from '../../kernel/cache';
import type { EventBus } from '../../kernel/events';
import type { DataSource, EntityManager } from 'typeorm';
import * as store from './prompt.store';
import type { PromptVersion } from './prompt.store';
import * as runs from './prompt-test.store';
import type { RunStatsRow } from './prompt-test.store';
import { errors, type FieldError } from '../../kernel/errors';
import { PROMPT_STATUSES, type PromptStatus } from './prompt.types';
import { FragmentLoader } from './fragment-loader';
import { expandTemplate, NO_FRAGMENTS, parseTemplate, renderTemplate, type Expansion } from './render';
import { promptNotFound, round2, seconds, throwIf } from './shared';
import { TOPIC } from '../../kernel/topics';

/**
 * Prompts read: a prompt with its versions, performance and pins, the list, one version as
 * stored, and a version rendered (the one agents run, an environment's, a given one). The version
 * rows are what tests, chain steps and agent tasks read on every run, so they are cached per
 * process until the prompt changes anywhere. The writes (prompt.service.ts) extend this class:
 * each ends by reading the prompt back and dropping the cached versions.
 */

export interface Performance {
  totalTests: number;
  averageTokens: number;
  /** Seconds. */
  averageLatency: number;
  /** Percent of runs that succeeded. */
  successRate: number;
}

export interface PromptView {
  promptId: string;
  name: string;
  description: string;
  template: string;
  variables: string[];
  version: number;
  latestVersion: number;
  versions: number[];
  status: PromptStatus;
  metadata: Record<string, unknown>;
  performance: Performance & { byVersion: (Performance & { version: number })[] };
  environments: { environment: string; version: number; promotedAt: Date }[];
  createdAt: Date;
  updatedAt: Date;
}

export interface PromptListItemView {
  promptId: string;
  name: string;
  description: string;
  domain: string | null;
  agentId: string | null;
  tags: string[];
  version: number;
  status: PromptStatus;
  testsRun: number;
  successRate: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface PromptRenderingView {
  promptId: string;
  version: number;
  status: PromptStatus;
  rendered: string;
  variables: string[];
  fragments: { fragmentId: string; version: number }[];
}

export interface PromptFilter {
  domain?: string | null;
  agentId?: string | null;
  status?: string | null;
  tag?: string | null;
  limit: number;
  offset: number;
}

function performanceOf(rows: Pick<RunStatsRow, 'total' | 'ok' | 'tokens' | 'latency'>[]): Performance {
  const total = rows.reduce((n, r) => n + Number(r.total), 0);
  const ok = rows.reduce((n, r) => n + Number(r.ok), 0);
  const tokens = rows.reduce((n, r) => n + Number(r.tokens ?? 0), 0);
  const latency = rows.reduce((n, r) => n + Number(r.latency ?? 0), 0);
  return {
    totalTests: total,
    averageTokens: ok ? round2(tokens / ok) : 0,
    averageLatency: ok ? seconds(latency / ok) : 0,
    successRate: total ? round2((ok / total) * 100) : 0,
  };
}

/** Published (with the prompt's id) after a change to a prompt's versions, status or pins. */

export class PromptReads {
  readonly loader: FragmentLoader;
  /**
   * Version rows read on every test, chain step and agent task (the latest, the active, a given
   * number), kept until the prompt changes in any process (kernel/cache.ts).
   */
  protected readonly versions: SharedReadCache<PromptVersion | null>;

  constructor(
    protected readonly db: DataSource,
    events: EventBus,
  ) {
    this.loader = new FragmentLoader(db);
    this.versions = new SharedReadCache(events, TOPIC.promptChanged, { ttlMs: 60_000, maxGroups: 10_000 });
  }

  async get(promptId: string, opts: { version?: number | null; environment?: string | null } = {}): Promise<PromptView> {
    const version = opts.version ?? null;
    const environment = opts.environment ?? null;
    const row = await store.viewRow(this.db, promptId, version, environment);
    if (!row) {
      if ((version === null && environment === null) || !(await this.exists(promptId))) throw promptNotFound(promptId);
      throw promptNotFound(promptId, version !== null ? { version } : { environment: environment! });
    }
    const [stats, pins] = await Promise.all([runs.statsByVersion(this.db, promptId), store.pinsOf(this.db, promptId)]);
    const v = store.toVersion(row);
    return {
      promptId: v.promptId,
      name: v.promptId,
      description: v.description,
      template: v.template,
      variables: v.variables,
      version: v.version,
      latestVersion: row.latest_version,
      versions: row.versions ?? [],
      status: v.status,
      metadata: v.metadata,
      performance: {
        ...performanceOf(stats),
        byVersion: stats.map((s) => ({ version: s.version, ...performanceOf([s]) })),
      },
      environments: pins.map((p) => ({ environment: p.environment, version: p.version, promotedAt: p.promoted_at })),
      createdAt: row.prompt_created_at,
      updatedAt: v.updatedAt,
    };
  }

  async list(filter: PromptFilter): Promise<{ prompts: PromptListItemView[]; pagination: PageInfo }> {
    const problems: FieldError[] = [];
    if (filter.status != null && !PROMPT_STATUSES.includes(filter.status as PromptStatus)) {
      problems.push({ field: 'status', message: `must be one of ${PROMPT_STATUSES.join(', ')}` });
    }
    throwIf(problems);
    const { total, rows } = await store.list(
      this.db,
      { domain: filter.domain ?? null, agentId: filter.agentId ?? null, status: filter.status ?? null, tag: filter.tag ?? null },
      { limit: filter.limit, offset: filter.offset },
    );
    const stats = new Map<string, { total: number; ok: number }>();
    if (rows.length) {
      const statRows = await runs.countsByPrompt(
        this.db,
        rows.map((r) => r.prompt_id),
      );
      for (const s of statRows) stats.set(s.prompt_id, s);
    }
    const prompts = rows.map((r): PromptListItemView => {
      const s = stats.get(r.prompt_id);
      const m = r.metadata ?? {};
      return {
        promptId: r.prompt_id,
        name: r.prompt_id,
        description: r.description,
        domain: typeof m.domain === 'string' ? m.domain : null,
        agentId: typeof m.agentId === 'string' ? m.agentId : null,
        tags: Array.isArray(m.tags) ? m.tags : [],
        version: r.version,
        status: r.status,
        testsRun: s?.total ?? 0,
        successRate: s?.total ? round2((s.ok / s.total) * 100) : 0,
        createdAt: r.prompt_created_at,
        updatedAt: r.updated_at,
      };
    });
    return { prompts, pagination: pageInfo(total, filter.limit, filter.offset) };
  }

  /** One version (default the latest) as stored; PROMPT_NOT_FOUND otherwise. */
  async loadVersion(promptId: string, version?: number | null, manager?: EntityManager): Promise<PromptVersion> {
    const read = async () => (await store.findVersion(manager ?? this.db.manager, promptId, version ?? null)) ?? null;
    // Inside a writer's transaction the rows are read as that transaction sees them, never cached.
    const found = manager ? await read() : await this.versions.get(promptId, String(version ?? 'latest'), read);
    if (found) return found;
    if (version == null || !(await this.exists(promptId, manager))) throw promptNotFound(promptId);
    throw promptNotFound(promptId, { version });
  }

  /**
   * The text agents run: the newest active version of the prompt, rendered. One indexed query for the version, one per fragment nesting level.
   */
  async renderForAgent(promptId: string, variables: Record<string, unknown>): Promise<PromptRenderingView> {
    const active = await this.versions.get(promptId, 'active', async () => (await store.newestActive(this.db, promptId)) ?? null);
    if (!active) throw promptNotFound(promptId, { status: 'active' });
    return this.renderVersion(active, variables);
  }

  /** Renders a given version, the version promoted to an environment, or else the newest active one. */
  async render(
    promptId: string,
    variables: Record<string, unknown>,
    opts: { version?: number | null; environment?: string | null } = {},
  ): Promise<PromptRenderingView> {
    if (opts.version != null) return this.renderVersion(await this.loadVersion(promptId, opts.version), variables);
    if (opts.environment != null) {
      const pinned = await store.pinnedVersion(this.db, promptId, opts.environment);
      if (!pinned) throw (await this.exists(promptId)) ? promptNotFound(promptId, { environment: opts.environment }) : promptNotFound(promptId);
      return this.renderVersion(pinned, variables);
    }
    return this.renderForAgent(promptId, variables);
  }

  async renderVersion(v: PromptVersion, variables: Record<string, unknown>): Promise<PromptRenderingView> {
    const lookup = v.fragmentRefs.length ? await this.loader.lookupFor([v.template]) : NO_FRAGMENTS;
    const r = renderTemplate(v.template, variables ?? {}, lookup);
    return { promptId: v.promptId, version: v.version, status: v.status, rendered: r.text, variables: r.variables, fragments: r.fragments };
  }

  /** The template with its fragments inlined (what A/B tests and chains render repeatedly). */
  async expand(template: string, field = 'template'): Promise<Expansion> {
    parseTemplate(template, field);
    return expandTemplate(template, await this.loader.lookupFor([template]), { field });
  }

  /** The ids among `promptIds` that exist, in one query. */
  async existing(promptIds: string[]): Promise<string[]> {
    if (promptIds.length > 1000) throw errors.field('promptIds', 'at most 1000 ids at once');
    return store.existingIds(this.db, promptIds);
  }

  private async exists(promptId: string, manager?: EntityManager): Promise<boolean> {
    return store.exists(manager ?? this.db.manager, promptId);
  }
}
