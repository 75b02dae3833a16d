import 'reflect-metadata';
import assert from 'node:assert/strict';
import {
  buildClientSchema,
  getIntrospectionQuery,
  getNamedType,
  getNullableType,
  isEnumType,
  isInputObjectType,
  isListType,
  isScalarType,
  parse,
  typeFromAST,
  type GraphQLInputField,
  type GraphQLSchema,
  type IntrospectionQuery,
  type OperationDefinitionNode,
} from 'graphql';
import { surfaces } from '../rest-adapter';
import { toSnake } from '../rest-adapter/case';
import type { Gql, V1 } from './support/answers';
import { startTestPlatform, type TestPlatform } from './support/platform';

/** Field errors as every envelope names them. */
type FieldErrors = { errors?: { field: string }[] };

/** An error answer of any REST surface: `error: {code, details}`, or (feedback, infra) `error: code` beside `details`. */
interface AnyError {
  error?: string | { code?: string; details?: FieldErrors };
  details?: FieldErrors;
}

/**
 * A field of the wrong type is a 400 `validation_error` naming the field, never coerced (a string
 * where a list is expected used to be stored as a one-item list). The table is generated from the
 * route tables: every route whose body is an operation's input, every field of that input, each
 * sent alone with a value of the wrong kind. A new route is covered the day it is added.
 */

let p: TestPlatform;
let schema: GraphQLSchema;

beforeAll(async () => {
  p = await startTestPlatform();
  const res = await p.graphql<Gql<IntrospectionQuery>>(getIntrospectionQuery());
  schema = buildClientSchema(res.body.data);
});
afterAll(async () => {
  await p?.stop();
});

/** A value graphql-js must not accept for `field` (or would coerce), or undefined when any value is valid. */
function wrongValue(field: GraphQLInputField): unknown {
  const type = getNullableType(field.type);
  if (isListType(type)) return 'not a list';
  if (isInputObjectType(type)) return 'not an object';
  if (isEnumType(type)) return 12;
  if (isScalarType(type)) {
    switch (type.name) {
      case 'Int':
      case 'Float':
        return '12';
      case 'Boolean':
        return 'true';
      case 'String':
      case 'ID':
        return 12;
      case 'JSONObject':
        return 'not an object';
      default:
        return undefined; // JSON and other open scalars accept any value by design
    }
  }
  return undefined;
}

interface Case {
  surface: string;
  method: string;
  path: string;
  field: string;
  body: Record<string, unknown>;
}

function cases(): Case[] {
  const out: Case[] = [];
  const anId = '00000000-0000-4000-8000-000000000000';
  for (const surface of surfaces) {
    for (const route of surface.routes) {
      if (!['POST', 'PUT', 'PATCH'].includes(route.method) || !route.variables) continue;
      const sentinel = {};
      const params = new Proxy({}, { get: () => anId }) as Record<string, string>;
      let variables: Record<string, unknown>;
      try {
        variables = route.variables({ params, query: {}, body: sentinel });
      } catch {
        continue; // the route reshapes its body itself: its own tests cover its fields
      }
      const bodyVariable = Object.entries(variables).find(([, v]) => v === sentinel)?.[0];
      if (!bodyVariable) continue;
      const op = parse(route.operation).definitions.find((d): d is OperationDefinitionNode => d.kind === 'OperationDefinition')!;
      const def = op.variableDefinitions!.find((d) => d.variable.name.value === bodyVariable)!;
      const input = getNamedType(typeFromAST(schema, def.type)!);
      if (!isInputObjectType(input)) continue;
      const path = surface.prefix + route.path.replace(/:\w+/g, anId);
      for (const field of Object.values(input.getFields())) {
        const wrong = wrongValue(field);
        if (wrong === undefined) continue;
        const name = surface.snakeCase ? toSnake(field.name) : field.name;
        out.push({ surface: surface.name, method: route.method, path, field: name, body: { [name]: wrong } });
      }
    }
  }
  return out;
}

describe('wrong types on every documented body field of every REST surface', () => {
  test('each is a 400 validation_error naming the field; nothing is coerced or stored', async () => {
    const table = cases();
    assert.ok(table.length > 100, `the table covers the route tables (${table.length} cases)`);
    const covered = new Set(table.map((c) => c.surface));
    for (const s of ['v1', 'control-plane-api', 'promptlib-api', 'engine-api']) assert.ok(covered.has(s), `surface ${s} is in the table`);
    const failures: string[] = [];
    for (let i = 0; i < table.length; i += 16) {
      await Promise.all(
        table.slice(i, i + 16).map(async (c) => {
          const res = await p.rest<AnyError>(c.method, c.path, { body: c.body });
          // Every envelope: `error: {code, details}`, or (feedback, infra) `error: code` beside `details`;
          // infra answers its documented `invalid_request` for every field problem (details.reason says which kind).
          const details = res.body?.details ?? (typeof res.body?.error === 'object' ? res.body.error.details : undefined);
          const text = typeof res.body?.error === 'string' ? res.body.error : res.body?.error?.code;
          const code = text === 'invalid_request' ? 'validation_error' : text;
          const named = details?.errors?.some((e) => e.field === c.field);
          if (res.status !== 400 || code !== 'validation_error' || !named) {
            failures.push(`${c.method} ${c.path} ${JSON.stringify(c.body)} -> ${res.status} ${JSON.stringify(res.body?.error ?? res.body)}`);
          }
        }),
      );
    }
    assert.deepEqual(failures, []);
  });

  test('the case the issue names: "variables": "x" on POST /v1/promptlib/prompts is refused, not stored as a list', async () => {
    const res = await p.rest<V1<never>>('POST', '/v1/promptlib/prompts', {
      body: { name: 'coerced', description: 'd', template: 'Hello {{x}}', variables: 'x' },
    });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body.error.details.errors, [{ field: 'variables', message: 'must be an array', reason: 'invalid_type' }]);
    assert.equal((await p.rest('GET', '/v1/promptlib/prompts/coerced')).status, 404);
  });
});
