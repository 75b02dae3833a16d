import type { paths } from './openapi-types';

/**
 * A small client typed by the types openapi-typescript generates from /openapi.json: the path,
 * its parameters, the body and the answer are the document's, so a route whose description is
 * wrong for a client fails to compile here before it fails at run time.
 */

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
type Operation<P extends keyof paths, M extends Method> = NonNullable<paths[P][M]>;
type Content<R> = R extends { content: { 'application/json': infer J } } ? J : never;

export type PathOf<M extends Method> = { [P in keyof paths]: paths[P][M] extends undefined | never ? never : P }[keyof paths];
export type Answer<O> = O extends { responses: infer R } ? { [S in keyof R]: S extends 200 | 201 | 202 ? Content<R[S]> : never }[keyof R] : never;
type Body<O> = O extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
type PathParams<O> = O extends { parameters: { path: infer X } } ? (X extends Record<string, unknown> ? X : never) : never;
type QueryParams<O> = O extends { parameters: { query?: infer X } } ? X : never;

export interface CallOptions<O> {
  params?: PathParams<O>;
  query?: QueryParams<O>;
  body?: Body<O>;
  key?: string;
}

export interface TypedAnswer<O> {
  status: number;
  /** The 2xx answer as the document describes it (an error answer is in the surface's error envelope). */
  body: Answer<O>;
  /** The path as the document names it, to find its schema. */
  template: string;
}

export function typedClient(baseUrl: string, defaultKey: string) {
  return async function call<M extends Method, P extends PathOf<M>>(
    method: M,
    template: P,
    opts: CallOptions<Operation<P, M>> = {},
  ): Promise<TypedAnswer<Operation<P, M>>> {
    const params = (opts.params ?? {}) as Record<string, string>;
    let url = String(template).replace(/\{(\w+)\}/g, (_m, name: string) => encodeURIComponent(params[name] ?? ''));
    const query = Object.entries((opts.query ?? {}) as Record<string, unknown>).filter(([, v]) => v !== undefined);
    if (query.length) url += `?${new URLSearchParams(query.map(([k, v]): [string, string] => [k, String(v)]))}`;
    const res = await fetch(`${baseUrl}${url}`, {
      method: method.toUpperCase(),
      headers: { authorization: `Bearer ${opts.key ?? defaultKey}`, ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
    });
    return { status: res.status, body: (await res.json()) as Answer<Operation<P, M>>, template: String(template) };
  };
}
