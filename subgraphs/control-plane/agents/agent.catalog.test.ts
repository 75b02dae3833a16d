import assert from 'node:assert/strict';
import shipped from './agent.catalog.json';
import { AGENTS, DOMAINS, parseCatalogue } from './agent.catalog';

/** The fields these tests break, each open to whatever a bad file could hold. */
type Editable = {
  agents: (Record<string, unknown> & { custom: Record<string, unknown>; taskTypes: (Record<string, unknown> & { artifact: Record<string, unknown> })[] })[];
};

/** The shipped file with one change made to a copy. */
function broken(change: (c: Editable) => void): unknown {
  const copy: unknown = structuredClone(shipped);
  change(copy as Editable);
  return copy;
}

describe('agent.catalog.json', () => {
  test('the shipped catalogue passes its schema: 20 agents in the 7 domains, each with custom last', () => {
    const agents = parseCatalogue(shipped);
    assert.equal(agents.length, 20);
    assert.deepEqual([...new Set(agents.map((a) => a.domain))].sort(), [...DOMAINS].sort());
    for (const a of agents) assert.equal(a.taskTypes.at(-1)!.taskType, 'custom', a.agentId);
    assert.equal(AGENTS.length, 20);
  });

  test('path templates and checks become the functions the runtime calls', () => {
    const guide = AGENTS.find((a) => a.agentId === 'docs-author')!.taskTypes.find((t) => t.taskType === 'write-guide')!;
    assert.equal(guide.artifact.path({ topic: 'Signing Webhooks!' }), 'docs/guides/signing-webhooks.md');
    assert.equal(guide.artifact.path({}), 'docs/guides/guide.md');
    const triage = AGENTS.find((a) => a.agentId === 'triage-responder')!.taskTypes[0]!;
    assert.equal(triage.artifact.path({ alert: { name: 'Disk full' } }), 'incidents/triage/disk-full.md');
    assert.equal(triage.artifact.path({ alert: 'CPU high' }), 'incidents/triage/cpu-high.md');
    const gate = AGENTS.find((a) => a.agentId === 'forge-gatekeeper')!.taskTypes[0]!;
    assert.equal(gate.checks!.stage!('DESIGN'), null);
    assert.match(gate.checks!.stage!('LAUNCH')!, /must be one of RESEARCH, DESIGN/);
    const verifier = AGENTS.find((a) => a.agentId === 'webhook-engineer')!.taskTypes.find((t) => t.taskType === 'signature-verifier')!;
    assert.equal(verifier.artifact.path({ language: 'Python' }), 'webhooks/verify-signature.py');
  });

  test('a broken entry is refused, naming the entry and the problem', () => {
    const refused = (raw: unknown, ...messages: RegExp[]) => {
      assert.throws(
        () => parseCatalogue(raw),
        (err: Error) => {
          assert.match(err.message, /^agent\.catalog\.json is not a valid agent catalogue:/);
          for (const m of messages) assert.match(err.message, m);
          return true;
        },
      );
    };
    refused(
      broken((c) => (c.agents[2].domain = 'marketing')),
      /agents\[2\]\.domain: Invalid enum value/,
    );
    refused(
      broken((c) => (c.agents[0].taskTypes[0].artifact.path = 'plans/{slug:title|plan}.md')),
      /agents\[0\]\.taskTypes\[0\]\.artifact\.path: \{slug:…\} reads "title", which is not an input of the task type/,
    );
    refused(
      broken((c) => (c.agents[0].taskTypes[0].artifact.path = 'plans/{upper:objective}.md')),
      /unknown placeholder form "upper"/,
    );
    refused(
      broken((c) => (c.agents[1].agentId = c.agents[0].agentId)),
      /agents\[1\]\.agentId: agent "factory-orchestrator" appears twice/,
    );
    refused(
      broken((c) => delete c.agents[4].taskTypes[0].instructions),
      /agents\[4\]\.taskTypes\[0\]\.instructions: Required/,
    );
    refused(
      broken((c) => (c.agents[0].taskTypes[0].checks = { objective: 'number' })),
      /agents\[0\]\.taskTypes\[0\]\.checks\.objective/,
    );
    refused(
      broken((c) => (c.agents[0].custom.dir = '../outside')),
      /agents\[0\]\.custom\.dir: must stay inside/,
    );
    // Every problem at once, not the first only.
    refused(
      broken((c) => {
        c.agents[0].version = 'one';
        c.agents[19].taskTypes[0].typicalSeconds = -1;
      }),
      /agents\[0\]\.version: must be a semantic version/,
      /agents\[19\]\.taskTypes\[0\]\.typicalSeconds/,
    );
  });
});
