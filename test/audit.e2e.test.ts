import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { buildSchema, Kind, parse, type OperationDefinitionNode } from 'graphql';
import { surfaces } from '../rest-adapter';
import { startFakeLlm, type FakeLlm } from './support/fake-llm';
import { fakeLlmEnv } from './support/fixtures';
import type { Gql, Platform, V1 } from './support/answers';
import { answerOf } from './support/json';
import { startTestPlatform, type JsonAnswer, type TestPlatform } from './support/platform';
import { startSplitTopology } from './support/split';

/**
 * The audit trail: every change made through any surface leaves exactly one entry (who, from
 * where, which operation and resource, which fields), a refused one none, and no entry holds a
 * secret. The table below knows how to make every mutation of the composed schema succeed; a
 * mutation missing from it (a new one) fails the coverage test. The platform runs without
 * workers (role gateway), so queued tasks and executions stay queued and can be cancelled.
 */
let p: TestPlatform;
let llm: FakeLlm;
let github: http.Server;
let githubUrl: string;
const UA = 'audit-test/1.0';

/** GitHub's code exchange and profile, as the feedback service's sign-in calls them: the code `audit-code` is Dee. */
function startGitHub(): Promise<string> {
  github = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const json = (status: number, v: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(v));
      const signedIn = req.headers.authorization === 'Bearer gh-access-token-1';
      if (req.method === 'POST' && req.url === '/login/oauth/access_token') {
        const { code } = JSON.parse(body) as { code: string };
        return code === 'audit-code' ? json(200, { access_token: 'gh-access-token-1', token_type: 'bearer' }) : json(200, { error: 'bad_verification_code' });
      }
      // An OAuth2 authorization server's token endpoint, for a stored credential's consent.
      if (req.method === 'POST' && req.url === '/oauth2/token') {
        const form = new URLSearchParams(body);
        return form.get('code') === 'cred-code'
          ? json(200, { access_token: 'cred-access-token-1', refresh_token: 'cred-refresh-token-1', token_type: 'Bearer', expires_in: 3600 })
          : json(400, { error: 'invalid_grant' });
      }
      if (req.method === 'GET' && req.url === '/user' && signedIn) return json(200, { id: 4242, login: 'dee', name: 'Dee' });
      if (req.method === 'GET' && req.url === '/user/emails' && signedIn) return json(200, [{ email: 'dee@audit.test', primary: true, verified: true }]);
      json(401, { message: 'Bad credentials' });
    });
  });
  return new Promise((resolve) => github.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(github.address() as AddressInfo).port}`)));
}

beforeAll(async () => {
  llm = await startFakeLlm({ models: ['model-default'] });
  githubUrl = await startGitHub();
  p = await startTestPlatform(
    {
      OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true',
      FEEDBACK_LOCAL_SIGNIN: 'true',
      GITHUB_CLIENT_ID: 'gh-client',
      GITHUB_CLIENT_SECRET: 'gh-client-secret-1',
      GITHUB_OAUTH_URL: githubUrl,
      GITHUB_API_URL: githubUrl,
      ...fakeLlmEnv(llm.url),
    },
    { role: 'gateway' },
  );
});
afterAll(async () => {
  await p?.stop();
  await llm?.close();
  await new Promise((resolve) => github?.close(resolve));
});

const supergraph = buildSchema(readFileSync(path.join(__dirname, '..', '..', 'schema', 'supergraph.graphql'), 'utf8'), { assumeValidSDL: true });
const mutationFields = Object.keys(supergraph.getMutationType()!.getFields()).sort();

/** A mutation's data as most samples read it: the field they ran, holding the ids and tokens they keep. */
type Data = Record<string, Record<string, string>>;

/** An audit entry as GET /v1/audit and `auditEntries` list it (the fields the checks read). */
interface Entry {
  id: string;
  at: string;
  actor: { kind: string; id: string | null; name: string | null; service: string | null };
  ip: string;
  userAgent: string;
  requestId: string;
  service: string;
  operation: string;
  resourceType: string;
  resourceId: string;
  changedFields: string[];
}

/** What a sign-in answers: the token and the person. */
type SignedIn<F extends string> = Record<F, { token: string; user: { id: string } }>;

/** GET /v1/audit's page. */
interface AuditPage {
  entries: Entry[];
  pagination: { total: number; hasMore: boolean };
}

/** A GraphQL call that must succeed, with this test's User-Agent. */
async function gql<T = Data>(query: string, variables: Record<string, unknown> = {}, key: string | null = p.adminKey): Promise<T> {
  const res = await fetch(`${p.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'user-agent': UA, ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  const { body } = await answerOf<Gql<T>>(res);
  assert.ok(!body.errors, `${query.slice(0, 80)}: ${JSON.stringify(body.errors)}`);
  return body.data;
}

/** A GraphQL call that must be refused with `code`. */
async function refused(query: string, variables: Record<string, unknown>, code: string, key: string | null = p.adminKey): Promise<void> {
  const res = await p.graphql<Gql<unknown>>(query, variables, key);
  assert.equal(res.body.errors?.[0]?.extensions?.code, code, JSON.stringify(res.body));
}

/** Every entry newer than `after` (an entry id), oldest first, as GET /v1/audit shows them. */
async function entriesAfter(after: number): Promise<Entry[]> {
  const res = await p.rest<V1<AuditPage>>('GET', '/v1/audit?limit=100');
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.data.entries.filter((e) => Number(e.id) > after).reverse();
}

async function newestId(): Promise<number> {
  const rows = await p.platform.kernel.db.query(`SELECT coalesce(max(id), 0)::int AS n FROM platform.audit_log`);
  return rows[0].n as number;
}

/** What a sample call tells the check: the actor it ran as, the resource it changed, the secrets it used. */
interface Done {
  actorId?: string | null;
  actorKind?: string;
  resourceId?: string;
  secrets?: string[];
}

const s: Record<string, string> = {};
const wf = (name: string, nodes: Record<string, unknown>[]) => {
  const connections: Record<string, unknown> = {};
  for (let i = 0; i < nodes.length - 1; i++) connections[nodes[i]!.name as string] = { main: [[{ node: nodes[i + 1]!.name, type: 'main', index: 0 }]] };
  return { name, nodes, connections };
};
const manual = { name: 'Start', type: 'engine.manualTrigger' };
const hook = { name: 'Hook', type: 'engine.webhook' };
const setNode = { name: 'Set', type: 'engine.set', parameters: { values: { ok: 'yes' } } };

