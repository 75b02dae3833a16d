import assert from 'node:assert/strict';
import { callRefused, ipAllowed, isBot, optionsReply } from './options';

/** n8n's webhook options that refuse a call or shape its answer (Webhook trigger and Wait resume URL). */

test('ipWhitelist: addresses and CIDR ranges, IPv4-mapped IPv6 read as IPv4; nothing else passes', () => {
  const allowed = ['10.0.0.1', '192.168.0.0/16', '2001:db8::/32'];
  assert.equal(ipAllowed('10.0.0.1', allowed), true);
  assert.equal(ipAllowed('::ffff:192.168.4.5', allowed), true);
  assert.equal(ipAllowed('2001:db8::7', allowed), true);
  assert.equal(ipAllowed('10.0.0.2', allowed), false);
  assert.equal(ipAllowed(null, allowed), false);
  assert.equal(ipAllowed('10.0.0.1', ['not-an-ip']), false);
});

test('ignoreBots: link previewers and crawlers are bots, browsers are not', () => {
  assert.equal(isBot('Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)'), true);
  assert.equal(isBot('facebookexternalhit/1.1'), true);
  assert.equal(isBot('Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)'), true);
  assert.equal(isBot('Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36'), false);
  assert.equal(isBot(undefined), false);
});

test('a refused call is 403 with n8n’s message; a taken one gets the answer the options give', () => {
  const ip = callRefused({ ipWhitelist: ['10.0.0.1'] }, {}, '10.0.0.9');
  assert.equal(ip?.error.status, 403);
  assert.equal(ip?.error.message, 'IP is not whitelisted to access the webhook!');
  assert.equal(ip?.reason, 'ip_not_allowed');
  assert.equal(callRefused({ ignoreBots: true }, { 'user-agent': 'Twitterbot/1.0' }, null)?.reason, 'bot');
  assert.equal(callRefused({ ignoreBots: true, ipWhitelist: ['10.0.0.1'] }, { 'user-agent': 'Mozilla/5.0' }, '10.0.0.1'), null);

  assert.deepEqual(optionsReply({}, { ok: true }), { status: 200, headers: {}, body: { ok: true } });
  assert.deepEqual(optionsReply({ responseCode: 202, responseHeaders: { 'x-a': '1' }, responseData: 'thanks' }, { ok: true }), {
    status: 202,
    headers: { 'x-a': '1' },
    body: 'thanks',
  });
  assert.deepEqual(optionsReply({ noResponseBody: true, responseData: 'x' }, { ok: true }), { status: 200, headers: {}, body: '' });
});
