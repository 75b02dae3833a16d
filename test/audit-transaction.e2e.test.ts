import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Gql, Links } from './support/answers';
import { startFakeLlm, type FakeLlm } from './support/fake-llm';
import { fakeLlmEnv } from './support/fixtures';
import { answerOf } from './support/json';
import { until } from './support/until';
import { startTestPlatform, type JsonAnswer, type TestPlatform } from './support/platform';

/**
 * The audit entry commits in the transaction of its change: an entry that cannot be written
 * refuses the change, a change that rolls back leaves no entry, and the creations grouped into
 * one statement (executeTask) each commit their own entry with their task. The platform runs
 * without workers (role gateway), so created tasks stay queued.
 */
let p: TestPlatform;
let linksKey: string;
let llm: FakeLlm;
let github: http.Server;
const FRONTEND = 'http://frontend.test';

/** GitHub's code exchange and profile, as the feedback sign-in calls them: a code `gh-<login>` is that person. */
function startGitHub(): Promise<string> {
  github = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const json = (v: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(v));
      const login = /^Bearer token-(\w+)$/.exec(req.headers.authorization ?? '')?.[1];
      if (req.method === 'POST' && req.url === '/login/oauth/access_token') {
        const { code } = JSON.parse(body) as { code: string };
        return json(code.startsWith('gh-') ? { access_token: `token-${code.slice(3)}`, token_type: 'bearer' } : { error: 'bad_verification_code' });
      }
      if (req.url === '/user' && login) return json({ id: login.length * 1000 + login.charCodeAt(0), login, name: login });
      if (req.url === '/user/emails' && login) return json([{ email: `${login}@tx.test`, primary: true, verified: true }]);
      res.writeHead(401).end();
    });
  });
  return new Promise((resolve) => github.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(github.address() as AddressInfo).port}`)));
}

beforeAll(async () => {
  llm = await startFakeLlm({ models: ['model-default'] });
  const githubUrl = await startGitHub();
  p = await startTestPlatform(
    {
      ...fakeLlmEnv(llm.url),
      GITHUB_CLIENT_ID: 'gh-client',
      GITHUB_CLIENT_SECRET: 'gh-client-secret-1',
      GITHUB_OAUTH_URL: githubUrl,
      GITHUB_API_URL: githubUrl,
      FEEDBACK_FRONTEND_URL: FRONTEND,
    },
    { role: 'gateway' },
  );
  linksKey = (await p.createKey({ name: 'links', service: 'links', permissions: ['link:read', 'link:write'] })).key;
});
afterAll(async () => {
  await p?.stop();
  await llm?.close();
  await new Promise((resolve) => github?.close(resolve));
});

const db = () => p.platform.kernel.db;

async function count(sql: string, params: unknown[] = []): Promise<number> {
  const rows = (await db().query(sql, params)) as { n: number }[];
  return rows[0]!.n;
}

const entries = (operation: string, resourceId?: string) =>
  resourceId
    ? count(`SELECT count(*)::int AS n FROM platform.audit_log WHERE operation = $1 AND resource_id = $2`, [operation, resourceId])
    : count(`SELECT count(*)::int AS n FROM platform.audit_log WHERE operation = $1`, [operation]);

/** Runs `fn` while the audit log refuses the entries of `operations` (a CHECK the test adds to its scratch database). */
async function refusingEntriesOf(operations: string[], fn: () => Promise<void>): Promise<void> {
  const list = operations.map((o) => `'${o}'`).join(', ');
  await db().query(`ALTER TABLE platform.audit_log ADD CONSTRAINT audit_test_refuses CHECK (operation NOT IN (${list})) NOT VALID`);
  try {
    await fn();
  } finally {
    await db().query(`ALTER TABLE platform.audit_log DROP CONSTRAINT audit_test_refuses`);
  }
}

const workflow = (name: string) => ({
  name,
  nodes: [
    { name: 'Start', type: 'engine.manualTrigger' },
    { name: 'Set', type: 'engine.set', parameters: { values: { ok: 'yes' } } },
  ],
  connections: { Start: { main: [[{ node: 'Set', type: 'main', index: 0 }]] } },
});

/** A mutation that must fail: its first error, and no data. */
async function failed(query: string, variables: Record<string, unknown>, key?: string): Promise<{ message: string; code?: string }> {
  const res = await p.graphql<Gql<Record<string, unknown> | null>>(query, variables, key ?? p.adminKey);
  assert.ok(res.body.errors?.length, `expected an error: ${JSON.stringify(res.body)}`);
  const field = Object.values(res.body.data ?? {})[0];
  assert.equal(field ?? null, null, JSON.stringify(res.body));
  const [first] = res.body.errors!;
  return { message: first.message, code: first.extensions?.code };
}

describe('an entry that cannot be written', () => {
  test('refuses creates (an API key, a link, a workflow): the mutation answers an error and nothing was stored', async () => {
    const keysBefore = await count(`SELECT count(*)::int AS n FROM platform.api_keys`);
    const linksBefore = await count(`SELECT count(*)::int AS n FROM links.links`);
    const entriesBefore = await Promise.all(['createApiKey', 'createLink', 'createWorkflow'].map((op) => entries(op)));
    await refusingEntriesOf(['createApiKey', 'createLink', 'createWorkflow'], async () => {
      const refused = await failed('mutation { createApiKey(input: { name: "not-kept", permissions: ["agent:read"] }) { apiKey key { id } } }', {});
      assert.equal(refused.code, 'internal_server_error');
      await failed('mutation { createLink(input: { url: "https://example.com/not-kept" }) { id } }', {}, linksKey);
      await failed('mutation($i: CreateWorkflowInput!) { createWorkflow(input: $i) { workflowId } }', { i: workflow('not-kept') });
    });
    assert.equal(await count(`SELECT count(*)::int AS n FROM platform.api_keys`), keysBefore, 'no key');
    assert.equal(await count(`SELECT count(*)::int AS n FROM platform.api_keys WHERE name = 'not-kept'`), 0);
    assert.equal(await count(`SELECT count(*)::int AS n FROM links.links`), linksBefore, 'no link');
    assert.equal(await count(`SELECT count(*)::int AS n FROM engine.workflows WHERE name = 'not-kept'`), 0, 'no workflow');
    for (const [i, op] of ['createApiKey', 'createLink', 'createWorkflow'].entries()) assert.equal(await entries(op), entriesBefore[i], op);
  });

  test('refuses updates (a key renamed, a link retargeted, a workflow changed): the row keeps its values', async () => {
    const key = (
      await p.graphql<Gql<{ createApiKey: { key: { id: string } } }>>(
        'mutation { createApiKey(input: { name: "kept-name", permissions: ["agent:read"] }) { key { id } } }',
        {},
        p.adminKey,
      )
    ).body.data.createApiKey.key.id;
    const link = (
      await p.graphql<Gql<{ createLink: { id: string } }>>('mutation { createLink(input: { url: "https://example.com/kept" }) { id } }', {}, linksKey)
    ).body.data.createLink.id;
    const wf = (
      await p.graphql<Gql<{ createWorkflow: { workflowId: string } }>>(
        'mutation($i: CreateWorkflowInput!) { createWorkflow(input: $i) { workflowId } }',
        { i: workflow('kept') },
        p.adminKey,
      )
    ).body.data.createWorkflow.workflowId;
    await refusingEntriesOf(['updateApiKey', 'updateLink', 'updateWorkflow'], async () => {
      await failed('mutation($id: ID!) { updateApiKey(id: $id, input: { name: "changed" }) { id } }', { id: key });
      await failed('mutation($id: ID!) { updateLink(id: $id, input: { url: "https://example.com/changed" }) { id } }', { id: link }, linksKey);
      await failed('mutation($id: ID!) { updateWorkflow(workflowId: $id, input: { description: "changed" }) { workflowId } }', { id: wf });
    });
    assert.equal(await count(`SELECT count(*)::int AS n FROM platform.api_keys WHERE id = $1 AND name = 'kept-name'`, [key]), 1);
    assert.equal(await count(`SELECT count(*)::int AS n FROM links.links WHERE id = $1 AND url = 'https://example.com/kept'`, [link]), 1);
    assert.equal(await count(`SELECT count(*)::int AS n FROM engine.workflows WHERE id = $1 AND description IS DISTINCT FROM 'changed'`, [wf]), 1);
    for (const op of ['updateApiKey', 'updateLink', 'updateWorkflow']) assert.equal(await entries(op), 0, op);

    // Once the log takes entries again, the same update succeeds with its one entry.
    const ok = await p.graphql<Gql<{ updateApiKey: { id: string; name: string } | null } | null>>(
      'mutation($id: ID!) { updateApiKey(id: $id, input: { name: "changed" }) { id name } }',
      { id: key },
      p.adminKey,
    );
    assert.equal(ok.body.data?.updateApiKey?.name, 'changed', JSON.stringify(ok.body));
    assert.equal(await entries('updateApiKey', key), 1);
  });
});

describe('a change that rolls back', () => {
  test('leaves no entry: a workflow whose transaction fails at COMMIT (after its entry was inserted) is neither stored nor recorded', async () => {
    // A deferred constraint trigger runs at COMMIT, after every statement of the transaction, the entry's insert included.
    await db().query(`CREATE FUNCTION engine.audit_test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.name = 'rolled-back' THEN RAISE EXCEPTION 'refused at commit'; END IF; RETURN NEW; END $$`);
    await db().query(`CREATE CONSTRAINT TRIGGER audit_test_refuse AFTER INSERT ON engine.workflows DEFERRABLE INITIALLY DEFERRED
      FOR EACH ROW EXECUTE FUNCTION engine.audit_test_refuse()`);
    const before = await entries('createWorkflow');
    try {
      await failed('mutation($i: CreateWorkflowInput!) { createWorkflow(input: $i) { workflowId } }', { i: workflow('rolled-back') });
    } finally {
      await db().query(`DROP TRIGGER audit_test_refuse ON engine.workflows`);
      await db().query(`DROP FUNCTION engine.audit_test_refuse()`);
    }
    assert.equal(await count(`SELECT count(*)::int AS n FROM engine.workflows WHERE name = 'rolled-back'`), 0);
    assert.equal(await entries('createWorkflow'), before, 'no entry');
  });
});

describe('creations grouped into one statement', () => {
  test('concurrent executeTask calls each leave one entry naming their task, and their tasks exist', async () => {
    const before = await entries('executeTask');
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        p.graphql<Gql<{ executeTask: { taskId: string } }>>(
          'mutation($i: ExecuteTaskInput!) { executeTask(input: $i) { taskId } }',
          { i: { agentId: 'docs-author', taskType: 'write-guide', context: { topic: `Grouped ${i}`, audience: 'operators' } } },
          p.adminKey,
        ),
      ),
    );
    const ids = answers.map((a) => {
      assert.ok(!a.body.errors, JSON.stringify(a.body.errors));
      return a.body.data.executeTask.taskId;
    });
    assert.equal(new Set(ids).size, 10);
    assert.equal(await count(`SELECT count(*)::int AS n FROM control_plane.tasks WHERE id = ANY($1::uuid[])`, [ids]), 10, 'every task exists');
    assert.equal(await entries('executeTask'), before + 10);
    for (const id of ids) assert.equal(await entries('executeTask', id), 1, id);
  });

  test('when one entry cannot be written, only its task is refused: the others are created with their entries', async () => {
    const before = await entries('executeTask');
    const tasksBefore = await count(`SELECT count(*)::int AS n FROM control_plane.tasks`);
    // Refuses the entry whose request carries this User-Agent: one caller of the group.
    await db().query(`ALTER TABLE platform.audit_log ADD CONSTRAINT audit_test_refuses CHECK (user_agent IS DISTINCT FROM 'refused-agent') NOT VALID`);
    let answers: JsonAnswer<Gql<{ executeTask: { taskId: string } | null } | null>>[];
    try {
      answers = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          fetch(`${p.url}/graphql`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${p.adminKey}`, 'user-agent': i === 3 ? 'refused-agent' : 'grouped-agent' },
            body: JSON.stringify({
              query: 'mutation($i: ExecuteTaskInput!) { executeTask(input: $i) { taskId } }',
              variables: { i: { agentId: 'docs-author', taskType: 'write-guide', context: { topic: `Refused ${i}`, audience: 'operators' } } },
            }),
          }).then((res) => answerOf<Gql<{ executeTask: { taskId: string } | null } | null>>(res)),
        ),
      );
    } finally {
      await db().query(`ALTER TABLE platform.audit_log DROP CONSTRAINT audit_test_refuses`);
    }
    const refused = answers[3]!;
    assert.ok(refused.body.errors?.length, JSON.stringify(refused.body));
    const made = answers.filter((_, i) => i !== 3).map((a) => a.body.data?.executeTask?.taskId);
    assert.ok(
      made.every((id) => typeof id === 'string'),
      JSON.stringify(answers.map((a) => a.body)),
    );
    assert.equal(await count(`SELECT count(*)::int AS n FROM control_plane.tasks`), tasksBefore + 5, 'the refused one was not created');
    assert.equal(await entries('executeTask'), before + 5);
    for (const id of made) assert.equal(await entries('executeTask', id), 1, id);
  });
});

