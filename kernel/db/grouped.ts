import DataLoader from 'dataloader';
import { carriedHere, carryingNothing, type Carried } from './transaction';

/**
 * Group commit for a hot write: concurrent calls become one statement over all their rows. A lone call
 * goes on the next tick; calls made while a group is in flight go together next (at most `max`). A
 * failed group is retried call by call, so one bad row fails only its caller: `write` must therefore
 * leave its items unchanged. Writes inside a caller's transaction go to the store directly, not here.
 * DataLoader (no cache) provides the batching schedule.
 *
 * `carried` holds, per item, the row its caller's change carries (kernel/db/transaction.ts: its
 * audit entry): a write that opens a transaction hands those of the items it wrote to `tx.carry`.
 * The write runs outside every caller's scope, so its transaction carries nothing by itself.
 */
export function grouped<I, R>(
  write: (items: readonly I[], carried: readonly (Carried | undefined)[]) => Promise<ArrayLike<R | Error>>,
  options: { max?: number } = {},
): (item: I) => Promise<R> {
  let inFlight: Promise<unknown> | null = null;
  const loader = new DataLoader<{ item: I; carried: Carried | undefined }, R>(
    async (calls) => {
      const items = calls.map((c) => c.item);
      const flight = carryingNothing(() =>
        write(
          items,
          calls.map((c) => c.carried),
        ),
      ).catch(() =>
        Promise.all(
          calls.map(({ item, carried }) =>
            carryingNothing(() => write([item], [carried])).then(
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
  return (item) => loader.load({ item, carried: carriedHere() });
}

/** Each key's row (by `keyOf`) in the keys' order, undefined where no row came back. */
export function inOrderOf<Row>(keys: readonly string[], rows: readonly Row[], keyOf: (row: Row) => string): (Row | undefined)[] {
  const byKey = new Map(rows.map((r) => [keyOf(r), r]));
  return keys.map((k) => byKey.get(k));
}