/**
 * How to make each mutation succeed, in order (later ones use what earlier ones made). A mutation
 * listed in NOT_SAMPLED would be one this test cannot make succeed on its own; the coverage test
 * names both lists.
 */
const SAMPLES: [string, () => Promise<Done>][] = [
  // ---- control plane
  [
    'createApiKey',
    async () => {
      const d = await gql<{ createApiKey: { apiKey: string; key: { id: string } } }>(
        'mutation($i: CreateApiKeyInput!) { createApiKey(input: $i) { apiKey key { id } } }',
        {
          i: { name: 'audited', permissions: ['agent:read', 'link:read', 'link:write'] },
        },
      );
      s.keyId = d.createApiKey.key.id;
      s.keyValue = d.createApiKey.apiKey;
      return { resourceId: s.keyId, secrets: [s.keyValue] };
    },
  ],
  [
    'updateApiKey',
    async () => {
      await gql('mutation($id: ID!) { updateApiKey(id: $id, input: { name: "renamed" }) { id } }', { id: s.keyId });
      return { resourceId: s.keyId };
    },
  ],
  [
    'revokeApiKey',
    async () => {
      await gql('mutation($id: ID!) { revokeApiKey(id: $id) { id } }', { id: s.keyId });
      return { resourceId: s.keyId, secrets: [s.keyValue] };
    },
  ],
  [
    'executeTask',
    async () => {
      const d = await gql('mutation($i: ExecuteTaskInput!) { executeTask(input: $i) { taskId } }', {
        i: { agentId: 'docs-author', taskType: 'write-guide', context: { topic: 'Audit', audience: 'operators' } },
      });
      s.taskId = d.executeTask.taskId;
      return { resourceId: s.taskId };
    },
  ],
  [
    'cancelTask',
    async () => {
      await gql('mutation($id: ID!) { cancelTask(taskId: $id, reason: "not needed") { taskId } }', { id: s.taskId });
      return { resourceId: s.taskId };
    },
  ],
  [
    'createOrchestration',
    async () => {
      const d = await gql('mutation($i: CreateOrchestrationInput!) { createOrchestration(input: $i) { orchestrationId } }', {
        i: {
          name: 'audited',
          stages: [{ stage: 'RESEARCH', tasks: [{ agentId: 'factory-orchestrator', taskType: 'plan-delivery', context: { objective: 'Ship' } }] }],
        },
      });
      s.orchestrationId = d.createOrchestration.orchestrationId;
      return { resourceId: s.orchestrationId };
    },
  ],
  [
    'pauseOrchestration',
    async () => {
      await gql('mutation($id: ID!) { pauseOrchestration(orchestrationId: $id) { orchestrationId } }', { id: s.orchestrationId });
      return { resourceId: s.orchestrationId };
    },
  ],
  [
    'resumeOrchestration',
    async () => {
      await gql('mutation($id: ID!) { resumeOrchestration(orchestrationId: $id) { orchestrationId } }', { id: s.orchestrationId });
      return { resourceId: s.orchestrationId };
    },
  ],
  [
    'cancelOrchestration',
    async () => {
      await gql('mutation($id: ID!) { cancelOrchestration(orchestrationId: $id) { orchestrationId } }', { id: s.orchestrationId });
      return { resourceId: s.orchestrationId };
    },
  ],
  [
    'createOrchestrationWorkflow',
    async () => {
      const d = await gql('mutation($i: CreateOrchestrationWorkflowInput!) { createOrchestrationWorkflow(input: $i) { orchestrationId } }', {
        i: { name: 'alt', agents: [{ agentId: 'factory-orchestrator', stage: 'RESEARCH', context: { objective: 'orders' } }] },
      });
      return { resourceId: d.createOrchestrationWorkflow.orchestrationId };
    },
  ],
  // ---- engine
  [
    'createWorkflow',
    async () => {
      const d = await gql('mutation($i: CreateWorkflowInput!) { createWorkflow(input: $i) { workflowId } }', { i: wf('Audited', [manual, setNode]) });
      s.workflowId = d.createWorkflow.workflowId;
      return { resourceId: s.workflowId };
    },
  ],
  [
    'updateWorkflow',
    async () => {
      await gql('mutation($id: ID!) { updateWorkflow(workflowId: $id, input: { description: "changed" }) { workflowId } }', { id: s.workflowId });
      return { resourceId: s.workflowId };
    },
  ],
  [
    'executeWorkflow',
    async () => {
      const d = await gql('mutation($id: ID!) { executeWorkflow(workflowId: $id, input: { mode: "async", data: { a: 1 } }) { executionId } }', {
        id: s.workflowId,
      });
      s.executionId = d.executeWorkflow.executionId;
      return { resourceId: s.workflowId };
    },
  ],
  [
    'cancelExecution',
    async () => {
      await gql('mutation($id: ID!) { cancelExecution(executionId: $id) { executionId } }', { id: s.executionId });
      return { resourceId: s.executionId };
    },
  ],
  [
    'retryExecution',
    async () => {
      const d = await gql('mutation($id: ID!) { retryExecution(executionId: $id) { executionId } }', { id: s.executionId });
      s.retriedId = d.retryExecution.executionId;
      return { resourceId: s.executionId };
    },
  ],
  [
    'controlPlaneCancelExecution',
    async () => {
      await gql('mutation($id: ID!) { controlPlaneCancelExecution(executionId: $id) { executionId } }', { id: s.retriedId });
      return { resourceId: s.retriedId };
    },
  ],
  [
    'deleteExecution',
    async () => {
      await gql('mutation($id: ID!) { deleteExecution(executionId: $id) { executionId } }', { id: s.executionId });
      return { resourceId: s.executionId };
    },
  ],
  [
    'triggerWorkflow',
    async () => {
      await gql('mutation($i: TriggerWorkflowInput!) { triggerWorkflow(input: $i) { executionId } }', {
        i: { workflowId: s.hookWorkflowId, payload: { b: 2 } },
      });
      return { resourceId: s.hookWorkflowId };
    },
  ],
  [
    'duplicateWorkflow',
    async () => {
      const d = await gql('mutation($id: ID!) { duplicateWorkflow(workflowId: $id, name: "Copy") { workflowId } }', { id: s.workflowId });
      s.copyId = d.duplicateWorkflow.workflowId;
      return { resourceId: s.workflowId };
    },
  ],
  [
    'importWorkflow',
    async () => {
      const d = await gql('mutation($w: JSON!) { importWorkflow(workflow: $w, name: "Imported") { workflowId } }', {
        w: {
          name: 'n8n export',
          nodes: [{ name: 'When clicking', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, position: [0, 0], parameters: {} }],
          connections: {},
        },
      });
      return { resourceId: d.importWorkflow.workflowId };
    },
  ],
  [
    'createWorkflowSchedule',
    async () => {
      const d = await gql('mutation($id: ID!) { createWorkflowSchedule(workflowId: $id, input: { cron: "0 9 * * *", enabled: false }) { scheduleId } }', {
        id: s.workflowId,
      });
      s.scheduleId = d.createWorkflowSchedule.scheduleId;
      return { resourceId: s.scheduleId };
    },
  ],
  [
    'updateWorkflowSchedule',
    async () => {
      await gql('mutation($id: ID!) { updateWorkflowSchedule(scheduleId: $id, input: { cron: "0 10 * * *" }) { scheduleId } }', { id: s.scheduleId });
      return { resourceId: s.scheduleId };
    },
  ],
  [
    'deleteWorkflowSchedule',
    async () => {
      await gql('mutation($id: ID!) { deleteWorkflowSchedule(scheduleId: $id) { scheduleId } }', { id: s.scheduleId });
      return { resourceId: s.scheduleId };
    },
  ],
  [
    'createWorkflowWebhook',
    async () => {
      const d = await gql('mutation($i: CreateWorkflowWebhookInput!) { createWorkflowWebhook(input: $i) { webhookId } }', {
        i: {
          workflowId: s.hookWorkflowId,
          path: 'audited',
          method: 'POST',
          authentication: { type: 'apiKey', apiKeyHeader: 'x-hook-secret', apiKeyValue: 'hook-secret-value-1' },
        },
      });
      s.webhookId = d.createWorkflowWebhook.webhookId;
      return { resourceId: s.webhookId, secrets: ['hook-secret-value-1'] };
    },
  ],
  [
    'updateWorkflowWebhook',
    async () => {
      await gql('mutation($id: ID!) { updateWorkflowWebhook(webhookId: $id, input: { responseMode: "lastNode" }) { webhookId } }', { id: s.webhookId });
      return { resourceId: s.webhookId };
    },
  ],
  [
    'testWorkflowWebhook',
    async () => {
      await gql('mutation($id: ID!) { testWorkflowWebhook(webhookId: $id, input: { data: { t: 1 } }) { __typename } }', { id: s.webhookId });
      return { resourceId: s.webhookId };
    },
  ],
  [
    'receiveWebhook',
    async () => {
      await gql(
        'mutation($r: WorkflowWebhookRequestInput!) { receiveWebhook(request: $r) { status } }',
        {
          r: {
            path: 'audited',
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-hook-secret': 'hook-secret-value-1' },
            body: Buffer.from('{}').toString('base64'),
          },
        },
        null,
      );
      return { actorKind: 'anonymous', actorId: null, resourceId: 'audited', secrets: ['hook-secret-value-1'] };
    },
  ],
  [
    'deleteWorkflowWebhook',
    async () => {
      await gql('mutation($id: ID!) { deleteWorkflowWebhook(webhookId: $id) { __typename } }', { id: s.webhookId });
      return { resourceId: s.webhookId };
    },
  ],
  [
    'controlPlaneCreateWorkflowWebhook',
    async () => {
      const d = await gql(
        'mutation($id: ID!) { controlPlaneCreateWorkflowWebhook(workflowId: $id, input: { path: "cp-audited", method: "POST" }) { webhookId } }',
        {
          id: s.hookWorkflowId,
        },
      );
      return { resourceId: d.controlPlaneCreateWorkflowWebhook.webhookId };
    },
  ],
  [
    'deactivateWorkflow',
    async () => {
      await gql('mutation($id: ID!) { deactivateWorkflow(workflowId: $id) { workflowId } }', { id: s.hookWorkflowId });
      return { resourceId: s.hookWorkflowId };
    },
  ],
  [
    'activateWorkflow',
    async () => {
      await gql('mutation($id: ID!) { activateWorkflow(workflowId: $id) { workflowId } }', { id: s.hookWorkflowId });
      return { resourceId: s.hookWorkflowId };
    },
  ],
  [
    'deleteWorkflow',
    async () => {
      await gql('mutation($id: ID!) { deleteWorkflow(workflowId: $id) { __typename } }', { id: s.copyId });
      return { resourceId: s.copyId };
    },
  ],
  // ---- engine variables and credentials
  [
    'createWorkflowVariable',
    async () => {
      const d = await gql('mutation { createWorkflowVariable(input: { key: "audited_var", value: "v1" }) { variableId } }');
      s.variableId = d.createWorkflowVariable.variableId;
      return { resourceId: s.variableId };
    },
  ],
  [
    'updateWorkflowVariable',
    async () => {
      await gql('mutation($id: ID!) { updateWorkflowVariable(variableId: $id, input: { value: "v2" }) { variableId } }', { id: s.variableId });
      return { resourceId: s.variableId };
    },
  ],
  [
    'deleteWorkflowVariable',
    async () => {
      await gql('mutation($id: ID!) { deleteWorkflowVariable(variableId: $id) { variableId } }', { id: s.variableId });
      return { resourceId: s.variableId };
    },
  ],
  [
    'createCredential',
    async () => {
      const d = await gql('mutation($i: CreateCredentialInput!) { createCredential(input: $i) { credentialId } }', {
        i: {
          name: 'Audited OAuth',
          type: 'oAuth2Api',
          data: {
            grantType: 'authorizationCode',
            authUrl: `${githubUrl}/oauth2/authorize`,
            accessTokenUrl: `${githubUrl}/oauth2/token`,
            clientId: 'cred-client',
            clientSecret: 'cred-client-secret-1',
          },
        },
      });
      s.credentialId = d.createCredential.credentialId;
      return { resourceId: s.credentialId, secrets: ['cred-client-secret-1'] };
    },
  ],
  [
    'authorizeCredential',
    async () => {
      const d = await gql('mutation($id: ID!) { authorizeCredential(credentialId: $id) { authorizationUrl } }', { id: s.credentialId });
      s.credentialState = new URL(d.authorizeCredential.authorizationUrl).searchParams.get('state')!;
      return { resourceId: s.credentialId, secrets: ['cred-client-secret-1'] };
    },
  ],
  [
    'completeCredentialAuthorization',
    async () => {
      await gql(
        'mutation($state: String!) { completeCredentialAuthorization(input: { state: $state, code: "cred-code" }) { credentialId connectedAt } }',
        { state: s.credentialState },
        null,
      );
      return {
        actorKind: 'anonymous',
        actorId: null,
        secrets: [s.credentialState, 'cred-code', 'cred-access-token-1', 'cred-refresh-token-1', 'cred-client-secret-1'],
      };
    },
  ],
  [
    'deleteCredential',
    async () => {
      await gql('mutation($id: ID!) { deleteCredential(credentialId: $id) { credentialId } }', { id: s.credentialId });
      return { resourceId: s.credentialId };
    },
  ],
  // ---- prompt library
  [
    'createPrompt',
    async () => {
      await gql('mutation { createPrompt(input: { name: "audited-prompt", description: "d", template: "Hi {{who}}", variables: ["who"] }) { promptId } }');
      return { resourceId: 'audited-prompt' };
    },
  ],
  [
    'updatePrompt',
    async () => {
      await gql('mutation { updatePrompt(promptId: "audited-prompt", input: { template: "Hello {{who}}", createNewVersion: true }) { promptId } }');
      return { resourceId: 'audited-prompt' };
    },
  ],
  [
    'testPrompt',
    async () => {
      await gql('mutation { testPrompt(promptId: "audited-prompt", input: { variables: { who: "Ann" } }) { __typename } }');
      return { resourceId: 'audited-prompt' };
    },
  ],
  [
    'runPromptAbTest',
    async () => {
      await gql(
        'mutation { runPromptAbTest(input: { promptA: { promptId: "audited-prompt", version: 1 }, promptB: { promptId: "audited-prompt", version: 2 }, testCases: [{ who: "Bo" }] }) { __typename } }',
      );
      return {};
    },
  ],
  [
    'promotePrompt',
    async () => {
      await gql('mutation { promotePrompt(input: { promptId: "audited-prompt", environment: "staging" }) { promptId } }');
      return { resourceId: 'audited-prompt' };
    },
  ],
  [
    'refinePrompt',
    async () => {
      llm.reply(() => 'Hello {{who}}, glad you are here!');
      try {
        await gql('mutation { refinePrompt(input: { promptId: "audited-prompt", refinementGoals: ["warmer"] }) { __typename } }');
      } finally {
        llm.reply(null);
      }
      return { resourceId: 'audited-prompt' };
    },
  ],
  [
    'createFragment',
    async () => {
      await gql('mutation { createFragment(input: { name: "audited-fragment", type: "role", content: "You are careful." }) { fragmentId } }');
      return { resourceId: 'audited-fragment' };
    },
  ],
  [
    'updateFragment',
    async () => {
      await gql('mutation { updateFragment(fragmentId: "audited-fragment", input: { content: "You are very careful." }) { fragmentId } }');
      return { resourceId: 'audited-fragment' };
    },
  ],
  [
    'deleteFragment',
    async () => {
      await gql('mutation { deleteFragment(fragmentId: "audited-fragment") { __typename } }');
      return { resourceId: 'audited-fragment' };
    },
  ],
  [
    'createChain',
    async () => {
      const d = await gql(
        'mutation { createChain(input: { name: "audited-chain", description: "d", steps: [{ order: 1, promptId: "audited-prompt", outputKey: "out" }] }) { chainId } }',
      );
      s.chainId = d.createChain.chainId;
      return { resourceId: s.chainId };
    },
  ],
  [
    'updateChain',
    async () => {
      await gql('mutation($id: ID!) { updateChain(chainId: $id, input: { description: "changed" }) { chainId } }', { id: s.chainId });
      return { resourceId: s.chainId };
    },
  ],
  [
    'executeChain',
    async () => {
      await gql('mutation($id: ID!) { executeChain(chainId: $id, input: { initialVariables: { who: "Cy" } }) { __typename } }', { id: s.chainId });
      return { resourceId: s.chainId };
    },
  ],
  [
    'deleteChain',
    async () => {
      await gql('mutation($id: ID!) { deleteChain(chainId: $id) { __typename } }', { id: s.chainId });
      return { resourceId: s.chainId };
    },
  ],
  [
    'deletePrompt',
    async () => {
      await gql('mutation { deletePrompt(promptId: "audited-prompt") { __typename } }');
      return { resourceId: 'audited-prompt' };
    },
  ],
  // ---- links (a links key, and anyone for the protected link's check)
  [
    'createLink',
    async () => {
      const d = await gql('mutation { createLink(input: { url: "https://example.com/audit", password: "link-password-1" }) { id } }', {}, s.linksKey);
      s.linkId = d.createLink.id;
      return { actorId: s.linksKeyId, resourceId: s.linkId, secrets: ['link-password-1', s.linksKey] };
    },
  ],
  [
    'verifyLink',
    async () => {
      await gql('mutation($id: ID!) { verifyLink(id: $id, password: "link-password-1") { __typename } }', { id: s.linkId }, null);
      return { actorKind: 'anonymous', actorId: null, resourceId: s.linkId, secrets: ['link-password-1'] };
    },
  ],
  [
    'updateLink',
    async () => {
      await gql('mutation($id: ID!) { updateLink(id: $id, input: { pin: "482913" }) { id } }', { id: s.linkId }, s.linksKey);
      return { actorId: s.linksKeyId, resourceId: s.linkId, secrets: ['482913', 'link-password-1'] };
    },
  ],
  [
    'deleteLink',
    async () => {
      await gql('mutation($id: ID!) { deleteLink(id: $id) { __typename } }', { id: s.linkId }, s.linksKey);
      return { actorId: s.linksKeyId, resourceId: s.linkId };
    },
  ],
  // ---- feedback (a person's session, minted by the admin key)
  [
    'signInLocally',
    async () => {
      const d = await gql<SignedIn<'signInLocally'>>('mutation { signInLocally(email: "ann@audit.test", name: "Ann") { token user { id } } }');
      s.ann = d.signInLocally.token;
      s.annId = d.signInLocally.user.id;
      const other = await gql<SignedIn<'signInLocally'>>('mutation { signInLocally(email: "bo@audit.test", name: "Bo") { token user { id } } }');
      s.boId = other.signInLocally.user.id;
      s.bo = other.signInLocally.token;
      return { secrets: [s.ann, s.bo], count: 2 } as Done;
    },
  ],
  [
    'signInWithProvider',
    async () => {
      const d = await gql<SignedIn<'signInWithProvider'>>(
        'mutation { signInWithProvider(provider: "github", code: "audit-code", redirectUri: "http://127.0.0.1/callback") { token user { id } } }',
        {},
        null,
      );
      return {
        actorKind: 'anonymous',
        actorId: null,
        resourceId: d.signInWithProvider.user.id,
        secrets: ['audit-code', 'gh-access-token-1', 'gh-client-secret-1', d.signInWithProvider.token],
      };
    },
  ],
  [
    'createFeedbackProject',
    async () => {
      const d = await gql('mutation { createFeedbackProject(input: { name: "Audited", description: "Audit trail test", slug: "audited" }) { id } }', {}, s.ann);
      s.projectId = d.createFeedbackProject.id;
      return { actorKind: 'user', actorId: s.annId, resourceId: s.projectId, secrets: [s.ann] };
    },
  ],
  [
    'updateFeedbackProject',
    async () => {
      await gql('mutation($id: ID!) { updateFeedbackProject(id: $id, input: { description: "changed" }) { id } }', { id: s.projectId }, s.ann);
      return { actorKind: 'user', actorId: s.annId, resourceId: s.projectId };
    },
  ],
  [
    'addProjectModerator',
    async () => {
      await gql('mutation($p: ID!, $u: ID!) { addProjectModerator(projectId: $p, userId: $u) { id } }', { p: s.projectId, u: s.boId }, s.ann);
      return { actorKind: 'user', actorId: s.annId, resourceId: s.projectId };
    },
  ],
  [
    'submitFeatureRequest',
    async () => {
      const d = await gql(
        'mutation($p: ID!) { submitFeatureRequest(projectId: $p, input: { title: "Dark mode", description: "Please" }) { id } }',
        { p: s.projectId },
        s.ann,
      );
      s.requestId = d.submitFeatureRequest.id;
      return { actorKind: 'user', actorId: s.annId, resourceId: s.requestId };
    },
  ],
  [
    'updateFeatureRequest',
    async () => {
      await gql('mutation($id: ID!) { updateFeatureRequest(requestId: $id, input: { description: "Please, soon" }) { id } }', { id: s.requestId }, s.ann);
      return { actorKind: 'user', actorId: s.annId, resourceId: s.requestId };
    },
  ],
  [
    'setFeatureRequestStatus',
    async () => {
      await gql('mutation($id: ID!) { setFeatureRequestStatus(requestId: $id, status: "approved") { id } }', { id: s.requestId }, s.ann);
      return { actorKind: 'user', actorId: s.annId, resourceId: s.requestId };
    },
  ],
  [
    'voteFeatureRequest',
    async () => {
      await gql('mutation($id: ID!) { voteFeatureRequest(requestId: $id, type: "upvote") { __typename } }', { id: s.requestId }, s.bo);
      return { actorKind: 'user', actorId: s.boId, resourceId: s.requestId };
    },
  ],
  [
    'unvoteFeatureRequest',
    async () => {
      await gql('mutation($id: ID!) { unvoteFeatureRequest(requestId: $id) { __typename } }', { id: s.requestId }, s.bo);
      return { actorKind: 'user', actorId: s.boId, resourceId: s.requestId };
    },
  ],
  [
    'addFeatureRequestComment',
    async () => {
      const d = await gql('mutation($id: ID!) { addFeatureRequestComment(requestId: $id, body: "Yes!") { id } }', { id: s.requestId }, s.bo);
      s.commentId = d.addFeatureRequestComment.id;
      return { actorKind: 'user', actorId: s.boId, resourceId: s.commentId };
    },
  ],
  [
    'updateFeatureRequestComment',
    async () => {
      await gql('mutation($id: ID!) { updateFeatureRequestComment(commentId: $id, body: "Yes, please") { id } }', { id: s.commentId }, s.bo);
      return { actorKind: 'user', actorId: s.boId, resourceId: s.commentId };
    },
  ],
  [
    'deleteFeatureRequestComment',
    async () => {
      await gql('mutation($id: ID!) { deleteFeatureRequestComment(commentId: $id) { __typename } }', { id: s.commentId }, s.bo);
      return { actorKind: 'user', actorId: s.boId, resourceId: s.commentId };
    },
  ],
  [
    'deleteFeatureRequest',
    async () => {
      await gql('mutation($id: ID!) { deleteFeatureRequest(requestId: $id) { __typename } }', { id: s.requestId }, s.ann);
      return { actorKind: 'user', actorId: s.annId, resourceId: s.requestId };
    },
  ],
  [
    'deleteFeedbackProject',
    async () => {
      await gql('mutation($id: ID!) { deleteFeedbackProject(id: $id) { __typename } }', { id: s.projectId }, s.ann);
      return { actorKind: 'user', actorId: s.annId, resourceId: s.projectId };
    },
  ],
  // ---- infrastructure (the admin key, and a person signing in with a password)
  [
    'createInfraUser',
    async () => {
      const d = await gql(
        'mutation { createInfraUser(input: { email: "dev@audit.test", name: "Dev", password: "infra-password-1", roles: ["developer"] }) { id } }',
      );
      s.infraUserId = d.createInfraUser.id;
      return { resourceId: s.infraUserId, secrets: ['infra-password-1'] };
    },
  ],
  [
    'infraLogin',
    async () => {
      const d = await gql('mutation { infraLogin(email: "dev@audit.test", password: "infra-password-1") { token } }', {}, null);
      s.infraToken = d.infraLogin.token;
      return { actorKind: 'anonymous', actorId: null, secrets: ['infra-password-1', s.infraToken] };
    },
  ],
  [
    'infraRefreshToken',
    async () => {
      const d = await gql('mutation { infraRefreshToken { token } }', {}, s.infraToken);
      return { actorKind: 'user', actorId: s.infraUserId, secrets: [s.infraToken, d.infraRefreshToken.token] };
    },
  ],
  [
    'updateInfraUser',
    async () => {
      await gql('mutation($id: ID!) { updateInfraUser(id: $id, input: { name: "Dev Two", password: "infra-password-2" }) { id } }', { id: s.infraUserId });
      return { resourceId: s.infraUserId, secrets: ['infra-password-2'] };
    },
  ],
  [
    'createInfraProject',
    async () => {
      const d = await gql('mutation { createInfraProject(input: { name: "Shop", visibility: "internal" }) { id } }');
      s.infraProjectId = d.createInfraProject.id;
      return { resourceId: s.infraProjectId };
    },
  ],
  [
    'updateInfraProject',
    async () => {
      await gql('mutation($id: ID!) { updateInfraProject(id: $id, input: { description: "changed" }) { id } }', { id: s.infraProjectId });
      return { resourceId: s.infraProjectId };
    },
  ],
  [
    'addInfraProjectMember',
    async () => {
      await gql('mutation($id: ID!, $u: ID!) { addInfraProjectMember(id: $id, userId: $u) { id } }', { id: s.infraProjectId, u: s.infraUserId });
      return { resourceId: s.infraProjectId };
    },
  ],
  [
    'removeInfraProjectMember',
    async () => {
      await gql('mutation($id: ID!, $u: ID!) { removeInfraProjectMember(id: $id, userId: $u) { id } }', { id: s.infraProjectId, u: s.infraUserId });
      return { resourceId: s.infraProjectId };
    },
  ],
  [
    'createInfraService',
    async () => {
      const d = await gql(
        'mutation($p: ID!) { createInfraService(input: { project: $p, name: "api", image: "registry.example.com/shop/api:1.0.0" }) { id } }',
        {
          p: s.infraProjectId,
        },
      );
      s.infraServiceId = d.createInfraService.id;
      return { resourceId: s.infraServiceId };
    },
  ],
  [
    'deployInfraService',
    async () => {
      await gql('mutation($id: ID!) { deployInfraService(id: $id, input: { image: "registry.example.com/shop/api:1.1.0" }) { __typename } }', {
        id: s.infraServiceId,
      });
      return { resourceId: s.infraServiceId };
    },
  ],
  [
    'rollbackInfraService',
    async () => {
      await gql('mutation($id: ID!) { rollbackInfraService(id: $id) { __typename } }', { id: s.infraServiceId });
      return { resourceId: s.infraServiceId };
    },
  ],
  [
    'createInfraWebhook',
    async () => {
      const d = await gql('mutation { createInfraWebhook(input: { url: "http://127.0.0.1:9/hook", events: ["deployment.completed"] }) { id } }');
      s.infraWebhookId = d.createInfraWebhook.id;
      return { resourceId: s.infraWebhookId };
    },
  ],
  [
    'deleteInfraWebhook',
    async () => {
      await gql('mutation($id: ID!) { deleteInfraWebhook(id: $id) { __typename } }', { id: s.infraWebhookId });
      return { resourceId: s.infraWebhookId };
    },
  ],
  [
    'deleteInfraService',
    async () => {
      await gql('mutation($id: ID!) { deleteInfraService(id: $id) { __typename } }', { id: s.infraServiceId });
      return { resourceId: s.infraServiceId };
    },
  ],
  [
    'deleteInfraProject',
    async () => {
      await gql('mutation($id: ID!) { deleteInfraProject(id: $id) { __typename } }', { id: s.infraProjectId });
      return { resourceId: s.infraProjectId };
    },
  ],
  [
    'deleteInfraUser',
    async () => {
      await gql('mutation($id: ID!) { deleteInfraUser(id: $id) { __typename } }', { id: s.infraUserId });
      return { resourceId: s.infraUserId };
    },
  ],
];

