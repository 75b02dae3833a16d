import assert from 'node:assert/strict';
import { pdfFile } from '../../../../../test/support/file-fixtures';
import { disposeHarness, itemsFailure, runItems } from '../../../../../test/support/n8n-harness';
import { prepareBinary, type Item } from '../../../nodes';

afterAll(disposeHarness);

const readPdf = (parameters: Record<string, unknown>) => ({ type: 'n8n-nodes-base.readPDF', typeVersion: 1, parameters });
const pdf = (bytes: Buffer, key = 'data'): Item => ({ json: { id: 7 }, binary: { [key]: prepareBinary(bytes, { fileName: 'invoice.pdf' }) } });

describe("n8n's legacy Read PDF", () => {
  test("the PDF's text and description replace the item's fields; the item keeps its file", async () => {
    const bytes = pdfFile({ pages: [['Invoice 42'], ['Total: 10 EUR']], info: { Title: 'Invoice' } });
    const [[item]] = (await runItems(readPdf({ binaryPropertyName: 'doc' }), [pdf(bytes, 'doc')])) as [[Item]];
    assert.deepEqual(Object.keys(item.json), ['numpages', 'numrender', 'info', 'text', 'version']);
    assert.equal(item.json.numpages, 2);
    assert.equal(item.json.numrender, 2);
    assert.equal(item.json.text, 'Invoice 42\n\nTotal: 10 EUR');
    assert.equal((item.json.info as Record<string, unknown>).Title, 'Invoice');
    assert.equal(item.json.version, '4.9.155');
    assert.equal(item.binary?.doc?.fileName, 'invoice.pdf');
  });

  test('encrypted with its password opens the file; the password is not used unless encrypted is on', async () => {
    const bytes = pdfFile({ pages: [['Payroll']], password: 'pw' });
    const [[item]] = (await runItems(readPdf({ encrypted: true, password: 'pw' }), [pdf(bytes)])) as [[Item]];
    assert.equal(item.json.text, 'Payroll');
    assert.match((await itemsFailure(readPdf({ encrypted: false, password: 'pw' }), [pdf(bytes)])).message, /password protected/);
    assert.match((await itemsFailure(readPdf({}), [{ json: {} }])).message, /no binary field 'data'/);
  });
});
