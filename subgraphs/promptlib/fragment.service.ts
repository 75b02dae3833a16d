import { auditResource } from '../../kernel/audit';
import { withTransaction } from '../../kernel/db/transaction';
import { pageInfo, type PageInfo } from '../../kernel/graphql-types';
import type { DataSource, EntityManager } from 'typeorm';
import { errors, type FieldError } from '../../kernel/errors';
import { FRAGMENT_TYPES, type FragmentType } from './fragment.types';
import type { FragmentLoader } from './fragment-loader';
import { expandTemplate, parseTemplate } from './render';
import { checkMetadata, checkSlug, checkText, isUniqueViolation, throwIf } from './shared';
import * as store from './fragment.store';

/**
 * Fragments: reusable pieces (role, constraints, examples, context, format) that templates embed
 * with `{{fragment:<id>}}` (newest version) or `{{fragment:<id>:<version>}}` (pinned).
 *
 * Usage is counted through embedding: a fragment is used by a prompt whose latest version
 * references it, directly or through other fragments; by a chain whose latest version has a step
 * running such a prompt. Deleting a fragment that an active prompt version uses is a 409 unless
 * `force`; prompts still referencing a deleted fragment then fail to render with a 400 naming it.
 */

export interface FragmentView {
  fragmentId: string;
  name: string;
  type: FragmentType;
  content: string;
  description: string;
  version: number;
  latestVersion: number;
  metadata: Record<string, unknown>;
  usage: { promptCount: number; chainCount: number };
  createdAt: Date;
  updatedAt: Date;
}

export interface FragmentListItemView {
  fragmentId: string;
  name: string;
  type: FragmentType;
  domain: string | null;
  tags: string[];
  version: number;
  usedInPrompts: number;
  createdAt: Date;
}

export interface CreateFragmentData {
  name: string;
  type: string;
  content: string;
  description?: string | null;
  metadata?: Record<string, unknown> | null;
}

export interface UpdateFragmentData {
  content?: string | null;
  description?: string | null;
  metadata?: Record<string, unknown> | null;
  createNewVersion?: boolean | null;
}

export interface FragmentFilter {
  type?: string | null;
  domain?: string | null;
  tag?: string | null;
  limit: number;
  offset: number;
}

/** `example` is accepted for `examples` (a common spelling of it). */
export function normalizeType(type: unknown): FragmentType | null {
  const t = type === 'example' ? 'examples' : type;
  return FRAGMENT_TYPES.includes(t as FragmentType) ? (t as FragmentType) : null;
}

const TYPE_RULE = `must be one of ${FRAGMENT_TYPES.join(', ')} (example is accepted for examples)`;

export class FragmentService {
  constructor(
    private readonly db: DataSource,
    private readonly loader: FragmentLoader,
  ) {}

  async get(fragmentId: string, version?: number | null): Promise<FragmentView> {
    const row = await store.viewRow(this.db, fragmentId, version ?? null);
    if (!row) {
      if (version != null && (await this.exists(fragmentId))) {
        throw errors.notFound('fragment_version', `${fragmentId}:${version}`);
      }
      throw errors.notFound('fragment', fragmentId);
    }
    const usage = await store.usage(this.db, fragmentId);
    return {
      fragmentId: row.fragment_id,
      name: row.fragment_id,
      type: row.type,
      content: row.content,
      description: row.description,
      version: row.version,
      latestVersion: row.latest_version,
      metadata: row.metadata,
      usage: { promptCount: usage.prompt_count, chainCount: usage.chain_count },
      createdAt: row.fragment_created_at,
      updatedAt: row.updated_at,
    };
  }

  async list(filter: FragmentFilter): Promise<{ fragments: FragmentListItemView[]; pagination: PageInfo }> {
    let type: FragmentType | null = null;
    if (filter.type != null) {
      type = normalizeType(filter.type);
      if (!type) throw errors.field('type', TYPE_RULE);
    }
    const { total, rows } = await store.list(
      this.db,
      { type, domain: filter.domain ?? null, tag: filter.tag ?? null },
      { limit: filter.limit, offset: filter.offset },
    );
    const counts = new Map<string, number>();
    if (rows.length) {
      const used = await store.promptCounts(
        this.db,
        rows.map((r) => r.fragment_id),
      );
      for (const u of used) counts.set(u.root, u.n);
    }
    const fragments = rows.map((r): FragmentListItemView => ({
      fragmentId: r.fragment_id,
      name: r.fragment_id,
      type: r.type,
      domain: typeof r.metadata?.domain === 'string' ? r.metadata.domain : null,
      tags: Array.isArray(r.metadata?.tags) ? r.metadata.tags : [],
      version: r.version,
      usedInPrompts: counts.get(r.fragment_id) ?? 0,
      createdAt: r.created_at,
    }));
    return { fragments, pagination: pageInfo(total, filter.limit, filter.offset) };
  }

