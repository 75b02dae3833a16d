import assert from 'node:assert/strict';
import { disposeHarness, importRefusal, itemsFailure, outputFailure, runItems, runOutput, runWorkflow } from '../../../../../test/support/n8n-harness';
import { prepareBinary } from '../../../nodes';

afterAll(disposeHarness);

/** The page of n8n's extractHtmlContent test workflow. */
const PAGE =
  '<html>\n<head>\n\t<title>My Page</title>\t\n</head>\n<body>\n\t<h1>My Page</h1>\n\t<p>Hello World</p>\n\t<div class="content">\n' +
  '\t\t<p>Another paragraph\n</p>\n\t\t<p>Yet \r\n\r\n\t\t\t\t\t\tanother paragraph\n</p>\n\t\t<p>Andone more\n</p>\n\t</div>\n' +
  '\t<img src="https://n8n.io/n8n-logo.png" alt="n8n.io logo" />\n\t<a href="https://n8n.io">n8n.io</a>\n    <input id="text-id" type="text" value="n8n" />\n</body>\n</html>';

const extract = (values: Record<string, unknown>[], options: Record<string, unknown> = {}) => ({
  operation: 'extractHtmlContent',
  extractionValues: { values },
  options,
});

describe('n8n HTML: extractHtmlContent', () => {
  test('attribute without a name, inner HTML, a form value (n8n test workflow, 1.2)', async () => {
    assert.deepEqual(await runOutput('html', 1.2, extract([{ key: 'data', cssSelector: 'div', returnValue: 'attribute' }]), [{ data: PAGE }]), [
      { data: { class: 'content' } },
    ]);
    assert.deepEqual(await runOutput('html', 1.2, extract([{ key: 'data', cssSelector: 'body', returnValue: 'html' }]), [{ data: PAGE }]), [
      {
        data:
          '\n\t<h1>My Page</h1>\n\t<p>Hello World</p>\n\t<div class="content">\n\t\t<p>Another paragraph\n</p>\n\t\t<p>Yet \n\n\t\t\t\t\t\tanother paragraph\n</p>\n' +
          '\t\t<p>Andone more\n</p>\n\t</div>\n\t<img src="https://n8n.io/n8n-logo.png" alt="n8n.io logo">\n\t<a href="https://n8n.io">n8n.io</a>\n' +
          '    <input id="text-id" type="text" value="n8n">\n\n',
      },
    ]);
    assert.deepEqual(await runOutput('html', 1.2, extract([{ key: 'data', cssSelector: '#text-id', returnValue: 'value' }]), [{ data: PAGE }]), [
      { data: 'n8n' },
    ]);
  });

  test('1.1 text: every match with returnArray, trimmed and cleaned up when asked', async () => {
    const out = await runOutput('html', 1.1, extract([{ key: 'p', cssSelector: 'p', returnArray: true }], { trimValues: true }), [{ data: PAGE }]);
    assert.deepEqual(out, [{ p: ['Hello World', 'Another paragraph', 'Yet \n\n\t\t\t\t\t\tanother paragraph', 'Andone more'] }]);
    const clean = await runOutput('html', 1.1, extract([{ key: 'p', cssSelector: '.content p', returnArray: true }], { cleanUpText: true }), [{ data: PAGE }]);
    assert.deepEqual(clean, [{ p: ['Another paragraph', 'Yet another paragraph', 'Andone more'] }]);
    const raw = await runOutput(
      'html',
      1.1,
      extract([
        { key: 'title', cssSelector: 'title' },
        { key: 'none', cssSelector: '.nothing' },
      ]),
      [{ data: PAGE }],
    );
    assert.deepEqual(raw, [{ title: 'My Page' }]);
  });

  test('a list of HTML texts gives one item each; 1.1 reads a nested property, 1 a top-level key only', async () => {
    const params = { ...extract([{ key: 'h', cssSelector: 'h1' }]), dataPropertyName: 'page.html' };
    const out = await runOutput('html', 1.1, params, [{ page: { html: ['<h1>a</h1>', '<h1>b</h1>'] } }]);
    assert.deepEqual(out, [{ h: 'a' }, { h: 'b' }]);
    const v1 = await outputFailure('html', 1, params, [{ page: { html: '<h1>a</h1>' } }]);
    assert.match(v1.message, /No property named "page.html" exists!/);
    assert.deepEqual(await runOutput('html', 1, params, [{ 'page.html': '<h1>c</h1>' }]), [{ h: 'c' }]);
  });

  test('the old HTML Extract node: text trimmed unless trimValues is false', async () => {
    const params = { extractionValues: { values: [{ key: 'p', cssSelector: '.content p', returnArray: true }] } };
    assert.deepEqual(await runOutput('htmlExtract', 1, params, [{ data: PAGE }]), [
      { p: ['Another paragraph', 'Yet \n\n\t\t\t\t\t\tanother paragraph', 'Andone more'] },
    ]);
    const untrimmed = await runOutput('htmlExtract', 1, { ...params, options: { trimValues: false } }, [{ data: PAGE }]);
    assert.equal((untrimmed[0]!.p as string[])[0], 'Another paragraph\n');
  });

  test('binary source data: the HTML file in the binary field dataPropertyName is read; versions beyond 1.2 are refused', async () => {
    const file = { json: { kept: 1 }, binary: { page: prepareBinary(Buffer.from(PAGE, 'utf8'), { fileName: 'page.html' }) } };
    const params = {
      ...extract([{ key: 'link', cssSelector: 'a', returnValue: 'attribute', attribute: 'href' }]),
      sourceData: 'binary',
      dataPropertyName: 'page',
    };
    const [out] = await runItems({ type: 'n8n-nodes-base.html', typeVersion: 1.2, parameters: params }, [file]);
    assert.deepEqual(
      out!.map((i) => i.json),
      [{ link: 'https://n8n.io' }],
    );
    assert.equal(importRefusal({ type: 'n8n-nodes-base.html', typeVersion: 1.2, parameters: params }), undefined);
    const missing = await itemsFailure({ type: 'n8n-nodes-base.html', typeVersion: 1.2, parameters: { ...params, dataPropertyName: 'other' } }, [file]);
    assert.match(missing.message, /no binary field 'other' \(it has: page\)/);
    assert.equal(importRefusal({ type: 'n8n-nodes-base.html', typeVersion: 1.2, parameters: extract([{ key: 'a', cssSelector: 'a' }]) }), undefined);
    assert.equal(importRefusal({ type: 'n8n-nodes-base.html', typeVersion: 1.3 })?.reason, 'unsupported_version');
  });

  test('1.2 text goes through html-to-text: headings upper-cased, link targets in brackets, skipSelectors left out', async () => {
    const body = await runOutput('html', 1.2, extract([{ key: 'text', cssSelector: 'body' }]), [{ data: PAGE }]);
    assert.deepEqual(body, [
      {
        text:
          'MY PAGE\n\nHello World\n\nAnother paragraph\n\nYet another paragraph\n\nAndone more\n\n' +
          'n8n.io logo [https://n8n.io/n8n-logo.png] n8n.io [https://n8n.io]',
      },
    ]);
    const skipping = await runOutput('html', 1.2, extract([{ key: 'text', cssSelector: 'body', skipSelectors: 'img, h1,' }]), [{ data: PAGE }]);
    assert.deepEqual(skipping, [{ text: 'Hello World\n\nAnother paragraph\n\nYet another paragraph\n\nAndone more\n\nn8n.io [https://n8n.io]' }]);
    const each = await runOutput('html', 1.2, extract([{ key: 'p', cssSelector: 'p', returnArray: true }]), [{ data: PAGE }]);
    assert.deepEqual(each, [{ p: ['Hello World', 'Another paragraph', 'Yet another paragraph', 'Andone more'] }]);
    // No match is an empty text in 1.2 (1.1 leaves the key out); long lines wrap at 80 as the library's default.
    const wrapped = await runOutput(
      'html',
      1.2,
      extract([
        { key: 'none', cssSelector: '.nothing' },
        { key: 'long', cssSelector: 'p' },
      ]),
      [{ data: `<p>${'word '.repeat(30)}</p>` }],
    );
    assert.deepEqual(wrapped, [{ none: '', long: `${'word '.repeat(16).trim()}\n${'word '.repeat(14).trim()}` }]);
  });

  test('a missing property fails the item; with onError continue it becomes { error }', async () => {
    const failure = await outputFailure('html', 1.1, extract([{ key: 'a', cssSelector: 'a' }]), [{ other: '' }]);
    assert.match(failure.message, /No property named "data" exists!/);
    const run = await runWorkflow(
      {
        nodes: [
          { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, position: [0, 0], parameters: {} },
          {
            name: 'HTML',
            type: 'n8n-nodes-base.html',
            typeVersion: 1.1,
            position: [200, 0],
            parameters: extract([{ key: 'a', cssSelector: 'a' }]),
            onError: 'continueRegularOutput',
          },
        ],
        connections: { Start: { main: [[{ node: 'HTML', type: 'main', index: 0 }]] } },
      },
      { input: [{ other: '' }, { data: '<a>x</a>' }] },
    );
    assert.deepEqual(run.result, [{ error: 'No property named "data" exists!' }, { a: 'x' }]);
  });
});

