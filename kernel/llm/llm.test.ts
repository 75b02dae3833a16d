import assert from 'node:assert/strict';
import { startFakeLlm, type FakeLlm } from '../../test/support/fake-llm';
import { freePort } from '../../test/support/net';
import { AppError } from '../errors';
import { createLogger } from '../logger';
import { countPromptTokens, countTokens, createLlmProvider, OfflineProvider, OpenAiCompatibleProvider, type ChatMessage, type LlmProvider } from './index';

const logger = createLogger('silent');
const MODELS = ['default', 'model-b', 'model-c'];
const user = (content: string): ChatMessage[] => [{ role: 'user', content }];

function rejectsWith(code: string, details: Record<string, unknown> = {}) {
  return (err: unknown) => {
    assert.ok(err instanceof AppError, `expected an AppError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    for (const [k, v] of Object.entries(details)) assert.deepEqual(err.details[k], v, `details.${k}`);
    return true;
  };
}

describe('OpenAI-compatible provider', () => {
  let fake: FakeLlm;
  let llm: LlmProvider;

  beforeAll(async () => {
    fake = await startFakeLlm({ models: MODELS });
    llm = createLlmProvider({ baseUrl: fake.url, apiKey: 'sk-test-123', models: MODELS }, logger);
  });
  afterAll(() => fake.close());
  beforeEach(() => fake.reset());

  it('is the provider chosen when LLM_BASE_URL is set', () => {
    assert.ok(llm instanceof OpenAiCompatibleProvider);
    assert.deepEqual(llm.models, MODELS);
    assert.equal(llm.defaultModel, 'default');
  });

  it('sends model, messages, temperature, max_tokens and the bearer key to POST {base}/chat/completions', async () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'Summarise: the quick brown fox' },
    ];
    const result = await llm.complete({ model: 'model-b', messages, temperature: 0.2, maxTokens: 128 });
    assert.equal(fake.requests.length, 1);
    const req = fake.requests[0];
    assert.equal(req.method, 'POST');
    assert.equal(req.path, '/v1/chat/completions');
    assert.equal(req.headers.authorization, 'Bearer sk-test-123');
    assert.deepEqual(req.body, { model: 'model-b', messages, temperature: 0.2, max_tokens: 128 });
    assert.equal(result.output, 'echo: Summarise: the quick brown fox');
    assert.equal(result.model, 'model-b');
    assert.equal(result.offline, false);
    assert.equal(result.finishReason, 'stop');
    assert.ok(result.latencyMs >= 0);
  });

  it('uses the default model when none is asked, and leaves unset options out', async () => {
    await llm.complete({ messages: user('hi') });
    assert.deepEqual(fake.requests[0].body, { model: 'default', messages: [{ role: 'user', content: 'hi' }] });
  });

  it('sends Bearer not-needed when no LLM_API_KEY is configured', async () => {
    const keyless = createLlmProvider({ baseUrl: fake.url, models: MODELS }, logger);
    await keyless.complete({ messages: user('hi') });
    assert.equal(fake.requests[0].headers.authorization, 'Bearer not-needed');
  });

  it('maps usage to tokens', async () => {
    fake.reply(() => ({ content: 'ok', usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 } }));
    const r = await llm.complete({ messages: user('count me') });
    assert.deepEqual(r.tokens, { prompt: 11, completion: 7, total: 18 });
  });

  it('counts tokens with the tokenizer when the answer has no usage', async () => {
    fake.reply(() => ({ content: 'The answer is forty-two.', usage: null }));
    const messages: ChatMessage[] = [{ role: 'system', content: 'Be exact.' }, ...user('What is six times seven?')];
    const r = await llm.complete({ messages });
    const prompt = countPromptTokens(messages);
    const completion = countTokens('The answer is forty-two.');
    assert.deepEqual(r.tokens, { prompt, completion, total: prompt + completion });
    assert.ok(prompt > 0 && completion > 0);
  });

  it('retries a 429 after the Retry-After delay, then succeeds', async () => {
    fake.fail(1, 429, { 'retry-after': '1' });
    const started = Date.now();
    const r = await llm.complete({ messages: user('patience') });
    assert.equal(r.output, 'echo: patience');
    assert.equal(fake.requests.length, 2);
    const gap = fake.requests[1].at - fake.requests[0].at;
    assert.ok(gap >= 950, `waited ${gap} ms between attempts, Retry-After asked 1000`);
    assert.ok(Date.now() - started >= 950);
    assert.equal(fake.requests[1].headers['x-stainless-retry-count'], '1');
  });

  it('honours retry-after-ms as well', async () => {
    fake.fail(1, 503, { 'retry-after-ms': '300' });
    await llm.complete({ messages: user('x') });
    assert.equal(fake.requests.length, 2);
    const gap = fake.requests[1].at - fake.requests[0].at;
    assert.ok(gap >= 280 && gap < 900, `gap ${gap} ms`);
  });

  it('does not wait for a Retry-After past the deadline: 502 at once with the 429', async () => {
    fake.fail(1, 429, { 'retry-after': '30' });
    const started = Date.now();
    await assert.rejects(
      llm.complete({ messages: user('x'), timeoutMs: 2_000 }),
      rejectsWith('upstream_error', { status: 429, reason: 'rate_limited', retry_after_ms: 30_000, attempts: 1 }),
    );
    assert.ok(Date.now() - started < 1_000);
    assert.equal(fake.requests.length, 1);
  });

  it('retries a 500 and succeeds when the endpoint recovers', async () => {
    fake.fail(1, 500);
    const r = await llm.complete({ messages: user('again') });
    assert.equal(r.output, 'echo: again');
    assert.equal(fake.requests.length, 2);
  });

  it('gives up after 2 retries of a 500: 502 upstream_error (no retries of our own on top)', async () => {
    fake.fail(10, 500);
    await assert.rejects(llm.complete({ messages: user('x') }), (err: unknown) => {
      rejectsWith('upstream_error', { status: 500, reason: 'http_error', attempts: 3 })(err);
      assert.equal((err as AppError).status, 502);
      return true;
    });
    assert.equal(fake.requests.length, 3);
  });

  it('does not retry other 4xx answers', async () => {
    fake.fail(1, 401);
    await assert.rejects(llm.complete({ messages: user('x') }), rejectsWith('upstream_error', { status: 401, reason: 'http_error' }));
    assert.equal(fake.requests.length, 1);
  });

  it('answers 502 when the endpoint refuses connections', async () => {
    const port = await freePort();
    const down = createLlmProvider({ baseUrl: `http://127.0.0.1:${port}/v1`, models: MODELS }, logger);
    await assert.rejects(down.complete({ messages: user('x') }), (err: unknown) => {
      rejectsWith('upstream_error', { status: null, reason: 'connection_failed' })(err);
      assert.equal((err as AppError).status, 502);
      assert.match(String((err as AppError).details.message), /ECONNREFUSED/);
      return true;
    });
  });

  it('answers 502 on a malformed answer', async () => {
    fake.reply(() => ({ raw: 'this is not json' }));
    await assert.rejects(llm.complete({ messages: user('x') }), rejectsWith('upstream_error', { status: 200, reason: 'malformed_response' }));
    fake.reply(() => ({ raw: { id: 'x', object: 'chat.completion', choices: [] } }));
    await assert.rejects(llm.complete({ messages: user('x') }), rejectsWith('upstream_error', { status: 200, reason: 'malformed_response' }));
  });

  it('answers 504 timeout past timeoutMs, promptly', async () => {
    fake.delay(3_000);
    const started = Date.now();
    await assert.rejects(llm.complete({ messages: user('slow'), timeoutMs: 300 }), (err: unknown) => {
      rejectsWith('timeout', { timeout_ms: 300 })(err);
      assert.equal((err as AppError).status, 504);
      assert.ok(((err as AppError).details.elapsed_ms as number) >= 300);
      return true;
    });
    assert.ok(Date.now() - started < 1_500, 'answered at the deadline, not when the endpoint did');
    assert.equal(fake.requests.length, 1, 'a timed-out attempt is not retried past the deadline');
  });

  it('timeoutMs bounds the retries too', async () => {
    fake.fail(5, 500);
    fake.delay(200);
    const started = Date.now();
    await assert.rejects(llm.complete({ messages: user('x'), timeoutMs: 600 }), rejectsWith('timeout', { timeout_ms: 600 }));
    assert.ok(Date.now() - started < 1_200);
  });

  it("an abort through signal rejects with the signal's own reason", async () => {
    fake.delay(3_000);
    const reason = new Error('task cancelled');
    const ac = new AbortController();
    setTimeout(() => ac.abort(reason), 100);
    const started = Date.now();
    await assert.rejects(llm.complete({ messages: user('x'), signal: ac.signal }), (err: unknown) => err === reason);
    assert.ok(Date.now() - started < 1_000);
  });

  it('an abort during a Retry-After wait answers at once and sends nothing more', async () => {
    fake.fail(1, 429, { 'retry-after': '1' });
    const reason = new AppError('conflict', 'cancelled');
    const ac = new AbortController();
    setTimeout(() => ac.abort(reason), 100);
    const started = Date.now();
    await assert.rejects(llm.complete({ messages: user('x'), signal: ac.signal }), (err: unknown) => err === reason);
    assert.ok(Date.now() - started < 600);
    await new Promise((r) => setTimeout(r, 1_300));
    assert.equal(fake.requests.length, 1);
  });

  it('an already aborted signal rejects without calling the endpoint', async () => {
    const reason = new Error('already cancelled');
    await assert.rejects(llm.complete({ messages: user('x'), signal: AbortSignal.abort(reason) }), (err: unknown) => err === reason);
    assert.equal(fake.requests.length, 0);
  });

  it('rejects an unknown model with validation_error on field model, without calling the endpoint', async () => {
    await assert.rejects(llm.complete({ model: 'gpt-nope', messages: user('x') }), (err: unknown) => {
      rejectsWith('validation_error')(err);
      assert.equal((err as AppError).status, 400);
      const errs = (err as AppError).details.errors as { field: string; message: string }[];
      assert.equal(errs[0].field, 'model');
      assert.match(errs[0].message, /must be one of default, model-b, model-c/);
      return true;
    });
    assert.equal(fake.requests.length, 0);
    assert.equal(llm.resolveModel(), 'default');
    assert.equal(llm.resolveModel('model-c'), 'model-c');
    assert.throws(() => llm.resolveModel('other'), rejectsWith('validation_error'));
  });

  it('the fake lists its models', async () => {
    const res = await fetch(`${fake.url}/models`);
    const body = (await res.json()) as { data: { id: string }[] };
    assert.deepEqual(
      body.data.map((m) => m.id),
      MODELS,
    );
  });
});

