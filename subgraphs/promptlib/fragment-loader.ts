import type { DataSource, EntityManager } from 'typeorm';
import { sources } from './fragment.store';
import { MAX_FRAGMENT_DEPTH, NO_FRAGMENTS, parseTemplate, type FragmentLookup, type FragmentRef, type FragmentSource } from './render';

/**
 * Loads every fragment a set of templates reaches, one query per nesting level (usually one in
 * all), into the lookup render.ts expects. The lookup is the per-render cache: each fragment
 * version is read once however often it is embedded.
 */
export class FragmentLoader {
  constructor(private readonly db: DataSource) {}

  /**
   * `override` stands for a fragment version being written (not stored yet): it answers bare
   * references to its id, and references to its own version.
   */
  async lookupFor(templates: string[], opts: { manager?: EntityManager; override?: FragmentSource } = {}): Promise<FragmentLookup> {
    const run = opts.manager ?? this.db.manager;
    const newest = new Map<string, FragmentSource>();
    const pinned = new Map<string, FragmentSource>();
    const override = opts.override;
    if (override) {
      newest.set(override.id, override);
      pinned.set(`${override.id}:${override.version}`, override);
    }
    const tried = new Set<string>();
    let pending = templates.flatMap(refsOf);
    // One level more than the depth limit, so that expandTemplate can report the excess.
    for (let level = 0; level <= MAX_FRAGMENT_DEPTH + 1 && pending.length; level++) {
      const bare = new Set<string>();
      const exact = new Map<string, FragmentRef>();
      for (const ref of pending) {
        const key = ref.version === undefined ? ref.id : `${ref.id}:${ref.version}`;
        if (tried.has(key)) continue;
        tried.add(key);
        if (ref.version === undefined) {
          if (!newest.has(ref.id)) bare.add(ref.id);
        } else if (!pinned.has(key)) exact.set(key, ref);
      }
      if (!bare.size && !exact.size) break;
      const wanted = [...exact.values()];
      const rows = await sources(
        run,
        [...bare],
        wanted.map((r) => r.id),
        wanted.map((r) => r.version!),
      );
      const next: FragmentRef[] = [];
      for (const row of rows) {
        const source = { id: row.fragment_id, version: row.version, content: row.content };
        if (row.newest) newest.set(source.id, source);
        pinned.set(`${source.id}:${source.version}`, source);
        next.push(...refsOf(source.content));
      }
      pending = next;
    }
    if (!newest.size && !pinned.size) return NO_FRAGMENTS;
    return (ref) => (ref.version === undefined ? newest.get(ref.id) : pinned.get(`${ref.id}:${ref.version}`));
  }
}

/** References of a text; a malformed one is reported later, by expandTemplate, with its field. */
function refsOf(text: string): readonly FragmentRef[] {
  try {
    return parseTemplate(text).fragments;
  } catch {
    return [];
  }
}
