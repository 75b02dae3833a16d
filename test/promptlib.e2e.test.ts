import assert from 'node:assert/strict';
import type { ErrorBody, Gql, Platform, V1 } from './support/answers';
import { startFakeLlm, type FakeLlm } from './support/fake-llm';
import type { Answer as Documented } from './support/openapi-client';
import type { paths } from './support/openapi-types';
import { startTestPlatform, type Answer, type TestPlatform } from './support/platform';
import { sleep, untilValue } from './support/until';

/** The `data` of a success as the API document gives it for `method path`. */
type Data<P extends keyof paths, M extends 'get' | 'post' | 'put' | 'delete'> = Documented<NonNullable<paths[P][M]>> extends { data: infer D } ? D : never;
type PromptList = Data<'/v1/promptlib/prompts', 'get'>;
type PromptCreated = Data<'/v1/promptlib/prompts', 'post'>;
type Prompt = Data<'/v1/promptlib/prompts/{promptId}', 'get'>;
type PromptUpdated = Data<'/v1/promptlib/prompts/{promptId}', 'put'>;
type PromptDeleted = Data<'/v1/promptlib/prompts/{promptId}', 'delete'>;
type TestRun = Data<'/v1/promptlib/prompts/{promptId}/test', 'post'>;
type Rendering = Data<'/v1/promptlib/prompts/{promptId}/render', 'post'>;
type AbTest = Data<'/v1/promptlib/prompts/ab-test', 'post'>;
type AbTestStored = Data<'/v1/promptlib/prompts/ab-test/{testId}', 'get'>;
type FragmentList = Data<'/v1/promptlib/fragments', 'get'>;
type FragmentCreated = Data<'/v1/promptlib/fragments', 'post'>;
type Fragment = Data<'/v1/promptlib/fragments/{fragmentId}', 'get'>;
type FragmentUpdated = Data<'/v1/promptlib/fragments/{fragmentId}', 'put'>;
type FragmentDeleted = Data<'/v1/promptlib/fragments/{fragmentId}', 'delete'>;
type ChainList = Data<'/v1/promptlib/chains', 'get'>;
type ChainCreated = Data<'/v1/promptlib/chains', 'post'>;
type Chain = Data<'/v1/promptlib/chains/{chainId}', 'get'>;
type ChainUpdated = Data<'/v1/promptlib/chains/{chainId}', 'put'>;
type ChainDeleted = Data<'/v1/promptlib/chains/{chainId}', 'delete'>;
type ExecutionStarted = Data<'/v1/promptlib/chains/{chainId}/execute', 'post'>;
/** The document leaves out what a finished execution adds: its result, or the failed step. */
type Execution = Data<'/v1/promptlib/chains/executions/{executionId}', 'get'> & {
  result?: unknown;
  error?: { step: number; promptId: string; code: string; message: string };
  completedAt?: string;
  failedAt?: string;
};
type Refined = Data<'/promptlib/api/v1/prompts/refine', 'post'>;
type Promoted = Data<'/promptlib/api/v1/prompts/promote', 'post'>;

/** Validation details whose every entry names its field and says why. */
interface FieldErrors {
  errors: { field: string; message: string }[];
}

/** What `fails` reads of an error answer, in either envelope (`meta` or `metadata`). */
interface Failure {
  success: boolean;
  error: ErrorBody;
  meta?: unknown;
  metadata?: unknown;
}

const V1 = '/v1/promptlib';
const API = '/promptlib/api/v1';
const MODELS = ['model-default', 'model-b', 'model-c'];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let p: TestPlatform;
let fake: FakeLlm;

beforeAll(async () => {
  fake = await startFakeLlm({ models: MODELS });
  p = await startTestPlatform({ LLM_BASE_URL: fake.url, LLM_MODELS: MODELS.join(',') });
});
afterAll(async () => {
  await p?.stop();
  await fake?.close();
});

