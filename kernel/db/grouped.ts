import DataLoader from 'dataloader';

/**
 * Group commit for a hot write: concurrent calls of one kind of write become one statement over
 * all their rows, so a burst of N writers costs one round trip and one commit instead of N.
 *
 *  - An idle write goes at once (on the next tick): grouping never delays a lone caller.
 *  - Calls made while the previous group's statement is in flight wait for it and go together
 *    as the next group (at most `max` rows each), so the groups grow with the load by themselves.
 *  - A group whose statement fails is retried call by call: the statement was atomic, so nothing
 *    of it was written, and one bad row then fails only its own caller.
 *
 * `write` runs one statement for the items and answers one value per item, in the items' order
 * (an Error fails that item only). It must leave its items as they were: after a failed group it
 * is given them again, one at a time. A write inside a caller's transaction does not belong here: it
 * is that transaction's, so the caller calls the store directly with its `tx.manager`.
 *
 * DataLoader does the batching (no cache: every call is a write); its schedule is what keeps one
 * statement in flight.
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
