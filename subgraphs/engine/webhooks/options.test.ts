import assert from 'node:assert/strict';
import { prepareBinary, WebhookFile, webhookFile } from '../nodes';
import { callRefused, ipAllowed, isBot, lastNodeReply, optionsReply } from './options';

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

test('ignoreBots: link previewers and crawlers are bots (the isbot check n8n makes), browsers are not', () => {
  assert.equal(isBot('Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)'), true);
  assert.equal(isBot('facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)'), true);
  assert.equal(isBot('Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)'), true);
  assert.equal(isBot('Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)'), true);
  assert.equal(isBot('WhatsApp/2.23.20.0 A'), true);
  assert.equal(isBot('TelegramBot (like TwitterBot)'), true);
  assert.equal(isBot('Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36'), false);
  assert.equal(
    isBot('Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1'),
    false,
  );
  assert.equal(isBot('Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:121.0) Gecko/20100101 Firefox/121.0'), false);
  assert.equal(isBot(undefined), false);
});

test('a refused call is 403 with n8n’s message; a taken one gets the answer the options give', () => {
  const ip = callRefused({ ipWhitelist: ['10.0.0.1'] }, {}, '10.0.0.9');
  assert.equal(ip?.error.status, 403);
  assert.equal(ip?.error.message, 'IP is not whitelisted to access the webhook!');
  assert.equal(ip?.reason, 'ip_not_allowed');
  assert.equal(callRefused({ ignoreBots: true }, { 'user-agent': 'Twitterbot/1.0' }, null)?.reason, 'bot');
  const firefox = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:121.0) Gecko/20100101 Firefox/121.0';
  assert.equal(callRefused({ ignoreBots: true, ipWhitelist: ['10.0.0.1'] }, { 'user-agent': firefox }, '10.0.0.1'), null);
  // A bare "Mozilla/5.0" is no browser's: isbot counts it a bot, as n8n does.
  assert.equal(callRefused({ ignoreBots: true }, { 'user-agent': 'Mozilla/5.0' }, null)?.reason, 'bot');

  assert.deepEqual(optionsReply({}, { ok: true }), { status: 200, headers: {}, body: { ok: true } });
  assert.deepEqual(optionsReply({ responseCode: 202, responseHeaders: { 'x-a': '1' }, responseData: 'thanks' }, { ok: true }), {
    status: 202,
    headers: { 'x-a': '1' },
    body: 'thanks',
  });
  assert.deepEqual(optionsReply({ noResponseBody: true, responseData: 'x' }, { ok: true }), { status: 200, headers: {}, body: '' });
});

test('lastNode answers: the first item, a field of it (as a set content type), every item, none, or its file', async () => {
  const items = [{ order: { id: 42 }, note: 'hi' }, { order: { id: 43 } }];
  const noFile = async () => 'no_item' as const;
  assert.deepEqual(await lastNodeReply({}, items, noFile), { status: 200, headers: {}, body: items[0] });
  assert.deepEqual(await lastNodeReply({ responsePropertyName: 'order.id', responseCode: 201 }, items, noFile), { status: 201, headers: {}, body: 42 });
  assert.deepEqual(await lastNodeReply({ responsePropertyName: 'note' }, items, noFile), {
    status: 200,
    headers: { 'content-type': 'application/json; charset=utf-8' },
    body: '"hi"',
  });
  assert.deepEqual(await lastNodeReply({ responsePropertyName: 'note', responseContentType: 'text/plain' }, items, noFile), {
    status: 200,
    headers: { 'content-type': 'text/plain' },
    body: 'hi',
  });
  assert.deepEqual(await lastNodeReply({ lastNodeData: 'allEntries', responseHeaders: { 'x-a': '1' } }, items, noFile), {
    status: 200,
    headers: { 'x-a': '1' },
    body: items,
  });
  assert.deepEqual(await lastNodeReply({ lastNodeData: 'noData' }, items, noFile), { status: 200, headers: {}, body: '' });

  const file = webhookFile({ json: {}, binary: { data: prepareBinary(Buffer.from('%PDF-1.4'), { fileName: 'a.pdf' }) } }, 'data');
  const sent = await lastNodeReply({ lastNodeData: 'firstEntryBinary' }, items, async (key) => (key === 'data' ? file : 'no_binary'));
  assert.equal(sent.status, 200);
  assert.equal(sent.headers['content-type'], 'application/pdf');
  assert.ok(sent.body instanceof WebhookFile);
  assert.equal(sent.body.bytes, 8);
  const missing = await lastNodeReply({ lastNodeData: 'firstEntryBinary', responseBinaryPropertyName: 'report' }, items, async () => 'no_binary');
  assert.equal(missing.status, 500);
  assert.match(JSON.stringify(missing.body), /binary property \\"report\\" which should be returned does not exist/);
});
