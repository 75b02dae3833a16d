import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { keyIdOf } from '../subgraphs/engine/credentials';
import { readBody } from './support/net';
import type { Gql, V1 } from './support/answers';
import type { Execution, Workflow, WorkflowList, WorkflowSummary } from './support/engine-answers';
import { startTestPlatform, type TestPlatform } from './support/platform';

/**
 * n8n credentials end to end: created, listed and deleted over REST and GraphQL under
 * credential:read / credential:write, sealed in the database, resolved by id then name when an
 * n8n export is imported (refused naming a missing one), applied by the HTTP Request node at its
 * versions (v1/v2 named authentications, v3+ generic and "predefined" generic types) against a
 * local receiver, OAuth2 client-credentials and authorization-code against a local OAuth server
 * (tokens refreshed), and key rotation across restarts. Secrets never appear in answers, run
 * data, exports or the log.
 */

const KEY_A = randomBytes(32).toString('base64url');
const KEY_B = randomBytes(32).toString('base64url');
const ENV = { OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true', LOG_LEVEL: 'debug' };

const SECRETS = {
  header: `hdr-${randomBytes(12).toString('hex')}`,
  query: `qry-${randomBytes(12).toString('hex')}`,
  password: `pwd-${randomBytes(12).toString('hex')}`,
  bearer: `brr-${randomBytes(12).toString('hex')}`,
  custom: `cst-${randomBytes(12).toString('hex')}`,
  clientSecret: `cls-${randomBytes(12).toString('hex')}`,
  hmac: `hmc-${randomBytes(12).toString('hex')}`,
};

// ---------------------------------------------------------------------------------------------
// Local servers: a resource server that records what arrives, an OAuth2 server

interface Seen {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

const seen: Seen[] = [];
/** Access tokens the OAuth server issued and the resource server accepts. */
const validTokens = new Set<string>();
/** Every access and refresh token issued, to look for in what clients see. */
const issued: string[] = [];
const tokenRequests: Record<string, string>[] = [];
const codes = new Map<string, string>();
let tokenCount = 0;
let expiresIn = 3600;

function startServer(handler: (req: http.IncomingMessage, body: string, res: http.ServerResponse) => void): Promise<{ url: string; server: http.Server }> {
  const server = http.createServer((req, res) => void readBody(req).then((raw) => handler(req, raw, res)));
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server })));
}

