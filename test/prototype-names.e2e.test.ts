import assert from 'node:assert/strict';
import { startTestPlatform, type JsonAnswer, type TestPlatform } from './support/platform';
import { until } from './support/until';

/**
 * Every Object.prototype name (`constructor`, `__proto__`, `toString`, `hasOwnProperty`, …) is a
 * name like any other wherever the platform looks a client's name up: a 4xx in the surface's
 * envelope, or the answer the name deserves, never a 500 and never Object.prototype's member
 * standing in for an entry. First every REST route of the published route tables (path
 * parameters, query parameters, body fields), then the places a route's generic request cannot
 * reach (metric names, sort keys, gate criteria, output keys, prompt variables, …).
 */

const NAMES = Object.getOwnPropertyNames(Object.prototype);
const ID = '00000000-0000-4000-8000-000000000000';

let p: TestPlatform;
/** One key per name and purpose: per-key limits (5 custom metric queries a minute) never refuse a case. */
const keys = new Map<string, string>();
const keyFor = async (purpose: string, name: string) => {
  const id = `${purpose}\n${name}`;
  if (!keys.has(id)) keys.set(id, (await p.createKey({ permissions: ['*'], tier: 'enterprise' })).key);
  return keys.get(id)!;
};

beforeAll(async () => {
  p = await startTestPlatform();
  const prompt = await p.rest('POST', '/v1/promptlib/prompts', { body: { name: 'probe', description: 'd', template: 'Hi {{who}}', variables: ['who'] } });
  assert.equal(prompt.status, 201, JSON.stringify(prompt.body));
  assert.equal((await p.rest('PUT', '/v1/promptlib/prompts/probe', { body: { status: 'active' } })).status, 200);
});
afterAll(async () => {
  await p?.stop();
});

/** An error's details in any envelope, in the fields the checks read. */
interface Details {
  errors?: { field: string }[];
  failed_criteria?: unknown;
}

/** The resources the checks read inside `data`: each check reads the fields of the one it asked for. */
interface Data {
  taskId: string;
  orchestrationId: string;
  promptId: string;
  chainId: string;
  executionId: string;
  rendered: string;
  status: string;
  error?: { code?: string; details?: Details } | null;
  result?: { filesCreated?: string[]; output?: Record<string, unknown> | null; step_1?: Record<string, unknown> };
  completedSteps: { output: string }[];
}

/**
 * A body as the checks read it, whatever its surface: every envelope's fields, each optional (the
 * checks test which are there); an error is `{code, details}`, or its code alone (/feedback, /infra).
 */
interface Body {
  success?: boolean;
  message?: unknown;
  requestId?: unknown;
  meta?: { requestId?: unknown };
  metadata?: { request_id?: unknown };
  error?: string | { code?: string; details?: Details };
  details?: Details;
  errors?: { extensions?: { code?: string; details?: Details } }[];
  data: Data;
}
/** An answer's status and body: parsed JSON, or the text where it is not JSON. */
type Sent = JsonAnswer<Body>;

async function send<T = Body>(key: string, method: string, path: string, body?: unknown): Promise<JsonAnswer<T>> {
  const res = await fetch(p.url + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    redirect: 'manual',
  });
  const text = await res.text();
  try {
    return { status: res.status, body: JSON.parse(text) as T };
  } catch {
    // Not JSON: the text, in which the checks find none of a body's fields.
    return { status: res.status, body: text as unknown as T };
  }
}

/** A JSON object with one entry `name` (a literal `{ [name]: v }` would set the prototype for `__proto__`). */
const entry = (name: string, value: unknown) => JSON.parse(`{${JSON.stringify(name)}:${JSON.stringify(value)}}`) as Record<string, unknown>;

