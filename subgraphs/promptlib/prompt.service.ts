import { SharedReadCache } from '../../kernel/cache';
import type { EventBus } from '../../kernel/events';
import { rowsOf } from '../../kernel/db/rows';
import type { DataSource, EntityManager } from 'typeorm';
import { errors, type FieldError } from '../../kernel/errors';
import { PROMPT_STATUSES, type PromptStatus } from './prompt.entity';
import { FragmentLoader } from './fragment-loader';
import { SEEDS } from './seeds';
import {
  checkDeclaredVariables,
  expandTemplate,
  NO_FRAGMENTS,
  parseTemplate,
  refLabel,
  renderTemplate,
  type Expansion,
} from './render';
import {
  checkMetadata,
  checkSlug,
  checkText,
  isUniqueViolation,
  promptNotFound,
  round2,
  seconds,
  throwIf,
} from './shared';

/**
 * Prompts and their versions. Rules:
 *  - the name is the promptId (a slug, unique: 409 resource_already_exists);
 *  - `variables` must be exactly the variables the template uses, fragments included;
 *  - an update changes the latest version in place, or with `createNewVersion` stores a new
 *    version (which starts with the status of the one it supersedes); superseded versions never
 *    change content (a database trigger enforces it);
 *  - status belongs to a version: PUT {status} sets the latest version's; `archived` archives
 *    every version, taking the prompt out of service; agents render the newest active version;
 *  - promote pins the latest version for an environment; `production` also makes it active.
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

export interface Page {
  total: number;
  limit: number;
  offset: number;
  hasMore: boolean;
}

export interface PromptRenderingView {
  promptId: string;
  version: number;
  status: PromptStatus;
  rendered: string;
  variables: string[];
  fragments: { fragmentId: string; version: number }[];
}

export interface PromptVersionRow {
  promptId: string;
  version: number;
  template: string;
  description: string;
  variables: string[];
  metadata: Record<string, unknown>;
  status: PromptStatus;
  fragmentRefs: string[];
  createdAt: Date;
  updatedAt: Date;
}

export interface CreatePromptData {
  name: string;
  description: string;
  template: string;
  variables: string[];
  metadata?: Record<string, unknown> | null;
}

export interface UpdatePromptData {
  template?: string | null;
  description?: string | null;
  variables?: string[] | null;
  metadata?: Record<string, unknown> | null;
  status?: string | null;
  createNewVersion?: boolean | null;
}

export interface PromptFilter {
  domain?: string | null;
  agentId?: string | null;
  status?: string | null;
  tag?: string | null;
  limit: number;
  offset: number;
}

const ENVIRONMENT = /^[a-z][a-z0-9_-]{0,49}$/;
const VERSION_COLUMNS = `v.prompt_id, v.version, v.template, v.description, v.variables, v.metadata, v.status, v.fragment_refs, v.created_at, v.updated_at`;

function toVersion(r: any): PromptVersionRow {
  return {
    promptId: r.prompt_id,
    version: r.version,
    template: r.template,
    description: r.description,
    variables: r.variables,
    metadata: r.metadata,
    status: r.status,
    fragmentRefs: r.fragment_refs,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function unique(list: string[]): string[] {
  return [...new Set(list)];
}

function performanceOf(rows: { total: number; ok: number; tokens: string | number | null; latency: string | number | null }[]): Performance {
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
export const PROMPT_CHANGED = 'promptlib.prompt.changed';

export class PromptService {
  readonly loader: FragmentLoader;
  /**
   * Version rows read on every test, chain step and agent task (the latest, the active, a given
   * number), kept until the prompt changes in any process (kernel/cache.ts).
   */
  private readonly versions: SharedReadCache<PromptVersionRow | null>;

  constructor(
    private readonly db: DataSource,
    events: EventBus,
  ) {
    this.loader = new FragmentLoader(db);
    this.versions = new SharedReadCache(events, PROMPT_CHANGED, { ttlMs: 60_000, maxGroups: 10_000 });
  }

  // ---- reads ------------------------------------------------------------------------------

  async get(promptId: string, opts: { version?: number | null; environment?: string | null } = {}): Promise<PromptView> {
    const version = opts.version ?? null;
    const environment = opts.environment ?? null;
    const [row] = await this.db.query(
      `SELECT p.created_at AS prompt_created_at, p.latest_version, ${VERSION_COLUMNS},
              (SELECT array_agg(version ORDER BY version) FROM promptlib.prompt_versions WHERE prompt_id = p.prompt_id) AS versions
         FROM promptlib.prompts p
         JOIN promptlib.prompt_versions v ON v.prompt_id = p.prompt_id
          AND v.version = CASE
                WHEN $2::int IS NOT NULL THEN $2::int
                WHEN $3::text IS NOT NULL THEN (SELECT version FROM promptlib.prompt_pins WHERE prompt_id = p.prompt_id AND environment = $3)
                ELSE p.latest_version END
        WHERE p.prompt_id = $1`,
      [promptId, version, environment],
    );
    if (!row) {
      if ((version === null && environment === null) || !(await this.exists(promptId))) throw promptNotFound(promptId);
      throw promptNotFound(promptId, version !== null ? { version } : { environment: environment! });
    }
    const [stats, pins] = await Promise.all([
      this.db.query(
        `SELECT version, count(*)::int AS total, count(*) FILTER (WHERE success)::int AS ok,
                sum(tokens_used) FILTER (WHERE success) AS tokens, sum(latency_ms) FILTER (WHERE success) AS latency
           FROM promptlib.prompt_tests WHERE prompt_id = $1 GROUP BY version ORDER BY version`,
        [promptId],
      ),
      this.db.query(`SELECT environment, version, promoted_at FROM promptlib.prompt_pins WHERE prompt_id = $1 ORDER BY environment`, [promptId]),
    ]);
    const v = toVersion(row);
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
        byVersion: stats.map((s: any) => ({ version: s.version, ...performanceOf([s]) })),
      },
      environments: pins.map((p: any) => ({ environment: p.environment, version: p.version, promotedAt: p.promoted_at })),
      createdAt: row.prompt_created_at,
      updatedAt: v.updatedAt,
    };
  }

  async list(filter: PromptFilter): Promise<{ prompts: PromptListItemView[]; pagination: Page }> {
    const problems: FieldError[] = [];
    if (filter.status != null && !PROMPT_STATUSES.includes(filter.status as PromptStatus)) {
      problems.push({ field: 'status', message: `must be one of ${PROMPT_STATUSES.join(', ')}` });
    }
    throwIf(problems);
    const where = `
      WHERE ($1::text IS NULL OR v.metadata->>'domain' = $1)
        AND ($2::text IS NULL OR v.metadata->>'agentId' = $2)
        AND ($3::text IS NULL OR v.status = $3)
        AND ($4::text IS NULL OR v.metadata->'tags' @> jsonb_build_array($4::text))`;
    const from = `FROM promptlib.prompts p JOIN promptlib.prompt_versions v ON v.prompt_id = p.prompt_id AND v.version = p.latest_version`;
    const params = [filter.domain ?? null, filter.agentId ?? null, filter.status ?? null, filter.tag ?? null];
    const [[{ total }], rows] = await Promise.all([
      this.db.query(`SELECT count(*)::int AS total ${from} ${where}`, params),
      this.db.query(
        `SELECT p.prompt_id, p.created_at AS prompt_created_at, v.version, v.status, v.description, v.metadata, v.updated_at
         ${from} ${where} ORDER BY p.created_at DESC, p.prompt_id LIMIT $5 OFFSET $6`,
        [...params, filter.limit, filter.offset],
      ),
    ]);
    const stats = new Map<string, { total: number; ok: number }>();
    if (rows.length) {
      const statRows = await this.db.query(
        `SELECT prompt_id, count(*)::int AS total, count(*) FILTER (WHERE success)::int AS ok
           FROM promptlib.prompt_tests WHERE prompt_id = ANY($1::text[]) GROUP BY prompt_id`,
        [rows.map((r: any) => r.prompt_id)],
      );
      for (const s of statRows) stats.set(s.prompt_id, s);
    }
    const prompts = rows.map((r: any): PromptListItemView => {
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
    return { prompts, pagination: { total, limit: filter.limit, offset: filter.offset, hasMore: filter.offset + prompts.length < total } };
  }

  /** One version (default the latest) as stored; PROMPT_NOT_FOUND otherwise. */
  async loadVersion(promptId: string, version?: number | null, manager?: EntityManager): Promise<PromptVersionRow> {
    const read = async () => {
      const [row] = await (manager ?? this.db.manager).query(
        `SELECT ${VERSION_COLUMNS} FROM promptlib.prompts p
           JOIN promptlib.prompt_versions v ON v.prompt_id = p.prompt_id AND v.version = coalesce($2::int, p.latest_version)
          WHERE p.prompt_id = $1`,
        [promptId, version ?? null],
      );
      return row ? toVersion(row) : null;
    };
    // Inside a writer's transaction the rows are read as that transaction sees them, never cached.
    const found = manager ? await read() : await this.versions.get(promptId, String(version ?? 'latest'), read);
    if (found) return found;
    if (version == null || !(await this.exists(promptId, manager))) throw promptNotFound(promptId);
    throw promptNotFound(promptId, { version });
  }

  /**
   * The text agents run: the newest active version of the prompt, rendered (CONTRACT.md
   * section 8). One indexed query for the version, one per fragment nesting level.
   */
  async renderForAgent(promptId: string, variables: Record<string, unknown>): Promise<PromptRenderingView> {
    const active = await this.versions.get(promptId, 'active', async () => {
      const [row] = await this.db.query(
        `SELECT ${VERSION_COLUMNS} FROM promptlib.prompt_versions v
          WHERE v.prompt_id = $1 AND v.status = 'active' ORDER BY v.version DESC LIMIT 1`,
        [promptId],
      );
      return row ? toVersion(row) : null;
    });
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
      const [row] = await this.db.query(
        `SELECT ${VERSION_COLUMNS} FROM promptlib.prompt_pins pin
           JOIN promptlib.prompt_versions v ON v.prompt_id = pin.prompt_id AND v.version = pin.version
          WHERE pin.prompt_id = $1 AND pin.environment = $2`,
        [promptId, opts.environment],
      );
      if (!row) throw (await this.exists(promptId)) ? promptNotFound(promptId, { environment: opts.environment }) : promptNotFound(promptId);
      return this.renderVersion(toVersion(row), variables);
    }
    return this.renderForAgent(promptId, variables);
  }

  async renderVersion(v: PromptVersionRow, variables: Record<string, unknown>): Promise<PromptRenderingView> {
    const lookup = v.fragmentRefs.length ? await this.loader.lookupFor([v.template]) : NO_FRAGMENTS;
    const r = renderTemplate(v.template, variables ?? {}, lookup);
    return { promptId: v.promptId, version: v.version, status: v.status, rendered: r.text, variables: r.variables, fragments: r.fragments };
  }

  /** The template with its fragments inlined (what A/B tests and chains render repeatedly). */
  async expand(template: string, field = 'template'): Promise<Expansion> {
    parseTemplate(template, field);
    return expandTemplate(template, await this.loader.lookupFor([template]), { field });
  }

  // ---- writes -----------------------------------------------------------------------------

  async create(input: CreatePromptData, opts: { status?: PromptStatus } = {}): Promise<PromptView> {
    const problems: FieldError[] = [];
    checkSlug(problems, 'name', input.name);
    checkText(problems, 'description', input.description, { required: true, max: 10_000 });
    checkText(problems, 'template', input.template, { required: true, max: 100_000 });
    if (!Array.isArray(input.variables)) problems.push({ field: 'variables', message: 'is required' });
    const metadata = checkMetadata(problems, 'metadata', input.metadata);
    throwIf(problems);
    const analysis = await this.analyze(input.template);
    const variables = unique(input.variables);
    checkDeclaredVariables(variables, analysis.variables);
    try {
      await this.db.transaction(async (m) => {
        await m.query(`INSERT INTO promptlib.prompts (prompt_id, latest_version, version_seq) VALUES ($1, 1, 1)`, [input.name]);
        await this.insertVersion(m, {
          promptId: input.name,
          version: 1,
          template: input.template,
          description: input.description,
          variables,
          metadata: { ...metadata, fragments: analysis.labels },
          status: opts.status ?? 'draft',
          fragmentRefs: analysis.ids,
        });
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw errors.alreadyExists('name', input.name, input.name);
      throw err;
    }
    return this.get(input.name);
  }

  async update(promptId: string, input: UpdatePromptData): Promise<PromptView> {
    const problems: FieldError[] = [];
    checkText(problems, 'template', input.template, { required: input.template !== undefined && input.template !== null, max: 100_000 });
    checkText(problems, 'description', input.description, { required: input.description !== undefined && input.description !== null, max: 10_000 });
    if (input.status != null && !PROMPT_STATUSES.includes(input.status as PromptStatus)) {
      problems.push({ field: 'status', message: `must be one of ${PROMPT_STATUSES.join(', ')}` });
    }
    const metadata = input.metadata != null ? checkMetadata(problems, 'metadata', input.metadata) : null;
    throwIf(problems);
    await this.db.transaction(async (m) => {
      const parent = await this.lock(m, promptId);
      const latest = await this.loadVersion(promptId, parent.latest_version, m);
      const template = input.template ?? latest.template;
      let variables = latest.variables;
      let ids = latest.fragmentRefs;
      let labels = (latest.metadata.fragments as string[] | undefined) ?? [];
      if (input.template != null || input.variables != null) {
        const analysis = await this.analyze(template, m);
        // A new template without `variables` declares what it uses.
        variables = input.variables != null ? unique(input.variables) : input.template != null ? analysis.variables : latest.variables;
        checkDeclaredVariables(variables, analysis.variables);
        ids = analysis.ids;
        labels = analysis.labels;
      }
      const next = {
        promptId,
        template,
        description: input.description ?? latest.description,
        variables,
        metadata: { ...(metadata ?? latest.metadata), fragments: labels },
        status: (input.status as PromptStatus | null) ?? latest.status,
        fragmentRefs: ids,
      };
      if (input.createNewVersion) {
        const version = parent.version_seq + 1;
        await this.insertVersion(m, { ...next, version });
        await m.query(
          `UPDATE promptlib.prompts SET latest_version = $2, version_seq = $2, updated_at = now() WHERE prompt_id = $1`,
          [promptId, version],
        );
      } else {
        await m.query(
          `UPDATE promptlib.prompt_versions
              SET template = $3, description = $4, variables = $5, metadata = $6, status = $7, fragment_refs = $8, updated_at = now()
            WHERE prompt_id = $1 AND version = $2`,
          [promptId, latest.version, next.template, next.description, next.variables, JSON.stringify(next.metadata), next.status, next.fragmentRefs],
        );
        await m.query(`UPDATE promptlib.prompts SET updated_at = now() WHERE prompt_id = $1`, [promptId]);
      }
      if (input.status === 'archived') {
        await m.query(
          `UPDATE promptlib.prompt_versions SET status = 'archived', updated_at = now() WHERE prompt_id = $1 AND status <> 'archived'`,
          [promptId],
        );
      }
    });
    await this.versions.changed(promptId);
    return this.get(promptId);
  }

  /** Stores a new draft version written by a model: kept even if it is odd, its variables recomputed. */
  async addRefinedVersion(
    promptId: string,
    template: string,
    basedOn: PromptVersionRow,
    extraMetadata: Record<string, unknown>,
  ): Promise<{ version: PromptVersionRow; warnings: string[] }> {
    const warnings: string[] = [];
    let variables: string[];
    let ids: string[] = [];
    let labels: string[] = [];
    try {
      const analysis = await this.analyze(template);
      variables = analysis.variables;
      ids = analysis.ids;
      labels = analysis.labels;
    } catch (err) {
      warnings.push(`the new template does not render as it is: ${(err as Error).message}`);
      const own = parseTemplate(template, 'template', true);
      variables = own.variables;
      ids = unique(own.fragments.map((f) => f.id));
      labels = own.fragments.map(refLabel);
    }
    const added = variables.filter((v) => !basedOn.variables.includes(v));
    const dropped = basedOn.variables.filter((v) => !variables.includes(v));
    if (added.length) warnings.push(`new variables not in version ${basedOn.version}: ${added.join(', ')}`);
    if (dropped.length) warnings.push(`variables of version ${basedOn.version} no longer used: ${dropped.join(', ')}`);
    const version = await this.db.transaction(async (m) => {
      const parent = await this.lock(m, promptId);
      const number = parent.version_seq + 1;
      await this.insertVersion(m, {
        promptId,
        version: number,
        template,
        description: basedOn.description,
        variables,
        metadata: { ...basedOn.metadata, ...extraMetadata, fragments: labels },
        status: 'draft',
        fragmentRefs: ids,
      });
      await m.query(`UPDATE promptlib.prompts SET latest_version = $2, version_seq = $2, updated_at = now() WHERE prompt_id = $1`, [
        promptId,
        number,
      ]);
      return this.loadVersion(promptId, number, m);
    });
    await this.versions.changed(promptId);
    return { version, warnings };
  }

  async delete(promptId: string, version?: number | null): Promise<{ promptId: string; versionsDeleted: number; deletedAt: Date }> {
    const versionsDeleted = await this.db.transaction(async (m) => {
      await this.lock(m, promptId);
      if (version == null) {
        const [{ n }] = await m.query(`SELECT count(*)::int AS n FROM promptlib.prompt_versions WHERE prompt_id = $1`, [promptId]);
        await m.query(`DELETE FROM promptlib.prompts WHERE prompt_id = $1`, [promptId]);
        return n as number;
      }
      const deleted = rowsOf(await m.query(`DELETE FROM promptlib.prompt_versions WHERE prompt_id = $1 AND version = $2 RETURNING version`, [promptId, version]));
      if (!deleted.length) throw promptNotFound(promptId, { version });
      const [{ latest }] = await m.query(`SELECT max(version) AS latest FROM promptlib.prompt_versions WHERE prompt_id = $1`, [promptId]);
      if (latest === null) await m.query(`DELETE FROM promptlib.prompts WHERE prompt_id = $1`, [promptId]);
      else await m.query(`UPDATE promptlib.prompts SET latest_version = $2, updated_at = now() WHERE prompt_id = $1`, [promptId, latest]);
      return 1;
    });
    await this.versions.changed(promptId);
    return { promptId, versionsDeleted, deletedAt: new Date() };
  }

  /** Pins the latest version as the one served to `environment`; `production` makes it active. */
  async promote(
    promptId: string,
    environment: string,
  ): Promise<{ promptId: string; environment: string; version: number; previousVersion: number | null; status: PromptStatus; promotedAt: Date }> {
    if (typeof environment !== 'string' || !ENVIRONMENT.test(environment)) {
      throw errors.field('environment', 'must be an environment name: lowercase letters, digits, "-" and "_", starting with a letter (e.g. production, staging)');
    }
    const promoted = await this.db.transaction(async (m) => {
      const parent = await this.lock(m, promptId);
      const version: number = parent.latest_version;
      const [previous] = await m.query(`SELECT version FROM promptlib.prompt_pins WHERE prompt_id = $1 AND environment = $2`, [promptId, environment]);
      const [pin] = await m.query(
        `INSERT INTO promptlib.prompt_pins (prompt_id, environment, version) VALUES ($1, $2, $3)
         ON CONFLICT (prompt_id, environment) DO UPDATE SET version = EXCLUDED.version, promoted_at = now()
         RETURNING promoted_at`,
        [promptId, environment, version],
      );
      if (environment === 'production') {
        await m.query(
          `UPDATE promptlib.prompt_versions SET status = 'active', updated_at = now() WHERE prompt_id = $1 AND version = $2 AND status <> 'active'`,
          [promptId, version],
        );
      }
      const [{ status }] = await m.query(`SELECT status FROM promptlib.prompt_versions WHERE prompt_id = $1 AND version = $2`, [promptId, version]);
      return { promptId, environment, version, previousVersion: previous?.version ?? null, status, promotedAt: pin.promoted_at };
    });
    await this.versions.changed(promptId);
    return promoted;
  }

  /** Ensures the prompts the platform itself uses exist (idempotent; concurrent starts are safe). */
  /** The ids among `promptIds` that exist, in one query. */
  async existing(promptIds: string[]): Promise<string[]> {
    if (promptIds.length > 1000) throw errors.field('promptIds', 'at most 1000 ids at once');
    const rows: { prompt_id: string }[] = await this.db.query(`SELECT prompt_id FROM promptlib.prompts WHERE prompt_id = ANY($1::text[])`, [promptIds]);
    return rows.map((r) => r.prompt_id);
  }

  async ensureSeeded(): Promise<void> {
    for (const seed of SEEDS) {
      await this.db.transaction(async (m) => {
        const inserted = await m.query(
          `INSERT INTO promptlib.prompts (prompt_id, latest_version, version_seq) VALUES ($1, 1, 1) ON CONFLICT DO NOTHING RETURNING prompt_id`,
          [seed.name],
        );
        if (!inserted.length) return;
        await this.insertVersion(m, {
          promptId: seed.name,
          version: 1,
          template: seed.template,
          description: seed.description,
          variables: seed.variables,
          metadata: { ...seed.metadata, fragments: [] },
          status: seed.status,
          fragmentRefs: [],
        });
      });
      await this.versions.changed(seed.name);
    }
  }

  // ---- helpers ----------------------------------------------------------------------------

  private async exists(promptId: string, manager?: EntityManager): Promise<boolean> {
    const rows = await (manager ?? this.db.manager).query(`SELECT 1 FROM promptlib.prompts WHERE prompt_id = $1`, [promptId]);
    return rows.length > 0;
  }

  private async lock(m: EntityManager, promptId: string): Promise<{ latest_version: number; version_seq: number }> {
    const [parent] = await m.query(`SELECT latest_version, version_seq FROM promptlib.prompts WHERE prompt_id = $1 FOR UPDATE`, [promptId]);
    if (!parent) throw promptNotFound(promptId);
    return parent;
  }

  /** Variables (fragments included) and fragment references of a template being written. */
  private async analyze(template: string, manager?: EntityManager): Promise<{ variables: string[]; ids: string[]; labels: string[] }> {
    const direct = parseTemplate(template).fragments;
    const lookup = direct.length ? await this.loader.lookupFor([template], { manager }) : NO_FRAGMENTS;
    const expansion = expandTemplate(template, lookup);
    return { variables: expansion.variables, ids: unique(direct.map((f) => f.id)), labels: direct.map(refLabel) };
  }

  private async insertVersion(m: EntityManager, v: Omit<PromptVersionRow, 'createdAt' | 'updatedAt'>): Promise<void> {
    await m.query(
      `INSERT INTO promptlib.prompt_versions (prompt_id, version, template, description, variables, metadata, status, fragment_refs)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [v.promptId, v.version, v.template, v.description, v.variables, JSON.stringify(v.metadata), v.status, v.fragmentRefs],
    );
  }
}