describe("the engine's webhook door", () => {
  test('a request on /webhook/<path> answered in this process is recorded as receiveWebhook, anonymous, in the transaction of the execution it starts', async () => {
    const created = await p.graphql<Gql<{ createWorkflow: { workflowId: string } }>>(
      'mutation($i: CreateWorkflowInput!) { createWorkflow(input: $i) { workflowId } }',
      {
        i: {
          name: 'door',
          active: true,
          nodes: [
            { name: 'Hook', type: 'engine.webhook' },
            { name: 'Set', type: 'engine.set', parameters: { values: { ok: 'yes' } } },
          ],
          connections: { Hook: { main: [[{ node: 'Set', type: 'main', index: 0 }]] } },
        },
      },
      p.adminKey,
    );
    const workflowId = created.body.data.createWorkflow.workflowId;
    const hook = await p.graphql<Gql<{ createWorkflowWebhook: { webhookId: string } }>>(
      'mutation($i: CreateWorkflowWebhookInput!) { createWorkflowWebhook(input: $i) { webhookId } }',
      {
        i: {
          workflowId,
          path: 'door-audited',
          method: 'POST',
          authentication: { type: 'apiKey', apiKeyHeader: 'x-hook-secret', apiKeyValue: 'door-secret-1' },
        },
      },
      p.adminKey,
    );
    assert.ok(!hook.body.errors, JSON.stringify(hook.body.errors));

    const before = await entries('receiveWebhook');
    const res = await fetch(`${p.url}/webhook/door-audited`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-hook-secret': 'door-secret-1', 'user-agent': 'door-client/1' },
      body: JSON.stringify({ order: 1 }),
    });
    assert.equal(res.status, 200, await res.clone().text());
    const { executionId } = (await res.json()) as { executionId: string };
    assert.equal(await count(`SELECT count(*)::int AS n FROM engine.executions WHERE id = $1`, [executionId]), 1);
    assert.equal(await entries('receiveWebhook'), before + 1);
    const [entry] = (await db().query(
      `SELECT actor_kind, resource_id, user_agent, subgraph, changed_fields FROM platform.audit_log WHERE operation = 'receiveWebhook' ORDER BY id DESC LIMIT 1`,
    )) as { actor_kind: string; resource_id: string; user_agent: string; subgraph: string; changed_fields: string[] }[];
    assert.deepEqual(entry, {
      actor_kind: 'anonymous',
      resource_id: 'door-audited',
      user_agent: 'door-client/1',
      subgraph: 'engine',
      changed_fields: ['body', 'headers', 'method', 'path', 'query'],
    });
    assert.ok(!JSON.stringify(entry).includes('door-secret-1'));
  });

  test("a request answered with its workflow's last node commits its entry with the execution; an entry that cannot be written leaves neither", async () => {
    const created = await p.graphql<Gql<{ createWorkflow: { workflowId: string } }>>(
      'mutation($i: CreateWorkflowInput!) { createWorkflow(input: $i) { workflowId } }',
      {
        i: {
          name: 'door-last-node',
          active: true,
          nodes: [
            { name: 'Hook', type: 'engine.webhook' },
            { name: 'Set', type: 'engine.set', parameters: { values: { answered: 'by the last node' } } },
          ],
          connections: { Hook: { main: [[{ node: 'Set', type: 'main', index: 0 }]] } },
        },
      },
      p.adminKey,
    );
    const workflowId = created.body.data.createWorkflow.workflowId;
    const hook = await p.graphql<Gql<{ createWorkflowWebhook: { webhookId: string } }>>(
      'mutation($i: CreateWorkflowWebhookInput!) { createWorkflowWebhook(input: $i) { webhookId } }',
      { i: { workflowId, path: 'door-last-node', method: 'POST', responseMode: 'lastNode' } },
      p.adminKey,
    );
    assert.ok(!hook.body.errors, JSON.stringify(hook.body.errors));
    const executions = () => count(`SELECT count(*)::int AS n FROM engine.executions WHERE workflow_id = $1`, [workflowId]);
    const call = () => fetch(`${p.url}/webhook/door-last-node`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"n":1}' });

    await refusingEntriesOf(['receiveWebhook'], async () => {
      const refused = await call();
      assert.equal(refused.status, 500, await refused.clone().text());
    });
    assert.equal(await executions(), 0, 'no execution');
    assert.equal(await entries('receiveWebhook', 'door-last-node'), 0);

    const res = await call();
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(((await res.json()) as { answered: string }).answered, 'by the last node');
    assert.equal(await executions(), 1);
    assert.equal(await entries('receiveWebhook', 'door-last-node'), 1);
  });

  test('a request whose path and User-Agent hold U+0000 is still recorded, without that character', async () => {
    const before = await entries('receiveWebhook');
    const res = await fetch(`${p.url}/webhook/nul%00path`, { method: 'POST', headers: { 'user-agent': 'nul-client' }, body: '{}' });
    assert.equal(res.status, 400);
    await until('the refused request recorded', async () => (await entries('receiveWebhook')) === before + 1);
    const [entry] = (await db().query(`SELECT resource_id FROM platform.audit_log WHERE operation = 'receiveWebhook' ORDER BY id DESC LIMIT 1`)) as {
      resource_id: string;
    }[];
    assert.equal(entry!.resource_id, 'nulpath');
  });
});