/** Whether an error answer is in the envelope of the surface `path` falls under. */
function inErrorEnvelope(path: string, body: Body): boolean {
  const error = typeof body?.error === 'object' ? body.error : undefined;
  if (path.startsWith('/v1/')) return body?.success === false && typeof error?.code === 'string' && typeof body.meta?.requestId === 'string';
  if (/^\/(control-plane|promptlib|engine)\/api\/v1\//.test(path))
    return body?.success === false && typeof error?.code === 'string' && typeof body.metadata?.request_id === 'string';
  if (path.startsWith('/links/api/')) return body?.success === false && typeof error?.code === 'string';
  if (path.startsWith('/feedback/api/v1/')) return body?.success === false && typeof body.message === 'string' && body.error !== undefined;
  if (path.startsWith('/infra/api/v1/')) return typeof body?.error === 'string' && typeof body.message === 'string' && typeof body.requestId === 'string';
  if (path.startsWith('/graphql')) return typeof body?.errors?.[0]?.extensions?.code === 'string';
  return true; // pages and the Prometheus text have no JSON envelope
}

/** A problem with an answer that should be a 4xx in the envelope or a 2xx, else undefined. */
function problem(what: string, path: string, res: Sent): string | undefined {
  // A sign-in this platform has not configured answers 503 service_unavailable, in the envelope: a refusal, not a crash.
  const unconfigured = res.status === 503 && (res.body as Body | undefined)?.error === 'service_unavailable';
  if (res.status >= 500 && !unconfigured) return `${what}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`;
  if (res.status >= 400 && !inErrorEnvelope(path, res.body))
    return `${what}: ${res.status} not in the surface's envelope: ${JSON.stringify(res.body).slice(0, 200)}`;
  return undefined;
}

type Schema = { type?: string | string[]; properties?: Record<string, Schema>; items?: Schema; enum?: unknown[] };

/** A body of `schema`'s shape with `name` in every string, as every key of free-form objects and in every list. */
function filled(schema: Schema | undefined, name: string, depth = 0): unknown {
  const type = Array.isArray(schema?.type) ? schema.type.find((t) => t !== 'null') : schema?.type;
  if (!schema || depth > 4 || schema.enum || type === 'string') return name;
  if (type === 'integer' || type === 'number') return 1;
  if (type === 'boolean') return true;
  if (type === 'array') return [filled(schema.items, name, depth + 1)];
  if (type === 'object' || schema.properties) {
    if (!schema.properties) return entry(name, name);
    return Object.fromEntries(Object.entries(schema.properties).map(([k, s]) => [k, filled(s, name, depth + 1)]));
  }
  return name;
}

describe('every route of the route tables', () => {
  test('each Object.prototype name as every path parameter, query parameter and body field: never a 500, errors in the envelope', async () => {
    const doc = (
      await send<{
        paths: Record<string, Record<string, { parameters?: { name: string; in: string }[]; requestBody?: { content?: Record<string, { schema?: Schema }> } }>>;
      }>(p.adminKey, 'GET', '/openapi.json')
    ).body;
    const failures: string[] = [];
    let sent = 0;
    // The names in parallel, each with its own key; the routes of one name in turn.
    await Promise.all(
      NAMES.map(async (name) => {
        const key = await keyFor('routes', name);
        for (const [template, operations] of Object.entries(doc.paths)) {
          for (const [method, op] of Object.entries(operations)) {
            const params = op.parameters ?? [];
            const path = (named?: string) => template.replace(/\{(\w+)\}/g, (_, param: string) => encodeURIComponent(param === named ? name : ID));
            const requests: [string, unknown][] = [];
            for (const param of params.filter((x) => x.in === 'path')) requests.push([path(param.name), undefined]);
            for (const param of params.filter((x) => x.in === 'query')) requests.push([`${path()}?${param.name}=${encodeURIComponent(name)}`, undefined]);
            requests.push([`${path()}?${encodeURIComponent(name)}=x`, undefined]);
            const schema = op.requestBody?.content?.['application/json']?.schema;
            if (schema) requests.push([path(), filled(schema, name)], [path(), entry(name, name)]);
            for (const [url, body] of requests) {
              const res = await send(key, method.toUpperCase(), url, body ?? (['post', 'put', 'patch'].includes(method) ? {} : undefined));
              sent++;
              const wrong = problem(`${method.toUpperCase()} ${url}${body === undefined ? '' : ` ${JSON.stringify(body).slice(0, 120)}`}`, url, res);
              if (wrong) failures.push(wrong);
            }
          }
        }
      }),
    );
    assert.ok(sent > 1000, `the route tables were read (${sent} requests)`);
    assert.deepEqual(failures, []);
  });
});

const TIME_RANGE = { start: '2026-01-01T00:00:00Z', end: '2026-02-01T00:00:00Z' };
const METRICS = '/v1/control-plane/metrics/query';
const ORCH = '/v1/control-plane/orchestration';
const research = (task: Record<string, unknown> = {}, stage: Record<string, unknown> = {}) => ({
  name: 'probe',
  stages: [{ stage: 'RESEARCH', ...stage, tasks: [{ agentId: 'factory-orchestrator', taskType: 'plan-delivery', context: { objective: 'o' }, ...task }] }],
});

/** The error of an answer whatever its envelope: code, and the fields its details name. */
function errorOf(body: Body): { code?: string; fields: string[] } {
  const e = body?.errors?.[0]?.extensions ?? (typeof body?.error === 'object' ? body.error : undefined);
  const details = e?.details ?? body?.details;
  return { code: e?.code, fields: (details?.errors ?? []).map((x) => x.field) };
}

/**
 * One place a name is looked up: the request that puts `name` there, and what the answer must be
 * beyond "a 4xx in the envelope or a 2xx" (`check` throws, or returns a description of what is wrong).
 */
interface Place {
  place: string;
  request: (name: string) => [string, string, unknown?];
  check?: (res: Sent, name: string, key: string) => Promise<string | void> | string | void;
}

const refused =
  (status: number, code: string, field?: string) =>
  (res: Sent): string | void => {
    const e = errorOf(res.body);
    if (res.status !== status || e.code !== code || (field && !e.fields.includes(field)))
      return `wanted ${status} ${code}${field ? ` on ${field}` : ''}, got ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`;
  };

/** A task run to its end (sync mode answers at once; the rest is polled). */
async function finishedTask(res: Sent, key: string): Promise<Data> {
  assert.ok(res.status === 200 || res.status === 201 || res.status === 202, JSON.stringify(res.body));
  const id = res.body.data.taskId;
  return until(`task ${id} to finish`, async () => {
    const task = (await send(key, 'GET', `/v1/control-plane/agents/tasks/${id}`)).body.data;
    return ['completed', 'failed', 'cancelled'].includes(task.status) ? task : null;
  });
}

const PLACES: Place[] = [
  // Control plane: the custom metrics query (REST and GraphQL) and the task list's sort key.
  {
    place: 'metrics query: metric',
    request: (n) => ['POST', METRICS, { metric: n, aggregation: 'avg', timeRange: TIME_RANGE }],
    check: refused(400, 'validation_error', 'metric'),
  },
  {
    place: 'metrics query: aggregation',
    request: (n) => ['POST', METRICS, { metric: 'agent_duration', aggregation: n, timeRange: TIME_RANGE }],
    check: refused(400, 'validation_error', 'aggregation'),
  },
  {
    place: 'metrics query: groupBy',
    request: (n) => ['POST', METRICS, { metric: 'agent_duration', aggregation: 'avg', groupBy: [n], timeRange: TIME_RANGE }],
    check: refused(400, 'validation_error', 'groupBy'),
  },
  {
    place: 'metrics query: a filter',
    request: (n) => ['POST', METRICS, { metric: 'agent_duration', aggregation: 'avg', filters: entry(n, 'x'), timeRange: TIME_RANGE }],
    check: (res, n) => refused(400, 'validation_error', `filters.${n}`)(res),
  },
  {
    place: 'GraphQL metricsQuery: metric',
    request: (n) => [
      'POST',
      '/graphql',
      {
        query: 'query($input: MetricsQueryInput!) { metricsQuery(input: $input) { metric } }',
        variables: { input: { metric: n, aggregation: 'avg', timeRange: TIME_RANGE } },
      },
    ],
    check: refused(400, 'validation_error', 'metric'),
  },
  {
    place: 'task list: sortBy',
    request: (n) => ['GET', `/v1/control-plane/agents/tasks?sortBy=${encodeURIComponent(n)}`],
    check: refused(400, 'validation_error', 'sortBy'),
  },
  // Agents: names of agents, task types, context fields, and the values a task looks up.
  {
    place: 'agent task: agentId',
    request: (n) => ['POST', '/v1/control-plane/agents/execute', { agentId: n, taskType: 'write-runbook', context: { service: 'api', scenario: 'x' } }],
    check: refused(404, 'AGENT_NOT_FOUND'),
  },
  {
    place: 'agent task: taskType',
    request: (n) => ['POST', '/v1/control-plane/agents/execute', { agentId: 'runbook-writer', taskType: n, context: { service: 'api', scenario: 'x' } }],
    check: refused(400, 'INVALID_TASK_TYPE'),
  },
  {
    place: 'agent task: a context field',
    request: (n) => [
      'POST',
      '/v1/control-plane/agents/execute',
      { agentId: 'runbook-writer', taskType: 'write-runbook', context: { service: 'api', scenario: 'x', ...entry(n, 'v') }, execution: { mode: 'sync' } },
    ],
    check: async (res, _n, key) => {
      const task = await finishedTask(res, key);
      if (task.status !== 'completed') return `the task ended ${task.status}: ${JSON.stringify(task.error)}`;
    },
  },
  {
    place: 'agent task: the language of a file (its extension)',
    request: (n) => [
      'POST',
      '/v1/control-plane/agents/execute',
      { agentId: 'backend-engineer', taskType: 'implement-endpoint', context: { specification: 'GET /orders', language: n }, execution: { mode: 'sync' } },
    ],
    check: async (res, _n, key) => {
      const task = await finishedTask(res, key);
      // An unknown language is TypeScript's, as for any other unknown name.
      if (task.result?.filesCreated?.[0] !== 'src/get-orders.ts') return `files ${JSON.stringify(task.result?.filesCreated)}`;
    },
  },
  {
    place: 'agent task: a named severity',
    request: (n) => [
      'POST',
      '/v1/control-plane/agents/execute',
      {
        agentId: 'postmortem-analyst',
        taskType: 'write-postmortem',
        context: { incident: 'db down', timeline: '10:00 down', severity: n },
        execution: { mode: 'sync' },
      },
    ],
    check: async (res, _n, key) => {
      const output = (await finishedTask(res, key)).result?.output;
      if (!output || !Object.hasOwn(output, 'severity') || output.severity !== null) return `output ${JSON.stringify(output)}`;
    },
  },
  // Gates and orchestrations: stage names, criteria, task ids and dependencies.
  {
    place: 'validate-gate: stage',
    request: (n) => ['POST', `${ORCH}/validate-gate`, { stage: n, gateType: 'exit', outputs: {} }],
    check: refused(400, 'validation_error', 'stage'),
  },
  {
    place: 'orchestration: stage',
    request: (n) => ['POST', `${ORCH}/create`, { ...research(), stages: [{ stage: n, tasks: research().stages[0]!.tasks }] }],
    check: refused(400, 'validation_error'),
  },
  { place: 'orchestration: agentId', request: (n) => ['POST', `${ORCH}/create`, research({ agentId: n })], check: refused(404, 'AGENT_NOT_FOUND') },
  { place: 'orchestration: taskType', request: (n) => ['POST', `${ORCH}/create`, research({ taskType: n })], check: refused(400, 'INVALID_TASK_TYPE') },
  { place: 'orchestration: a dependency', request: (n) => ['POST', `${ORCH}/create`, research({ id: 'a', dependencies: [n] })] },
  { place: 'orchestration: a stage dependency', request: (n) => ['POST', `${ORCH}/create`, research({ id: 'a', dependencies: [`stage:${n}`] })] },
  {
    place: 'orchestration: an exit gate criterion no output meets',
    request: (n) => ['POST', `${ORCH}/create`, research({}, { gateValidation: { exit: { required: [n] } } })],
    check: async (res, n, key) => {
      if (res.status !== 201) return `${res.status} ${JSON.stringify(res.body).slice(0, 300)}`;
      const id = res.body.data.orchestrationId;
      const done = await until(`orchestration ${id} to end`, async () => {
        const o = (await send(key, 'GET', `${ORCH}/status/${id}`)).body.data;
        return ['completed', 'failed', 'cancelled'].includes(o.status) ? o : null;
      });
      const failed = (done.error?.details?.failed_criteria ?? []) as { criterion: string; actual: unknown }[];
      if (done.status !== 'failed' || done.error?.code !== 'forge_gate_failure' || !failed.some((c) => c.criterion === n && c.actual === null))
        return `the gate requiring "${n}" passed without it: ${done.status} ${JSON.stringify(done.error ?? null).slice(0, 300)}`;
    },
  },
  {
    place: 'alternate workflow: stage',
    request: (n) => [
      'POST',
      '/control-plane/api/v1/orchestration/workflows',
      { name: 'x', agents: [{ agent_id: 'factory-orchestrator', stage: n, context: { objective: 'o' } }] },
    ],
    check: refused(400, 'validation_error'),
  },
  // API keys: permissions, tiers, services, environments.
  {
    place: 'api key: a permission',
    request: (n) => ['POST', '/control-plane/api/v1/auth/api-keys', { name: 'x', permissions: [n] }],
    check: refused(400, 'validation_error'),
  },
  { place: 'api key: tier', request: (n) => ['POST', '/control-plane/api/v1/auth/api-keys', { name: 'x', tier: n }], check: refused(400, 'validation_error') },
  {
    place: 'api key: service',
    request: (n) => ['POST', '/control-plane/api/v1/auth/api-keys', { name: 'x', service: n }],
    check: refused(400, 'validation_error'),
  },
  {
    place: 'api key: environment',
    request: (n) => ['POST', '/control-plane/api/v1/auth/api-keys', { name: 'x', environment: n }],
    check: refused(400, 'validation_error'),
  },
  // Prompt library: variables, fragments, models, chain output keys and mappings.
  {
    place: 'prompt: a variable, rendered',
    request: (n) => ['POST', '/v1/promptlib/prompts', { name: `v-${slug(n)}`, description: 'd', template: `Hi {{${n}}}`, variables: [n] }],
    check: async (res, n, key) => {
      if (res.status !== 201) return; // refused as a variable name: fine
      const id = res.body.data.promptId;
      await send(key, 'PUT', `/v1/promptlib/prompts/${id}`, { status: 'active' });
      const given = await send(key, 'POST', `/v1/promptlib/prompts/${id}/render`, { variables: entry(n, 'you') });
      if (given.status !== 200 || given.body.data.rendered !== 'Hi you')
        return `rendered with the variable: ${given.status} ${JSON.stringify(given.body).slice(0, 200)}`;
      const missing = await send(key, 'POST', `/v1/promptlib/prompts/${id}/render`, { variables: {} });
      return refused(400, 'validation_error', `variables.${n}`)(missing);
    },
  },
  {
    place: 'prompt: a fragment reference',
    request: (n) => ['POST', '/v1/promptlib/prompts', { name: `f-${slug(n)}`, description: 'd', template: `Hi {{fragment:${n}}}`, variables: [] }],
  },
  {
    place: 'prompt test: model',
    request: (n) => ['POST', '/v1/promptlib/prompts/probe/test', { variables: { who: 'a' }, model: n }],
    check: refused(400, 'validation_error', 'model'),
  },
  {
    place: 'prompt test: a variable not in the template',
    request: (n) => ['POST', '/v1/promptlib/prompts/probe/render', { variables: { who: 'a', ...entry(n, 'x') } }],
  },
  {
    place: 'fragment: type',
    request: (n) => ['POST', '/v1/promptlib/fragments', { name: `t-${slug(n)}`, type: n, content: 'x' }],
    check: refused(400, 'validation_error', 'type'),
  },
  {
    place: 'chain: an output key, mapped into the next step',
    request: (n) => [
      'POST',
      '/v1/promptlib/chains',
      {
        name: `o-${slug(n)}`,
        description: 'd',
        steps: [
          { order: 1, promptId: 'probe', outputKey: n },
          { order: 2, promptId: 'probe', outputKey: 'next', inputMapping: { who: `step_1.${n}` } },
        ],
      },
    ],
    check: async (res, n, key) => {
      if (res.status !== 201) return `${res.status} ${JSON.stringify(res.body).slice(0, 300)}`;
      const started = await send(key, 'POST', `/v1/promptlib/chains/${res.body.data.chainId}/execute`, { initialVariables: { who: 'Ada' } });
      if (started.status !== 202) return `execute: ${started.status} ${JSON.stringify(started.body).slice(0, 300)}`;
      const done = await until('the chain to end', async () => {
        const e = (await send(key, 'GET', `/v1/promptlib/chains/executions/${started.body.data.executionId}`)).body.data;
        return e.status === 'running' ? null : e;
      });
      const first = done.result?.step_1;
      if (done.status !== 'completed' || !first || !Object.hasOwn(first, n) || typeof first[n] !== 'string')
        return `step 1's output under "${n}": ${JSON.stringify(done).slice(0, 400)}`;
      // The second step was given the first one's output, not Object.prototype's member.
      if (!done.completedSteps[1].output.includes('Hi [offline model]')) return `step 2 got ${JSON.stringify(done.completedSteps[1].output)}`;
    },
  },
  {
    place: "chain: a step's variable neither given nor mapped",
    request: (n) => ['POST', '/v1/promptlib/prompts', { name: `c-${slug(n)}`, description: 'd', template: `Hi {{${n}}}`, variables: [n] }],
    check: async (res, n, key) => {
      if (res.status !== 201) return;
      const id = res.body.data.promptId;
      await send(key, 'PUT', `/v1/promptlib/prompts/${id}`, { status: 'active' });
      const chain = await send(key, 'POST', '/v1/promptlib/chains', {
        name: `cm-${slug(n)}`,
        description: 'd',
        steps: [{ order: 1, promptId: id, outputKey: 'out' }],
      });
      if (chain.status !== 201) return `chain: ${chain.status} ${JSON.stringify(chain.body).slice(0, 300)}`;
      const started = await send(key, 'POST', `/v1/promptlib/chains/${chain.body.data.chainId}/execute`, { initialVariables: {} });
      return refused(400, 'validation_error', `initialVariables.${n}`)(started);
    },
  },
  // Links and the infrastructure service.
  {
    place: 'link: classification',
    request: (n) => ['POST', '/links/api/links', { url: 'https://example.com/', content_classification: n }],
    check: refused(400, 'validation_error'),
  },
  {
    place: 'link: a slug, followed',
    request: (n) => ['POST', '/links/api/links', { url: 'https://example.com/dest', custom_slug: n }],
    check: async (res, n) => {
      if (res.status !== 201) return;
      const followed = await fetch(`${p.url}/links/${encodeURIComponent(n)}`, { redirect: 'manual' });
      if (followed.status !== 302 || followed.headers.get('location') !== 'https://example.com/dest') return `GET /links/${n}: ${followed.status}`;
    },
  },
  {
    place: 'infra: a role',
    request: (n) => ['POST', '/infra/api/v1/users', { email: `${slug(n)}@example.com`, name: 'u', password: 'password-123456', roles: [n] }],
  },
  { place: 'infra: a webhook event', request: (n) => ['POST', '/infra/api/v1/webhooks', { url: 'https://example.com/h', events: [n] }] },
  { place: 'infra: visibility', request: (n) => ['POST', '/infra/api/v1/projects', { name: `p-${slug(n)}`, visibility: n }] },
];

/** A slug-safe stand-in for a name (names like `__proto__` are not valid ids). */
function slug(name: string): string {
  return (
    name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '') || 'x'
  );
}

describe('every place a name is looked up', () => {
  test('each Object.prototype name in each place: the answer a name like any other gets', async () => {
    const failures: string[] = [];
    for (const { place, request, check } of PLACES) {
      for (const name of NAMES) {
        const key = await keyFor(place, name);
        const [method, path, body] = request(name);
        const res = await send(key, method, path, body);
        const wrong = problem(name, path, res) ?? (check && (await check(res, name, key)));
        if (wrong) failures.push(`${place}, ${name}: ${wrong}`);
      }
    }
    assert.deepEqual(failures, []);
  });
});
