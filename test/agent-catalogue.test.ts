import assert from 'node:assert/strict';
import { offlineAnswer } from '../kernel/llm/offline';
import { AGENTS, DOMAINS, agentPromptSeeds } from '../subgraphs/control-plane/agents';
import { buildResult, safePath } from '../subgraphs/control-plane/tasks';
import { checkDeclaredVariables, parseTemplate, renderTemplate } from '../subgraphs/promptlib/render';

/*
 * The control plane's agents against the prompt library's template rules: it seeds a prompt per
 * task type into the library, so both services are needed here (a subgraph's own tests import
 * only its own files).
 */

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
function variablesFor(
  spec: { required: string[]; optional: string[]; artifact: { path: (c: Record<string, unknown>) => string } },
  context: Record<string, unknown>,
) {
  const v: Record<string, string> = {};
  for (const [k, val] of Object.entries(context)) v[k] = typeof val === 'string' ? val : JSON.stringify(val);
  for (const name of [...spec.required, ...spec.optional]) v[name] ??= '(not provided)';
  return {
    ...v,
    context: JSON.stringify(context),
    forgeStage: 'DESIGN',
    previousOutputs: '(none)',
    primaryPath: spec.artifact.path(context),
    agentId: 'a',
    taskType: 't',
  };
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
