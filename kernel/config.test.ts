import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from './config';

test('defaults are the documented ones', () => {
  const c = loadConfig({});
  assert.equal(c.port, 4000);
  assert.equal(c.databaseUrl, undefined);
  assert.match(c.dataDir, /data$/);
  assert.deepEqual(c.llm.models, ['default']);
  assert.equal(c.webhookAllowHttp, false);
  assert.equal(c.outboundAllowPrivateNetworks, false);
  assert.equal(c.cluster.driver, 'local');
  assert.equal(c.feedbackFrontendUrl, 'http://localhost:4000/feedback');
  assert.equal(c.github.oauthUrl, 'https://github.com');
  assert.equal(c.trustProxy, false);
});

test('values are parsed', () => {
  const c = loadConfig({
    PORT: '8080',
    LLM_MODELS: 'gpt-x, small ,',
    WEBHOOK_ALLOW_HTTP: 'true',
    SUBGRAPH_URLS: 'control-plane=http://10.0.0.2:4001/graphql',
    BOOTSTRAP_API_KEY: 'cp_test_sk_abcdefghijklmnopqrstuvwxyz',
  });
  assert.equal(c.port, 8080);
  assert.deepEqual(c.llm.models, ['gpt-x', 'small']);
  assert.equal(c.webhookAllowHttp, true);
  assert.deepEqual(c.subgraphUrls, { 'control-plane': 'http://10.0.0.2:4001/graphql' });
  assert.equal(c.feedbackFrontendUrl, 'http://localhost:8080/feedback');
});

test('every problem is reported at once', () => {
  try {
    loadConfig({
      PORT: 'eighty',
      DATABASE_URL: 'mysql://x',
      BOOTSTRAP_API_KEY: 'ver_live_abc',
      CLUSTER_DRIVER: 'nomad',
      WEBHOOK_ALLOW_HTTP: 'perhaps',
      SUBGRAPH_URLS: 'nowhere=ftp://x',
    });
    assert.fail('expected a ConfigError');
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    const vars = err.problems.map((p) => p.split(':')[0]).sort();
    assert.deepEqual(vars, ['BOOTSTRAP_API_KEY', 'CLUSTER_DRIVER', 'DATABASE_URL', 'PORT', 'SUBGRAPH_URLS', 'WEBHOOK_ALLOW_HTTP']);
  }
});

test('local feature-request sign-in: on by default only with the embedded database; the setting wins either way', () => {
  assert.equal(loadConfig({}).feedbackLocalSignIn, true);
  assert.equal(loadConfig({ DATABASE_URL: 'postgres://db/x' }).feedbackLocalSignIn, false);
  assert.equal(loadConfig({ DATABASE_URL: 'postgres://db/x', FEEDBACK_LOCAL_SIGNIN: 'true' }).feedbackLocalSignIn, true);
  assert.equal(loadConfig({ FEEDBACK_LOCAL_SIGNIN: 'false' }).feedbackLocalSignIn, false);
  assert.throws(() => loadConfig({ FEEDBACK_LOCAL_SIGNIN: 'perhaps' }), ConfigError);
});

test('TRACES_UI_URL: an http(s) URL with {traceId} where the id goes; unset by default', () => {
  assert.equal(loadConfig({}).tracesUiUrl, undefined);
  assert.equal(loadConfig({ TRACES_UI_URL: 'http://localhost:16686/trace/{traceId}' }).tracesUiUrl, 'http://localhost:16686/trace/{traceId}');
  for (const bad of ['http://localhost:16686/trace/', 'ftp://traces.example/{traceId}', 'not a url {traceId}']) {
    assert.throws(
      () => loadConfig({ TRACES_UI_URL: bad }),
      (err: unknown) => err instanceof ConfigError && err.message.includes('TRACES_UI_URL'),
      bad,
    );
  }
});
