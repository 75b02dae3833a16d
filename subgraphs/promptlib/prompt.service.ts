import { auditResource } from '../../kernel/audit';
import { withTransaction } from '../../kernel/db/transaction';
import type { EntityManager } from 'typeorm';
import { errors, type FieldError } from '../../kernel/errors';
import { PROMPT_STATUSES, type CreatePromptData, type PromptStatus, type UpdatePromptData } from './prompt.types';
import { PromptReads, type PromptView } from './prompt.reads';
import * as store from './prompt.store';
import type { NewPromptVersion, PromptLock, PromptVersion } from './prompt.store';
import { SEEDS } from './seeds';
import { checkDeclaredVariables, expandTemplate, NO_FRAGMENTS, parseTemplate, refLabel } from './render';
import { checkMetadata, checkSlug, checkText, isUniqueViolation, promptNotFound, throwIf } from './shared';

/**
 * Prompts and their versions: the writes (reads are in prompt.reads.ts; rules in docs/prompt-library.md).
 * `variables` must be exactly those the template uses, fragments included. Superseded versions never
 * change content (a database trigger enforces it), and agents render the newest active version.
 */

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
      await withTransaction(this.db, async ({ manager: m }) => {
        await store.insertPrompt(m, input.name);
        auditResource('Prompt', input.name);
        await store.insertVersion(m, {
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
    await withTransaction(this.db, async ({ manager: m }) => {
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
      const next: Omit<NewPromptVersion, 'version'> = {
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
        await store.insertVersion(m, { ...next, version });
        await store.advanceLatest(m, promptId, version);
      } else {
        await store.updateVersion(m, { ...next, version: latest.version });
        await store.touch(m, promptId);
      }
      if (input.status === 'archived') await store.archiveAll(m, promptId);
    });
    await this.versions.changed(promptId);
    return this.get(promptId);
  }

  /** Stores a new draft version written by a model: kept even if it is odd, its variables recomputed. */
  async addRefinedVersion(
    promptId: string,
    template: string,
    basedOn: PromptVersion,
    extraMetadata: Record<string, unknown>,
  ): Promise<{ version: PromptVersion; warnings: string[] }> {
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
      variables = [...own.variables];
      ids = unique(own.fragments.map((f) => f.id));
      labels = own.fragments.map(refLabel);
    }
    const added = variables.filter((v) => !basedOn.variables.includes(v));
    const dropped = basedOn.variables.filter((v) => !variables.includes(v));
    if (added.length) warnings.push(`new variables not in version ${basedOn.version}: ${added.join(', ')}`);
    if (dropped.length) warnings.push(`variables of version ${basedOn.version} no longer used: ${dropped.join(', ')}`);
    const version = await withTransaction(this.db, async ({ manager: m }) => {
      const parent = await this.lock(m, promptId);
      const number = parent.version_seq + 1;
      await store.insertVersion(m, {
        promptId,
        version: number,
        template,
        description: basedOn.description,
        variables,
        metadata: { ...basedOn.metadata, ...extraMetadata, fragments: labels },
        status: 'draft',
        fragmentRefs: ids,
      });
      await store.advanceLatest(m, promptId, number);
      return this.loadVersion(promptId, number, m);
    });
    await this.versions.changed(promptId);
    return { version, warnings };
  }

  async delete(promptId: string, version?: number | null): Promise<{ promptId: string; versionsDeleted: number; deletedAt: Date }> {
    const versionsDeleted = await withTransaction(this.db, async ({ manager: m }) => {
      await this.lock(m, promptId);
      if (version == null) {
        const n = await store.countVersions(m, promptId);
        await store.deleteById(m, promptId);
        return n;
      }
      if (!(await store.deleteVersion(m, promptId, version))) throw promptNotFound(promptId, { version });
      const latest = await store.maxVersion(m, promptId);
      if (latest === null) await store.deleteById(m, promptId);
      else await store.setLatestVersion(m, promptId, latest);
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
    const promoted = await withTransaction(this.db, async ({ manager: m }) => {
      const parent = await this.lock(m, promptId);
      const version: number = parent.latest_version;
      const previous = await store.pinOf(m, promptId, environment);
      const promotedAt = await store.pin(m, promptId, environment, version);
      if (environment === 'production') await store.activate(m, promptId, version);
      const status = await store.statusOf(m, promptId, version);
      return { promptId, environment, version, previousVersion: previous ?? null, status, promotedAt };
    });
    await this.versions.changed(promptId);
    return promoted;
  }

  /** Ensures the prompts the platform itself uses exist (idempotent; concurrent starts are safe). */
  async ensureSeeded(): Promise<void> {
    for (const seed of SEEDS) {
      await withTransaction(this.db, async ({ manager: m }) => {
        if (!(await store.insertPromptIfMissing(m, seed.name))) return;
        await store.insertVersion(m, {
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

  private async lock(m: EntityManager, promptId: string): Promise<PromptLock> {
    const parent = await store.lockForUpdate(m, promptId);
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
}