function ok<T>(res: Answer<V1<T>>, status = 200): T {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(res.body.success, true);
  assert.match(res.body.meta.requestId, /^req_/);
  assert.match(res.body.meta.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  return res.body.data;
}

/** The error of a refused request; `D` is the shape of the details the test reads beyond the common ones. */
function fails<D = ErrorBody['details']>(res: Answer<Failure>, status: number, code: string): ErrorBody & { details: D } {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(res.body.success, false);
  assert.equal(res.body.error.code, code, JSON.stringify(res.body));
  assert.equal(typeof res.body.error.message, 'string');
  assert.ok(res.body.meta ?? res.body.metadata);
  return res.body.error as ErrorBody & { details: D };
}

const fields = (error: ErrorBody): string[] => error.details.errors!.map((e) => e.field!).sort();

async function createPrompt(body: Record<string, unknown>): Promise<PromptCreated> {
  return ok(await p.rest<V1<PromptCreated>>('POST', `${V1}/prompts`, { body: { description: 'a prompt', ...body } }), 201);
}

/** The execution once it is no longer running; every state read is appended to `seen`. */
function poll(executionId: string, key?: string, seen: Execution[] = []): Promise<Execution> {
  return untilValue(
    `execution ${executionId} to finish`,
    async () => {
      const data = ok(await p.rest<V1<Execution>>('GET', `${V1}/chains/executions/${executionId}`, { key }));
      seen.push(data);
      return data;
    },
    (data) => data.status !== 'running',
    { timeoutMs: 15_000, everyMs: 40 },
  );
}

/** Tracks how many model calls run at once. */
function concurrency(delayMs: number, answer: (content: string) => string | { status: number; content: string } = (c) => `echo: ${c}`) {
  const state = { active: 0, max: 0 };
  fake.reply(async (body) => {
    state.active++;
    state.max = Math.max(state.max, state.active);
    await sleep(delayMs);
    state.active--;
    return answer(body.messages.at(-1)!.content);
  });
  return state;
}

describe('POST /v1/promptlib/prompts', () => {
  test('creates version 1 in draft; the name is the promptId', async () => {
    const res = await p.rest<V1<PromptCreated>>('POST', `${V1}/prompts`, {
      body: {
        name: 'greeting',
        description: 'Greets a customer',
        template: 'Hello {{name}}, welcome to {{place}}.',
        variables: ['name', 'place'],
        metadata: { domain: 'support', tags: ['greet', 'cx'], agentId: 'docs-author', version: '1.0.0' },
      },
    });
    const d = ok(res, 201);
    assert.deepEqual(Object.keys(d).sort(), ['createdAt', 'promptId', 'status', 'version']);
    assert.equal(d.promptId, 'greeting');
    assert.equal(d.version, 1);
    assert.equal(d.status, 'draft');
    assert.ok(res.headers.get('x-ratelimit-limit'));
  });

  test('a taken name is 409 resource_already_exists', async () => {
    const res = await p.rest<V1<never>>('POST', `${V1}/prompts`, {
      body: { name: 'greeting', description: 'x', template: 'Hi {{name}}', variables: ['name'] },
    });
    const error = fails(res, 409, 'resource_already_exists');
    assert.equal(error.details.field, 'name');
    assert.equal(error.details.value, 'greeting');
  });

  test('variables must match the template’s placeholders; the name must be a slug', async () => {
    const res = await p.rest<V1<never>>('POST', `${V1}/prompts`, {
      body: { name: 'Not A Slug', description: 'x', template: 'Hi {{name}} from {{city}}', variables: ['name', 'zip'] },
    });
    const error = fails(res, 400, 'validation_error');
    assert.deepEqual(fields(error), ['name']);
    const mismatch = fails(
      await p.rest<V1<never>>('POST', `${V1}/prompts`, {
        body: { name: 'mismatch', description: 'x', template: 'Hi {{name}} from {{city}}', variables: ['name', 'zip'] },
      }),
      400,
      'validation_error',
    );
    const messages = mismatch.details.errors!.map((e) => `${e.field}: ${e.message}`).join('\n');
    assert.match(messages, /variables: "zip" is not used by the template/);
    assert.match(messages, /variables: the template uses \{\{city\}\}: add "city"/);
  });

  test('missing fields, wrong types and unknown fields are named', async () => {
    const missing = fails(await p.rest<V1<never>>('POST', `${V1}/prompts`, { body: { name: 'x' } }), 400, 'validation_error');
    assert.ok(missing.details.errors!.length >= 1);
    const wrong = fails(
      await p.rest<V1<never>>('POST', `${V1}/prompts`, { body: { name: 'x', description: 'd', template: 't', variables: { a: 1 }, colour: 1 } }),
      400,
      'validation_error',
    );
    assert.deepEqual(fields(wrong), ['colour', 'variables']);
  });

  test('a reference to an unknown fragment is a 400 naming it', async () => {
    const error = fails(
      await p.rest<V1<never>>('POST', `${V1}/prompts`, { body: { name: 'dangling', description: 'x', template: '{{fragment:ghost}} hi', variables: [] } }),
      400,
      'validation_error',
    );
    assert.match(error.message, /fragment "ghost" does not exist/);
  });
});

describe('GET, PUT and DELETE /v1/promptlib/prompts/{promptId}', () => {
  test('GET returns the latest version with every documented field', async () => {
    const d = ok(await p.rest<V1<Prompt>>('GET', `${V1}/prompts/greeting`));
    for (const f of ['promptId', 'name', 'description', 'template', 'variables', 'version', 'status', 'metadata', 'performance', 'createdAt', 'updatedAt']) {
      assert.ok(f in d, f);
    }
    assert.equal(d.name, 'greeting');
    assert.deepEqual(d.variables, ['name', 'place']);
    assert.deepEqual(d.metadata, { domain: 'support', tags: ['greet', 'cx'], agentId: 'docs-author', version: '1.0.0', fragments: [] });
    assert.deepEqual({ ...d.performance, byVersion: undefined }, { totalTests: 0, averageTokens: 0, averageLatency: 0, successRate: 0, byVersion: undefined });
  });

  test('unknown prompt or version: 404 PROMPT_NOT_FOUND with details; a bad version is a 400', async () => {
    const error = fails(await p.rest<V1<never>>('GET', `${V1}/prompts/no-such-prompt`), 404, 'PROMPT_NOT_FOUND');
    assert.equal(error.details.promptId, 'no-such-prompt');
    const v = fails(await p.rest<V1<never>>('GET', `${V1}/prompts/greeting?version=9`), 404, 'PROMPT_NOT_FOUND');
    assert.deepEqual(v.details, { promptId: 'greeting', version: 9 });
    const bad = fails(await p.rest<V1<never>>('GET', `${V1}/prompts/greeting?version=abc`), 400, 'validation_error');
    assert.deepEqual(fields(bad), ['version']);
  });

  test('PUT updates in place, or stores a new version; superseded versions never change', async () => {
    const inPlace = ok(await p.rest<V1<PromptUpdated>>('PUT', `${V1}/prompts/greeting`, { body: { description: 'Greets warmly' } }));
    assert.equal(inPlace.version, 1);
    assert.ok(inPlace.updatedAt);
    const v2 = ok(await p.rest<V1<PromptUpdated>>('PUT', `${V1}/prompts/greeting`, { body: { template: 'Hi {{name}}!', createNewVersion: true } }));
    assert.equal(v2.promptId, 'greeting');
    assert.equal(v2.version, 2);

    const latest = ok(await p.rest<V1<Prompt>>('GET', `${V1}/prompts/greeting`));
    assert.equal(latest.version, 2);
    assert.deepEqual(latest.variables, ['name'], 'a new template without variables declares what it uses');
    assert.deepEqual(latest.versions, [1, 2]);
    const first = ok(await p.rest<V1<Prompt>>('GET', `${V1}/prompts/greeting?version=1`));
    assert.equal(first.template, 'Hello {{name}}, welcome to {{place}}.');
    assert.equal(first.description, 'Greets warmly');

    await assert.rejects(
      p.platform.kernel.db.query(`UPDATE promptlib.prompt_versions SET template = 'changed' WHERE prompt_id = 'greeting' AND version = 1`),
      /superseded/,
    );
    const bad = fails<FieldErrors>(
      await p.rest<V1<never>>('PUT', `${V1}/prompts/greeting`, { body: { variables: ['name', 'extra'] } }),
      400,
      'validation_error',
    );
    assert.match(bad.details.errors[0].message, /"extra" is not used/);
    fails(await p.rest<V1<never>>('PUT', `${V1}/prompts/nobody`, { body: { description: 'x' } }), 404, 'PROMPT_NOT_FOUND');
  });

  test('status changes: draft, active, archived (archiving takes every version out of service)', async () => {
    assert.equal(ok(await p.rest<V1<PromptUpdated>>('PUT', `${V1}/prompts/greeting`, { body: { status: 'active' } })).status, 'active');
    const agents = await p.graphql<Gql<{ renderPrompt: { version: number; rendered: string } }>>(
      `{ renderPrompt(promptId: "greeting", variables: {name: "Ann"}) { version rendered } }`,
    );
    assert.deepEqual(agents.body.data.renderPrompt, { version: 2, rendered: 'Hi Ann!' });
    const bogus = fails(await p.rest<V1<never>>('PUT', `${V1}/prompts/greeting`, { body: { status: 'published' } }), 400, 'validation_error');
    assert.deepEqual(fields(bogus), ['status']);
    assert.equal(ok(await p.rest<V1<PromptUpdated>>('PUT', `${V1}/prompts/greeting`, { body: { status: 'archived' } })).status, 'archived');
    assert.equal(ok(await p.rest<V1<Prompt>>('GET', `${V1}/prompts/greeting?version=1`)).status, 'archived');
    const gone = await p.graphql<Gql<never>>(`{ renderPrompt(promptId: "greeting", variables: {name: "Ann"}) { version } }`);
    assert.equal(gone.status, 404);
    assert.equal(gone.body.errors![0].extensions.code, 'PROMPT_NOT_FOUND');
    assert.deepEqual(gone.body.errors![0].extensions.details, { promptId: 'greeting', status: 'active' });
  });

  test('DELETE removes one version, or all of them', async () => {
    await createPrompt({ name: 'disposable', template: 'v1 {{a}}', variables: ['a'] });
    await p.rest('PUT', `${V1}/prompts/disposable`, { body: { template: 'v2 {{a}}', createNewVersion: true } });
    await p.rest('PUT', `${V1}/prompts/disposable`, { body: { template: 'v3 {{a}}', createNewVersion: true } });
    const one = ok(await p.rest<V1<PromptDeleted>>('DELETE', `${V1}/prompts/disposable?version=3`));
    assert.deepEqual({ promptId: one.promptId, versionsDeleted: one.versionsDeleted }, { promptId: 'disposable', versionsDeleted: 1 });
    assert.equal(ok(await p.rest<V1<Prompt>>('GET', `${V1}/prompts/disposable`)).template, 'v2 {{a}}');
    fails(await p.rest<V1<never>>('DELETE', `${V1}/prompts/disposable?version=3`), 404, 'PROMPT_NOT_FOUND');
    const all = ok(await p.rest<V1<PromptDeleted>>('DELETE', `${V1}/prompts/disposable`));
    assert.equal(all.versionsDeleted, 2);
    fails(await p.rest<V1<never>>('GET', `${V1}/prompts/disposable`), 404, 'PROMPT_NOT_FOUND');
    // The name is free again, and numbering starts over.
    assert.equal((await createPrompt({ name: 'disposable', template: 'again', variables: [] })).version, 1);
  });
});

describe('GET /v1/promptlib/prompts', () => {
  test('filters by domain, agentId, status and tag; paginates with total, limit, offset, hasMore', async () => {
    await createPrompt({ name: 'list-a', template: 'a', variables: [], metadata: { domain: 'billing', tags: ['t1'], agentId: 'billing-bot' } });
    await createPrompt({ name: 'list-b', template: 'b', variables: [], metadata: { domain: 'billing', tags: ['t2'] } });
    await createPrompt({ name: 'list-c', template: 'c', variables: [], metadata: { domain: 'billing', tags: ['t1', 't2'] } });
    await p.rest('PUT', `${V1}/prompts/list-c`, { body: { status: 'active' } });

    const billing = ok(await p.rest<V1<PromptList>>('GET', `${V1}/prompts?domain=billing`));
    assert.deepEqual(billing.prompts.map((x: { promptId: unknown }) => x.promptId).sort(), ['list-a', 'list-b', 'list-c']);
    const item = billing.prompts.find((x: { promptId: unknown }) => x.promptId === 'list-a')!;
    for (const f of ['promptId', 'name', 'domain', 'version', 'status', 'testsRun', 'successRate']) assert.ok(f in item, f);
    assert.equal(item.domain, 'billing');
    assert.deepEqual(billing.pagination, { total: 3, limit: 20, offset: 0, hasMore: false });

    assert.deepEqual(
      ok(await p.rest<V1<PromptList>>('GET', `${V1}/prompts?domain=billing&tag=t1`))
        .prompts.map((x: { promptId: unknown }) => x.promptId)
        .sort(),
      ['list-a', 'list-c'],
    );
    assert.deepEqual(
      ok(await p.rest<V1<PromptList>>('GET', `${V1}/prompts?domain=billing&status=active`)).prompts.map((x: { promptId: unknown }) => x.promptId),
      ['list-c'],
    );
    assert.deepEqual(
      ok(await p.rest<V1<PromptList>>('GET', `${V1}/prompts?agentId=billing-bot`)).prompts.map((x: { promptId: unknown }) => x.promptId),
      ['list-a'],
    );

    const page = ok(await p.rest<V1<PromptList>>('GET', `${V1}/prompts?domain=billing&limit=1&offset=1`));
    assert.equal(page.prompts.length, 1);
    assert.deepEqual(page.pagination, { total: 3, limit: 1, offset: 1, hasMore: true });

    for (const q of ['limit=0', 'limit=101', 'status=gone']) {
      const error = fails(await p.rest<V1<never>>('GET', `${V1}/prompts?${q}`), 400, 'validation_error');
      assert.deepEqual(fields(error), [q.split('=')[0]]);
    }
  });
});

describe('fragments and rendering', () => {
  test('fragment CRUD: example is an alias of examples; versions; list with usedInPrompts and domain', async () => {
    const role = ok(
      await p.rest<V1<FragmentCreated>>('POST', `${V1}/fragments`, {
        body: {
          name: 'expert-role',
          type: 'role',
          content: 'You are an expert in {{domain}}.',
          description: 'expert',
          metadata: { domain: 'science', tags: ['core'] },
        },
      }),
      201,
    );
    assert.deepEqual(Object.keys(role).sort(), ['createdAt', 'fragmentId', 'type', 'version']);
    assert.deepEqual({ ...role, createdAt: undefined }, { fragmentId: 'expert-role', type: 'role', version: 1, createdAt: undefined });
    const fmt = ok(
      await p.rest<V1<FragmentCreated>>('POST', `${V1}/fragments`, { body: { name: 'answer-format', type: 'example', content: 'Answer in {{style}} style.' } }),
      201,
    );
    assert.equal(fmt.type, 'examples');
    ok(
      await p.rest<V1<FragmentCreated>>('POST', `${V1}/fragments`, {
        body: { name: 'house-style', type: 'format', content: '{{fragment:answer-format}} Keep it short.' },
      }),
      201,
    );
    fails(await p.rest<V1<never>>('POST', `${V1}/fragments`, { body: { name: 'expert-role', type: 'role', content: 'x' } }), 409, 'resource_already_exists');
    const badType = fails(await p.rest<V1<never>>('POST', `${V1}/fragments`, { body: { name: 'odd', type: 'poem', content: 'x' } }), 400, 'validation_error');
    assert.deepEqual(fields(badType), ['type']);

    const v2 = ok(
      await p.rest<V1<FragmentUpdated>>('PUT', `${V1}/fragments/expert-role`, {
        body: { content: 'You are a world-class expert in {{domain}}.', createNewVersion: true },
      }),
    );
    assert.equal(v2.version, 2);
    const got = ok(await p.rest<V1<Fragment>>('GET', `${V1}/fragments/expert-role`));
    assert.equal(got.content, 'You are a world-class expert in {{domain}}.');
    assert.equal(ok(await p.rest<V1<Fragment>>('GET', `${V1}/fragments/expert-role?version=1`)).content, 'You are an expert in {{domain}}.');
    fails(await p.rest<V1<never>>('GET', `${V1}/fragments/nothing-here`), 404, 'resource_not_found');
  });

  test('a template renders bare references at the newest version, explicit ones pinned, nested ones too; values stay literal', async () => {
    const declaredWrong = fails<FieldErrors>(
      await p.rest<V1<never>>('POST', `${V1}/prompts`, {
        body: { name: 'explain', description: 'x', template: '{{fragment:expert-role}} Explain {{topic}}.', variables: ['topic'] },
      }),
      400,
      'validation_error',
    );
    assert.match(declaredWrong.details.errors[0].message, /\{\{domain\}\}/, 'a fragment’s variables are the template’s');

    await createPrompt({
      name: 'explain',
      template: '{{fragment:expert-role}} {{fragment:expert-role:1}} {{fragment:house-style}} Explain {{topic}}.',
      variables: ['domain', 'style', 'topic'],
    });
    const prompt = ok(await p.rest<V1<Prompt>>('GET', `${V1}/prompts/explain`));
    assert.deepEqual(prompt.metadata.fragments, ['expert-role', 'expert-role:1', 'house-style']);

    fake.reset();
    const res = await p.rest<V1<TestRun>>('POST', `${V1}/prompts/explain/test`, {
      body: {
        variables: { domain: 'physics', style: 'plain', topic: '{{fragment:expert-role}} and {{topic}}' },
        model: 'model-b',
        temperature: 0.2,
        maxTokens: 100,
      },
    });
    const d = ok(res);
    const rendered =
      'You are a world-class expert in physics. You are an expert in physics. Answer in plain style. Keep it short. ' +
      'Explain {{fragment:expert-role}} and {{topic}}.';
    assert.equal(d.output, `echo: ${rendered}`);
    assert.match(d.testId, UUID);
    assert.equal(d.metadata.model, 'model-b');
    assert.equal(d.metadata.temperature, 0.2);
    assert.equal(typeof d.metadata.latency, 'number');
    const [body] = fake.chatBodies();
    assert.deepEqual(body.messages, [{ role: 'user', content: rendered }]);
    assert.equal(body.model, 'model-b');
    assert.equal(body.temperature, 0.2);
    assert.equal(body.max_tokens, 100);
    const words = (s: string) => s.trim().split(/\s+/).length;
    assert.equal(d.metadata.tokensUsed, words(rendered) + words(`echo: ${rendered}`));

    const rendering = await p.rest<V1<Rendering>>('POST', `${V1}/prompts/explain/render`, {
      body: { variables: { domain: 'maths', style: 'terse', topic: 'sets' }, version: 1 },
    });
    assert.deepEqual(ok(rendering).fragments, [
      { fragmentId: 'expert-role', version: 2 },
      { fragmentId: 'expert-role', version: 1 },
      { fragmentId: 'house-style', version: 1 },
      { fragmentId: 'answer-format', version: 1 },
    ]);
  });

  test('a missing variable is a 400 naming it, and no model is called', async () => {
    fake.reset();
    const error = fails(
      await p.rest<V1<never>>('POST', `${V1}/prompts/explain/test`, { body: { variables: { domain: 'x', style: 'y' } } }),
      400,
      'validation_error',
    );
    assert.deepEqual(error.details.missingVariables, ['topic']);
    assert.deepEqual(fields(error), ['variables.topic']);
    assert.equal(fake.chatBodies().length, 0);
  });

  test('test parameters: temperature 0.0 to 1.0, a known model; unknown prompt 404', async () => {
    const vars = { domain: 'x', style: 'y', topic: 'z' };
    const hot = fails(await p.rest<V1<never>>('POST', `${V1}/prompts/explain/test`, { body: { variables: vars, temperature: 1.5 } }), 400, 'validation_error');
    assert.ok(
      fields(hot).some((f: string) => f.includes('temperature')),
      JSON.stringify(hot),
    );
    const model = fails(await p.rest<V1<never>>('POST', `${V1}/prompts/explain/test`, { body: { variables: vars, model: 'gpt-9' } }), 400, 'validation_error');
    assert.deepEqual(fields(model), ['model']);
    fails(await p.rest<V1<never>>('POST', `${V1}/prompts/nope/test`, { body: { variables: {} } }), 404, 'PROMPT_NOT_FOUND');
  });

  test('every run is stored: performance per prompt and per version, failures included', async () => {
    await createPrompt({ name: 'perf', template: 'one two {{x}}', variables: ['x'] });
    fake.reset();
    ok(await p.rest<V1<TestRun>>('POST', `${V1}/prompts/perf/test`, { body: { variables: { x: 'three' } } })); // 3 + 4 words
    await p.rest('PUT', `${V1}/prompts/perf`, { body: { template: 'one {{x}}', createNewVersion: true } });
    ok(await p.rest<V1<TestRun>>('POST', `${V1}/prompts/perf/test`, { body: { variables: { x: 'two' } } })); // 2 + 3 words
    fake.reply(() => ({ status: 400, content: 'upstream says no' }));
    const failed = fails(await p.rest<V1<never>>('POST', `${V1}/prompts/perf/test`, { body: { variables: { x: 'two' } } }), 502, 'upstream_error');
    assert.equal(failed.details.status, 400);
    fake.reply(null);

    const perf = ok(await p.rest<V1<Prompt>>('GET', `${V1}/prompts/perf`)).performance;
    assert.equal(perf.totalTests, 3);
    assert.equal(perf.averageTokens, 6); // (7 + 5) / 2 successful runs
    assert.equal(perf.successRate, 66.67);
    assert.equal(typeof perf.averageLatency, 'number');
    assert.deepEqual(
      perf.byVersion.map((v: { version: unknown; totalTests: unknown; averageTokens: unknown; successRate: unknown }) => [
        v.version,
        v.totalTests,
        v.averageTokens,
        v.successRate,
      ]),
      [
        [1, 1, 7, 100],
        [2, 2, 5, 50],
      ],
    );
    const listed = ok(await p.rest<V1<PromptList>>('GET', `${V1}/prompts?limit=100`)).prompts.find((x: { promptId: unknown }) => x.promptId === 'perf')!;
    assert.deepEqual([listed.testsRun, listed.successRate], [3, 66.67]);
  });

  test('usage is real; deleting a fragment an active prompt uses is a 409 unless force=true', async () => {
    await p.rest('PUT', `${V1}/prompts/explain`, { body: { status: 'active' } });
    ok(
      await p.rest<V1<ChainCreated>>('POST', `${V1}/chains`, {
        body: { name: 'explainer', description: 'uses explain', steps: [{ order: 1, promptId: 'explain', outputKey: 'text' }] },
      }),
      201,
    );
    const usage = ok(await p.rest<V1<Fragment>>('GET', `${V1}/fragments/answer-format`)).usage;
    assert.deepEqual(usage, { promptCount: 1, chainCount: 1 }, 'through house-style');

    const list = ok(await p.rest<V1<FragmentList>>('GET', `${V1}/fragments?type=role`));
    assert.deepEqual(list.pagination, { total: 1, limit: 20, hasMore: false });
    const item = list.fragments[0];
    assert.deepEqual(
      { fragmentId: item.fragmentId, name: item.name, type: item.type, domain: item.domain, usedInPrompts: item.usedInPrompts },
      { fragmentId: 'expert-role', name: 'expert-role', type: 'role', domain: 'science', usedInPrompts: 1 },
    );
    assert.ok(item.createdAt);
    assert.equal(ok(await p.rest<V1<FragmentList>>('GET', `${V1}/fragments?type=examples`)).fragments[0].fragmentId, 'answer-format');
    assert.equal(ok(await p.rest<V1<FragmentList>>('GET', `${V1}/fragments?domain=science&tag=core`)).fragments.length, 1);

    const refused = fails(await p.rest<V1<never>>('DELETE', `${V1}/fragments/answer-format`), 409, 'conflict');
    assert.deepEqual(refused.details.activePrompts, ['explain']);
    const forced = ok(await p.rest<V1<FragmentDeleted>>('DELETE', `${V1}/fragments/answer-format?force=true`));
    assert.equal(forced.fragmentId, 'answer-format');
    assert.ok(forced.deletedAt);
    fails(await p.rest<V1<never>>('GET', `${V1}/fragments/answer-format`), 404, 'resource_not_found');
    const broken = fails(
      await p.rest<V1<never>>('POST', `${V1}/prompts/explain/test`, { body: { variables: { domain: 'a', style: 'b', topic: 'c' } } }),
      400,
      'validation_error',
    );
    assert.match(broken.message, /fragment "answer-format" does not exist/);
  });

  test('fragment cycles are rejected when written', async () => {
    ok(await p.rest<V1<FragmentCreated>>('POST', `${V1}/fragments`, { body: { name: 'cyc-a', type: 'context', content: 'A' } }), 201);
    ok(await p.rest<V1<FragmentCreated>>('POST', `${V1}/fragments`, { body: { name: 'cyc-b', type: 'context', content: 'B {{fragment:cyc-a}}' } }), 201);
    const error = fails(await p.rest<V1<never>>('PUT', `${V1}/fragments/cyc-a`, { body: { content: 'A {{fragment:cyc-b}}' } }), 400, 'validation_error');
    assert.match(error.message, /cycle: cyc-a:1 → cyc-b:1 → cyc-a:1/);
    assert.deepEqual(fields(error), ['content']);
  });
});

describe('POST /v1/promptlib/prompts/ab-test', () => {
  const cases = Array.from({ length: 6 }, (_, i) => ({ text: `case number ${i}` }));

  test('runs both arms over every case within a bound, recommends by the documented rule, stores the test', async () => {
    await createPrompt({
      name: 'summary-long',
      template: 'Please read the following text very carefully and then write a summary: {{text}}',
      variables: ['text'],
    });
    fake.reset();
    const load = concurrency(40);
    const res = await p.rest<V1<AbTest>>('POST', `${V1}/prompts/ab-test`, {
      body: { promptA: { promptId: 'summary-long', version: 1 }, promptB: { template: 'Summarize: {{text}}' }, testCases: cases },
    });
    const d = ok(res);
    fake.reply(null);
    assert.match(d.testId, UUID);
    assert.equal(fake.chatBodies().length, 12);
    assert.ok(load.max > 1 && load.max <= 4, `concurrent calls: ${load.max}`);
    const { promptA, promptB, recommendation, reason } = d.results;
    for (const arm of [promptA, promptB]) {
      assert.equal(arm.successfulTests, 6);
      assert.equal(arm.failedTests, 0);
      assert.equal(typeof arm.averageLatency, 'number');
      assert.equal(arm.runs.length, 6);
    }
    assert.ok(promptB.averageTokens < promptA.averageTokens);
    assert.equal(recommendation, 'promptB');
    assert.match(reason, /fewer tokens/);
    assert.deepEqual(d.promptA, {
      promptId: 'summary-long',
      version: 1,
      template: 'Please read the following text very carefully and then write a summary: {{text}}',
    });
    assert.equal(d.promptB.promptId, null);

    const again = ok(await p.rest<V1<AbTestStored>>('GET', `${V1}/prompts/ab-test/${d.testId}`));
    assert.deepEqual(again.results, d.results);
    assert.deepEqual(again.testCases, cases);
    assert.equal(ok(await p.rest<V1<Prompt>>('GET', `${V1}/prompts/summary-long`)).performance.totalTests, 6, 'stored arms count as runs');
  });

  test('a higher success rate wins over fewer tokens', async () => {
    fake.reply((body) => {
      const content: string = body.messages.at(-1)!.content;
      return content.startsWith('Summarize') ? { status: 400, content: 'refused' } : `echo: ${content}`;
    });
    const d = ok(
      await p.rest<V1<AbTest>>('POST', `${V1}/prompts/ab-test`, {
        body: { promptA: { promptId: 'summary-long' }, promptB: { template: 'Summarize: {{text}}' }, testCases: cases.slice(0, 2) },
      }),
    );
    fake.reply(null);
    assert.equal(d.results.promptB.failedTests, 2);
    assert.equal(d.results.promptB.runs[0].error!.code, 'upstream_error');
    assert.equal(d.results.recommendation, 'promptA');
    assert.equal(d.results.reason, 'promptA succeeded in 100% of test cases against 0% for promptB.');
  });

  test('an inline prompt with its variables ({template, variables}); undeclared or unused variables refused', async () => {
    fake.reset();
    const d = ok(
      await p.rest<V1<AbTest>>('POST', `${V1}/prompts/ab-test`, {
        body: {
          promptA: { template: 'Summarize: {{text}}', variables: ['text'] },
          promptB: { template: 'Summarize briefly: {{text}}', variables: ['text'] },
          testCases: cases.slice(0, 2),
        },
      }),
    );
    assert.equal(d.results.promptA.successfulTests, 2);
    assert.equal(d.results.promptB.successfulTests, 2);
    assert.deepEqual(d.promptA, { promptId: null, version: null, template: 'Summarize: {{text}}' });
    assert.equal(fake.chatBodies().length, 4);
    fake.reset();
    const wrong = fails(
      await p.rest<V1<never>>('POST', `${V1}/prompts/ab-test`, {
        body: {
          promptA: { template: 'Summarize: {{text}}', variables: ['txt'] },
          promptB: { promptId: 'summary-long', variables: ['text'] },
          testCases: [{ text: 'a' }],
        },
      }),
      400,
      'validation_error',
    );
    assert.deepEqual(fields(wrong), ['promptB.variables']);
    const undeclared = fails(
      await p.rest<V1<never>>('POST', `${V1}/prompts/ab-test`, {
        body: { promptA: { template: 'Summarize: {{text}}', variables: ['txt'] }, promptB: { template: 'x {{text}}' }, testCases: [{ text: 'a' }] },
      }),
      400,
      'validation_error',
    );
    assert.ok(
      fields(undeclared).every((f: string) => f === 'promptA.variables'),
      JSON.stringify(undeclared.details),
    );
    assert.equal(fake.chatBodies().length, 0);
  });

  test('bad arms, missing variables and unknown tests are refused before any model call', async () => {
    fake.reset();
    const both = fails(
      await p.rest<V1<never>>('POST', `${V1}/prompts/ab-test`, {
        body: { promptA: { promptId: 'summary-long', template: 'x' }, promptB: {}, testCases: [{ text: 'a' }] },
      }),
      400,
      'validation_error',
    );
    assert.deepEqual(fields(both), ['promptA', 'promptB']);
    const missing = fails(
      await p.rest<V1<never>>('POST', `${V1}/prompts/ab-test`, {
        body: { promptA: { promptId: 'summary-long' }, promptB: { template: '{{text}} in {{lang}}' }, testCases: [{ text: 'a', lang: 'fr' }, { text: 'b' }] },
      }),
      400,
      'validation_error',
    );
    assert.deepEqual(missing.details.errors, [{ field: 'testCases.1.lang', message: 'is required by promptB' }]);
    assert.equal(fake.chatBodies().length, 0);
    fails(await p.rest<V1<never>>('GET', `${V1}/prompts/ab-test/00000000-0000-4000-8000-000000000000`), 404, 'resource_not_found');
  });
});

describe('chains', () => {
  beforeAll(async () => {
    await createPrompt({ name: 'outline', template: 'Outline {{topic}}', variables: ['topic'] });
    await createPrompt({ name: 'critique', template: 'Critique {{draft}}', variables: ['draft'] });
    await createPrompt({ name: 'expand', template: 'Expand {{draft}}', variables: ['draft'] });
    await createPrompt({ name: 'combine', template: 'Combine {{a}} with {{b}}', variables: ['a', 'b'] });
  });
  const steps = [
    { order: 1, promptId: 'outline', outputKey: 'outline', agentId: 'docs-author' },
    { order: 2, promptId: 'critique', outputKey: 'critique', parallel: true, inputMapping: { draft: 'step_1.outline' } },
    { order: 2, promptId: 'expand', outputKey: 'expanded', parallel: true, inputMapping: { draft: 'step_1.outline' } },
    { order: 3, promptId: 'combine', outputKey: 'article', inputMapping: { a: 'step_2.critique', b: 'step_2.expanded' } },
  ];

  test('invalid mappings and unknown prompts are rejected at creation', async () => {
    const bad = fails(
      await p.rest<V1<never>>('POST', `${V1}/chains`, {
        body: {
          name: 'broken',
          description: 'x',
          steps: [
            { order: 1, promptId: 'outline', outputKey: 'outline', inputMapping: { topic: 'step_2.x' } },
            { order: 2, promptId: 'critique', outputKey: 'c', inputMapping: { draft: 'step_1.nothing' } },
            { order: 3, promptId: 'expand', outputKey: 'e', inputMapping: { draft: 'step_7.outline' } },
          ],
        },
      }),
      400,
      'validation_error',
    );
    const text = bad.details.errors!.map((e) => `${e.field}: ${e.message}`).join('\n');

    assert.match(text, /steps\.0\.inputMapping\.topic: step_2 does not run before this step/);
    assert.match(text, /steps\.1\.inputMapping\.draft: step_1 has no output "nothing"/);
    assert.match(text, /steps\.2\.inputMapping\.draft: step_7 does not exist/);

    const unknownVar = fails(
      await p.rest<V1<never>>('POST', `${V1}/chains`, {
        body: {
          name: 'broken',
          description: 'x',
          steps: [
            { order: 1, promptId: 'outline', outputKey: 'o' },
            { order: 2, promptId: 'critique', outputKey: 'c', inputMapping: { text: 'step_1.o' } },
          ],
        },
      }),
      400,
      'validation_error',
    );
    assert.deepEqual(fields(unknownVar), ['steps.1.inputMapping.text']);
    const noPrompt = fails(
      await p.rest<V1<never>>('POST', `${V1}/chains`, { body: { name: 'broken', description: 'x', steps: [{ order: 1, promptId: 'ghost', outputKey: 'o' }] } }),
      404,
      'PROMPT_NOT_FOUND',
    );
    assert.equal(noPrompt.details.promptId, 'ghost');
  });

  test('create, get, list', async () => {
    const created = ok(
      await p.rest<V1<ChainCreated>>('POST', `${V1}/chains`, {
        body: { name: 'article', description: 'Writes an article', steps, metadata: { domain: 'docs' } },
      }),
      201,
    );
    assert.deepEqual({ ...created, createdAt: undefined }, { chainId: 'article', version: 1, stepsCount: 4, createdAt: undefined });
    fails(await p.rest<V1<never>>('POST', `${V1}/chains`, { body: { name: 'article', description: 'x', steps } }), 409, 'resource_already_exists');
    const chain = ok(await p.rest<V1<Chain>>('GET', `${V1}/chains/article`));
    assert.equal(chain.name, 'article');
    assert.deepEqual(
      chain.steps,
      steps.map((s) => ({ inputMapping: {}, ...s })),
    );
    assert.deepEqual(chain.performance, { totalExecutions: 0, averageTokens: 0, averageLatency: 0, successRate: 0 });
    const list = ok(await p.rest<V1<ChainList>>('GET', `${V1}/chains?domain=docs`));
    assert.deepEqual(list.pagination, { total: 1, limit: 20, hasMore: false });
    assert.deepEqual(
      { ...list.chains[0], createdAt: undefined, description: undefined, version: undefined },
      {
        chainId: 'article',
        name: 'article',
        domain: 'docs',
        stepsCount: 4,
        executions: 0,
        successRate: 0,
        createdAt: undefined,
        description: undefined,
        version: undefined,
      },
    );
  });

  test('execute: 202, steps in order, parallel steps at once, outputs mapped, then the result', async () => {
    fake.reset();
    const load = concurrency(150);
    const started = ok(
      await p.rest<V1<ExecutionStarted>>('POST', `${V1}/chains/article/execute`, {
        body: { initialVariables: { topic: 'tides' }, model: 'model-c', temperature: 0.1 },
      }),
      202,
    );
    assert.deepEqual(Object.keys(started).sort(), ['chainId', 'currentStep', 'executionId', 'startedAt', 'status', 'totalSteps']);
    assert.equal(started.status, 'running');
    assert.equal(started.currentStep, 1);
    assert.equal(started.totalSteps, 3);
    const seen: Execution[] = [];

    const done = await poll(started.executionId, undefined, seen);
    fake.reply(null);
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.ok(
      seen.some((s) => s.status === 'running' && s.completedSteps.length > 0 && s.completedSteps.length < 4),
      'steps appear as they finish',
    );
    assert.equal(load.max, 2, 'the two order-2 steps ran at once');

    const outline = 'echo: Outline tides';
    assert.deepEqual(done.result, {
      step_1: { outline },
      step_2: { critique: `echo: Critique ${outline}`, expanded: `echo: Expand ${outline}` },
      step_3: { article: `echo: Combine echo: Critique ${outline} with echo: Expand ${outline}` },
    });
    assert.deepEqual(
      done.completedSteps.map((s: { step: unknown }) => s.step),
      [1, 2, 2, 3],
    );
    for (const s of done.completedSteps) {
      for (const f of ['step', 'promptId', 'output', 'tokensUsed', 'latency', 'completedAt']) assert.ok(f in s, f);
    }
    assert.equal(
      done.totalTokens,
      done.completedSteps.reduce((n: number, s: { tokensUsed: number }) => n + s.tokensUsed, 0),
    );
    assert.ok(done.totalLatency > 0);
    assert.ok(done.completedAt);
    assert.equal(done.error, undefined);
    const bodies = fake.chatBodies();
    assert.ok(bodies.every((b) => b.model === 'model-c' && b.temperature === 0.1));
  });

  test('a failing step ends the execution failed, naming the step and the reason', async () => {
    fake.reply((body) => {
      const content: string = body.messages.at(-1)!.content;
      return content.startsWith('Critique') ? { status: 400, content: 'the model refused' } : `echo: ${content}`;
    });
    const started = ok(await p.rest<V1<ExecutionStarted>>('POST', `${V1}/chains/article/execute`, { body: { initialVariables: { topic: 'storms' } } }), 202);
    const done = await poll(started.executionId);
    fake.reply(null);
    assert.equal(done.status, 'failed');
    assert.equal(done.currentStep, 2);
    assert.equal(done.error!.step, 2);
    assert.equal(done.error!.promptId, 'critique');
    assert.equal(done.error!.code, 'upstream_error');
    assert.match(done.error!.message, /.+/);

    assert.ok(done.failedAt);
    assert.equal(done.result, undefined);
    assert.equal(done.completedSteps[0].step, 1);

    const perf = ok(await p.rest<V1<Chain>>('GET', `${V1}/chains/article`)).performance;
    assert.equal(perf.totalExecutions, 2);
    assert.equal(perf.successRate, 50);
    assert.ok(perf.averageTokens > 0);
  });

  test('initialVariables must cover every unmapped variable; unknown ids are 404', async () => {
    const error = fails(
      await p.rest<V1<never>>('POST', `${V1}/chains/article/execute`, { body: { initialVariables: { subject: 'x' } } }),
      400,
      'validation_error',
    );
    assert.deepEqual(fields(error), ['initialVariables.topic']);
    fails(await p.rest<V1<never>>('POST', `${V1}/chains/article/execute`, { body: {} }), 400, 'validation_error');
    fails(await p.rest<V1<never>>('POST', `${V1}/chains/nothing/execute`, { body: { initialVariables: {} } }), 404, 'resource_not_found');
    fails(await p.rest<V1<never>>('GET', `${V1}/chains/executions/not-an-id`), 404, 'resource_not_found');
  });

  test('update in place or as a new version; delete', async () => {
    const inPlace = ok(await p.rest<V1<ChainUpdated>>('PUT', `${V1}/chains/article`, { body: { description: 'Writes better articles' } }));
    assert.equal(inPlace.version, 1);
    const v2 = ok(await p.rest<V1<ChainUpdated>>('PUT', `${V1}/chains/article`, { body: { steps: steps.slice(0, 1), createNewVersion: true } }));
    assert.equal(v2.version, 2);
    assert.equal(ok(await p.rest<V1<Chain>>('GET', `${V1}/chains/article`)).stepsCount, 1);
    assert.equal(ok(await p.rest<V1<Chain>>('GET', `${V1}/chains/article?version=1`)).stepsCount, 4);
    fails(
      await p.rest<V1<never>>('PUT', `${V1}/chains/article`, { body: { steps: [{ order: 2, promptId: 'outline', outputKey: 'x' }] } }),
      400,
      'validation_error',
    );
    const deleted = ok(await p.rest<V1<ChainDeleted>>('DELETE', `${V1}/chains/article`));
    assert.equal(deleted.chainId, 'article');
    assert.ok(deleted.deletedAt);
    fails(await p.rest<V1<never>>('GET', `${V1}/chains/article`), 404, 'resource_not_found');
  });
});

describe('platform layout: /promptlib/api/v1 refine and promote', () => {
  function platformOk<T>(res: Answer<Platform<T>>, status = 200): T {
    assert.equal(res.status, status, JSON.stringify(res.body));
    assert.equal(res.body.success, true);
    assert.match(res.body.metadata.request_id, /^req_/);
    return res.body.data;
  }

  test('the prompt-refiner agent prompt is seeded at start, active', async () => {
    const seeded = ok(await p.rest<V1<Prompt>>('GET', `${V1}/prompts/prompt-refiner-refine`));
    assert.equal(seeded.status, 'active');
    assert.equal(seeded.metadata.agentId, 'prompt-refiner');
    assert.deepEqual(seeded.variables.sort(), ['goals', 'template']);
  });

  test('refine asks the model through the refiner prompt and stores a new draft version', async () => {
    await createPrompt({ name: 'welcome', template: 'Hi {{name}}', variables: ['name'] });
    await p.rest('PUT', `${V1}/prompts/welcome`, { body: { status: 'active' } });
    fake.reset();
    fake.reply(() => '```\nHello {{name}}, the whole team is glad you are here!\n```');
    const d = platformOk(
      await p.rest<Platform<Refined>>('POST', `${API}/prompts/refine`, { body: { prompt_id: 'welcome', refinement_goals: ['be warmer', 'mention the team'] } }),
      201,
    );
    fake.reply(null);
    assert.equal(d.prompt_id, 'welcome');
    assert.equal(d.version, 2);
    assert.equal(d.previous_version, 1);
    assert.equal(d.status, 'draft');
    assert.equal(d.template, 'Hello {{name}}, the whole team is glad you are here!');
    assert.deepEqual(d.variables, ['name']);
    assert.equal(d.compatible, true);
    assert.deepEqual(d.warnings, []);
    assert.equal(typeof d.tokens_used, 'number');
    const sent: string = fake.chatBodies()[0]!.messages[0]!.content;
    assert.match(sent, /prompt-refiner/);
    assert.ok(sent.includes('Hi {{name}}'), 'the template is inserted literally');
    assert.ok(sent.includes('- be warmer\n- mention the team'));

    // Agents keep the newest active version until the draft is promoted.
    const agents = await p.graphql<Gql<{ renderPrompt: { version: number; rendered: string } }>>(
      `{ renderPrompt(promptId: "welcome", variables: {name: "Bo"}) { version rendered } }`,
    );
    assert.deepEqual(agents.body.data.renderPrompt, { version: 1, rendered: 'Hi Bo' });
  });

  test('a garbage answer is still stored, its variables recomputed, flagged incompatible', async () => {
    fake.reply(() => 'Dear {{customer_name}} {{fragment:no-such-thing}} ok');
    const d = platformOk(
      await p.rest<Platform<Refined>>('POST', `${API}/prompts/refine`, { body: { prompt_id: 'welcome', refinement_goals: ['shorter'] } }),
      201,
    );
    fake.reply(null);
    assert.equal(d.version, 3);
    assert.deepEqual(d.variables, ['customer_name']);
    assert.equal(d.compatible, false);
    assert.ok(d.warnings.length >= 2, JSON.stringify(d.warnings));
    await p.rest('DELETE', `${V1}/prompts/welcome?version=3`);
  });

  test('refine errors: unknown prompt, no goals (snake_case field names)', async () => {
    const missing = await p.rest<Platform<never>>('POST', `${API}/prompts/refine`, { body: { prompt_id: 'nope', refinement_goals: ['x'] } });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error.code, 'PROMPT_NOT_FOUND');
    assert.match(missing.body.metadata.request_id, /^req_/);
    const empty = await p.rest<Platform<never>>('POST', `${API}/prompts/refine`, { body: { prompt_id: 'welcome', refinement_goals: [] } });
    assert.equal(empty.status, 400);
    assert.deepEqual(
      empty.body.error.details.errors!.map((e) => e.field),
      ['refinement_goals'],
    );
  });

  test('promote pins the latest version per environment; production makes it active', async () => {
    const staging = platformOk(await p.rest<Platform<Promoted>>('POST', `${API}/prompts/promote`, { body: { prompt_id: 'welcome', environment: 'staging' } }));
    assert.deepEqual(
      { ...staging, promoted_at: undefined },
      { prompt_id: 'welcome', environment: 'staging', version: 2, previous_version: null, status: 'draft', promoted_at: undefined },
    );
    const prod = platformOk(await p.rest<Platform<Promoted>>('POST', `${API}/prompts/promote`, { body: { prompt_id: 'welcome', environment: 'production' } }));
    assert.equal(prod.status, 'active');
    assert.equal(ok(await p.rest<V1<Prompt>>('GET', `${V1}/prompts/welcome`)).status, 'active');
    const pinned = ok(await p.rest<V1<Prompt>>('GET', `${V1}/prompts/welcome?environment=production`));
    assert.equal(pinned.version, 2);
    assert.deepEqual(
      pinned.environments.map((e: { environment: unknown; version: unknown }) => [e.environment, e.version]),
      [
        ['production', 2],
        ['staging', 2],
      ],
    );
    const agents = await p.graphql<Gql<{ renderPrompt: { version: number } }>>(`{ renderPrompt(promptId: "welcome", variables: {name: "Bo"}) { version } }`);
    assert.equal(agents.body.data.renderPrompt.version, 2);
    const bad = await p.rest<Platform<never>>('POST', `${API}/prompts/promote`, { body: { prompt_id: 'welcome', environment: 'Prod!' } });
    assert.equal(bad.status, 400);
    assert.deepEqual(
      bad.body.error.details.errors!.map((e) => e.field),
      ['environment'],
    );
    const none = await p.rest<V1<never>>('GET', `${V1}/prompts/welcome?environment=qa`);
    assert.equal(none.status, 404);
    assert.equal(none.body.error.details.environment, 'qa');
  });
});

