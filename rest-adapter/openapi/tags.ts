/**
 * The document's tags: one per service and resource, in words, grouped by service (Redoc's
 * x-tagGroups). A path takes the first tag whose pattern it matches.
 */

interface Tag {
  name: string;
  service: string;
  description: string;
  match: RegExp;
}

export const TAGS: Tag[] = [
  { name: 'Rate limits', service: 'Control plane', description: 'What the calling credential may still spend, per window.', match: /^\/v1\/rate-limits\// },
  {
    name: 'Tasks',
    service: 'Control plane',
    description: 'Work given to an agent: submit, follow, cancel, fetch artifacts.',
    match: /^\/v1\/control-plane\/(agents\/(tasks|execute)|tasks)|^\/control-plane\/api\/v1\/agents\//,
  },
  { name: 'Agents', service: 'Control plane', description: 'The agent catalogue and each agent’s status.', match: /^\/v1\/control-plane\/agents/ },
  {
    name: 'Metrics',
    service: 'Control plane',
    description: 'Rollups of tasks, costs, workflows and the system’s health.',
    match: /^\/v1\/control-plane\/metrics\//,
  },
  {
    name: 'Orchestrations',
    service: 'Control plane',
    description: 'Multi-stage runs of agents with gates between the stages.',
    match: /^\/v1\/control-plane\/orchestration\/|^\/control-plane\/api\/v1\/orchestration\//,
  },
  {
    name: 'Workflows',
    service: 'Control plane',
    description: 'Workflows as the control plane sees them: triggers, schedules, webhooks and their executions.',
    match: /^\/v1\/control-plane\/workflows|^\/control-plane\/api\/v1\/workflows/,
  },
  {
    name: 'Audit trail',
    service: 'Control plane',
    description: 'Every change made through any surface: who, from where, which operation and resource, which fields.',
    match: /^\/v1\/audit$/,
  },
  {
    name: 'API keys',
    service: 'Control plane',
    description: 'Keys for every service: create, list, scope, revoke, usage.',
    match: /^\/control-plane\/api\/v1\/auth\//,
  },
  {
    name: 'Prompts',
    service: 'Prompt library',
    description: 'Versioned prompts: render, test, compare, refine, promote.',
    match: /^\/v1\/promptlib\/prompts|^\/promptlib\/api\/v1\/prompts/,
  },
  { name: 'Fragments', service: 'Prompt library', description: 'Reusable pieces prompts include.', match: /^\/v1\/promptlib\/fragments/ },
  {
    name: 'Chains',
    service: 'Prompt library',
    description: 'Prompts run in order, each feeding the next, and their executions.',
    match: /^\/v1\/promptlib\/chains/,
  },
  {
    name: 'Engine workflows',
    service: 'Workflow engine',
    description: 'Node graphs: create, import, export, activate, run.',
    match: /^\/(v1\/engine|engine\/api\/v1)\/workflows/,
  },
  {
    name: 'Executions',
    service: 'Workflow engine',
    description: 'Runs of engine workflows: follow, retry, cancel, read logs.',
    match: /^\/(v1\/engine|engine\/api\/v1)\/executions/,
  },
  {
    name: 'Engine webhooks',
    service: 'Workflow engine',
    description: 'Webhook triggers of engine workflows and their logs.',
    match: /^\/(v1\/engine|engine\/api\/v1)\/webhooks/,
  },
  {
    name: 'Engine variables',
    service: 'Workflow engine',
    description: 'Variables every workflow reads as $vars.',
    match: /^\/(v1\/engine|engine\/api\/v1)\/variables/,
  },
  {
    name: 'Engine credentials',
    service: 'Workflow engine',
    description: 'Credentials of n8n workflows (stored encrypted, never answered back) and the OAuth2 consent callback.',
    match: /^\/(v1\/engine|engine\/api\/v1)\/credentials/,
  },
  { name: 'Inbound webhooks', service: 'Workflow engine', description: 'The addresses webhook triggers listen on.', match: /^\/webhook\// },
  { name: 'Links', service: 'Links', description: 'Short links: create, protect, count visits, follow.', match: /^\/links\// },
  { name: 'Sign-in', service: 'Feedback', description: 'GitHub and Google sign-in and the signed-in person.', match: /^\/feedback\/api\/v1\/auth\// },
  {
    name: 'Feature requests',
    service: 'Feedback',
    description: 'Requests, votes, status changes and comments.',
    match: /^\/feedback\/api\/v1\/(requests|comments|projects\/[^/]+\/requests)/,
  },
  {
    name: 'Feedback projects',
    service: 'Feedback',
    description: 'Projects that collect requests and their moderators.',
    match: /^\/feedback\/api\/v1\/projects/,
  },
  {
    name: 'Infrastructure sign-in',
    service: 'Infrastructure',
    description: 'Session tokens for the infrastructure surface.',
    match: /^\/infra\/api\/v1\/auth\//,
  },
  { name: 'Services', service: 'Infrastructure', description: 'Deployed services: deploy, roll back, logs.', match: /^\/infra\/api\/v1\/services/ },
  { name: 'Deployments', service: 'Infrastructure', description: 'One deployment of a service.', match: /^\/infra\/api\/v1\/deployments/ },
  { name: 'Infrastructure projects', service: 'Infrastructure', description: 'Projects and their members.', match: /^\/infra\/api\/v1\/projects/ },
  { name: 'Cluster', service: 'Infrastructure', description: 'Nodes, metrics and alerts of the cluster.', match: /^\/infra\/api\/v1\/infrastructure\// },
  { name: 'Users', service: 'Infrastructure', description: 'People who use the infrastructure surface.', match: /^\/infra\/api\/v1\/users/ },
  {
    name: 'Infrastructure webhooks',
    service: 'Infrastructure',
    description: 'Outgoing event webhooks and their deliveries.',
    match: /^\/infra\/api\/v1\/webhooks/,
  },
  { name: 'Platform', service: 'Platform', description: 'Liveness and Prometheus metrics.', match: /^\/(health|metrics)$/ },
];

/** The tag of a documented path (OpenAPI syntax); a path no tag covers is a mistake in this table. */
export function tagOf(path: string): string {
  const tag = TAGS.find((t) => t.match.test(path));
  if (!tag) throw new Error(`no tag covers ${path}`);
  return tag.name;
}

/** The tags and their groups, as the document lists them. */
export function tagSection(used: Set<string>) {
  const tags = TAGS.filter((t) => used.has(t.name));
  const services = [...new Set(tags.map((t) => t.service))];
  return {
    tags: tags.map((t) => ({ name: t.name, description: t.description })),
    'x-tagGroups': services.map((s) => ({ name: s, tags: tags.filter((t) => t.service === s).map((t) => t.name) })),
  };
}
