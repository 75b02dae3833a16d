/** Typed reads of JSON answers for the tests. */

import type { JsonAnswer } from './platform';

/** A GraphQL answer's errors, as the gateway words them. */
export interface GraphQLErrors {
  errors: { message: string; path?: (string | number)[]; extensions: { code: string } & Record<string, unknown> }[];
}

/** The JSON body of a fetch answer, read as the shape the test expects (its assertions check it). */
export async function jsonOf<T>(res: Response): Promise<T> {
  return (await res.json()) as T;
}

/** A fetch answer's status and parsed JSON body, as `rest` gives them. */
export async function answerOf<T = unknown>(res: Response): Promise<JsonAnswer<T>> {
  return { status: res.status, body: (await res.json()) as T };
}
