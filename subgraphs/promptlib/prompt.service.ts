import { rowsOf } from '../../kernel/db/rows';
import type { EntityManager } from 'typeorm';
import { errors, type FieldError } from '../../kernel/errors';
import { PROMPT_STATUSES, type PromptStatus } from './prompt.types';
import { PromptReads, type PromptVersionRow, type PromptView } from './prompt.reads';
import { SEEDS } from './seeds';
import { checkDeclaredVariables, expandTemplate, NO_FRAGMENTS, parseTemplate, refLabel } from './render';
import { checkMetadata, checkSlug, checkText, isUniqueViolation, promptNotFound, throwIf } from './shared';

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
 *
 * This file writes; the reads (views, versions, rendering) are the class it extends (prompt.reads.ts).
 */

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

const ENVIRONMENT = /^[a-z][a-z0-9_-]{0,49}$/;

function unique(list: string[]): string[] {
  return [...new Set(list)];
}

export class PromptService extends PromptReads {
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
        await m.query(`UPDATE promptlib.prompts SET latest_version = $2, version_seq = $2, updated_at = now() WHERE prompt_id = $1`, [promptId, version]);
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
        await m.query(`UPDATE promptlib.prompt_versions SET status = 'archived', updated_at = now() WHERE prompt_id = $1 AND status <> 'archived'`, [promptId]);
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
      await m.query(`UPDATE promptlib.prompts SET latest_version = $2, version_seq = $2, updated_at = now() WHERE prompt_id = $1`, [promptId, number]);
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
      const deleted = rowsOf(
        await m.query(`DELETE FROM promptlib.prompt_versions WHERE prompt_id = $1 AND version = $2 RETURNING version`, [promptId, version]),
      );
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
      throw errors.field(
        'environment',
        'must be an environment name: lowercase letters, digits, "-" and "_", starting with a letter (e.g. production, staging)',
      );
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
