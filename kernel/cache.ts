import type { EventBus } from './events';
import type { CacheTopic } from './topics';

/**
 * A process-local read cache that every process empties of a group when the group changes: the
 * writer calls `changed(group)` after its commit, which drops the group here and publishes
 * `topic` (one of kernel/topics.ts's CacheTopic), so every other process drops it too. A load that was under way when a change arrived
 * is not kept (it may have read the old rows), nor is an absent value (null: nothing to go stale, and a
 * row written since is found at once); entries also expire after `ttlMs`, in case an
 * event was lost with a connection. Groups are what a writer knows (a prompt's id); variants are
 * what readers ask for within one (its latest version, its active one, version 3).
 */
export class SharedReadCache<V> {
  private readonly groups = new Map<string, Map<string, { value: V; at: number }>>();
  private generation = 0;

  constructor(
    private readonly events: EventBus,
    private readonly topic: CacheTopic,
    private readonly opts: { ttlMs: number; maxGroups: number },
  ) {
    events.subscribe(topic, (payload: { group?: string } | undefined) => this.drop(payload?.group));
  }

  async get(group: string, variant: string, load: () => Promise<V>): Promise<V> {
    const hit = this.groups.get(group)?.get(variant);
    if (hit && Date.now() - hit.at < this.opts.ttlMs) return hit.value;
    const generation = this.generation;
    const value = await load();
    if (value !== null && value !== undefined && generation === this.generation) {
      let entries = this.groups.get(group);
      if (!entries) {
        if (this.groups.size >= this.opts.maxGroups) this.groups.clear();
        entries = new Map();
        this.groups.set(group, entries);
      }
      entries.set(variant, { value, at: Date.now() });
    }
    return value;
  }

  /** After the commit that changed `group` (every group when none is named): dropped here at once and, through the event bus, everywhere. */
  async changed(group?: string): Promise<void> {
    // The bus drops it in this process before it sends; a send that fails (the change is committed
    // all the same) leaves other processes with at most `ttlMs` of the old rows.
    await this.events.publish(this.topic, { group }).catch(() => undefined);
  }

  private drop(group: string | undefined): void {
    this.generation++;
    if (group === undefined) this.groups.clear();
    else this.groups.delete(group);
  }
}