describe('keys and permissions', () => {
  test('prompt-library keys are ver_live_ / ver_test_ and carry resource:action permissions', async () => {
    const reader = await p.createKey({ service: 'promptlib', permissions: ['prompt:read'] });
    assert.match(reader.key, /^ver_live_/);
    assert.match((await p.createKey({ service: 'promptlib', environment: 'test', permissions: ['prompt:read'] })).key, /^ver_test_/);
    ok(await p.rest<V1<PromptList>>('GET', `${V1}/prompts`, { key: reader.key }));
    ok(await p.rest<V1<FragmentList>>('GET', `${V1}/fragments`, { key: reader.key }));
    const denied = fails(
      await p.rest<V1<never>>('POST', `${V1}/prompts`, { key: reader.key, body: { name: 'x', description: 'x', template: 'x', variables: [] } }),
      403,
      'insufficient_permissions',
    );
    assert.equal(denied.details.required, 'prompt:write');
    assert.deepEqual(denied.details.has, ['prompt:read']);
    fails(await p.rest<V1<never>>('POST', `${V1}/prompts/explain/test`, { key: reader.key, body: { variables: {} } }), 403, 'insufficient_permissions');
    fails(
      await p.rest<V1<never>>('POST', `${V1}/fragments`, { key: reader.key, body: { name: 'f', type: 'role', content: 'x' } }),
      403,
      'insufficient_permissions',
    );
  });

  test('fragment:write, prompt:test and chain:execute each open only their operations', async () => {
    const curator = await p.createKey({ service: 'promptlib', permissions: ['fragment:write'] });
    ok(
      await p.rest<V1<FragmentCreated>>('POST', `${V1}/fragments`, {
        key: curator.key,
        body: { name: 'by-curator', type: 'constraints', content: 'Be brief.' },
      }),
      201,
    );
    fails(await p.rest<V1<never>>('PUT', `${V1}/prompts/perf`, { key: curator.key, body: { description: 'x' } }), 403, 'insufficient_permissions');

    const tester = await p.createKey({ service: 'promptlib', permissions: ['prompt:test'] });
    ok(await p.rest<V1<TestRun>>('POST', `${V1}/prompts/perf/test`, { key: tester.key, body: { variables: { x: 'y' } } }));

    await createPrompt({ name: 'solo', template: 'Solo {{x}}', variables: ['x'] });
    ok(
      await p.rest<V1<ChainCreated>>('POST', `${V1}/chains`, {
        body: { name: 'solo-chain', description: 'one step', steps: [{ order: 1, promptId: 'solo', outputKey: 'out' }] },
      }),
      201,
    );
    const runner = await p.createKey({ service: 'promptlib', permissions: ['chain:execute'] });
    const started = ok(
      await p.rest<V1<ExecutionStarted>>('POST', `${V1}/chains/solo-chain/execute`, { key: runner.key, body: { initialVariables: { x: 'y' } } }),
      202,
    );
    assert.equal((await poll(started.executionId, runner.key)).status, 'completed', 'chain:execute may poll its executions');
    fails(await p.rest<V1<never>>('GET', `${V1}/chains/solo-chain`, { key: runner.key }), 403, 'insufficient_permissions');
  });

  test('a control-plane key is accepted only when it holds *', async () => {
    const cp = await p.createKey({ permissions: ['prompt:read'] });
    fails(await p.rest<V1<never>>('GET', `${V1}/prompts`, { key: cp.key }), 403, 'insufficient_permissions');
    fails(await p.rest<V1<never>>('GET', `${V1}/prompts`, { key: null }), 401, 'missing_authorization');
    ok(await p.rest<V1<PromptList>>('GET', `${V1}/prompts`));
  });
});