  async create(input: CreateFragmentData): Promise<FragmentView> {
    const problems: FieldError[] = [];
    checkSlug(problems, 'name', input.name);
    const type = normalizeType(input.type);
    if (!type) problems.push({ field: 'type', message: TYPE_RULE });
    checkText(problems, 'content', input.content, { required: true, max: 100_000 });
    checkText(problems, 'description', input.description, { max: 10_000 });
    const metadata = checkMetadata(problems, 'metadata', input.metadata);
    throwIf(problems);
    const refs = await this.checkContent(input.content, { id: input.name, version: 1 });
    try {
      await withTransaction(this.db, async ({ manager: m }) => {
        await store.insertFragment(m, input.name, type!);
        auditResource('Fragment', input.name);
        await store.insertVersion(m, { fragmentId: input.name, version: 1, content: input.content, description: input.description ?? '', metadata, refs });
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw errors.alreadyExists('name', input.name, input.name);
      throw err;
    }
    return this.get(input.name);
  }

  async update(fragmentId: string, input: UpdateFragmentData): Promise<FragmentView> {
    const problems: FieldError[] = [];
    checkText(problems, 'content', input.content, { required: input.content != null, max: 100_000 });
    checkText(problems, 'description', input.description, { max: 10_000 });
    const metadata = input.metadata != null ? checkMetadata(problems, 'metadata', input.metadata) : null;
    throwIf(problems);
    await withTransaction(this.db, async ({ manager: m }) => {
      const parent = await store.lockForUpdate(m, fragmentId);
      if (!parent) throw errors.notFound('fragment', fragmentId);
      const latest = (await store.versionRow(m, fragmentId, parent.latest_version))!;
      const content: string = input.content ?? latest.content;
      const version: number = input.createNewVersion ? parent.version_seq + 1 : latest.version;
      const refs = input.content != null ? await this.checkContent(content, { id: fragmentId, version }, m) : latest.fragment_refs;
      const description = input.description ?? latest.description;
      const meta = metadata ?? latest.metadata;
      const next = { fragmentId, version, content, description, metadata: meta, refs };
      if (input.createNewVersion) {
        await store.insertVersion(m, next);
        await store.advanceLatest(m, fragmentId, version);
      } else {
        await store.updateVersion(m, next);
        await store.touch(m, fragmentId);
      }
    });
    return this.get(fragmentId);
  }

  async delete(fragmentId: string, force = false): Promise<{ fragmentId: string; deletedAt: Date; activePrompts: string[] }> {
    return withTransaction(this.db, async ({ manager: m }) => {
      if (!(await store.lockToDelete(m, fragmentId))) throw errors.notFound('fragment', fragmentId);
      const activePrompts = await store.activePromptsUsing(m, fragmentId);
      if (activePrompts.length && !force) {
        throw errors.conflict(`Fragment ${fragmentId} is used by ${activePrompts.length} active prompt(s); pass force=true to delete it anyway`, {
          fragmentId,
          activePrompts,
        });
      }
      await store.deleteById(m, fragmentId);
      return { fragmentId, deletedAt: new Date(), activePrompts };
    });
  }

  private async exists(fragmentId: string): Promise<boolean> {
    return store.exists(this.db, fragmentId);
  }

  /**
   * The content's references must exist, form no cycle (the content stands as `self` — the
   * newest version of this fragment) and stay within the depth limit. Returns the ids it embeds.
   */
  private async checkContent(content: string, self: { id: string; version: number }, manager?: EntityManager): Promise<string[]> {
    const direct = parseTemplate(content, 'content').fragments;
    if (!direct.length) return [];
    const lookup = await this.loader.lookupFor([content], { manager, override: { ...self, content } });
    expandTemplate(`{{fragment:${self.id}:${self.version}}}`, lookup, { field: 'content' });
    return [...new Set(direct.map((f) => f.id))];
  }
}
