type Slot = Record<string, unknown>;

/**
 * n8n's workflow static data of one execution: the slots `global` and `node:<name>`, JSON objects
 * read when the run starts. A node hands a slot back after its code ran; a slot that differs from
 * what was read is changed, and only the changed keys of changed slots are written back (by the
 * runner, for production executions), over what other executions wrote meanwhile.
 */
export class WorkflowStaticData {
  private readonly read: Record<string, string>;
  private readonly slots: Record<string, Slot>;

  constructor(stored: Record<string, unknown> = {}) {
    this.slots = {};
    this.read = {};
    for (const [slot, value] of Object.entries(stored)) {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) continue;
      this.slots[slot] = value as Slot;
      this.read[slot] = JSON.stringify(value);
    }
  }

  /** A copy of the slot (an empty object when it holds nothing). */
  get(slot: string): Slot {
    const value = Object.hasOwn(this.slots, slot) ? this.slots[slot] : undefined;
    return value ? (JSON.parse(JSON.stringify(value)) as Slot) : {};
  }

  set(slot: string, value: Slot): void {
    Object.defineProperty(this.slots, slot, { value, enumerable: true, writable: true, configurable: true });
  }

  /**
   * For each changed slot, the keys set (with their value) and the keys removed since the run
   * started; empty when nothing changed.
   */
  changes(): { slot: string; set: Slot; removed: string[] }[] {
    const out: { slot: string; set: Slot; removed: string[] }[] = [];
    for (const [slot, value] of Object.entries(this.slots)) {
      const before = Object.hasOwn(this.read, slot) ? this.read[slot]! : '{}';
      if (JSON.stringify(value) === before) continue;
      const old = JSON.parse(before) as Slot;
      const set: Slot = {};
      for (const [k, v] of Object.entries(value)) {
        if (!Object.hasOwn(old, k) || JSON.stringify(old[k]) !== JSON.stringify(v)) Object.defineProperty(set, k, { value: v, enumerable: true });
      }
      const removed = Object.keys(old).filter((k) => !Object.hasOwn(value, k));
      if (Object.keys(set).length || removed.length) out.push({ slot, set, removed });
    }
    return out;
  }
}