const json = (res: http.ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

function resource(req: http.IncomingMessage, body: string, res: http.ServerResponse) {
  seen.push({ path: req.url ?? '', headers: req.headers, body });
  if ((req.url ?? '').startsWith('/protected')) {
    const token = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
    if (!validTokens.has(token)) return json(res, 401, { error: 'invalid_token' });
  }
  json(res, 200, { ok: true });
}

function oauth(req: http.IncomingMessage, body: string, res: http.ServerResponse) {
  const url = new URL(req.url ?? '/', 'http://x');
  if (url.pathname === '/authorize') {
    // The person consents at once: back to the redirect URI with a code and the state.
    const code = `code-${randomBytes(8).toString('hex')}`;
    codes.set(code, url.searchParams.get('redirect_uri') ?? '');
    const back = new URL(url.searchParams.get('redirect_uri')!);
    back.searchParams.set('code', code);
    back.searchParams.set('state', url.searchParams.get('state') ?? '');
    res.writeHead(302, { location: back.toString() });
    return res.end();
  }
  const form = Object.fromEntries(new URLSearchParams(body));
  const basic = Buffer.from(String(req.headers.authorization ?? '').replace(/^Basic /, ''), 'base64').toString();
  tokenRequests.push({ ...form, client: basic || `${form.client_id}:${form.client_secret}` });
  if ((basic || `${form.client_id}:${form.client_secret}`) !== `client-1:${SECRETS.clientSecret}`) return json(res, 401, { error: 'invalid_client' });
  const issue = (refresh: boolean) => {
    const access = `at-${++tokenCount}-${randomBytes(6).toString('hex')}`;
    const refreshToken = `rt-${tokenCount}-${randomBytes(6).toString('hex')}`;
    validTokens.add(access);
    issued.push(access, refreshToken);
    return json(res, 200, { access_token: access, token_type: 'Bearer', expires_in: expiresIn, ...(refresh ? { refresh_token: refreshToken } : {}) });
  };
  if (form.grant_type === 'client_credentials') return issue(false);
  if (form.grant_type === 'authorization_code') {
    if (!codes.has(form.code!) || codes.get(form.code!) !== form.redirect_uri) return json(res, 400, { error: 'invalid_grant' });
    codes.delete(form.code!);
    return issue(true);
  }
  if (form.grant_type === 'refresh_token') return form.refresh_token?.startsWith('rt-') ? issue(true) : json(res, 400, { error: 'invalid_grant' });
  json(res, 400, { error: 'unsupported_grant_type' });
}

// ---------------------------------------------------------------------------------------------

let p: TestPlatform;
let api: { url: string; server: http.Server };
let auth: { url: string; server: http.Server };
let writer: string;
let reader: string;
let log = '';
const realWrite = process.stderr.write.bind(process.stderr);

beforeAll(async () => {
  // Every log line of the platforms this file starts, to look for secrets in.
  process.stderr.write = ((chunk: unknown, ...rest: unknown[]) => {
    log += String(chunk);
    return (realWrite as (...a: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stderr.write;
  api = await startServer(resource);
  auth = await startServer(oauth);
  p = await startTestPlatform({ ...ENV, CREDENTIALS_KEY: KEY_A });
  writer = (
    await p.createKey({ service: 'engine', permissions: ['workflow:read', 'workflow:write', 'workflow:execute', 'credential:read', 'credential:write'] })
  ).key;
  reader = (await p.createKey({ service: 'engine', permissions: ['workflow:read', 'credential:read'] })).key;
});

afterAll(async () => {
  process.stderr.write = realWrite;
  await p?.stop();
  api?.server.close();
  auth?.server.close();
});

interface Credential {
  credentialId: string;
  name: string;
  type: string;
  settings: Record<string, unknown>;
  connectedAt: string | null;
}

const created: Record<string, { credentialId: string; name: string }> = {};

async function createCredential(name: string, type: string, data: Record<string, string>, key = writer) {
  const res = await p.rest<V1<Credential>>('POST', '/v1/engine/credentials', { key, body: { name, type, data } });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  created[name] = res.body.data;
  return res.body.data;
}

const node = (name: string, n: Record<string, unknown>, x: number) => ({ id: name, name, position: [x, 0], ...n });

/** An n8n export whose HTTP Request node authenticates with `credentials`, called at `path`. */
function exportWith(name: string, http: Record<string, unknown>) {
  return {
    name,
    nodes: [
      node('Start', { type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, parameters: {} }, 0),
      node('Call', { type: 'n8n-nodes-base.httpRequest', ...http }, 200),
    ],
    connections: { Start: { main: [[{ node: 'Call', type: 'main', index: 0 }]] } },
    settings: { executionOrder: 'v1' },
  };
}

async function importAndRun(workflow: unknown): Promise<{ workflowId: string; execution: Execution }> {
  const imported = await p.rest<V1<WorkflowSummary>>('POST', '/v1/engine/workflows/import', { key: writer, body: { workflow } });
  assert.equal(imported.status, 201, JSON.stringify(imported.body));
  const workflowId = imported.body.data.workflowId;
  const run = await p.rest<V1<Execution>>('POST', `/v1/engine/workflows/${workflowId}/execute`, { key: writer, body: { mode: 'sync', data: {} } });
  assert.equal(run.status, 200, JSON.stringify(run.body));
  return { workflowId, execution: run.body.data };
}

function assertNoSecret(what: string, value: unknown) {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  for (const [kind, secret] of Object.entries(SECRETS)) assert.ok(!text.includes(secret), `${what} holds the ${kind} secret`);
  for (const token of issued) assert.ok(!text.includes(token), `${what} holds an access token`);
}

describe('the store', () => {
  it('refuses a key without credential:write, and one without credential:read', async () => {
    const denied = await p.rest<V1<Credential>>('POST', '/v1/engine/credentials', {
      key: reader,
      body: { name: 'x', type: 'httpBearerAuth', data: { token: 'nope' } },
    });
    assert.equal(denied.status, 403, JSON.stringify(denied.body));
    assert.equal(denied.body.error.code, 'insufficient_permissions');
    assert.equal(denied.body.error.details.required, 'credential:write');
    const gql = await p.graphql<Gql<unknown>>(
      'mutation { createCredential(input: {name: "x", type: "httpBearerAuth", data: {token: "nope"}}) { credentialId } }',
      {},
      reader,
    );
    assert.equal(gql.body.errors?.[0].extensions.code, 'insufficient_permissions');
    const blind = (await p.createKey({ service: 'engine', permissions: ['workflow:read'] })).key;
    const list = await p.rest<V1<{ credentials: Credential[]; pagination: { total: number } }>>('GET', '/v1/engine/credentials', { key: blind });
    assert.equal(list.status, 403);
    assert.equal(list.body.error.details.required, 'credential:read');
  });

  it('checks the data against the type, naming the field', async () => {
    const unknown = await p.rest<V1<Credential>>('POST', '/v1/engine/credentials', { key: writer, body: { name: 'bad', type: 'slackApi', data: {} } });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.error.code, 'validation_error');
    assert.match(unknown.body.error.message, /type: must be one of httpHeaderAuth/);
    const missing = await p.rest<V1<Credential>>('POST', '/v1/engine/credentials', {
      key: writer,
      body: { name: 'bad', type: 'httpHeaderAuth', data: { name: 'X-Key' } },
    });
    assert.equal(missing.status, 400);
    assert.deepEqual(
      missing.body.error.details.errors?.map((e) => e.field),
      ['data.value'],
    );
    const list = await p.rest<V1<{ credentials: Credential[]; pagination: { total: number } }>>('GET', '/v1/engine/credentials', { key: reader });
    assert.equal(list.body.data.pagination.total, 0, 'nothing was written');
  });

  it('creates each type and answers without the secrets, in REST and GraphQL', async () => {
    const header = await createCredential('Header key', 'httpHeaderAuth', { name: 'X-Api-Key', value: SECRETS.header });
    assert.equal(header.type, 'httpHeaderAuth');
    assert.deepEqual(header.settings, { name: 'X-Api-Key' });
    await createCredential('Query key', 'httpQueryAuth', { name: 'api_key', value: SECRETS.query });
    await createCredential('Basic login', 'httpBasicAuth', { user: 'ann', password: SECRETS.password });
    await createCredential('Bearer token', 'httpBearerAuth', { token: SECRETS.bearer });
    await createCredential('Custom auth', 'httpCustomAuth', {
      json: JSON.stringify({ headers: { 'X-Custom': SECRETS.custom }, qs: { tenant: 'acme' }, body: { signature: SECRETS.custom } }),
    });
    const again = await p.rest<V1<Credential>>('POST', '/v1/engine/credentials', {
      key: writer,
      body: { name: 'Header key', type: 'httpBearerAuth', data: { token: 't' } },
    });
    assert.equal(again.status, 409);
    assert.equal(again.body.error.details.existing_id, header.credentialId);

    const list = await p.rest<V1<{ credentials: Credential[]; pagination: { total: number } }>>('GET', '/v1/engine/credentials?limit=50', { key: reader });
    assert.equal(list.status, 200);
    assert.equal(list.body.data.pagination.total, 5);
    assertNoSecret('the list', list.body);
    const one = await p.rest<V1<Credential>>('GET', `/v1/engine/credentials/${header.credentialId}`, { key: reader });
    assert.equal(one.body.data.name, 'Header key');
    const gql = await p.graphql<Gql<{ credentials: unknown }>>(
      '{ credentials(type: "httpBasicAuth") { credentials { name type settings } pagination { total } } }',
      {},
      reader,
    );
    assert.deepEqual(gql.body.data.credentials, {
      credentials: [{ name: 'Basic login', type: 'httpBasicAuth', settings: { user: 'ann' } }],
      pagination: { total: 1 },
    });
  });

  it('keeps the data encrypted: the row holds ciphertext under the key’s id, no plain secret', async () => {
    const rows: { name: string; data_enc: Buffer; key_id: string; settings: unknown }[] = await p.platform.kernel.db.query(
      `SELECT name, data_enc, key_id, settings FROM engine.credentials`,
    );
    assert.equal(rows.length, 5);
    for (const row of rows) {
      assert.equal(row.key_id, keyIdOf(KEY_A));
      assertNoSecret(`the row of ${row.name}`, row.data_enc.toString('latin1') + row.data_enc.toString('base64') + row.data_enc.toString('hex'));
      assertNoSecret(`the settings of ${row.name}`, row.settings);
    }
  });
});

describe('import and the HTTP Request node', () => {
  it('refuses an export naming a credential that does not exist, naming it', async () => {
    const res = await p.rest<V1<WorkflowSummary>>('POST', '/v1/engine/workflows/import', {
      key: writer,
      body: {
        workflow: exportWith('Missing', {
          typeVersion: 4.2,
          parameters: { url: `${api.url}/x`, authentication: 'genericCredentialType', genericAuthType: 'httpHeaderAuth' },
          credentials: { httpHeaderAuth: { id: '77', name: 'Production key' } },
        }),
      },
    });
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.equal(res.body.error.code, 'CREDENTIAL_MISSING');
    assert.match(res.body.error.message, /Node "Call" uses the httpHeaderAuth credential "Production key" \(id 77\), which does not exist here/);
    assert.deepEqual(res.body.error.details, { node: 'Call', type: 'httpHeaderAuth', credentialId: '77', credentialName: 'Production key' });
    const none = await p.rest<V1<WorkflowList>>('GET', '/v1/engine/workflows', { key: writer });
    assert.equal(none.body.data.pagination.total, 0, 'nothing was saved');
  });

  it('authenticates at every version: v1 header, v2 basic, v3 query, v4 bearer ("predefined"), v4 custom', async () => {
    const cases: { label: string; http: Record<string, unknown>; check: (s: Seen) => void }[] = [
      {
        label: 'v1 headerAuth (resolved by name: the export carries n8n’s id)',
        http: {
          typeVersion: 1,
          parameters: { url: `${api.url}/v1`, authentication: 'headerAuth' },
          credentials: { httpHeaderAuth: { id: '3', name: 'Header key' } },
        },
        check: (s) => assert.equal(s.headers['x-api-key'], SECRETS.header),
      },
      {
        label: 'v2 basicAuth',
        http: {
          typeVersion: 2,
          parameters: { url: `${api.url}/v2`, authentication: 'basicAuth' },
          credentials: { httpBasicAuth: { id: '4', name: 'Basic login' } },
        },
        check: (s) => assert.equal(s.headers.authorization, `Basic ${Buffer.from(`ann:${SECRETS.password}`).toString('base64')}`),
      },
      {
        label: 'v3 generic httpQueryAuth (resolved by our id)',
        http: {
          typeVersion: 3,
          parameters: { url: `${api.url}/v3`, authentication: 'genericCredentialType', genericAuthType: 'httpQueryAuth' },
          credentials: { httpQueryAuth: { id: created['Query key']!.credentialId, name: 'renamed in n8n' } },
        },
        check: (s) => assert.equal(new URL(s.path, 'http://x').searchParams.get('api_key'), SECRETS.query),
      },
      {
        label: 'v4.2 predefined httpBearerAuth',
        http: {
          typeVersion: 4.2,
          parameters: { url: `${api.url}/v4`, authentication: 'predefinedCredentialType', nodeCredentialType: 'httpBearerAuth' },
          credentials: { httpBearerAuth: { id: '9', name: 'Bearer token' } },
        },
        check: (s) => assert.equal(s.headers.authorization, `Bearer ${SECRETS.bearer}`),
      },
      {
        label: 'v4.2 generic httpCustomAuth with a JSON body',
        http: {
          typeVersion: 4.2,
          parameters: {
            method: 'POST',
            url: `${api.url}/custom`,
            authentication: 'genericCredentialType',
            genericAuthType: 'httpCustomAuth',
            sendBody: true,
            specifyBody: 'json',
            jsonBody: '{"order": 1}',
          },
          credentials: { httpCustomAuth: { id: '11', name: 'Custom auth' } },
        },
        check: (s) => {
          assert.equal(s.headers['x-custom'], SECRETS.custom);
          assert.equal(new URL(s.path, 'http://x').searchParams.get('tenant'), 'acme');
          assert.deepEqual(JSON.parse(s.body), { order: 1, signature: SECRETS.custom });
        },
      },
    ];
    for (const c of cases) {
      seen.length = 0;
      const { workflowId, execution } = await importAndRun(exportWith(c.label, c.http));
      assert.equal(execution.status, 'success', `${c.label}: ${JSON.stringify(execution)}`);
      assert.equal(seen.length, 1, c.label);
      c.check(seen[0]!);
      // What a client reads back: the references, never the secrets.
      const wf = await p.rest<V1<Omit<Workflow, 'nodes'> & { nodes: { name: string; credentials: Record<string, { id: string; name: string }> }[] }>>(
        'GET',
        `/v1/engine/workflows/${workflowId}`,
        { key: writer },
      );
      const call = wf.body.data.nodes.find((n) => n.name === 'Call')!;
      const [type] = Object.keys(call.credentials);
      assert.equal(call.credentials[type!].id, created[call.credentials[type!].name]!.credentialId, c.label);
      assertNoSecret(`${c.label}: the workflow`, wf.body);
      const exported = await p.rest('GET', `/v1/engine/workflows/${workflowId}/export`, { key: writer });
      assertNoSecret(`${c.label}: the export`, exported.body);
      const full = await p.rest<V1<Execution>>('GET', `/v1/engine/executions/${execution.executionId}?includeData=true`, { key: writer });
      assert.ok(full.body.data.nodeData.length > 0);
      assertNoSecret(`${c.label}: the run data`, full.body);
    }
  });

  it('Crypto 2 signs with the secret of its crypto credential, which stays out of the run data', async () => {
    await createCredential('Signing', 'crypto', { hmacSecret: SECRETS.hmac });
    const workflow = {
      name: 'Crypto 2',
      nodes: [
        node('Start', { type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, parameters: {} }, 0),
        node(
          'Sign',
          {
            type: 'n8n-nodes-base.crypto',
            typeVersion: 2,
            parameters: { action: 'hmac', type: 'SHA256', value: 'order-42', dataPropertyName: 'signature' },
            credentials: { crypto: { id: '30', name: 'Signing' } },
          },
          200,
        ),
      ],
      connections: { Start: { main: [[{ node: 'Sign', type: 'main', index: 0 }]] } },
      settings: { executionOrder: 'v1' },
    };
    const { execution } = await importAndRun(workflow);
    assert.equal(execution.status, 'success', JSON.stringify(execution));
    const expected = createHmac('sha256', SECRETS.hmac).update('order-42').digest('hex');
    assert.deepEqual(execution.result.items, [{ signature: expected }]);
    const full = await p.rest<V1<Execution>>('GET', `/v1/engine/executions/${execution.executionId}?includeData=true`, { key: writer });
    assertNoSecret('the Crypto run data', full.body);
  });

  it('refuses an authentication with no equivalent, naming the type', async () => {
    const res = await p.rest<V1<WorkflowSummary>>('POST', '/v1/engine/workflows/import', {
      key: writer,
      body: {
        workflow: exportWith('Slack', {
          typeVersion: 4.2,
          parameters: { url: `${api.url}/x`, authentication: 'predefinedCredentialType', nodeCredentialType: 'slackApi' },
          credentials: { slackApi: { id: '1', name: 'Slack' } },
        }),
      },
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'WORKFLOW_INVALID');
    assert.match(res.body.error.message, /the credential type "slackApi" is not supported/);
  });
});

describe('OAuth2', () => {
  it('client credentials: a token fetched once, used, and renewed when the server refuses it', async () => {
    await createCredential('Machine', 'oAuth2Api', {
      grantType: 'clientCredentials',
      accessTokenUrl: `${auth.url}/token`,
      clientId: 'client-1',
      clientSecret: SECRETS.clientSecret,
      scope: 'read',
    });
    tokenRequests.length = 0;
    const workflow = exportWith('Machine call', {
      typeVersion: 4.2,
      parameters: { url: `${api.url}/protected/cc`, authentication: 'genericCredentialType', genericAuthType: 'oAuth2Api' },
      credentials: { oAuth2Api: { id: '20', name: 'Machine' } },
    });
    const { workflowId, execution } = await importAndRun(workflow);
    assert.equal(execution.status, 'success', JSON.stringify(execution));
    assert.deepEqual(
      tokenRequests.map((r) => [r.grant_type, r.scope, r.client]),
      [['client_credentials', 'read', `client-1:${SECRETS.clientSecret}`]],
    );
    const again = await p.rest<V1<Execution>>('POST', `/v1/engine/workflows/${workflowId}/execute`, { key: writer, body: { mode: 'sync', data: {} } });
    assert.equal(again.body.data.status, 'success');
    assert.equal(tokenRequests.length, 1, 'the stored token is used while it is valid');
    validTokens.clear(); // the server forgets every token: the next call is a 401
    const renewed = await p.rest<V1<Execution>>('POST', `/v1/engine/workflows/${workflowId}/execute`, { key: writer, body: { mode: 'sync', data: {} } });
    assert.equal(renewed.body.data.status, 'success', JSON.stringify(renewed.body));
    assert.equal(tokenRequests.length, 2);
    const listed = await p.rest<V1<Credential>>('GET', `/v1/engine/credentials/${created.Machine!.credentialId}`, { key: reader });
    assert.ok(listed.body.data.connectedAt);
    assert.deepEqual(listed.body.data.settings, {
      grantType: 'clientCredentials',
      accessTokenUrl: `${auth.url}/token`,
      clientId: 'client-1',
      scope: 'read',
      authentication: 'header',
    });
    assertNoSecret('the OAuth2 credential', listed.body);
  });

  it('authorization code: consent once through the callback, then a refresh of an expired token', async () => {
    const cred = await createCredential('Person', 'oAuth2Api', {
      grantType: 'authorizationCode',
      authUrl: `${auth.url}/authorize`,
      accessTokenUrl: `${auth.url}/token`,
      clientId: 'client-1',
      clientSecret: SECRETS.clientSecret,
      authentication: 'body',
      scope: 'profile',
    });
    const workflow = exportWith('Person call', {
      typeVersion: 3,
      parameters: { url: `${api.url}/protected/ac`, authentication: 'genericCredentialType', genericAuthType: 'oAuth2Api' },
      credentials: { oAuth2Api: { id: '21', name: 'Person' } },
    });
    // Before consent: the run fails naming the credential and what to do.
    const early = await importAndRun(workflow);
    assert.equal(early.execution.status, 'error');
    assert.match(early.execution.error.message, /The oAuth2Api credential "Person" is not connected/);

    const start = await p.rest<V1<{ authorizationUrl: string }>>('POST', `/v1/engine/credentials/${cred.credentialId}/authorize`, { key: writer });
    assert.equal(start.status, 200, JSON.stringify(start.body));
    const consent = new URL(start.body.data.authorizationUrl);
    assert.equal(consent.origin + consent.pathname, `${auth.url}/authorize`);
    assert.equal(consent.searchParams.get('redirect_uri'), `${p.url}/v1/engine/credentials/oauth2/callback`);
    assert.equal(consent.searchParams.get('scope'), 'profile');
    // The person's browser: the consent page redirects to the platform's callback (no platform key).
    const redirected = await fetch(consent, { redirect: 'manual' });
    assert.equal(redirected.status, 302);
    expiresIn = 10; // below the 30 s margin: the next use refreshes it first
    tokenRequests.length = 0;
    const callback = await p.rest<V1<Credential>>(
      'GET',
      new URL(redirected.headers.get('location')!).pathname + new URL(redirected.headers.get('location')!).search,
      {
        key: null,
      },
    );
    assert.equal(callback.status, 200, JSON.stringify(callback.body));
    assert.equal(callback.body.data.credentialId, cred.credentialId);
    assert.ok(callback.body.data.connectedAt);
    assertNoSecret('the callback answer', callback.body);
    assert.deepEqual(
      tokenRequests.map((r) => [r.grant_type, r.client]),
      [['authorization_code', `client-1:${SECRETS.clientSecret}`]],
    );
    const replay = await p.rest<V1<never>>('GET', new URL(redirected.headers.get('location')!).pathname + new URL(redirected.headers.get('location')!).search, {
      key: null,
    });
    assert.equal(replay.status, 400, 'a state is used once');

    expiresIn = 3600;
    const run = await p.rest<V1<Execution>>('POST', `/v1/engine/workflows/${early.workflowId}/execute`, { key: writer, body: { mode: 'sync', data: {} } });
    assert.equal(run.body.data.status, 'success', JSON.stringify(run.body));
    assert.deepEqual(
      tokenRequests.map((r) => r.grant_type),
      ['authorization_code', 'refresh_token'],
      'the expiring token was refreshed before use',
    );
    // The refreshed token was stored: the next run uses it without asking again.
    const next = await p.rest<V1<Execution>>('POST', `/v1/engine/workflows/${early.workflowId}/execute`, { key: writer, body: { mode: 'sync', data: {} } });
    assert.equal(next.body.data.status, 'success');
    assert.equal(tokenRequests.length, 2);
    // Refused by the resource server (revoked): refreshed with the refresh token, and retried.
    validTokens.clear();
    const retried = await p.rest<V1<Execution>>('POST', `/v1/engine/workflows/${early.workflowId}/execute`, { key: writer, body: { mode: 'sync', data: {} } });
    assert.equal(retried.body.data.status, 'success', JSON.stringify(retried.body));
    assert.deepEqual(
      tokenRequests.map((r) => r.grant_type),
      ['authorization_code', 'refresh_token', 'refresh_token'],
    );
  });
});

describe('deletion, rotation and the log', () => {
  it('deletes a credential: gone from the list, and a workflow using it fails naming it', async () => {
    const { workflowId } = await importAndRun(
      exportWith('Doomed', {
        typeVersion: 4.2,
        parameters: { url: `${api.url}/doomed`, authentication: 'genericCredentialType', genericAuthType: 'httpBearerAuth' },
        credentials: { httpBearerAuth: { id: '5', name: 'Bearer token' } },
      }),
    );
    const gql = await p.graphql<Gql<{ deleteCredential: { credentialId: string } }>>(
      'mutation($id: ID!) { deleteCredential(credentialId: $id) { credentialId } }',
      { id: created['Bearer token']!.credentialId },
      writer,
    );
    assert.equal(gql.body.data.deleteCredential.credentialId, created['Bearer token']!.credentialId);
    const gone = await p.rest<V1<Credential>>('GET', `/v1/engine/credentials/${created['Bearer token']!.credentialId}`, { key: reader });
    assert.equal(gone.status, 404);
    const run = await p.rest<V1<Execution>>('POST', `/v1/engine/workflows/${workflowId}/execute`, { key: writer, body: { mode: 'sync', data: {} } });
    assert.equal(run.body.data.status, 'error');
    assert.match(run.body.data.error.message, /The httpBearerAuth credential "Bearer token" does not exist/);
    const del = await p.rest<V1<Credential>>('DELETE', `/v1/engine/credentials/${created['Header key']!.credentialId}`, { key: reader });
    assert.equal(del.status, 403);
  });

  it('rotates the key: rows under CREDENTIALS_KEY_PREVIOUS are read and re-encrypted at start; without the old key they fail naming it', async () => {
    const { workflowId } = await importAndRun(
      exportWith('Rotated', {
        typeVersion: 4.2,
        parameters: { url: `${api.url}/rotated`, authentication: 'genericCredentialType', genericAuthType: 'httpHeaderAuth' },
        credentials: { httpHeaderAuth: { id: '3', name: 'Header key' } },
      }),
    );
    const database = p.db;
    await p.stop({ keepDatabase: true });
    p = await startTestPlatform({ ...ENV, CREDENTIALS_KEY: KEY_B, CREDENTIALS_KEY_PREVIOUS: KEY_A }, { database });
    const keys: { key_id: string }[] = await p.platform.kernel.db.query(`SELECT DISTINCT key_id FROM engine.credentials`);
    assert.deepEqual(
      keys.map((k) => k.key_id),
      [keyIdOf(KEY_B)],
    );
    seen.length = 0;
    const run = await p.rest<V1<Execution>>('POST', `/v1/engine/workflows/${workflowId}/execute`, { body: { mode: 'sync', data: {} } });
    assert.equal(run.body.data.status, 'success', JSON.stringify(run.body));
    assert.equal(seen[0]!.headers['x-api-key'], SECRETS.header);

    // Started again under the previous key alone: B's rows cannot be read, and the run says so.
    await p.stop({ keepDatabase: true });
    p = await startTestPlatform({ ...ENV, CREDENTIALS_KEY: KEY_A }, { database });
    const failed = await p.rest<V1<Execution>>('POST', `/v1/engine/workflows/${workflowId}/execute`, { body: { mode: 'sync', data: {} } });
    assert.equal(failed.body.data.status, 'error');
    assert.match(failed.body.data.error.message, /The httpHeaderAuth credential "Header key" is encrypted under a key this platform does not have/);
  });

  it('never wrote a secret or a token to the log', () => {
    assert.ok(log.length > 0, 'the log was captured');
    assertNoSecret('the log', log);
  });
});
