import type { DataSource, EntityManager } from 'typeorm';
import { errors, type FieldError } from '../../kernel/errors';
import { FRAGMENT_TYPES, type FragmentType } from './fragment.types';
import type { FragmentLoader } from './fragment-loader';
import { expandTemplate, parseTemplate } from './render';
import { checkMetadata, checkSlug, checkText, isUniqueViolation, throwIf } from './shared';
import type { Page } from './prompt.reads';

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

/** `example` is accepted for `examples` (one example of the spec spells it so). */
export function normalizeType(type: unknown): FragmentType | null {
  const t = type === 'example' ? 'examples' : type;
  return FRAGMENT_TYPES.includes(t as FragmentType) ? (t as FragmentType) : null;
}

const TYPE_RULE = `must be one of ${FRAGMENT_TYPES.join(', ')} (example is accepted for examples)`;

/** The fragments that embed any of the roots, the roots included, in any of their versions (cycle-safe). */
const CONTAINING = `
  containing(root, fragment_id) AS (
    SELECT r, r FROM unnest($1::text[]) AS r
    UNION
    SELECT c.root, fv.fragment_id FROM promptlib.fragment_versions fv JOIN containing c ON c.fragment_id = ANY(fv.fragment_refs)
  )`;

export class FragmentService {
  constructor(
    private readonly db: DataSource,
    private readonly loader: FragmentLoader,
  ) {}