describe('limits', () => {
  test('prompt tests per minute by tier: the free tier gets 5, then 429 with Retry-After', async () => {
    const free = await p.createKey({ service: 'promptlib', permissions: ['prompt:test'], tier: 'free' });
    for (let i = 0; i < 5; i++) ok(await p.rest<V1<TestRun>>('POST', `${V1}/prompts/perf/test`, { key: free.key, body: { variables: { x: String(i) } } }));
    const res = await p.rest<V1<never>>('POST', `${V1}/prompts/perf/test`, { key: free.key, body: { variables: { x: 'again' } } });
    const error = fails<{ limit: number; window: string; tier: string; retryAfter: number }>(res, 429, 'RATE_LIMIT_EXCEEDED');
    assert.equal(error.details.limit, 5);
    assert.equal(error.details.window, '60s');
    assert.equal(error.details.tier, 'free');
    assert.ok(error.details.retryAfter >= 1 && error.details.retryAfter <= 60);
    assert.equal(res.headers.get('retry-after'), String(error.details.retryAfter));
    assert.equal(res.headers.get('x-ratelimit-tier'), 'free');
    assert.ok(res.headers.get('x-ratelimit-remaining'));
  });

  test('chain executions: 30 per minute', async () => {
    const key = await p.createKey({ service: 'promptlib', permissions: ['chain:execute'], tier: 'enterprise' });
    const results = await Promise.all(
      Array.from({ length: 31 }, () =>
        p.rest<V1<ExecutionStarted>>('POST', `${V1}/chains/solo-chain/execute`, { key: key.key, body: { initialVariables: { x: 'y' } } }),
      ),
    );
    const statuses = results.map((r) => r.status).sort();
    assert.equal(statuses.filter((s) => s === 202).length, 30, JSON.stringify(statuses));
    const refused = results.find((r) => r.status === 429)!;
    assert.equal(refused.body.error.code, 'RATE_LIMIT_EXCEEDED');
    assert.equal(refused.body.error.details.limit, 30);
    assert.ok(Number(refused.headers.get('retry-after')) >= 1);
  });
});

