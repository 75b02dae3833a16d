import assert from 'node:assert/strict';
import { AGENTS, slugify } from '../agents';
import { countLines, safePath } from './task.files';
import { buildResult, parseAnswer } from './task.results';

describe('reading a model answer', () => {
  test('paths stay relative and inside the task’s tree', () => {
    assert.equal(safePath('./docs/a.md'), 'docs/a.md');
    for (const bad of ['/etc/passwd', '../x', 'a/../../b', 'a//b', 'C:\\x', '', 'a b.md', 42]) assert.equal(safePath(bad), null, String(bad));
  });

  test('JSON with fences or prose around it', () => {
    assert.deepEqual(parseAnswer('Sure!\n```json\n{"summary": "s", "files": []}\n```'), { summary: 's', files: [] });
    assert.deepEqual(parseAnswer('Here: {"a": 1} done'), { a: 1 });
    assert.equal(parseAnswer('no json here'), null);
    assert.equal(countLines('a\nb\n'), 2);
    assert.equal(countLines('a\nb'), 2);
    assert.equal(countLines(''), 0);
  });

  test('documentation quality is measured on the files: sections, examples, links', () => {
    const docs = AGENTS.find((a) => a.agentId === 'docs-author')!;
    const guide = docs.taskTypes[0]!;
    const context = { topic: 'Webhooks', audience: 'developers', sourceFiles: ['docs/api/webhooks.md'] };
    const main = `docs/guides/${slugify('Webhooks', '')}.md`;
    const body = [
      '# Webhooks',
      '## Overview',
      '## Prerequisites',
      '## Steps',
      '```sh',
      'curl x',
      '```',
      '## Troubleshooting',
      'See [the API](../api/webhooks.md) and [steps](#steps).',
    ].join('\n');
    const good = buildResult(
      docs,
      guide,
      context,
      JSON.stringify({
        summary: 's',
        files: [
          { path: main, content: body },
          { path: '../escape.md', content: 'x' },
        ],
      }),
    );
    assert.deepEqual(good.output.quality, { completeness: 0.67, examplesIncluded: true, crossReferencesValid: true });
    assert.deepEqual(good.filesCreated, [main]);
    assert.match((good.output.notes as string[])[0]!, /1 file\(s\) of the answer were left out/);
    const broken = buildResult(
      docs,
      guide,
      context,
      JSON.stringify({ summary: 's', files: [{ path: main, content: '# X\n[gone](missing.md)\n[nowhere](#nowhere)' }] }),
    );
    assert.equal((broken.output.quality as { crossReferencesValid?: boolean }).crossReferencesValid, false);
  });
});
