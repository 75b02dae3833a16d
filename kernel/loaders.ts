import DataLoader from 'dataloader';

/**
 * Batched loads for field and entity-reference resolvers: a service declares each as a
 * `LoaderDefinition`; resolvers reach it through `load(ctx, def, key)`. Loaders live for one subgraph
 * execution and are created on first use, never shared across requests, so no caller sees another's
 * answers; the batch functions are the service's own reads, permission rules included.
 */
export interface LoaderDefinition<K, V> {
  /** For errors and debugging: `<service>.<what>ByKey`. */
  readonly name: string;
  /**
   * One query for all keys. DataLoader's contract: one answer per key, in the keys' order (a
   * missing key answers its "absent" value, `null` or `[]`; an Error fails that key only).
   */
  readonly batch: (keys: readonly K[]) => Promise<ArrayLike<V | Error>>;
}

export function defineLoader<K, V>(name: string, batch: (keys: readonly K[]) => Promise<ArrayLike<V | Error>>): LoaderDefinition<K, V> {
  return { name, batch };
}

/** The loaders of one execution, created on first use of each definition. */
export class RequestLoaders {
  // Each definition keys the DataLoader of its own K and V.
  private readonly loaders = new Map<object, unknown>();

  get<K, V>(def: LoaderDefinition<K, V>): DataLoader<K, V> {
    let loader = this.loaders.get(def) as DataLoader<K, V> | undefined;
    if (!loader) {
      loader = new DataLoader<K, V>((keys) => def.batch(keys), { name: def.name });
      this.loaders.set(def, loader);
    }
    return loader;
  }
}

/** What carries the loaders: the RequestContext (kept structural so that kernel/subgraph.ts can import this file). */
export interface HasLoaders {
  loaders?: RequestLoaders;
}

/** The execution's loader for `def` (its loader set is created here, on the first load of the execution). */
export function loaderOf<K, V>(ctx: HasLoaders, def: LoaderDefinition<K, V>): DataLoader<K, V> {
  return (ctx.loaders ??= new RequestLoaders()).get(def);
}

/** Loads `key` through the execution's loader for `def`: batched with every other load of the same tick. */
export function load<K, V>(ctx: HasLoaders, def: LoaderDefinition<K, V>, key: K): Promise<V> {
  return loaderOf(ctx, def).load(key);
}

/**
 * Rows -> one value per key, in the keys' order (`absent` for a key without a row). For batch
 * functions whose query returns at most one row per key.
 */
export function byKey<K, R, V = R, A = null>(keys: readonly K[], rows: readonly R[], keyOf: (row: R) => K, absent: A, map?: (row: R) => V): (V | A)[] {
  const found = new Map<K, V>();
  for (const row of rows) found.set(keyOf(row), map ? map(row) : (row as unknown as V));
  return keys.map((k) => (found.has(k) ? found.get(k)! : absent));
}

/**
 * Rows -> the list of each key's rows, in the keys' order (empty for a key without rows); the
 * rows keep the query's order within each key.
 */
export function groupedByKey<K, R, V = R>(keys: readonly K[], rows: readonly R[], keyOf: (row: R) => K, map?: (row: R) => V): V[][] {
  const groups = new Map<K, V[]>();
  for (const row of rows) {
    const k = keyOf(row);
    let group = groups.get(k);
    if (!group) groups.set(k, (group = []));
    group.push(map ? map(row) : (row as unknown as V));
  }
  return keys.map((k) => groups.get(k) ?? []);
}