describe('GraphQL', () => {
  test('mutations and queries run the same rules as REST', async () => {
    const created = await p.graphql<Gql<{ createPrompt: unknown }>>(
      `mutation($input: CreatePromptInput!) { createPrompt(input: $input) { promptId version status variables performance { totalTests } } }`,
      { input: { name: 'gql-prompt', description: 'via GraphQL', template: 'GraphQL {{thing}}', variables: ['thing'] } },
    );
    assert.deepEqual(created.body.data.createPrompt, {
      promptId: 'gql-prompt',
      version: 1,
      status: 'draft',
      variables: ['thing'],
      performance: { totalTests: 0 },
    });
    const dup = await p.graphql<Gql<never>>(`mutation($input: CreatePromptInput!) { createPrompt(input: $input) { promptId } }`, {
      input: { name: 'gql-prompt', description: 'x', template: 'x', variables: [] },
    });
    assert.equal(dup.status, 409);
    assert.equal(dup.body.errors![0].extensions.code, 'resource_already_exists');

    const rendered = await p.graphql<Gql<{ renderPrompt: unknown }>>(
      `query($v: JSONObject) { renderPrompt(promptId: "gql-prompt", version: 1, variables: $v) { rendered variables } }`,
      {
        v: { thing: 'works' },
      },
    );
    assert.deepEqual(rendered.body.data.renderPrompt, { rendered: 'GraphQL works', variables: ['thing'] });
    const listed = await p.graphql<Gql<{ prompts: { prompts: { promptId: string }[] } }>>(
      `{ prompts(status: "draft", limit: 100) { prompts { promptId } pagination { total hasMore } } }`,
    );
    assert.ok(listed.body.data.prompts.prompts.some((x: { promptId: unknown }) => x.promptId === 'gql-prompt'));
  });
});
