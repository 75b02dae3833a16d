import assert from 'node:assert/strict';
import type { V1 } from './answers';
import type { Execution, Item, WorkflowSummary } from './engine-answers';
import type { TestPlatform } from './platform';
/** Fixtures for the engine's n8n import (subgraphs/engine/n8n/import.test.ts, test/engine.e2e.test.ts). */

const link = (node: string, index = 0) => ({ node, type: 'main', index });

/**
 * An n8n 1.x export as n8n writes it (ids, type versions, webhookId, sticky note, pinData…):
 * Webhook -> IF (v2) -> Set (v3.4) / Set (v2) -> Merge (v3) -> Code (v2) -> Respond to Webhook.
 */
export const N8N_EXPORT = {
  id: 'Xy12AbCdEf',
  name: 'Order intake',
  active: true,
  nodes: [
    {
      parameters: { httpMethod: 'POST', path: 'orders', responseMode: 'responseNode', options: {} },
      id: 'a1c9e3f2-0000-4000-8000-000000000001',
      name: 'Webhook',
      type: 'n8n-nodes-base.webhook',
      typeVersion: 2,
      position: [0, 0],
      webhookId: '6f1e0c56-0000-4000-8000-000000000009',
    },
    {
      parameters: {
        conditions: {
          options: { caseSensitive: true, leftValue: '', typeValidation: 'strict' },
          conditions: [{ id: 'c1', leftValue: '={{ $json.body.total }}', rightValue: 100, operator: { type: 'number', operation: 'gt' } }],
          combinator: 'and',
        },
        options: {},
      },
      id: 'a1c9e3f2-0000-4000-8000-000000000002',
      name: 'Big order?',
      type: 'n8n-nodes-base.if',
      typeVersion: 2,
      position: [220, 0],
    },
    {
      parameters: {
        assignments: {
          assignments: [
            { id: 's1', name: 'priority', value: 'high', type: 'string' },
            { id: 's2', name: 'total', value: '={{ $json.body.total }}', type: 'number' },
          ],
        },
        options: {},
      },
      id: 'a1c9e3f2-0000-4000-8000-000000000003',
      name: 'High priority',
      type: 'n8n-nodes-base.set',
      typeVersion: 3.4,
      position: [440, -100],
    },
    {
      parameters: {
        keepOnlySet: true,
        values: { string: [{ name: 'priority', value: 'normal' }], number: [{ name: 'total', value: '={{$json.body.total}}' }] },
        options: {},
      },
      id: 'a1c9e3f2-0000-4000-8000-000000000004',
      name: 'Normal priority',
      type: 'n8n-nodes-base.set',
      typeVersion: 2,
      position: [440, 100],
    },
    { parameters: {}, id: 'a1c9e3f2-0000-4000-8000-000000000005', name: 'Merge', type: 'n8n-nodes-base.merge', typeVersion: 3, position: [660, 0] },
    {
      parameters: { jsCode: 'return $input.all().map((item) => ({ json: { ...item.json, label: item.json.priority.toUpperCase() } }));' },
      id: 'a1c9e3f2-0000-4000-8000-000000000006',
      name: 'Label',
      type: 'n8n-nodes-base.code',
      typeVersion: 2,
      position: [880, 0],
    },
    {
      parameters: { respondWith: 'json', responseBody: '={{ { label: $json.label, total: $json.total } }}', options: { responseCode: 202 } },
      id: 'a1c9e3f2-0000-4000-8000-000000000007',
      name: 'Respond',
      type: 'n8n-nodes-base.respondToWebhook',
      typeVersion: 1.1,
      position: [1100, 0],
    },
    {
      parameters: { content: '## Orders over 100 are high priority' },
      id: 'n',
      name: 'Sticky Note',
      type: 'n8n-nodes-base.stickyNote',
      typeVersion: 1,
      position: [0, 300],
    },
  ],
  connections: {
    Webhook: { main: [[link('Big order?')]] },
    'Big order?': { main: [[link('High priority')], [link('Normal priority')]] },
    'High priority': { main: [[link('Merge', 0)]] },
    'Normal priority': { main: [[link('Merge', 1)]] },
    Merge: { main: [[link('Label')]] },
    Label: { main: [[link('Respond')]] },
  },
  settings: { executionOrder: 'v1', executionTimeout: -1 },
  staticData: null,
  pinData: {},
  versionId: '0c1b2a39-0000-4000-8000-00000000000a',
  meta: { instanceId: 'f00d' },
  tags: [{ id: 't1', name: 'orders' }],
};

/** A node of an export as a test writes it: n8n's fields, with a name. */
export type N8nNode = Record<string, unknown> & { name: string };

/** An n8n export (as n8n's Download writes it) of `nodes` run one after another, in n8n's v1 order. */
export function n8nChain(name: string, nodes: N8nNode[], settings: Record<string, unknown> = {}) {
  const connections: Record<string, unknown> = {};
  for (let i = 0; i < nodes.length - 1; i++) connections[nodes[i]!.name] = { main: [[{ node: nodes[i + 1]!.name, type: 'main', index: 0 }]] };
  return {
    name,
    active: true,
    nodes: nodes.map((n, i) => ({ id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, position: [i * 220, 0], parameters: {}, ...n })),
    connections,
    settings: { executionOrder: 'v1', ...settings },
    pinData: {},
    tags: [],
  };
}

/** Imports an n8n export through REST (201): the new workflow's id. */
export async function importN8n(p: Pick<TestPlatform, 'rest'>, workflow: unknown): Promise<string> {
  const res = await p.rest<V1<WorkflowSummary>>('POST', '/v1/engine/workflows/import', { body: { workflow } });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.data.workflowId;
}

/** Runs a workflow synchronously through REST (200): the execution as the answer gives it (`I`: its items as the test reads them). */
export async function runSync<I = Item>(p: Pick<TestPlatform, 'rest'>, workflowId: string, data: Record<string, unknown>): Promise<Execution<I>> {
  const res = await p.rest<V1<Execution<I>>>('POST', `/v1/engine/workflows/${workflowId}/execute`, { body: { mode: 'sync', data, timeout: 60 } });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.data;
}
