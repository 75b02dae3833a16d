import { createClient, type Client } from 'graphql-ws';
import { useEffect, useRef, useState } from 'react';
import type { TypedDocumentString } from './generated';

/**
 * Every view is a GraphQL operation through the gateway, with the API key the person signed in
 * with (kept in this tab's session storage, never in a URL). Live views use graphql-ws. The
 * operations are the .graphql files beside the views, typed by `npm run codegen` (generated.ts).
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
export function useQuery<D, V>(document: TypedDocumentString<D, V>, variables: V, deps: unknown[] = []) {
  const [state, setState] = useState<{ data?: D; error?: GraphQLFailure; loading: boolean }>({ loading: true });
  const [n, setN] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    gql(document, variables)
      .then((data) => live && setState({ data, loading: false }))
      .catch((error) => live && setState({ error, loading: false }));
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, n]);
  return { ...state, reload: () => setN((x) => x + 1), setData: (data: D) => setState({ data, loading: false }) };
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
