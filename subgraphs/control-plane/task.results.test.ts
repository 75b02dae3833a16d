import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { offlineAnswer } from '../../kernel/llm/offline';
import { checkDeclaredVariables, parseTemplate, renderTemplate } from '../promptlib/render';
import { AGENTS, DOMAINS, slugify } from './agent.catalog';
import { agentPromptSeeds } from './prompts.seed';
import { buildResult, countLines, parseAnswer, safePath } from './task.results';

/** A valid value for each input name of the catalogue (the checks included), else a sentence. */
const SAMPLES: Record<string, unknown> = {
  stage: 'DESIGN',
  gateType: 'exit',
  severity: 'sev2',
  events: ['order.created'],
  schedules: [{ name: 'nightly', cron: '0 2 * * *' }],
  templates: ['You are {{role}}.'],
  pipeline: 'on: push\njobs: {}\n',
  manifest: { dependencies: { left: '*' } },
  workflow: { name: 'orders', nodes: [] },
  docPath: 'docs/setup.md',
  timeline: ['09:00 alert'],
  language: 'python',
};
const sample = (name: string) => SAMPLES[name] ?? `the ${name} of the task`;

/** The variables the runtime gives a prompt (task.runtime.ts promptVariables), for a context. */
function variablesFor(spec: { required: string[]; optional: string[]; artifact: { path: (c: Record<string, unknown>) => string } }, context: Record<string, unknown>) {
  const v: Record<string, string> = {};
  for (const [k, val] of Object.entries(context)) v[k] = typeof val === 'string' ? val : JSON.stringify(val);
  for (const name of [...spec.required, ...spec.optional]) v[name] ??= '(not provided)';
  return { ...v, context: JSON.stringify(context), forgeStage: 'DESIGN', previousOutputs: '(none)', primaryPath: spec.artifact.path(context), agentId: 'a', taskType: 't' };
}

describe('the agent catalogue', () => {
  test('20 agents in the 7 domains, unique ids, every task type with inputs, a main file and a prompt', () => {
    assert.equal(AGENTS.length, 20);
    assert.equal(new Set(AGENTS.map((a) => a.agentId)).size, 20);
    assert.deepEqual([...new Set(AGENTS.map((a) => a.domain))].sort(), [...DOMAINS].sort());
    const seeds = new Map(agentPromptSeeds().map((s) => [s.name, s]));
    for (const a of AGENTS) {
      assert.ok(a.taskTypes.length >= 2, a.agentId);
      for (const t of a.taskTypes) {
        assert.ok(t.required.length >= 1, `${a.agentId}/${t.taskType}`);
        const seed = seeds.get(`${a.agentId}-${t.taskType}`);
        if (a.agentId === 'prompt-refiner' && t.taskType === 'refine') {
          assert.equal(seed, undefined, 'the prompt library owns prompt-refiner-refine');
          continue;
        }
        assert.ok(seed, `${a.agentId}-${t.taskType} is seeded`);
        // The prompt library accepts it: the declared variables are exactly those the template uses.
        checkDeclaredVariables(seed.variables, parseTemplate(seed.template).variables);
        assert.equal(seed.metadata.agentId, a.agentId);
      }
    }
  });

  test('with the offline model every task type yields its main file and the outputs its agent documents', () => {
    const seeds = new Map(agentPromptSeeds().map((s) => [s.name, s]));
    for (const a of AGENTS) {
      for (const t of a.taskTypes) {
        const context = Object.fromEntries(t.required.map((name) => [name, sample(name)]));
        const seed = seeds.get(`${a.agentId}-${t.taskType}`);
        const rendered = seed ? renderTemplate(seed.template, variablesFor(t, context)).text : `Improve ${context.template} towards ${context.goals}.`;
        const { output: answer } = offlineAnswer([{ role: 'user', content: rendered }]);
        const r = buildResult(a, t, context, answer);
        const where = `${a.agentId}/${t.taskType}`;
        assert.equal(r.files.length, 1, where);
        assert.equal(r.files[0]!.path, safePath(t.artifact.path(context)), where);
        assert.ok(r.linesWritten >= 1, where);
        assert.deepEqual(r.files[0]!.kind === 'modified' ? r.filesModified : r.filesCreated, [r.files[0]!.path]);
        const produced = Object.keys(r.output).filter((k) => k !== 'notes');
        for (const k of produced) assert.ok(k in a.outputs, `${where} produces the undocumented output ${k}`);
        if (t.taskType !== 'custom') {
          for (const k of Object.keys(a.outputs)) assert.ok(produced.includes(k), `${where} documents ${k} but does not produce it`);
        }
      }
    }
  });
});

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
    const body = ['# Webhooks', '## Overview', '## Prerequisites', '## Steps', '```sh', 'curl x', '```', '## Troubleshooting', 'See [the API](../api/webhooks.md) and [steps](#steps).'].join('\n');
    const good = buildResult(docs, guide, context, JSON.stringify({ summary: 's', files: [{ path: main, content: body }, { path: '../escape.md', content: 'x' }] }));
    assert.deepEqual(good.output.quality, { completeness: 0.67, examplesIncluded: true, crossReferencesValid: true });
    assert.deepEqual(good.filesCreated, [main]);
    assert.match((good.output.notes as string[])[0]!, /1 file\(s\) of the answer were left out/);
    const broken = buildResult(docs, guide, context, JSON.stringify({ summary: 's', files: [{ path: main, content: '# X\n[gone](missing.md)\n[nowhere](#nowhere)' }] }));
    assert.equal((broken.output.quality as any).crossReferencesValid, false);
  });
});
