import { createClient, type Client } from 'graphql-ws';
import { useEffect, useRef, useState } from 'react';

/**
 * Every view is a GraphQL operation through the gateway, with the API key the person signed in
 * with (kept in this tab's session storage, never in a URL). Live views use graphql-ws.
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

export async function gql<T = any>(query: string, variables: Record<string, unknown> = {}, key = apiKey()): Promise<T> {
  const res = await fetch('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  const body = await res.json();
  if (body.errors?.length) throw new GraphQLFailure(body.errors[0].message, body.errors[0].extensions?.code);
  return body.data as T;
}

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
}

/** A query's data, refetched when `deps` change or `reload()` is called. */
export function useQuery<T = any>(query: string, variables: Record<string, unknown> = {}, deps: unknown[] = []) {
  const [state, setState] = useState<{ data?: T; error?: GraphQLFailure; loading: boolean }>({ loading: true });
  const [n, setN] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    gql<T>(query, variables)
      .then((data) => live && setState({ data, loading: false }))
      .catch((error) => live && setState({ error, loading: false }));
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, n]);
  return { ...state, reload: () => setN((x) => x + 1), setData: (data: T) => setState({ data, loading: false }) };
}

/** Calls `onData` with every event of a subscription while the component is mounted. */
export function useSubscription<T = any>(query: string, variables: Record<string, unknown> | null, onData: (data: T) => void): void {
  const handler = useRef(onData);
  handler.current = onData;
  const key = JSON.stringify(variables);
  useEffect(() => {
    if (!variables) return;
    return socket().subscribe<T>({ query, variables }, { next: (v) => v.data && handler.current(v.data as T), error: () => undefined, complete: () => undefined });
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [query, key]);
}
