/** Typed reads of JSON answers for the tests. */

/** A GraphQL answer's errors, as the gateway words them. */
export interface GraphQLErrors {
  errors: { message: string; path?: (string | number)[]; extensions: { code: string } & Record<string, unknown> }[];
}

/** The JSON body of a fetch answer, read as the shape the test expects (its assertions check it). */
export async function jsonOf<T>(res: Response): Promise<T> {
  return (await res.json()) as T;
}