describe('n8n HTML: generateHtmlTemplate', () => {
  test("the template's {{ }} resolved per item (no leading = needed); a script stays text and does not run", async () => {
    const html =
      '<h1>{{ $json.name }}</h1>\n<ul>{{ $json.tags.map((t) => `<li>${t}</li>`).join("") }}</ul>\n' +
      '<script>globalThis.ranInTheServer = true; console.log("{{ $json.name.toUpperCase() }}")</script>';
    const out = await runOutput('html', 1.2, { html }, [
      { name: 'Ann', tags: ['a', 'b'] },
      { name: 'Bo', tags: [] },
    ]);
    assert.deepEqual(out, [
      { html: '<h1>Ann</h1>\n<ul><li>a</li><li>b</li></ul>\n<script>globalThis.ranInTheServer = true; console.log("ANN")</script>' },
      { html: '<h1>Bo</h1>\n<ul></ul>\n<script>globalThis.ranInTheServer = true; console.log("BO")</script>' },
    ]);
    assert.equal((globalThis as Record<string, unknown>).ranInTheServer, undefined);
  });

  test('an expression cannot reach the server: it runs in the expression sandbox', async () => {
    const out = await runOutput('html', 1, { html: '<p>{{ typeof process }} {{ typeof require }}</p>' }, [{}]);
    assert.deepEqual(out, [{ html: '<p>undefined undefined</p>' }]);
  });

  test("a template left at n8n's sample page is refused at import", () => {
    assert.match(importRefusal({ type: 'n8n-nodes-base.html', typeVersion: 1.2, parameters: {} })!.message, /sample page/);
  });
});