/** Mutations this test cannot make succeed by itself: none (a local model server and a local GitHub stand in for the outside ones). */
const NOT_SAMPLED: string[] = [];

describe('every mutation', () => {
  test('the sample table covers every Mutation field of the composed schema (a new mutation without a sample fails here)', () => {
    const sampled = SAMPLES.map(([field]) => field);
    assert.equal(new Set(sampled).size, sampled.length, 'each mutation once');
    assert.deepEqual([...sampled, ...NOT_SAMPLED].sort(), mutationFields);
  });

  test('every REST route that is not a GET runs a mutation of the table, or a query (which changes nothing)', () => {
    for (const surface of surfaces) {
      for (const route of surface.routes) {
        if (route.method === 'GET') continue;
        const op = parse(route.operation).definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)!;
        if (op.operation === 'query') continue;
        assert.equal(op.operation, 'mutation', `${route.method} ${surface.prefix}${route.path}`);
        for (const sel of op.selectionSet.selections) {
          assert.equal(sel.kind, Kind.FIELD);
          assert.ok(mutationFields.includes(sel.name.value), `${route.method} ${surface.prefix}${route.path} runs ${sel.name.value}`);
        }
      }
    }
  });

  test('each leaves exactly one entry: its operation, actor, address and agent, resource, field names, and no secret', async () => {
    // What the samples stand on: a links key, and a workflow with a webhook trigger.
    const links = await p.createKey({ name: 'links', service: 'links', permissions: ['link:read', 'link:write'] });
    s.linksKey = links.key;
    s.linksKeyId = links.id;
    s.hookWorkflowId = (
      await gql('mutation($i: CreateWorkflowInput!) { createWorkflow(input: $i) { workflowId } }', { i: { ...wf('Hooked', [hook, setNode]), active: true } })
    ).createWorkflow.workflowId;
    const adminId = (await p.platform.kernel.keys.authenticate(p.adminKey)).keyId;

    for (const [field, run] of SAMPLES) {
      const before = await newestId();
      const done = (await run()) as Done & { count?: number };
      const entries = await entriesAfter(before);
      assert.equal(entries.length, done.count ?? 1, `${field}: ${JSON.stringify(entries)}`);
      for (const e of entries) {
        assert.equal(e.operation, field);
        assert.equal(e.actor.kind, done.actorKind ?? 'apiKey', field);
        if (done.actorId !== undefined) assert.equal(e.actor.id, done.actorId, field);
        else assert.equal(e.actor.id, adminId, field);
        assert.equal(e.userAgent, UA, field);
        assert.match(e.ip, /127\.0\.0\.1/, field);
        assert.match(e.requestId, /^req_/, field);
        if (done.resourceId) assert.equal(e.resourceId, done.resourceId, `${field}: ${JSON.stringify(e)}`);
        assert.ok(Array.isArray(e.changedFields), field);
        const text = JSON.stringify(e);
        for (const secret of [p.adminKey, ...(done.secrets ?? [])]) assert.ok(!text.includes(secret), `${field}: the entry holds a secret: ${text}`);
      }
    }
  });
});

