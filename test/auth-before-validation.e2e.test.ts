import 'reflect-metadata';
import assert from 'node:assert/strict';
import { parse, Kind, type OperationDefinitionNode } from 'graphql';
import { getMetadataStorage } from 'type-graphql';
import { surfaces } from '../rest-adapter';
import type { RouteDef } from '../rest-adapter/route';
import { PUBLIC } from '../kernel/auth/principal';
import { startTestPlatform, type TestPlatform } from './support/platform';

/**
 * Every REST route whose operation needs a caller answers a request without a credential with
 * 401 in its surface's envelope, whatever the body: the caller learns it must authenticate, not
 * what its body lacks. Routes open to anyone say so themselves (@Authorized(PUBLIC) on their
 * operation) and are left out; the rows come from the route tables, so a new route is covered.
 */

let p: TestPlatform;
const ID = '00000000-0000-4000-8000-000000000000';

beforeAll(async () => {
  // Every route is called anonymously from one address: above the default per-address limit.
  p = await startTestPlatform({ ANONYMOUS_RATE_LIMIT: '100000' });
});
afterAll(async () => {
  await p?.stop();
});

/** The operation's root field declares @Authorized(PUBLIC) in its subgraph. */
function isPublic(route: RouteDef): boolean {
  const op = parse(route.operation).definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)!;
  const root = op.selectionSet.selections[0]!;
  assert.equal(root.kind, Kind.FIELD);
  return getMetadataStorage().authorizedFields.some((a) => a.fieldName === root.name.value && a.roles.includes(PUBLIC));
}

/** The fields of every surface's error envelope that the checks read; any may be missing. */
interface Envelope {
  requestId?: unknown;
  details?: unknown;
  message?: unknown;
  success?: unknown;
  error?: string | { message?: unknown; code?: string };
  meta?: { requestId?: unknown };
  metadata?: { request_id?: unknown };
}

/** The error code a client reads in each surface's envelope (and that the envelope has its shape). */
function codeIn(surface: string, body: Envelope): string | undefined {
  const error = body.error;
  if (surface === 'infra')
    return typeof body.requestId === 'string' && body.details && typeof body.message === 'string' && typeof error === 'string' ? error : undefined;
  if (surface === 'feedback') return body.success === false && typeof body.message === 'string' && typeof error === 'string' ? error : undefined;
  if (body.success !== false || typeof error !== 'object' || typeof error.message !== 'string') return undefined;
  if (surface === 'v1' && !body.meta?.requestId) return undefined;
  if (['control-plane-api', 'promptlib-api', 'engine-api'].includes(surface) && !body.metadata?.request_id) return undefined;
  return error.code;
}

const expectedCode = (surface: string) => (surface === 'infra' ? 'authentication_failed' : 'missing_authorization');

/** The answer's status, its body (parsed JSON, or the text when it is not JSON) and that body read as an envelope. */
async function anonymous(method: string, path: string, raw?: string): Promise<{ status: number; body: unknown; envelope: Envelope }> {
  const res = await fetch(p.url + path, { method, headers: raw !== undefined ? { 'content-type': 'application/json' } : {}, body: raw });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // kept as text for the failure message
  }
  return { status: res.status, body, envelope: typeof body === 'object' && body !== null ? (body as Envelope) : {} };
}

describe('authentication before validation', () => {
  test('every authenticated route answers an anonymous, invalid request with 401 in its envelope', async () => {
    const failures: string[] = [];
    let checked = 0;
    let open = 0;
    for (const surface of surfaces) {
      for (const route of surface.routes) {
        if (isPublic(route)) {
          open += 1;
          continue;
        }
        checked += 1;
        // Path parameters that are not ids, a query value of the wrong type, and a body of the wrong type.
        const path = `${surface.prefix}${route.path.replace(/:\w+/g, 'not-an-id')}?limit=many&page=first`;
        const raw = ['POST', 'PUT', 'PATCH'].includes(route.method) ? '[1, "wrong"]' : undefined;
        const res = await anonymous(route.method, path, raw);
        if (res.status !== 401 || codeIn(surface.name, res.envelope) !== expectedCode(surface.name)) {
          failures.push(`${surface.name} ${route.method} ${route.path}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
        }
      }
    }
    assert.deepEqual(failures, []);
    assert.ok(checked > 150, `${checked} authenticated routes`);
    assert.ok(open > 5 && open < 20, `${open} public routes`);
  });

  test('an anonymous comment without its body is 401, not 400; malformed JSON too', async () => {
    const path = `/feedback/api/v1/requests/${ID}/comments`;
    const empty = await anonymous('POST', path, '{}');
    assert.equal(empty.status, 401, JSON.stringify(empty.body));
    assert.equal(empty.envelope.success, false);
    assert.equal(empty.envelope.error, 'missing_authorization');
    const broken = await anonymous('POST', path, '{"body":');
    assert.equal(broken.status, 401, JSON.stringify(broken.body));
    assert.equal(broken.envelope.error, 'missing_authorization');
  });

  test('public routes still validate anonymous requests: 400 in the envelope', async () => {
    const login = await anonymous('POST', '/infra/api/v1/auth/login', '{}');
    assert.equal(login.status, 400, JSON.stringify(login.body));
    assert.equal(login.envelope.error, 'invalid_request');
    const submit = await anonymous('POST', `/feedback/api/v1/projects/${ID}/requests`, '[]');
    assert.equal(submit.status, 400, JSON.stringify(submit.body));
    assert.equal(submit.envelope.error, 'validation_error');
  });

  test('a wrong credential is still 401 before validation', async () => {
    const res = await fetch(`${p.url}/feedback/api/v1/requests/${ID}/comments`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer not-a-key' },
      body: '{}',
    });
    assert.equal(res.status, 401);
  });
});