  async get(fragmentId: string, version?: number | null): Promise<FragmentView> {
    const [row] = await this.db.query(
      `SELECT f.type, f.latest_version, f.created_at AS fragment_created_at, fv.*
         FROM promptlib.fragments f
         JOIN promptlib.fragment_versions fv ON fv.fragment_id = f.fragment_id AND fv.version = coalesce($2::int, f.latest_version)
        WHERE f.fragment_id = $1`,
      [fragmentId, version ?? null],
    );
    if (!row) {
      if (version != null && (await this.exists(fragmentId))) {
        throw errors.notFound('fragment_version', `${fragmentId}:${version}`);
      }
      throw errors.notFound('fragment', fragmentId);
    }
    const [usage] = await this.db.query(
      `WITH RECURSIVE ${CONTAINING},
       prompts AS (
         SELECT DISTINCT p.prompt_id FROM promptlib.prompts p
           JOIN promptlib.prompt_versions v ON v.prompt_id = p.prompt_id AND v.version = p.latest_version
          WHERE v.fragment_refs && (SELECT array_agg(fragment_id) FROM containing))
       SELECT (SELECT count(*)::int FROM prompts) AS prompt_count,
              (SELECT count(*)::int FROM promptlib.chains c
                 JOIN promptlib.chain_versions cv ON cv.chain_id = c.chain_id AND cv.version = c.latest_version
                WHERE cv.prompt_ids && (SELECT coalesce(array_agg(prompt_id), '{}') FROM prompts)) AS chain_count`,
      [[fragmentId]],
    );
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

  async list(filter: FragmentFilter): Promise<{ fragments: FragmentListItemView[]; pagination: Page }> {
    let type: FragmentType | null = null;
    if (filter.type != null) {
      type = normalizeType(filter.type);
      if (!type) throw errors.field('type', TYPE_RULE);
    }
    const from = `FROM promptlib.fragments f JOIN promptlib.fragment_versions fv ON fv.fragment_id = f.fragment_id AND fv.version = f.latest_version
      WHERE ($1::text IS NULL OR f.type = $1)
        AND ($2::text IS NULL OR fv.metadata->>'domain' = $2)
        AND ($3::text IS NULL OR fv.metadata->'tags' @> jsonb_build_array($3::text))`;
    const params = [type, filter.domain ?? null, filter.tag ?? null];
    const [[{ total }], rows] = await Promise.all([
      this.db.query(`SELECT count(*)::int AS total ${from}`, params),
      this.db.query(
        `SELECT f.fragment_id, f.type, f.created_at, fv.version, fv.metadata ${from}
         ORDER BY f.created_at DESC, f.fragment_id LIMIT $4 OFFSET $5`,
        [...params, filter.limit, filter.offset],
      ),
    ]);
    const counts = new Map<string, number>();
    if (rows.length) {
      const used = await this.db.query(
        `WITH RECURSIVE ${CONTAINING}
         SELECT c.root, count(DISTINCT p.prompt_id)::int AS n
           FROM containing c
           JOIN promptlib.prompt_versions v ON c.fragment_id = ANY(v.fragment_refs)
           JOIN promptlib.prompts p ON p.prompt_id = v.prompt_id AND p.latest_version = v.version
          GROUP BY c.root`,
        [rows.map((r: any) => r.fragment_id)],
      );
      for (const u of used) counts.set(u.root, u.n);
    }
    const fragments = rows.map((r: any): FragmentListItemView => ({
      fragmentId: r.fragment_id,
      name: r.fragment_id,
      type: r.type,
      domain: typeof r.metadata?.domain === 'string' ? r.metadata.domain : null,
      tags: Array.isArray(r.metadata?.tags) ? r.metadata.tags : [],
      version: r.version,
      usedInPrompts: counts.get(r.fragment_id) ?? 0,
      createdAt: r.created_at,
    }));
    return { fragments, pagination: { total, limit: filter.limit, offset: filter.offset, hasMore: filter.offset + fragments.length < total } };
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
      await this.db.transaction(async (m) => {
        await m.query(`INSERT INTO promptlib.fragments (fragment_id, type, latest_version, version_seq) VALUES ($1, $2, 1, 1)`, [input.name, type]);
        await this.insertVersion(m, input.name, 1, input.content, input.description ?? '', metadata, refs);
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
    await this.db.transaction(async (m) => {
      const [parent] = await m.query(`SELECT latest_version, version_seq FROM promptlib.fragments WHERE fragment_id = $1 FOR UPDATE`, [fragmentId]);
      if (!parent) throw errors.notFound('fragment', fragmentId);
      const [latest] = await m.query(`SELECT * FROM promptlib.fragment_versions WHERE fragment_id = $1 AND version = $2`, [fragmentId, parent.latest_version]);
      const content: string = input.content ?? latest.content;
      const version: number = input.createNewVersion ? parent.version_seq + 1 : latest.version;
      const refs = input.content != null ? await this.checkContent(content, { id: fragmentId, version }, m) : latest.fragment_refs;
      const description = input.description ?? latest.description;
      const meta = metadata ?? latest.metadata;
      if (input.createNewVersion) {
        await this.insertVersion(m, fragmentId, version, content, description, meta, refs);
        await m.query(`UPDATE promptlib.fragments SET latest_version = $2, version_seq = $2, updated_at = now() WHERE fragment_id = $1`, [fragmentId, version]);
      } else {
        await m.query(
          `UPDATE promptlib.fragment_versions SET content = $3, description = $4, metadata = $5, fragment_refs = $6, updated_at = now()
            WHERE fragment_id = $1 AND version = $2`,
          [fragmentId, version, content, description, JSON.stringify(meta), refs],
        );
        await m.query(`UPDATE promptlib.fragments SET updated_at = now() WHERE fragment_id = $1`, [fragmentId]);
      }
    });
    return this.get(fragmentId);
  }

  async delete(fragmentId: string, force = false): Promise<{ fragmentId: string; deletedAt: Date; activePrompts: string[] }> {
    return this.db.transaction(async (m) => {
      const [parent] = await m.query(`SELECT 1 FROM promptlib.fragments WHERE fragment_id = $1 FOR UPDATE`, [fragmentId]);
      if (!parent) throw errors.notFound('fragment', fragmentId);
      const active: { prompt_id: string }[] = await m.query(
        `WITH RECURSIVE ${CONTAINING}
         SELECT DISTINCT v.prompt_id FROM promptlib.prompt_versions v
          WHERE v.status = 'active' AND v.fragment_refs && (SELECT array_agg(fragment_id) FROM containing)
          ORDER BY v.prompt_id`,
        [[fragmentId]],
      );
      const activePrompts = active.map((a) => a.prompt_id);
      if (activePrompts.length && !force) {
        throw errors.conflict(`Fragment ${fragmentId} is used by ${activePrompts.length} active prompt(s); pass force=true to delete it anyway`, {
          fragmentId,
          activePrompts,
        });
      }
      await m.query(`DELETE FROM promptlib.fragments WHERE fragment_id = $1`, [fragmentId]);
      return { fragmentId, deletedAt: new Date(), activePrompts };
    });
  }

  private async exists(fragmentId: string): Promise<boolean> {
    return (await this.db.query(`SELECT 1 FROM promptlib.fragments WHERE fragment_id = $1`, [fragmentId])).length > 0;
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

  private async insertVersion(
    m: EntityManager,
    id: string,
    version: number,
    content: string,
    description: string,
    metadata: Record<string, unknown>,
    refs: string[],
  ): Promise<void> {
    await m.query(
      `INSERT INTO promptlib.fragment_versions (fragment_id, version, content, description, metadata, fragment_refs)
       VALUES ($1, $2, $3, $4, $5, $6)`,
      [id, version, content, description, JSON.stringify(metadata), refs],
    );
  }
}