describe('mutations that end together', () => {
  test('each still leaves its own entry (they are written in one statement)', async () => {
    const before = await newestId();
    const made = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        gql('mutation($k: String!) { createWorkflowVariable(input: { key: $k, value: "v" }) { variableId } }', { k: `together_${i}` }),
      ),
    );
    const entries = await entriesAfter(before);
    assert.deepEqual(entries.map((e) => e.resourceId).sort(), made.map((d) => d.createWorkflowVariable.variableId).sort());
    assert.ok(entries.every((e) => e.operation === 'createWorkflowVariable' && e.userAgent === UA));
  });
});

describe('refused changes', () => {
  test('bad input, a missing permission, an unknown resource and no credential leave no entry', async () => {
    const before = await newestId();
    const reader = await p.createKey({ name: 'reader', permissions: ['agent:read'] });
    const afterKey = await newestId();
    await refused('mutation { createApiKey(input: { name: "", tier: "platinum" }) { apiKey } }', {}, 'validation_error');
    await refused('mutation { createApiKey(input: { name: "nope" }) { apiKey } }', {}, 'insufficient_permissions', reader.key);
    await refused('mutation { revokeApiKey(id: "00000000-0000-4000-8000-000000000000") { id } }', {}, 'resource_not_found');
    await refused(
      'mutation { createPrompt(input: { name: "x", description: "d", template: "t", variables: [] }) { promptId } }',
      {},
      'missing_authorization',
      null,
    );
    const rest = await p.rest('POST', '/v1/engine/workflows', { body: { name: '' } });
    assert.equal(rest.status, 400);
    const restDenied = await p.rest('POST', '/v1/promptlib/prompts', { key: reader.key, body: { name: 'x', description: 'd', template: 't', variables: [] } });
    assert.equal(restDenied.status, 403);
    assert.equal(afterKey, before + 1, 'only the reader key was made');
    assert.equal(await newestId(), afterKey, 'the refusals left no entry');
  });
});

