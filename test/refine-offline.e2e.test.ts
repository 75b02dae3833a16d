import assert from 'node:assert/strict';
import type { Gql, Platform, V1 } from './support/answers';
import { startTestPlatform, type TestPlatform } from './support/platform';

// No LLM_BASE_URL: the offline model answers, and refine must not turn its placeholder into a version.
let p: TestPlatform;

beforeAll(async () => {
  p = await startTestPlatform({ LLM_BASE_URL: '' });
  const created = await p.rest('POST', '/v1/promptlib/prompts', {
    body: { name: 'greeting', description: 'Greets', template: 'Hello {{name}}', variables: ['name'] },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
});

afterAll(async () => {
  await p?.stop();
});

test('refine over REST: 409 model_unavailable naming LLM_BASE_URL, and no version is stored', async () => {
  const res = await p.rest<Platform<never>>('POST', '/promptlib/api/v1/prompts/refine', { body: { prompt_id: 'greeting', refinement_goals: ['be warmer'] } });
  assert.equal(res.status, 409, JSON.stringify(res.body));
  assert.equal(res.body.success, false);
  assert.equal(res.body.error.code, 'model_unavailable');
  assert.match(res.body.error.message, /LLM_BASE_URL/);
  assert.equal(res.body.error.details.setting, 'LLM_BASE_URL');
  assert.match(res.body.metadata.request_id, /^req_/);

  const prompt = await p.rest<V1<{ version: number; template: string }>>('GET', '/v1/promptlib/prompts/greeting');
  assert.equal(prompt.body.data.version, 1);
  assert.equal(prompt.body.data.template, 'Hello {{name}}');
});

test('refine over GraphQL fails with the same code; input errors still come first', async () => {
  const res = await p.graphql<Gql<{ refinePrompt: { version: number } } | null>>(
    `mutation { refinePrompt(input: {promptId: "greeting", refinementGoals: ["shorter"]}) { version } }`,
  );
  assert.equal(res.body.data, null);
  assert.equal(res.body.errors![0].extensions.code, 'model_unavailable');
  assert.match(res.body.errors![0].message, /LLM_BASE_URL/);

  const empty = await p.rest<Platform<never>>('POST', '/promptlib/api/v1/prompts/refine', { body: { prompt_id: 'greeting', refinement_goals: [] } });
  assert.equal(empty.status, 400);
  assert.equal(empty.body.error.code, 'validation_error');
});

test('promote still pins the version a person wrote', async () => {
  const res = await p.rest<Platform<{ version: number; status: string }>>('POST', '/promptlib/api/v1/prompts/promote', {
    body: { prompt_id: 'greeting', environment: 'production' },
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.data.version, 1);
  assert.equal(res.body.data.status, 'active');
});