describe('offline provider', () => {
  const llm = createLlmProvider({ models: MODELS }, logger);
  const messages: ChatMessage[] = [
    { role: 'system', content: 'You are a release-notes writer.' },
    { role: 'user', content: 'Write release notes for version 2.1\nChanges: faster search\nFixed: login bug\nMore: ignored line' },
  ];

  it('is the provider chosen when LLM_BASE_URL is unset', () => {
    assert.ok(llm instanceof OfflineProvider);
    assert.equal(llm.defaultModel, 'default');
  });

  it('is deterministic and clearly marked offline', async () => {
    const a = await llm.complete({ messages, temperature: 0.9 });
    const b = await llm.complete({ messages, temperature: 0.1 });
    assert.equal(a.output, b.output);
    assert.deepEqual(a.tokens, b.tokens);
    assert.equal(a.offline, true);
    assert.equal(a.model, 'offline:default');
    assert.ok(a.output.startsWith('[offline model]'), a.output);
    assert.match(a.output, /Asked: Write release notes for version 2\.1 \/ Changes: faster search \/ Fixed: login bug\n/);
    assert.doesNotMatch(a.output, /ignored line/);
    const chars = messages.reduce((n, m) => n + m.content.length, 0);
    assert.match(a.output, new RegExp(`Messages: 2 \\(1 system, 1 user\\); characters: ${chars}`));
    assert.equal(a.finishReason, 'stop');
    assert.ok(a.latencyMs < 50);
    const model = await llm.complete({ model: 'model-c', messages });
    assert.equal(model.model, 'offline:model-c');
    const other = await llm.complete({ messages: user('Something else') });
    assert.notEqual(other.output, a.output);
  });

  it('counts tokens with the tokenizer', async () => {
    const r = await llm.complete({ messages });
    assert.equal(r.tokens.prompt, countPromptTokens(messages));
    assert.equal(r.tokens.completion, countTokens(r.output));
    assert.equal(r.tokens.total, r.tokens.prompt + r.tokens.completion);
    assert.equal(llm.countTokens('hello world'), 2);
    assert.equal(llm.countTokens(''), 0);
    assert.ok(llm.countTokens('text with <|endoftext|> inside') > 3, 'special-token text counts as plain text');
  });

  it('counts a text line by line exactly as the tokenizer counts it whole, the same lines again from memory', () => {
    const whole = (text: string) => (require('gpt-tokenizer') as typeof import('gpt-tokenizer')).countTokens(text, { disallowedSpecial: new Set() });
    // Pieces that touch a newline: punctuation with newlines and '/' after it, spaces around it, CRLF, digits, other scripts.
    const parts = [
      '\n',
      '\r\n',
      '\n\n',
      ' ',
      '  ',
      '\t',
      '/',
      '.',
      '.\n/',
      '//',
      ':',
      '-',
      '"',
      "'s",
      'word',
      'Word',
      'WORD',
      'é',
      'ß',
      '漢字',
      '🙂',
      '1234',
      '7',
      '<|endoftext|>',
      '{{topic}}',
      '# Title',
    ];
    let seed = 15;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const texts = [
      '# Guide\n\nWrite about {{topic}}.\n/path/to/file\n  indented\r\nlast line',
      'ends with a newline\n',
      '\n\nstarts with newlines',
      'a.\n/b.\n\n/c',
      ...Array.from({ length: 1_500 }, () => Array.from({ length: 1 + Math.floor(random() * 40) }, () => parts[Math.floor(random() * parts.length)]).join('')),
    ];
    for (const text of texts) assert.equal(countTokens(text), whole(text), JSON.stringify(text));
    for (const text of texts.slice(0, 50)) assert.equal(countTokens(text), whole(text), `again: ${JSON.stringify(text)}`);
  });

  it('answers a valid JSON object with the keys asked for', async () => {
    const r = await llm.complete({
      messages: user('Review the plan. Respond with JSON only.\nkeys: summary, `risk_level`, "next_steps".'),
    });
    const parsed = JSON.parse(r.output);
    assert.deepEqual(Object.keys(parsed), ['summary', 'risk_level', 'next_steps']);
    assert.equal(parsed.summary, '[offline model] summary');
    const again = await llm.complete({ messages: user('Review the plan. Respond with JSON only.\nkeys: summary, `risk_level`, "next_steps".') });
    assert.equal(again.output, r.output);
  });

  it('answers a JSON summary when no keys are listed', async () => {
    const r = await llm.complete({ messages: user('Return a JSON object describing this request') });
    const parsed = JSON.parse(r.output);
    assert.equal(parsed.offline_model, true);
    assert.equal(parsed.summary, 'Return a JSON object describing this request');
    assert.equal(parsed.messages, 1);
  });

  it('takes the JSON instruction and keys from a system message too', async () => {
    const r = await llm.complete({
      messages: [{ role: 'system', content: 'You are a reviewer. Respond with JSON.\nkeys: verdict, reasons' }, ...user('Review PR 12')],
    });
    assert.deepEqual(Object.keys(JSON.parse(r.output)), ['verdict', 'reasons']);
  });

  it('rejects an empty message list', async () => {
    await assert.rejects(llm.complete({ messages: [] }), (err: unknown) => {
      rejectsWith('validation_error')(err);
      assert.equal(((err as AppError).details.errors as { field: string }[])[0].field, 'messages');
      return true;
    });
  });

  it('cuts the text at maxTokens', async () => {
    const r = await llm.complete({ messages, maxTokens: 5 });
    assert.equal(r.finishReason, 'length');
    assert.equal(r.tokens.completion, 5);
    assert.ok(r.output.startsWith('[offline'));
  });

  it('rejects unknown models and honours an aborted signal', async () => {
    await assert.rejects(llm.complete({ model: 'gpt-nope', messages }), (err: unknown) => {
      rejectsWith('validation_error')(err);
      assert.equal(((err as AppError).details.errors as { field: string }[])[0].field, 'model');
      return true;
    });
    const reason = new Error('cancelled');
    await assert.rejects(llm.complete({ messages, signal: AbortSignal.abort(reason) }), (err: unknown) => err === reason);
  });
});