describe('bookkeeping of a refused call', () => {
  test('verifyLink with a wrong PIN counts the attempt but leaves no entry; the right PIN leaves one', async () => {
    const link = (
      await p.graphql<Gql<{ createLink: { id: string } }>>(
        'mutation { createLink(input: { url: "https://example.com/pin", pin: "735190" }) { id } }',
        {},
        linksKey,
      )
    ).body.data.createLink.id;
    const attempts = () => count(`SELECT count(*)::int AS n FROM links.attempts WHERE link_id = $1`, [link]);
    const wrong = await failed('mutation($id: ID!) { verifyLink(id: $id, pin: "000000") { id } }', { id: link }, linksKey);
    assert.equal(wrong.code, 'invalid_credentials');
    assert.equal(await attempts(), 1, 'the failed attempt is counted');
    assert.equal(await entries('verifyLink', link), 0);
    const right = await p.graphql<Gql<{ verifyLink: { id: string } }>>(
      'mutation($id: ID!) { verifyLink(id: $id, pin: "735190") { id } }',
      { id: link },
      linksKey,
    );
    assert.ok(!right.body.errors, JSON.stringify(right.body.errors));
    assert.equal(await entries('verifyLink', link), 1);
  });
});

describe('the routes a service answers itself commit their entry with their change', () => {
  const protectedLink = async (url: string, pin: string) =>
    (
      await p.graphql<Gql<{ createLink: { id: string; slug: string } }>>(
        `mutation($u: String!, $pin: String!) { createLink(input: { url: $u, pin: $pin }) { id slug } }`,
        { u: url, pin },
        linksKey,
      )
    ).body.data.createLink;
  const succeeded = (link: string) => count(`SELECT count(*)::int AS n FROM links.attempts WHERE link_id = $1 AND success`, [link]);
  const gateForm = (slug: string, body: string) =>
    fetch(`${p.url}/links/${slug}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body, redirect: 'manual' });

  test('REST verify: an entry that cannot be written refuses the unlock (500 in the links envelope, no cookie, the attempt not a success); a wrong PIN leaves no entry', async () => {
    const link = await protectedLink('https://example.com/rest-verify', '482913');
    await refusingEntriesOf(['verifyLink'], async () => {
      const res = await p.rest<Links<never>>('POST', `/links/api/links/${link.id}/verify`, { key: null, body: { pin: '482913' } });
      assert.equal(res.status, 500, JSON.stringify(res.body));
      assert.deepEqual([res.body.success, res.body.error.code], [false, 'internal_server_error']);
      assert.equal(res.headers.get('set-cookie'), null, 'not unlocked');
    });
    assert.equal(await succeeded(link.id), 0, 'the attempt stays a failure');
    assert.equal(await entries('verifyLink', link.id), 0);

    const wrong = await p.rest<Links<never>>('POST', `/links/api/links/${link.id}/verify`, { key: null, body: { pin: '000000' } });
    assert.equal(wrong.status, 401);
    assert.equal(await entries('verifyLink', link.id), 0, 'a wrong PIN: no entry');

    const right = await p.rest<Links<{ id: string }>>('POST', `/links/api/links/${link.id}/verify`, { key: null, body: { pin: '482913' } });
    assert.equal(right.status, 200, JSON.stringify(right.body));
    assert.equal(await succeeded(link.id), 1);
    assert.equal(await entries('verifyLink', link.id), 1);
  });

  test("the gate page's form: an entry that cannot be written refuses the unlock (the gate page again with 500, no cookie, no redirect); a wrong PIN re-renders the page and leaves no entry", async () => {
    const link = await protectedLink('https://example.com/gate-form', '590217');
    await refusingEntriesOf(['verifyLink'], async () => {
      const res = await gateForm(link.slug, 'pin=590217');
      assert.equal(res.status, 500);
      assert.match(res.headers.get('content-type')!, /^text\/html/);
      assert.match(await res.text(), /An internal error occurred/, 'the gate page again, with the error');
      assert.equal(res.headers.get('set-cookie'), null);
      assert.equal(res.headers.get('location'), null);
    });
    assert.equal(await succeeded(link.id), 0);
    assert.equal(await entries('verifyLink', link.id), 0);

    const wrong = await gateForm(link.slug, 'pin=111111');
    assert.equal(wrong.status, 401);
    assert.match(await wrong.text(), /Wrong PIN/);
    assert.equal(await entries('verifyLink', link.id), 0);

    const right = await gateForm(link.slug, 'pin=590217');
    assert.equal(right.status, 302);
    assert.equal(right.headers.get('location'), 'https://example.com/gate-form');
    assert.equal(await entries('verifyLink', link.id), 1);
  });

  /** Starts a GitHub sign-in: the state in the provider's redirect and the cookie that holds it. */
  async function started(): Promise<{ state: string; cookie: string }> {
    const start = await fetch(`${p.url}/feedback/api/v1/auth/github`, { redirect: 'manual' });
    assert.equal(start.status, 302);
    return { state: new URL(start.headers.get('location')!).searchParams.get('state')!, cookie: start.headers.get('set-cookie')!.split(';')[0]! };
  }
  const callback = (query: string, cookie: string) =>
    fetch(`${p.url}/feedback/api/v1/auth/github/callback?${query}`, { redirect: 'manual', headers: { cookie } });
  const users = (login: string) => count(`SELECT count(*)::int AS n FROM feedback.users WHERE username = $1`, [login]);

  test('the OAuth callback: an entry that cannot be written refuses the sign-in (no person stored, an error redirect, no token); a bad state leaves no entry', async () => {
    const before = await entries('signInWithProvider');
    await refusingEntriesOf(['signInWithProvider'], async () => {
      const { state, cookie } = await started();
      const back = await callback(`code=gh-quinn&state=${state}`, cookie);
      assert.equal(back.status, 302);
      const to = new URL(back.headers.get('location')!);
      assert.equal(`${to.origin}${to.pathname}`, `${FRONTEND}/auth/callback`);
      assert.equal(to.searchParams.get('error'), 'internal_server_error');
      assert.equal(to.searchParams.get('token'), null);
    });
    assert.equal(await users('quinn'), 0, 'nobody was stored');
    assert.equal(await entries('signInWithProvider'), before);

    const { cookie } = await started();
    const forged = await callback('code=gh-quinn&state=not-the-state', cookie);
    assert.equal(forged.status, 400);
    const refused = (await forged.json()) as { success: boolean; error: string };
    assert.deepEqual([refused.success, refused.error], [false, 'invalid_state']);
    assert.equal(await users('quinn'), 0);
    assert.equal(await entries('signInWithProvider'), before, 'a bad state: no entry');

    const again = await started();
    const back = await callback(`code=gh-quinn&state=${again.state}`, again.cookie);
    assert.ok(new URL(back.headers.get('location')!).searchParams.get('token'), back.headers.get('location')!);
    const [user] = (await db().query(`SELECT id FROM feedback.users WHERE username = 'quinn'`)) as { id: string }[];
    assert.equal(await entries('signInWithProvider'), before + 1);
    assert.equal(await entries('signInWithProvider', user!.id), 1, 'the entry names the person signed in');
  });
});

describe('a mutation whose write went past the kernel', () => {
  test("testPrompt: the run's row commits with its entry; an entry that cannot be written leaves no row", async () => {
    const made = await p.graphql<Gql<{ createPrompt: { promptId: string } }>>(
      'mutation { createPrompt(input: { name: "tx-prompt", description: "d", template: "Hi {{who}}", variables: ["who"] }) { promptId } }',
      {},
      p.adminKey,
    );
    assert.ok(!made.body.errors, JSON.stringify(made.body.errors));
    const runs = () => count(`SELECT count(*)::int AS n FROM promptlib.prompt_tests WHERE prompt_id = 'tx-prompt'`);
    await refusingEntriesOf(['testPrompt'], async () => {
      const refused = await failed('mutation { testPrompt(promptId: "tx-prompt", input: { variables: { who: "Ann" } }) { testId } }', {});
      assert.equal(refused.code, 'internal_server_error');
    });
    assert.equal(await runs(), 0, 'no run row');
    assert.equal(await entries('testPrompt', 'tx-prompt'), 0);

    const ok = await p.graphql<Gql<{ testPrompt: { testId: string } }>>(
      'mutation { testPrompt(promptId: "tx-prompt", input: { variables: { who: "Ann" } }) { testId } }',
      {},
      p.adminKey,
    );
    assert.ok(!ok.body.errors, JSON.stringify(ok.body.errors));
    assert.equal(await runs(), 1);
    assert.equal(await entries('testPrompt', 'tx-prompt'), 1);
  });
});
