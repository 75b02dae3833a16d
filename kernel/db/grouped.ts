import DataLoader from 'dataloader';

/**
 * Group commit for a hot write: concurrent calls become one statement over all their rows. A lone call
 * goes on the next tick; calls made while a group is in flight go together next (at most `max`). A
 * failed group is retried call by call, so one bad row fails only its caller: `write` must therefore
 * leave its items unchanged. Writes inside a caller's transaction go to the store directly, not here.
 * DataLoader (no cache) provides the batching schedule.
 */
export function grouped<I, R>(write: (items: readonly I[]) => Promise<ArrayLike<R | Error>>, options: { max?: number } = {}): (item: I) => Promise<R> {
  let inFlight: Promise<unknown> | null = null;
  const loader = new DataLoader<I, R>(
    async (items) => {
      const flight = write(items).catch(() =>
        Promise.all(
          items.map((item) =>
            write([item]).then(
              (answers) => answers[0]!,
              (err: Error) => err,
            ),
          ),
        ),
      );
      inFlight = flight;
      try {
        return await flight;
      } finally {
        if (inFlight === flight) inFlight = null;
      }
    },
    {
      cache: false,
      maxBatchSize: options.max ?? 100,
      batchScheduleFn: (dispatch) => {
        const go = () => process.nextTick(dispatch);
        if (inFlight) void inFlight.then(go, go);
        else go();
      },
    },
  );
  return (item) => loader.load(item);
}

/** Each key's row (by `keyOf`) in the keys' order, undefined where no row came back. */
export function inOrderOf<Row>(keys: readonly string[], rows: readonly Row[], keyOf: (row: Row) => string): (Row | undefined)[] {
  const byKey = new Map(rows.map((r) => [keyOf(r), r]));
  return keys.map((k) => byKey.get(k));
}
