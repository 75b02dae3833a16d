import { Kind, parse, type OperationDefinitionNode } from 'graphql';
import { convertKeys, toSnake } from './case';
import type { OutputOptions, RestRequest, RouteDef } from './route';

/**
 * How a route's answer is made from its operation's data — the one mechanism of every surface.
 * Most answers are the operation's root field as selected: renames are GraphQL aliases in the
 * selection (`reason: pauseReason`), key order is selection order, and the route's options say
 * whether null fields are dropped and keys snake_cased. A route declares `pick` only when the
 * answer really is another shape (an envelope that nests, a computed field, a state-shaped object).
 */

/** Drops the keys whose value is null or undefined (fields that do not apply in this state). */
export function omitNulls<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null && v !== undefined)) as Partial<T>;
}

/** Applies the output options to an answer. */
export function shapeOutput(value: unknown, options: OutputOptions): unknown {
  let out = value;
  if (options.omitNulls) out = Array.isArray(out) ? out.map(dropNullsOf) : dropNullsOf(out);
  if (options.snakeCase) out = convertKeys(out, toSnake, new Set(options.opaque ?? []));
  return out;
}

const dropNullsOf = (v: unknown) => (v !== null && typeof v === 'object' && !Array.isArray(v) ? omitNulls(v) : v);

/**
 * The response key of an operation's only root field (its alias when it has one). A route without
 * `pick` answers that field's value, so an operation with several root fields must say how to
 * combine them: this refuses it when the routes are declared, not per request.
 */
export function rootKey(operation: string): string {
  const op = parse(operation).definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  const fields = op?.selectionSet.selections ?? [];
  const only = fields[0];
  if (fields.length !== 1 || only?.kind !== Kind.FIELD) throw new Error('an operation without `pick` must select exactly one root field');
  return (only.alias ?? only.name).value;
}

/** The function that turns a route's operation data into its answer: built once per route. */
export function routeOutput(route: RouteDef): (data: Record<string, unknown> | null | undefined, req: RestRequest) => unknown {
  let select = route.pick;
  if (!select) {
    let key: string;
    try {
      key = rootKey(route.operation);
    } catch (err) {
      throw new Error(`Route ${route.method} ${route.path}: ${(err as Error).message}`);
    }
    select = (data: Record<string, unknown>) => data[key];
  }
  const pick = select;
  return (data, req) => shapeOutput(pick(data, req), route);
}
