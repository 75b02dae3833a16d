import { QueryClient, useQuery as useReactQuery, useQueryClient } from '@tanstack/react-query';
import { createClient, type Client } from 'graphql-ws';
import { useEffect, useRef } from 'react';
import type { TypedDocumentString } from './generated';

/**
 * Every view is a GraphQL operation through the gateway, with the API key the person signed in
 * with (kept in this tab's session storage, never in a URL). Reads go through React Query's cache;
 * live views write subscription events into that cache, so every view of the same data updates
 * at once. The operations are the .graphql files beside the views, typed by `npm run codegen`.
 */

export const KEY_STORAGE = 'platform.apiKey';
export const apiKey = () => sessionStorage.getItem(KEY_STORAGE);

export class GraphQLFailure extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

export async function gql<D, V>(document: TypedDocumentString<D, V>, variables: V, key = apiKey()): Promise<D> {
  const res = await fetch('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: JSON.stringify({ query: document.toString(), variables }),
  });
  const body = await res.json();
  if (body.errors?.length) throw new GraphQLFailure(body.errors[0].message, body.errors[0].extensions?.code);
  return body.data as D;
}

// A failed read is shown at once: the errors the API gives (permissions, not found) do not heal on retry.
export const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false, refetchOnWindowFocus: false, staleTime: 5_000 } } });

let ws: Client | undefined;
function socket(): Client {
  return (ws ??= createClient({
    url: `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/graphql`,
    connectionParams: () => ({ authorization: `Bearer ${apiKey()}` }),
    lazy: true,
    retryAttempts: 5,
  }));
}

export function signOut(): void {
  sessionStorage.removeItem(KEY_STORAGE);
  void ws?.dispose();
  ws = undefined;
  queryClient.clear();
}

/** The cache key of an operation with its variables. */
export const queryKey = <D, V>(document: TypedDocumentString<D, V>, variables: V) => [document.toString(), variables] as const;

/**
 * A query's data from the cache (fetched when missing), with `reload()` and `setData()` on the same
 * cache entry. `reading` is called as each read starts and what it returns sees the answer before
 * it is cached: a live view uses it so that an answer read before an event it has already shown
 * does not take that event back.
 */
export function useQuery<D, V>(document: TypedDocumentString<D, V>, variables: V, reading?: () => (answer: D) => D) {
  const client = useQueryClient();
  const key = queryKey(document, variables);
  const q = useReactQuery<D, GraphQLFailure>({
    queryKey: key,
    queryFn: async () => {
      const settle = reading?.();
      const answer = await gql(document, variables);
      return settle ? settle(answer) : answer;
    },
  });
  return {
    data: q.data,
    error: q.error ?? undefined,
    loading: q.isPending,
    reload: () => void q.refetch(),
    setData: (data: D) => client.setQueryData(key, data),
  };
}

/** Calls `onData` with every event of a subscription while the component is mounted. */
export function useSubscription<D, V extends Record<string, unknown>>(document: TypedDocumentString<D, V>, variables: V | null, onData: (data: D) => void): void {
  const handler = useRef(onData);
  handler.current = onData;
  const key = JSON.stringify(variables);
  useEffect(() => {
    if (!variables) return;
    return socket().subscribe<D>(
      { query: document.toString(), variables },
      { next: (v) => v.data && handler.current(v.data as D), error: () => undefined, complete: () => undefined },
    );
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [document, key]);
}

/**
 * A query kept live by a subscription: each event is written into the query's cache entry
 * (`toData` maps the event to the query's shape). The subscription sends the entity as it is
 * first, then every change. Of two states the higher `version` is the newer, whichever came
 * last: an event never takes back a newer answer, and an answer (the first read, or a reload)
 * that was read before an event already shown never takes that event back.
 */
export function useLiveQuery<D, V, S, SV extends Record<string, unknown>>(
  document: TypedDocumentString<D, V>,
  variables: V,
  subscription: TypedDocumentString<S, SV>,
  subscriptionVariables: SV | null,
  toData: (event: S) => D,
  version: (data: D) => number | undefined,
) {
  const client = useQueryClient();
  const key = queryKey(document, variables);
  const newer = (shown: D | undefined, next: D) => (shown !== undefined && (version(shown) ?? -1) > (version(next) ?? -1) ? shown : next);
  const q = useQuery(document, variables, () => (answer) => newer(client.getQueryData<D>(key), answer));
  useSubscription(subscription, subscriptionVariables, (event) => client.setQueryData<D>(key, (shown) => newer(shown, toData(event))));
  return q;
}

/** An item of a list kept live: its row version (of two states, the higher is the newer), and whether it was deleted. */
export interface Versioned {
  version: number;
  deleted?: boolean;
}

/**
 * A list kept live by its list subscription (tasksUpdated, executionsUpdated, …): each event is
 * written into the list's cache entry — an item already listed is replaced unless the event is
 * older than what is shown (its `version`), a new one goes first (the lists are newest first) and
 * the list keeps its length; a deleted one leaves it. No subscription per row, no polling. The
 * subscription sends the list's members first (with the list's `limit`), then every change, so
 * nothing falls between the first read and the subscription; events that came before that read's
 * answer are written into it when it comes.
 */
export function useLiveList<D, V, S, SV extends Record<string, unknown>, T extends Versioned>(
  document: TypedDocumentString<D, V>,
  variables: V,
  subscription: TypedDocumentString<S, SV>,
  subscriptionVariables: SV | null,
  list: {
    /** The item an event carries (null: not one for this list, e.g. another workflow's). */
    item: (event: S) => T | null;
    items: (data: D) => T[];
    withItems: (data: D, items: T[]) => D;
    id: (item: T) => string;
    /** The list's length at most (its query's limit). */
    limit: number;
  },
) {
  const client = useQueryClient();
  const key = queryKey(document, variables);
  // The latest events, oldest first: those that came while a read (the first, or a reload) was
  // under way are written into its answer.
  const seen = useRef<T[]>([]);
  const apply = (old: D, items: T[]) => {
    const now = items.reduce((shown, item) => merged(shown, item, list.id, list.limit), list.items(old));
    return now === list.items(old) ? old : list.withItems(old, now);
  };
  const q = useQuery(document, variables, () => {
    const last = seen.current.at(-1);
    return (answer) => apply(answer, seen.current.slice(last ? seen.current.lastIndexOf(last) + 1 : 0));
  });
  useSubscription(subscription, subscriptionVariables, (event) => {
    const item = list.item(event);
    if (!item) return;
    seen.current = [...seen.current.slice(-255), item];
    client.setQueryData<D>(key, (old) => (old === undefined ? old : apply(old, [item])));
  });
  return q;
}

/** `items` with `item` in: replaced in place when newer, first when new (the list kept to `limit`), out when deleted. */
export function merged<T extends Versioned>(items: T[], item: T, id: (item: T) => string, limit: number): T[] {
  const at = items.findIndex((x) => id(x) === id(item));
  if (item.deleted) return at === -1 ? items : items.filter((_, i) => i !== at);
  if (at === -1) return [item, ...items].slice(0, limit);
  if (items[at]!.version >= item.version) return items;
  return items.map((x, i) => (i === at ? item : x));
}
