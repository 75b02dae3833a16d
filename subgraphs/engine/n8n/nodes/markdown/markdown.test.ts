import assert from 'node:assert/strict';
import { disposeHarness, importRefusal, runOutput, runWorkflow } from '../../../../../test/support/n8n-harness';

afterAll(disposeHarness);

/** The page of n8n's Markdown test workflow. */
const PAGE =
  '<!doctype html> <html> <head> <title>Example Domain</title> <meta charset="utf-8" /> <style type="text/css"> body { margin: 0; } </style> </head> ' +
  '<body> <div> <h1>Example Domain</h1> <p>This domain is for use in illustrative examples in documents. You may use this domain in literature without prior coordination or asking for permission.</p> ' +
  '<p><a href="https://www.iana.org/domains/example">More information...</a></p> </div> </body> </html>';
const PARAGRAPH =
  'This domain is for use in illustrative examples in documents. You may use this domain in literature without prior coordination or asking for permission.';

describe('n8n Markdown 1', () => {
  test('htmlToMarkdown (the default mode) into `data`, the item kept; textReplace (n8n test workflow)', async () => {
    const out = await runOutput('markdown', 1, { html: '={{ $json.data }}', options: {} }, [{ data: PAGE, keep: 1 }]);
    assert.deepEqual(out, [{ data: ` \n\n# Example Domain\n\n${PARAGRAPH}\n\n[More information...](https://www.iana.org/domains/example)`, keep: 1 }]);
    const replaced = await runOutput(
      'markdown',
      1,
      { html: '={{ $json.data }}', options: { textReplace: { values: [{ pattern: 'Example Domain', replacement: 'REPLACED' }] } } },
      [{ data: PAGE }],
    );
    assert.match(replaced[0]!.data as string, /^ \n\n# REPLACED\n\n/);
  });

  test('markdownToHtml with showdown, and completeHTMLDocument (n8n test workflow)', async () => {
    const md = `# Example Domain\n\n${PARAGRAPH}\n\n[More information...](https://www.iana.org/domains/example)`;
    const body = `<h1 id="exampledomain">Example Domain</h1>\n<p>${PARAGRAPH}</p>\n<p><a href="https://www.iana.org/domains/example">More information…</a></p>`;
    assert.deepEqual(await runOutput('markdown', 1, { mode: 'markdownToHtml', markdown: '={{ $json.data }}', options: {} }, [{ data: md }]), [{ data: body }]);
    const full = await runOutput('markdown', 1, { mode: 'markdownToHtml', markdown: '={{ $json.data }}', options: { completeHTMLDocument: true } }, [
      { data: md },
    ]);
    assert.deepEqual(full, [{ data: `<!DOCTYPE HTML>\n<html>\n<head>\n<meta charset="utf-8">\n</head>\n<body>\n${body}\n</body>\n</html>` }]);
  });

  test('options of both libraries: tables, strikethrough, noHeaderId; bullet marker, strong delimiter, ignored elements', async () => {
    const html = await runOutput(
      'markdown',
      1,
      { mode: 'markdownToHtml', markdown: '## T\n\n~~x~~\n\n| a |\n|---|\n| 1 |', options: { tables: true, strikethrough: true, noHeaderId: true } },
      [{}],
    );
    assert.match(html[0]!.data as string, /^<h2>T<\/h2>\n<p><del>x<\/del><\/p>\n<table>/);
    const md = await runOutput(
      'markdown',
      1,
      { html: '<ul><li><b>a</b></li></ul><aside>skip</aside>', options: { bulletMarker: '-', strongDelimiter: '__', ignore: 'aside' } },
      [{}],
    );
    assert.deepEqual(md, [{ data: '- __a__' }]);
  });

  test('destinationKey in dot notation; a key through __proto__ writes nothing', async () => {
    const out = await runOutput('markdown', 1, { mode: 'markdownToHtml', markdown: '*hi*', destinationKey: 'out.html' }, [{ out: { keep: true } }]);
    assert.deepEqual(out, [{ out: { keep: true, html: '<p><em>hi</em></p>' } }]);
    const safe = await runOutput('markdown', 1, { mode: 'markdownToHtml', markdown: '*hi*', destinationKey: '__proto__.polluted' }, [{}]);
    assert.deepEqual(safe, [{}]);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  test('inside a workflow, with expressions per item; an unknown mode is refused at import', async () => {
    const run = await runWorkflow(
      {
        nodes: [
          { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, position: [0, 0], parameters: {} },
          {
            name: 'MD',
            type: 'n8n-nodes-base.markdown',
            typeVersion: 1,
            position: [200, 0],
            parameters: { mode: 'markdownToHtml', markdown: '=**{{ $json.n }}**' },
          },
        ],
        connections: { Start: { main: [[{ node: 'MD', type: 'main', index: 0 }]] } },
        settings: { executionOrder: 'v1' },
      },
      { input: [{ n: 'a' }, { n: 'b' }] },
    );
    assert.deepEqual(run.result, [
      { n: 'a', data: '<p><strong>a</strong></p>' },
      { n: 'b', data: '<p><strong>b</strong></p>' },
    ]);
    assert.ok(importRefusal({ type: 'n8n-nodes-base.markdown', typeVersion: 1, parameters: { mode: 'toPdf' } }));
    assert.equal(importRefusal({ type: 'n8n-nodes-base.markdown', typeVersion: 2 })?.reason, 'unsupported_version');
  });
});