describe('n8n HTML: convertToHtmlTable', () => {
  test('one table of all items, custom styling, caption, capitalized headers, per-item row attributes', async () => {
    const out = await runOutput(
      'html',
      1.2,
      {
        operation: 'convertToHtmlTable',
        options: {
          customStyling: true,
          caption: 'People',
          capitalize: true,
          tableAttributes: 'border="1"',
          rowAttributes: '=data-name="{{ $json.first_name }}"',
        },
      },
      [
        { first_name: 'Ann', active: true },
        { first_name: 'Bo', active: false, n: 2 },
      ],
    );
    assert.deepEqual(out, [
      {
        table:
          '<table  border="1"><caption>People</caption><thead  ><tr><th>First Name</th><th>Active</th><th>N</th></tr></thead><tbody>' +
          '<tr  data-name="Ann"><td  >Ann</td><td  ><input type="checkbox" checked="checked"/></td><td  >undefined</td></tr>' +
          '<tr  data-name="Bo"><td  >Bo</td><td  ><input type="checkbox" /></td><td  >2</td></tr></tbody></table>',
      },
    ]);
  });

  test("n8n's default styling", async () => {
    const [out] = await runOutput('html', 1, { operation: 'convertToHtmlTable' }, [{ a: 1 }]);
    assert.equal(
      out!.table,
      "<table style='border-spacing:0; font-family:helvetica,arial,sans-serif' ><thead style='margin:0; padding:7px 20px 7px 0px; border-bottom:1px solid #eee; text-align:left; color:#888; font-weight:normal' >" +
        "<tr><th>a</th></tr></thead><tbody><tr  ><td style='margin:0; padding:7px 20px 7px 0px; border-bottom:1px solid #eee' >1</td></tr></tbody></table>",
    );
  });
});