describe('REST and reading', () => {
  test("a REST change is recorded as its mutation, with the REST caller's address and agent", async () => {
    const before = await newestId();
    const res = await p.rest<Platform<{ api_key_id: string; api_key: string }>>('POST', '/control-plane/api/v1/auth/api-keys', {
      body: { name: 'by rest', permissions: ['agent:read'] },
      headers: { 'user-agent': 'curl/8.0' },
    });
    assert.equal(res.status, 201);
    const [entry, ...more] = await entriesAfter(before);
    assert.equal(more.length, 0);
    assert.ok(entry);
    assert.equal(entry.operation, 'createApiKey');
    assert.equal(entry.resourceType, 'ApiKey');
    assert.equal(entry.resourceId, res.body.data.api_key_id);
    assert.equal(entry.userAgent, 'curl/8.0');
    assert.deepEqual(entry.changedFields, ['name', 'permissions']);
    assert.ok(!JSON.stringify(entry).includes(res.body.data.api_key));
  });

  test("a protected link unlocked through the service's own routes (REST verify, the gate page's form) is recorded as verifyLink; a wrong PIN is not", async () => {
    const links = await p.createKey({ name: 'links-2', service: 'links', permissions: ['link:read', 'link:write'] });
    const created = await gql('mutation { createLink(input: { url: "https://example.com/gate", pin: "735190" }) { id slug } }', {}, links.key);
    const { id, slug } = created.createLink;
    const before = await newestId();
    const wrong = await p.rest('POST', `/links/api/links/${id}/verify`, { key: null, body: { pin: '000000' } });
    assert.equal(wrong.status, 401, JSON.stringify(wrong.body));
    assert.equal(await newestId(), before, 'a wrong PIN leaves no entry');
    const rest = await p.rest('POST', `/links/api/links/${id}/verify`, { key: null, body: { pin: '735190' }, headers: { 'user-agent': 'gate-client/2' } });
    assert.equal(rest.status, 200, JSON.stringify(rest.body));
    const form = await fetch(`${p.url}/links/${slug}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'browser/1' },
      body: 'pin=735190',
      redirect: 'manual',
    });
    assert.ok(form.status >= 300 && form.status < 400, String(form.status));
    const entries = await entriesAfter(before);
    assert.deepEqual(
      entries.map((e) => [e.operation, e.actor.kind, e.resourceId, e.userAgent, e.changedFields]),
      [
        ['verifyLink', 'anonymous', id, 'gate-client/2', ['pin']],
        ['verifyLink', 'anonymous', id, 'browser/1', ['pin']],
      ],
    );
    assert.ok(!JSON.stringify(entries).includes('735190'));
  });

  test('GET /v1/audit filters by actor, operation, resource and time, and pages; auditEntries answers the same', async () => {
    const a = await p.createKey({ name: 'filter-a', permissions: ['keys:manage', 'audit:read'] });
    const mark = new Date();
    for (const name of ['f1', 'f2', 'f3']) {
      const r = await p.rest('POST', '/control-plane/api/v1/auth/api-keys', { key: a.key, body: { name, permissions: ['audit:read'] } });
      assert.equal(r.status, 201, JSON.stringify(r.body));
    }
    const byActor = await p.rest<V1<AuditPage>>('GET', `/v1/audit?actor=${a.id}&limit=2`, { key: a.key });
    assert.equal(byActor.status, 200, JSON.stringify(byActor.body));
    assert.equal(byActor.body.success, true);
    const page1 = byActor.body.data;
    assert.equal(page1.pagination.total, 3);
    assert.equal(page1.pagination.hasMore, true);
    assert.equal(page1.entries.length, 2);
    const page2 = (await p.rest<V1<AuditPage>>('GET', `/v1/audit?actor=${a.id}&limit=2&offset=2`, { key: a.key })).body.data;
    assert.equal(page2.entries.length, 1);
    assert.equal(page2.pagination.hasMore, false);
    const ids = [...page1.entries, ...page2.entries].map((e) => Number(e.id));
    assert.deepEqual(
      ids,
      [...ids].sort((x, y) => y - x),
      'newest first',
    );
    assert.equal((await p.rest<V1<AuditPage>>('GET', '/v1/audit?actor=filter-a', { key: a.key })).body.data.pagination.total, 3, 'by key name');

    const first = page2.entries[0]!;
    const byResource = (await p.rest<V1<AuditPage>>('GET', `/v1/audit?resourceType=ApiKey&resourceId=${first.resourceId}`)).body.data;
    assert.deepEqual(
      byResource.entries.map((e) => e.id),
      [first.id],
    );
    const byOperation = (await p.rest<V1<AuditPage>>('GET', `/v1/audit?operation=revokeApiKey&actor=${a.id}`)).body.data;
    assert.equal(byOperation.pagination.total, 0);
    const since = (await p.rest<V1<AuditPage>>('GET', `/v1/audit?since=${mark.toISOString()}&actor=${a.id}`)).body.data;
    assert.equal(since.pagination.total, 3);
    const until = (await p.rest<V1<AuditPage>>('GET', `/v1/audit?until=${mark.toISOString()}&actor=${a.id}`)).body.data;
    assert.equal(until.pagination.total, 0);

    const viaGraphql = await gql<{ auditEntries: AuditPage }>(
      'query($a: String) { auditEntries(actor: $a, limit: 2) { entries { id operation } pagination { total } } }',
      { a: a.id },
    );
    assert.deepEqual(
      viaGraphql.auditEntries.entries.map((e) => e.id),
      page1.entries.map((e) => e.id),
    );

    const bad = await p.rest<V1<never>>('GET', '/v1/audit?limit=1000');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.code, 'validation_error');
  });

  test('reading takes audit:read: 403 without it, 401 without a key', async () => {
    const other = await p.createKey({ name: 'no-audit', permissions: ['agent:read'] });
    const denied = await p.rest<V1<never>>('GET', '/v1/audit', { key: other.key });
    assert.equal(denied.status, 403);
    assert.equal(denied.body.error.code, 'insufficient_permissions');
    assert.equal((await p.rest('GET', '/v1/audit', { key: null })).status, 401);
    await refused('{ auditEntries { pagination { total } } }', {}, 'insufficient_permissions', other.key);
  });
});

describe('append-only', () => {
  test("the platform's database user cannot change or delete an entry, nor empty the table; only the retention sweep deletes, and only old entries", async () => {
    const db = p.platform.kernel.db;
    const [{ id }] = await db.query(`SELECT max(id)::text AS id FROM platform.audit_log`);
    await assert.rejects(db.query(`UPDATE platform.audit_log SET actor_name = 'x' WHERE id = $1`, [id]), /append-only/);
    await assert.rejects(db.query(`DELETE FROM platform.audit_log WHERE id = $1`, [id]), /append-only/);
    await assert.rejects(db.query(`TRUNCATE platform.audit_log`), /append-only/);
    const total = (await db.query(`SELECT count(*)::int AS n FROM platform.audit_log`))[0].n;
    assert.equal(await p.platform.kernel.audit.sweep(365), 0, 'nothing is past the retention');
    assert.equal((await db.query(`SELECT count(*)::int AS n FROM platform.audit_log`))[0].n, total);

    // An entry past the retention (written back-dated, as the sweep would find a year-old one).
    const [{ id: old }] = await db.query(
      `INSERT INTO platform.audit_log (at, actor_kind, subgraph, operation, resource_type) VALUES (now() - interval '400 days', 'anonymous', 'links', 'createLink', 'Link') RETURNING id::text AS id`,
    );
    await assert.rejects(db.query(`DELETE FROM platform.audit_log WHERE id = $1`, [old]), /append-only/, 'not even an old one outside the sweep');
    await assert.rejects(
      db.transaction(async (m) => {
        await m.query(`SELECT set_config('platform.audit_retention_days', '365', true)`);
        await m.query(`DELETE FROM platform.audit_log WHERE id = $1`, [id]);
      }),
      /append-only/,
      'naming the retention does not open a young entry',
    );
    assert.equal(await p.platform.kernel.audit.sweep(500), 0, 'a longer retention keeps it');
    assert.equal(await p.platform.kernel.audit.sweep(365), 1, 'the sweep deletes it');
    assert.equal((await db.query(`SELECT count(*)::int AS n FROM platform.audit_log WHERE id = $1`, [old]))[0].n, 0);
    assert.equal((await db.query(`SELECT count(*)::int AS n FROM platform.audit_log`))[0].n, total);
  });
});

describe('split mode', () => {
  test('a change made in a remote subgraph is recorded with the caller the gateway handed over: key, address and User-Agent', async () => {
    const split = await startSplitTopology({}, 'engine');
    try {
      const created = (await split.call('POST', '/v1/engine/workflows', wf('Remote', [manual, setNode]))) as JsonAnswer<V1<{ workflowId: string }>>;
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const workflowId = created.body.data.workflowId;
      const listed = (await split.call('GET', `/v1/audit?resourceId=${workflowId}`)) as JsonAnswer<V1<AuditPage>>;
      assert.equal(listed.status, 200, JSON.stringify(listed.body));
      const [entry, ...more] = listed.body.data.entries;
      assert.equal(more.length, 0);
      assert.ok(entry);
      assert.equal(entry.service, 'engine');
      assert.equal(entry.operation, 'createWorkflow');
      assert.equal(entry.actor.kind, 'apiKey');
      assert.equal(entry.actor.name, 'bootstrap');
      assert.match(entry.ip, /127\.0\.0\.1/);
      assert.equal(entry.userAgent, 'node', "fetch's own User-Agent, as the gateway received it");
      assert.match(entry.requestId, /^req_/);
    } finally {
      await split.stop();
    }
  });
});
