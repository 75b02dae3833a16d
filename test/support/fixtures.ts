/**
 * Fixture objects several test files build the same way: a workflow whose nodes run in a line,
 * the docs-author task most control-plane tests run, and the environment of a platform whose
 * model is a local fake and whose webhooks go to a local receiver.
 */

/** A workflow node as the engine's REST surface takes it. */
export type WorkflowNode = { name: string; type: string; parameters?: Record<string, unknown>; [k: string]: unknown };

/** The manual trigger most test workflows start with. */
export const start: WorkflowNode = { name: 'Start', type: 'engine.manualTrigger' };

/** A workflow definition running `nodes` one after the other; `extra` adds (or replaces) connections. */
export function chain<N extends WorkflowNode>(nodes: N[], extra: Record<string, { main: unknown[][] }> = {}) {
  const connections: Record<string, { main: unknown[][] }> = {};
  for (let i = 0; i < nodes.length - 1; i++) connections[nodes[i]!.name] = { main: [[{ node: nodes[i + 1]!.name, type: 'main', index: 0 }]] };
  return { nodes, connections: { ...connections, ...extra } };
}

/** A docs-author `write-guide` task: the agent task the control-plane tests run by default. */
export function guideTask(context: { topic?: string; audience?: string } = {}, extra: Record<string, unknown> = {}) {
  return { agentId: 'docs-author', taskType: 'write-guide', context: { topic: 't', audience: 'a', ...context }, ...extra };
}

/**
 * The environment of a platform whose model is the fake at `llmUrl` and whose webhooks may reach
 * a receiver on this machine (plain http, loopback).
 */
export function fakeLlmEnv(llmUrl: string, models = 'model-default'): Record<string, string> {
  return { LLM_BASE_URL: llmUrl, LLM_MODELS: models, ...localWebhooksEnv };
}

/** Lets webhooks (and workflow HTTP nodes) reach a local receiver: plain http, loopback. */
export const localWebhooksEnv = { WEBHOOK_ALLOW_HTTP: 'true', OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true' } as const;
