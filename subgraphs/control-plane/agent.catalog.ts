import { STAGES, type StageName } from './gate.catalog';

/**
 * The 20 agents of the control plane (spec 1, agent catalogue), in their 7 domains. Pure data plus
 * a few pure helpers; documented in README.md ("Control plane: agents and tasks").
 *
 * Each agent offers task types (its `capabilities`); each task type names its inputs (context
 * fields: `required` ones must be present and non-empty, CONTEXT_VALIDATION_FAILED otherwise), the
 * main file it writes (`artifact`), the headings a good answer has (`sections`, which the result's
 * quality figures are measured against) and a typical duration (the estimate until real history
 * exists). Every agent also takes `custom`: a free-form request in `input` (what the alternate
 * layout's `POST /agents/{agent_id}/execute` sends). The instructions themselves live in the prompt
 * library as `<agentId>-<taskType>` (prompts.seed.ts), so they can be edited without a release.
 */

export const DOMAINS = ['orchestration', 'automation', 'engineering', 'devops', 'documentation', 'prompts', 'incident'] as const;
export type Domain = (typeof DOMAINS)[number];

/** A check on one input's value beyond "present": the problem, or null when it is fine. */
export type InputCheck = (value: unknown) => string | null;

export interface ArtifactSpec {
  /** The main file's path, from the task's context (always relative, see safePath). */
  path: (context: Record<string, unknown>) => string;
  /** What the file holds: decides how it is checked and how a fallback file is written. */
  format: 'markdown' | 'yaml' | 'json' | 'code' | 'text';
  /** The main file changes an existing file (the context names it) rather than creating one. */
  modifies?: boolean;
}

export interface TaskTypeSpec {
  taskType: string;
  title: string;
  /** What the task produces, for the catalogue and the prompt. */
  description: string;
  required: string[];
  optional: string[];
  checks?: Record<string, InputCheck>;
  artifact: ArtifactSpec;
  /** Headings a complete main document has (documentation quality, plan completeness). */
  sections?: string[];
  /** Task-specific instructions for the model (the prompt's body). */
  instructions: string;
  /** Seconds; the estimate until the task type has history. */
  typicalSeconds: number;
}

export interface AgentSpec {
  agentId: string;
  name: string;
  domain: Domain;
  forgeStage: StageName;
  version: string;
  /** The agent's role, first line of each of its prompts. */
  description: string;
  taskTypes: TaskTypeSpec[];
  /** Output name -> type description (the fields of `result.output`). */
  outputs: Record<string, string>;
}

export const CUSTOM_TASK_TYPE = 'custom';

// ---------------------------------------------------------------------------------------------
// Helpers for paths and checks

/** A short path segment from a free text: lowercase words joined by "-" (at most 6 words, 60 chars). */
export function slugify(value: unknown, fallback: string): string {
  const text = typeof value === 'string' ? value : value === undefined || value === null ? '' : JSON.stringify(value);
  const slug = text
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim()
    .split(/\s+/)
    .filter(Boolean)
    .slice(0, 6)
    .join('-')
    .slice(0, 60)
    .replace(/-+$/, '');
  return slug || fallback;
}

function pascal(value: unknown, fallback: string): string {
  const words = slugify(value, '').split('-').filter(Boolean);
  return words.length ? words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join('') : fallback;
}

const EXTENSIONS: Record<string, string> = {
  typescript: 'ts', ts: 'ts', javascript: 'js', js: 'js', node: 'js', python: 'py', py: 'py', go: 'go', golang: 'go',
  java: 'java', kotlin: 'kt', ruby: 'rb', rust: 'rs', csharp: 'cs', 'c#': 'cs', php: 'php', swift: 'swift', scala: 'scala',
  elixir: 'ex', sql: 'sql', bash: 'sh', shell: 'sh',
};

export function extensionFor(language: unknown, fallback = 'ts'): string {
  return typeof language === 'string' ? EXTENSIONS[language.trim().toLowerCase()] ?? fallback : fallback;
}

const LANGUAGES: Record<string, string> = {
  ts: 'typescript', tsx: 'typescript', js: 'javascript', jsx: 'javascript', py: 'python', go: 'go', java: 'java', kt: 'kotlin',
  rb: 'ruby', rs: 'rust', cs: 'csharp', php: 'php', swift: 'swift', scala: 'scala', ex: 'elixir', sql: 'sql', sh: 'bash',
};

/** The programming language of a file extension, or null (documents, data). */
export function languageOf(extension: string): string | null {
  return LANGUAGES[extension.toLowerCase()] ?? null;
}

const oneOf =
  (values: readonly string[], caseless = false): InputCheck =>
  (v) => {
    const s = typeof v === 'string' ? (caseless ? v.trim().toLowerCase() : v.trim()) : undefined;
    return s !== undefined && values.includes(s) ? null : `must be one of ${values.join(', ')}`;
  };
const isText: InputCheck = (v) => (typeof v === 'string' ? null : 'must be a string');
const isList: InputCheck = (v) => (Array.isArray(v) ? null : 'must be an array');
const textOrObject: InputCheck = (v) => (typeof v === 'string' || (v !== null && typeof v === 'object') ? null : 'must be a string or an object');
const SEVERITIES = ['sev1', 'sev2', 'sev3', 'sev4', 'critical', 'high', 'medium', 'low'];

/** The free-form task type every agent takes (the alternate layout's `input`). */
function custom(dir: string, format: ArtifactSpec['format'] = 'markdown', ext = 'md'): TaskTypeSpec {
  return {
    taskType: CUSTOM_TASK_TYPE,
    title: 'Free-form request',
    description: 'Any request in the agent’s field, written in `input`; answered with files like the other task types.',
    required: ['input'],
    optional: ['files', 'constraints'],
    checks: { input: isText },
    artifact: { path: (c) => `${dir}/${slugify(c.input, 'request')}.${ext}`, format },
    instructions:
      'Carry out the request in `input` as this agent would, within its field. If the request is outside the field, say so in the summary and write a short note explaining what the agent can do instead.',
    typicalSeconds: 30,
  };
}

// ---------------------------------------------------------------------------------------------
// Outputs by domain (every output also has `summary`)

const SUMMARY = { summary: 'string: what was produced, in a few sentences' };
const DOC_OUTPUTS = {
  ...SUMMARY,
  documentationPath: 'string: path of the main document',
  sections: 'string[]: the headings of the main document',
  wordCount: 'int: words in the main document',
  quality: 'object: completeness (number 0 to 1, share of the expected sections present), examplesIncluded (boolean: a code example is present), crossReferencesValid (boolean: every relative link points to a file of the task or of its context)',
};
const CODE_OUTPUTS = {
  ...SUMMARY,
  entryPoint: 'string: path of the main file',
  language: 'string: the programming language',
  testFiles: 'string[]: files holding tests',
  testsIncluded: 'boolean: at least one test file was written',
};
const DEVOPS_OUTPUTS = {
  ...SUMMARY,
  manifestPath: 'string: path of the main file',
  validation: 'object: valid (boolean: every YAML and JSON file parses), problems (string[])',
};
const PROMPT_OUTPUTS = {
  ...SUMMARY,
  promptPath: 'string: path of the main file',
  variables: 'string[]: {{variables}} the written template uses',
  fragments: 'string[]: {{fragment:…}} references the written template uses',
};
const INCIDENT_OUTPUTS = {
  ...SUMMARY,
  reportPath: 'string: path of the main document',
  severity: 'string or null: SEV1 to SEV4 when stated',
  actionItems: 'string[]: the action items listed',
  sections: 'string[]: the headings of the main document',
};
const PLAN_OUTPUTS = {
  ...SUMMARY,
  planPath: 'string: path of the main document',
  stages: 'string[]: delivery stages the plan covers (RESEARCH … MONITOR)',
  workItems: 'int: list items (tasks, steps) in the plan',
  sections: 'string[]: the headings of the main document',
};

// ---------------------------------------------------------------------------------------------
// The catalogue

export const AGENTS: readonly AgentSpec[] = [
  // ---- Orchestration --------------------------------------------------------------------------
  {
    agentId: 'factory-orchestrator',
    name: 'Factory Orchestrator',
    domain: 'orchestration',
    forgeStage: 'RESEARCH',
    version: '1.0.0',
    description: 'Turns an objective into a staged delivery plan across the six stages (RESEARCH to MONITOR), naming the agents and hand-offs of each stage.',
    outputs: PLAN_OUTPUTS,
    taskTypes: [
      {
        taskType: 'plan-delivery',
        title: 'Plan a delivery',
        description: 'A delivery plan: the stages needed, the tasks and agents of each, the gate outputs each stage hands on, risks and milestones.',
        required: ['objective'],
        optional: ['constraints', 'deadline', 'team', 'repository'],
        checks: { objective: isText },
        artifact: { path: (c) => `plans/${slugify(c.objective, 'delivery')}.md`, format: 'markdown' },
        sections: ['Objective', 'Stages', 'Tasks', 'Risks', 'Milestones'],
        instructions:
          'Plan the delivery of the objective. Use only the stages it needs, in order: RESEARCH, DESIGN, IMPLEMENT, VERIFY, DEPLOY, MONITOR. For each stage list its tasks as "- [ ] <agentId>: <taskType> — <what>" using the platform’s agents, and the outputs its exit gate requires. Close with risks (likelihood, impact, mitigation) and dated milestones when a deadline is given.',
        typicalSeconds: 45,
      },
      {
        taskType: 'decompose-epic',
        title: 'Break an epic into work items',
        description: 'Work items small enough for one agent task each, with acceptance criteria and dependencies.',
        required: ['epic'],
        optional: ['acceptanceCriteria', 'teamSize'],
        artifact: { path: (c) => `plans/${slugify(c.epic, 'epic')}-breakdown.md`, format: 'markdown' },
        sections: ['Epic', 'Work items', 'Dependencies', 'Acceptance criteria'],
        instructions:
          'Break the epic into independent work items, each doable by one agent task in under a day. Write each as "- [ ] <title> (<agentId>/<taskType>)" with its acceptance criteria and the items it depends on.',
        typicalSeconds: 35,
      },
      custom('plans'),
    ],
  },
  {
    agentId: 'forge-gatekeeper',
    name: 'Forge Gatekeeper',
    domain: 'orchestration',
    forgeStage: 'VERIFY',
    version: '1.0.0',
    description: 'Guards the stage gates of the delivery model: checks a stage’s outputs against its gate criteria and writes a proceed-or-hold review.',
    outputs: {
      ...SUMMARY,
      reportPath: 'string: path of the review',
      sections: 'string[]: the headings of the review',
      gate: 'object: the gate validation result (stage, gateType, passed, criteria, missingCriteria, validatedAt), computed from the gate catalogue',
      recommendation: 'string: proceed or hold',
    },
    taskTypes: [
      {
        taskType: 'review-gate',
        title: 'Review a stage gate',
        description: 'Validates the entry or exit gate of a stage against the given outputs (gate catalogue) and reviews the evidence.',
        required: ['stage', 'gateType'],
        optional: ['outputs', 'evidence'],
        checks: { stage: oneOf(STAGES), gateType: oneOf(['entry', 'exit']) },
        artifact: { path: (c) => `gates/${slugify(c.stage, 'stage')}-${slugify(c.gateType, 'gate')}-review.md`, format: 'markdown' },
        sections: ['Gate', 'Criteria', 'Evidence', 'Recommendation'],
        instructions:
          'Review the gate: for each criterion say whether the outputs meet it and how convincing the evidence is. Recommend "proceed" only when every required criterion is met; otherwise "hold" with what is missing.',
        typicalSeconds: 20,
      },
      {
        taskType: 'readiness-report',
        title: 'Report stage readiness',
        description: 'How ready a stage is to exit: exit-gate criteria met and missing, and the work left.',
        required: ['stage'],
        optional: ['outputs', 'risks'],
        checks: { stage: oneOf(STAGES) },
        artifact: { path: (c) => `gates/${slugify(c.stage, 'stage')}-readiness.md`, format: 'markdown' },
        sections: ['Stage', 'Criteria met', 'Missing', 'Next steps'],
        instructions: 'Assess the stage against its exit gate: what is done, what is missing, what must happen before it can exit.',
        typicalSeconds: 20,
      },
      custom('gates'),
    ],
  },

  // ---- Automation -----------------------------------------------------------------------------
  {
    agentId: 'workflow-architect',
    name: 'Workflow Architect',
    domain: 'automation',
    forgeStage: 'DESIGN',
    version: '1.0.0',
    description: 'Designs workflows for the platform’s workflow engine: triggers, nodes and connections, with error handling.',
    outputs: {
      ...SUMMARY,
      workflowPath: 'string: path of the main file',
      nodes: 'int: nodes in the written workflow definition',
      nodeTypes: 'string[]: node types used',
      valid: 'boolean: the definition is JSON with a nodes array',
    },
    taskTypes: [
      {
        taskType: 'design-workflow',
        title: 'Design a workflow',
        description: 'An importable workflow definition for the engine (nodes of types engine.<name>, connections).',
        required: ['goal', 'trigger'],
        optional: ['systems', 'constraints', 'errorHandling'],
        artifact: { path: (c) => `workflows/${slugify(c.goal, 'workflow')}.json`, format: 'json' },
        instructions:
          'Design a workflow for the engine as JSON: {"name", "nodes": [{"name", "type", "parameters"}], "connections": {"<node>": {"main": [[{"node": "<next>"}]]}}}. Use node types engine.manualTrigger, engine.webhook, engine.scheduleTrigger, engine.set, engine.if, engine.switch, engine.filter, engine.merge, engine.code, engine.httpRequest, engine.wait, engine.respondToWebhook, engine.executeWorkflow, engine.agent, engine.prompt, engine.noOp. Start with the trigger the inputs ask for; handle errors explicitly.',
        typicalSeconds: 40,
      },
      {
        taskType: 'review-workflow',
        title: 'Review a workflow',
        description: 'Findings on an existing workflow definition: failure handling, idempotency, performance, secrets.',
        required: ['workflow'],
        optional: ['focus'],
        checks: { workflow: textOrObject },
        artifact: { path: (c) => `workflows/reviews/${slugify((c.workflow as any)?.name ?? c.workflow, 'workflow')}-review.md`, format: 'markdown' },
        sections: ['Summary', 'Findings', 'Recommendations'],
        instructions: 'Review the workflow definition. List findings as "- [severity] node: problem — fix", most severe first.',
        typicalSeconds: 30,
      },
      custom('workflows', 'markdown'),
    ],
  },
  {
    agentId: 'webhook-engineer',
    name: 'Webhook Engineer',
    domain: 'automation',
    forgeStage: 'IMPLEMENT',
    version: '1.0.0',
    description: 'Designs and implements webhook integrations: endpoints, payloads, HMAC signatures, retries and idempotency.',
    outputs: { ...CODE_OUTPUTS, events: 'string[]: the events covered' },
    taskTypes: [
      {
        taskType: 'design-webhook',
        title: 'Design a webhook integration',
        description: 'The contract of a webhook: endpoint, events, payload schema, signature verification, retries and idempotency.',
        required: ['source', 'events'],
        optional: ['authentication', 'payloadExample', 'retryPolicy'],
        checks: { events: isList },
        artifact: { path: (c) => `webhooks/${slugify(c.source, 'webhook')}.md`, format: 'markdown' },
        sections: ['Endpoint', 'Events', 'Payload', 'Signature verification', 'Retries'],
        instructions:
          'Specify the webhook integration: the endpoint, one section per event with an example payload, how the receiver verifies the X-SVC-Signature HMAC-SHA256 header over the raw body, how deliveries are retried and deduplicated.',
        typicalSeconds: 30,
      },
      {
        taskType: 'signature-verifier',
        title: 'Write a signature verifier',
        description: 'Receiver code that verifies HMAC-SHA256 webhook signatures in constant time, with tests.',
        required: ['language'],
        optional: ['framework', 'header', 'algorithm'],
        artifact: { path: (c) => `webhooks/verify-signature.${extensionFor(c.language)}`, format: 'code' },
        instructions:
          'Write a function that verifies a webhook signature header ("sha256=<hex HMAC of the raw body>") with a constant-time comparison, rejecting missing or malformed headers, plus a test file covering valid, tampered and missing signatures.',
        typicalSeconds: 25,
      },
      custom('webhooks'),
    ],
  },
  {
    agentId: 'schedule-optimizer',
    name: 'Schedule Optimizer',
    domain: 'automation',
    forgeStage: 'MONITOR',
    version: '1.0.0',
    description: 'Designs and tunes cron schedules: spreads load, avoids collisions and blackout windows, respects time zones.',
    outputs: {
      ...SUMMARY,
      reportPath: 'string: path of the main document',
      schedules: 'object[]: each schedule (name, cron, valid, nextRuns or error), checked with a real cron parser',
      conflicts: 'object[]: schedules that fire in the same minute in the next 24 hours (a, b, at)',
    },
    taskTypes: [
      {
        taskType: 'propose-schedule',
        title: 'Propose a schedule',
        description: 'Cron expressions for a requirement, with their next runs and the reasoning.',
        required: ['requirement'],
        optional: ['timezone', 'blackoutWindows'],
        artifact: { path: (c) => `schedules/${slugify(c.requirement, 'schedule')}.md`, format: 'markdown' },
        sections: ['Requirement', 'Schedule', 'Rationale'],
        instructions: 'Propose the cron expression(s) that meet the requirement. Write each on its own line as "cron: <five-field expression>" and explain the choice (load, time zone, blackout windows).',
        typicalSeconds: 15,
      },
      {
        taskType: 'optimize-schedules',
        title: 'Optimise a set of schedules',
        description: 'Checks the given schedules (`[{name, cron}]`), finds collisions and proposes spread-out replacements.',
        required: ['schedules'],
        optional: ['timezone', 'capacity'],
        checks: { schedules: isList },
        artifact: { path: () => 'schedules/optimization.md', format: 'markdown' },
        sections: ['Current schedules', 'Conflicts', 'Proposed schedules'],
        instructions: 'Analyse the schedules: collisions, bursts, time-zone pitfalls. Propose replacements, each on its own line as "cron: <five-field expression>".',
        typicalSeconds: 20,
      },
      custom('schedules'),
    ],
  },

  // ---- Engineering ----------------------------------------------------------------------------
  {
    agentId: 'backend-engineer',
    name: 'Backend Engineer',
    domain: 'engineering',
    forgeStage: 'IMPLEMENT',
    version: '1.0.0',
    description: 'Implements server-side code: endpoints, data access, migrations and bug fixes, always with tests.',
    outputs: CODE_OUTPUTS,
    taskTypes: [
      {
        taskType: 'implement-endpoint',
        title: 'Implement an endpoint',
        description: 'An endpoint implementation from a specification, with validation, errors and tests.',
        required: ['specification', 'language'],
        optional: ['framework', 'existingFiles', 'conventions'],
        artifact: { path: (c) => `src/${slugify(c.specification, 'endpoint')}.${extensionFor(c.language)}`, format: 'code' },
        instructions: 'Implement the endpoint the specification describes: input validation, error answers with codes, data access, and a test file covering success and each error.',
        typicalSeconds: 60,
      },
      {
        taskType: 'write-migration',
        title: 'Write a database migration',
        description: 'A reversible schema migration (up and down) for the described change.',
        required: ['change', 'database'],
        optional: ['existingSchema', 'tool'],
        artifact: { path: (c) => `migrations/${slugify(c.change, 'migration')}.sql`, format: 'code' },
        instructions: 'Write the migration for the change: the up statements, then the down statements that undo them, safe for a table in use (no long locks; backfill in batches when needed).',
        typicalSeconds: 30,
      },
      {
        taskType: 'fix-bug',
        title: 'Fix a bug',
        description: 'A diagnosis and a fix for a reported bug, as changed files plus a regression test.',
        required: ['bugReport'],
        optional: ['stackTrace', 'files', 'language'],
        artifact: { path: (c) => `docs/fixes/${slugify(c.bugReport, 'bug')}.md`, format: 'markdown' },
        sections: ['Diagnosis', 'Fix', 'Regression test'],
        instructions: 'Find the cause of the bug. When `files` gives code, answer with the changed files (action "modify") and a regression test; always write the diagnosis document.',
        typicalSeconds: 60,
      },
      custom('src/requests'),
    ],
  },
  {
    agentId: 'frontend-engineer',
    name: 'Frontend Engineer',
    domain: 'engineering',
    forgeStage: 'IMPLEMENT',
    version: '1.0.0',
    description: 'Builds accessible, tested user-interface components and fixes their accessibility.',
    outputs: CODE_OUTPUTS,
    taskTypes: [
      {
        taskType: 'build-component',
        title: 'Build a UI component',
        description: 'A component with its props, states, accessibility and tests.',
        required: ['componentName', 'requirements'],
        optional: ['framework', 'designTokens', 'accessibility'],
        artifact: { path: (c) => `src/components/${pascal(c.componentName, 'Component')}.tsx`, format: 'code' },
        instructions: 'Build the component (React with TypeScript unless `framework` says otherwise): typed props, loading/empty/error states, keyboard and screen-reader support, and a test file.',
        typicalSeconds: 50,
      },
      {
        taskType: 'accessibility-audit',
        title: 'Audit accessibility',
        description: 'WCAG findings for a component or page, each with its fix.',
        required: ['component'],
        optional: ['standard', 'markup'],
        artifact: { path: (c) => `reports/accessibility/${slugify(c.component, 'component')}.md`, format: 'markdown' },
        sections: ['Scope', 'Findings', 'Fixes'],
        instructions: 'Audit the component against WCAG 2.2 AA (or `standard`). List each finding with the success criterion, the impact and the fix.',
        typicalSeconds: 30,
      },
      custom('src/requests'),
    ],
  },
  {
    agentId: 'typescript-shared',
    name: 'TypeScript Shared Library',
    domain: 'engineering',
    forgeStage: 'IMPLEMENT',
    version: '1.0.0',
    description: 'Maintains the shared TypeScript package: domain types, schemas and small well-tested utilities used by every service.',
    outputs: CODE_OUTPUTS,
    taskTypes: [
      {
        taskType: 'define-types',
        title: 'Define shared types',
        description: 'Exported TypeScript types (and runtime guards) for a domain’s entities.',
        required: ['domain', 'entities'],
        optional: ['conventions', 'existingTypes'],
        artifact: { path: (c) => `packages/shared/src/types/${slugify(c.domain, 'types')}.ts`, format: 'code' },
        instructions: 'Define the exported types of the entities, with doc comments, discriminated unions for states, and type guards for data that crosses a process boundary.',
        typicalSeconds: 30,
      },
      {
        taskType: 'write-utility',
        title: 'Write a shared utility',
        description: 'A small, pure, documented utility with its tests.',
        required: ['purpose'],
        optional: ['signature', 'constraints'],
        artifact: { path: (c) => `packages/shared/src/utils/${slugify(c.purpose, 'utility')}.ts`, format: 'code' },
        instructions: 'Write the utility as a pure exported function with a doc comment, plus a test file covering edge cases.',
        typicalSeconds: 25,
      },
      custom('packages/shared/requests'),
    ],
  },

  // ---- DevOps ---------------------------------------------------------------------------------
  {
    agentId: 'platform-deployer',
    name: 'Platform Deployer',
    domain: 'devops',
    forgeStage: 'DEPLOY',
    version: '1.0.0',
    description: 'Plans and writes deployments: rollout strategy, manifests, health checks and rollback.',
    outputs: DEVOPS_OUTPUTS,
    taskTypes: [
      {
        taskType: 'plan-deployment',
        title: 'Plan a deployment',
        description: 'A rollout plan with its verification and rollback steps.',
        required: ['service', 'environment'],
        optional: ['version', 'strategy', 'healthCheck'],
        artifact: { path: (c) => `deploy/${slugify(c.service, 'service')}/${slugify(c.environment, 'environment')}-plan.md`, format: 'markdown' },
        sections: ['Strategy', 'Steps', 'Verification', 'Rollback'],
        instructions: 'Plan the rollout (rolling, blue-green or canary as `strategy` says or as fits): numbered steps, the checks that gate each step, and the exact rollback procedure.',
        typicalSeconds: 30,
      },
      {
        taskType: 'write-manifest',
        title: 'Write deployment manifests',
        description: 'Kubernetes manifests (Deployment, Service) with probes and resources.',
        required: ['service', 'image'],
        optional: ['replicas', 'ports', 'env', 'resources'],
        artifact: { path: (c) => `deploy/${slugify(c.service, 'service')}/deployment.yaml`, format: 'yaml' },
        instructions: 'Write the Kubernetes manifests as YAML documents separated by "---": a Deployment (replicas, resources, readiness and liveness probes, non-root security context) and a Service.',
        typicalSeconds: 25,
      },
      custom('deploy', 'markdown'),
    ],
  },
  {
    agentId: 'ci-actions',
    name: 'CI Actions',
    domain: 'devops',
    forgeStage: 'IMPLEMENT',
    version: '1.0.0',
    description: 'Writes and speeds up CI pipelines as workflow files: build, test, cache, release.',
    outputs: DEVOPS_OUTPUTS,
    taskTypes: [
      {
        taskType: 'create-pipeline',
        title: 'Create a CI pipeline',
        description: 'A CI workflow file: triggers, build, test, caching, least-privilege permissions.',
        required: ['repository', 'language'],
        optional: ['steps', 'triggers', 'deployTarget'],
        artifact: { path: () => '.github/workflows/ci.yml', format: 'yaml' },
        instructions: 'Write the CI workflow YAML: triggers (push and pull_request unless `triggers` says otherwise), explicit minimal `permissions`, dependency caching, build and test jobs, actions pinned to full commit SHAs.',
        typicalSeconds: 25,
      },
      {
        taskType: 'optimize-pipeline',
        title: 'Optimise a CI pipeline',
        description: 'The given pipeline rewritten to run faster and safer, with what changed and why.',
        required: ['pipeline'],
        optional: ['goals', 'path'],
        checks: { pipeline: isText },
        artifact: { path: (c) => (typeof c.path === 'string' ? c.path : '.github/workflows/ci.yml'), format: 'yaml', modifies: true },
        instructions: 'Rewrite the pipeline (action "modify"): parallelise independent jobs, cache dependencies, skip work for unchanged paths, pin actions. Explain each change in the summary.',
        typicalSeconds: 30,
      },
      custom('ci', 'markdown'),
    ],
  },
  {
    agentId: 'pipeline-auditor',
    name: 'Pipeline Auditor',
    domain: 'devops',
    forgeStage: 'VERIFY',
    version: '1.0.0',
    description: 'Audits CI/CD pipelines and dependency manifests for supply-chain and security risks.',
    outputs: {
      ...DEVOPS_OUTPUTS,
      findings: 'object[]: rule, severity, message — static checks of the given pipeline or manifest (unpinned actions, missing permissions, secrets in commands, unpinned versions)',
    },
    taskTypes: [
      {
        taskType: 'audit-pipeline',
        title: 'Audit a pipeline',
        description: 'Supply-chain and security review of a CI workflow, with static checks and fixes.',
        required: ['pipeline'],
        optional: ['policies'],
        checks: { pipeline: isText },
        artifact: { path: () => 'reports/pipeline-audit.md', format: 'markdown' },
        sections: ['Summary', 'Findings', 'Remediation'],
        instructions: 'Audit the pipeline: unpinned third-party actions, over-broad token permissions, secrets exposed in commands or logs, untrusted input in run steps, missing protections on deploy jobs. Give each finding a severity and a fix.',
        typicalSeconds: 25,
      },
      {
        taskType: 'audit-dependencies',
        title: 'Audit dependencies',
        description: 'Review of a dependency manifest (package.json and the like): unpinned, risky or abandoned packages.',
        required: ['manifest'],
        optional: ['policies', 'lockfile'],
        checks: { manifest: textOrObject },
        artifact: { path: () => 'reports/dependency-audit.md', format: 'markdown' },
        sections: ['Summary', 'Findings', 'Remediation'],
        instructions: 'Audit the manifest: floating or wildcard versions, install scripts, packages that duplicate each other or look abandoned. Give each finding a severity and a fix.',
        typicalSeconds: 20,
      },
      custom('reports'),
    ],
  },

  // ---- Documentation --------------------------------------------------------------------------
  {
    agentId: 'docs-author',
    name: 'Docs Author',
    domain: 'documentation',
    forgeStage: 'IMPLEMENT',
    version: '1.0.0',
    description: 'Writes and maintains product documentation: task-oriented guides, API references and updates that follow code changes.',
    outputs: DOC_OUTPUTS,
    taskTypes: [
      {
        taskType: 'write-guide',
        title: 'Write a guide',
        description: 'A task-oriented guide for an audience, with runnable examples and troubleshooting.',
        required: ['topic', 'audience'],
        optional: ['outline', 'sourceFiles', 'tone'],
        artifact: { path: (c) => `docs/guides/${slugify(c.topic, 'guide')}.md`, format: 'markdown' },
        sections: ['Overview', 'Prerequisites', 'Steps', 'Examples', 'Troubleshooting', 'Next steps'],
        instructions: 'Write a guide on the topic for the audience, in Markdown with the sections listed below as "## " headings. Every step has a runnable example in a fenced code block. Link only to files that exist (the source files given, or files you write).',
        typicalSeconds: 45,
      },
      {
        taskType: 'api-reference',
        title: 'Write an API reference',
        description: 'A reference page: authentication, every endpoint with parameters and examples, errors.',
        required: ['api', 'endpoints'],
        optional: ['baseUrl', 'authentication', 'errors'],
        artifact: { path: (c) => `docs/api/${slugify(c.api, 'api')}.md`, format: 'markdown' },
        sections: ['Authentication', 'Endpoints', 'Errors', 'Examples'],
        instructions: 'Document the API: authentication, then each endpoint (method, path, parameters, request and response examples as fenced code), then the error codes.',
        typicalSeconds: 45,
      },
      {
        taskType: 'update-docs',
        title: 'Update a document',
        description: 'An existing document brought in line with described changes (the file is modified, not created).',
        required: ['docPath', 'changes'],
        optional: ['currentContent'],
        checks: { docPath: isText },
        artifact: { path: (c) => String(c.docPath), format: 'markdown', modifies: true },
        instructions: 'Update the document at docPath for the changes: keep its structure and voice, change only what the changes require, and answer with the whole new document (action "modify").',
        typicalSeconds: 30,
      },
      custom('docs'),
    ],
  },
  {
    agentId: 'api-documenter',
    name: 'API Documenter',
    domain: 'documentation',
    forgeStage: 'IMPLEMENT',
    version: '1.0.0',
    description: 'Produces machine-readable API descriptions and release notes: OpenAPI documents and changelogs.',
    outputs: DOC_OUTPUTS,
    taskTypes: [
      {
        taskType: 'openapi-spec',
        title: 'Write an OpenAPI document',
        description: 'An OpenAPI 3.1 document for the endpoints, with schemas and examples.',
        required: ['api', 'endpoints'],
        optional: ['version', 'servers', 'securitySchemes'],
        artifact: { path: (c) => `openapi/${slugify(c.api, 'api')}.yaml`, format: 'yaml' },
        sections: ['openapi', 'info', 'paths', 'components'],
        instructions: 'Write an OpenAPI 3.1 document in YAML: info, servers, every path and operation with parameters, request bodies, responses with examples, and reusable schemas under components.',
        typicalSeconds: 40,
      },
      {
        taskType: 'changelog',
        title: 'Write release notes',
        description: 'A changelog entry grouped as Added, Changed, Deprecated, Removed, Fixed, Security.',
        required: ['version', 'changes'],
        optional: ['date', 'previousVersion'],
        artifact: { path: (c) => `docs/changelog/${slugify(c.version, 'release')}.md`, format: 'markdown' },
        sections: ['Added', 'Changed', 'Fixed'],
        instructions: 'Write the changelog entry in the Keep a Changelog style; include only the groups that have entries, and show migration examples for breaking changes.',
        typicalSeconds: 20,
      },
      custom('docs/api'),
    ],
  },
  {
    agentId: 'runbook-writer',
    name: 'Runbook Writer',
    domain: 'documentation',
    forgeStage: 'MONITOR',
    version: '1.0.0',
    description: 'Writes operational runbooks that an on-call engineer can follow at 3 a.m.',
    outputs: DOC_OUTPUTS,
    taskTypes: [
      {
        taskType: 'write-runbook',
        title: 'Write a runbook',
        description: 'A runbook for one failure scenario of a service: symptoms, diagnosis, mitigation, escalation.',
        required: ['service', 'scenario'],
        optional: ['alerts', 'dashboards', 'escalation'],
        artifact: { path: (c) => `runbooks/${slugify(c.service, 'service')}/${slugify(c.scenario, 'scenario')}.md`, format: 'markdown' },
        sections: ['Symptoms', 'Diagnosis', 'Mitigation', 'Escalation', 'Verification'],
        instructions: 'Write the runbook: how the scenario shows (alerts, dashboards), commands to diagnose it (fenced code), mitigations in order of safety, who to escalate to and when, and how to verify recovery.',
        typicalSeconds: 35,
      },
      custom('runbooks'),
    ],
  },

  // ---- Prompts --------------------------------------------------------------------------------
  {
    agentId: 'prompt-refiner',
    name: 'Prompt Refiner',
    domain: 'prompts',
    forgeStage: 'DESIGN',
    version: '1.0.0',
    description: 'Improves prompt templates towards stated goals while keeping their variables and fragments intact.',
    outputs: PROMPT_OUTPUTS,
    taskTypes: [
      {
        // The prompt library seeds and uses `prompt-refiner-refine` itself (its refine operation).
        taskType: 'refine',
        title: 'Refine a prompt template',
        description: 'An improved template meeting the goals; the answer is the template itself.',
        required: ['template', 'goals'],
        optional: ['promptId'],
        artifact: { path: (c) => `prompts/${slugify(c.promptId, 'prompt')}.refined.txt`, format: 'text' },
        instructions: 'Improve the template towards the goals, keeping every placeholder in double curly braces exactly as it is.',
        typicalSeconds: 20,
      },
      {
        taskType: 'evaluate-prompt',
        title: 'Evaluate a prompt template',
        description: 'A scored review of a template: clarity, ambiguity, injection risks, missing constraints.',
        required: ['template'],
        optional: ['criteria', 'examples'],
        artifact: { path: (c) => `prompts/reviews/${slugify(c.template, 'prompt')}.md`, format: 'markdown' },
        sections: ['Scores', 'Findings', 'Suggested template'],
        instructions: 'Evaluate the template against the criteria (default: clarity, specificity, output format, injection resistance), score each 1-5, list findings and give a suggested template that keeps its placeholders (the names in double curly braces).',
        typicalSeconds: 20,
      },
      custom('prompts', 'text', 'txt'),
    ],
  },
  {
    agentId: 'chain-architect',
    name: 'Chain Architect',
    domain: 'prompts',
    forgeStage: 'DESIGN',
    version: '1.0.0',
    description: 'Designs multi-step prompt chains for the prompt library: step order, input mappings and output keys.',
    outputs: { ...PROMPT_OUTPUTS, steps: 'int: steps in the written chain definition', valid: 'boolean: the chain definition is JSON with a steps array' },
    taskTypes: [
      {
        taskType: 'design-chain',
        title: 'Design a prompt chain',
        description: 'A chain definition for the prompt library (ordered steps, input mappings, output keys).',
        required: ['goal'],
        optional: ['availablePrompts', 'constraints'],
        artifact: { path: (c) => `chains/${slugify(c.goal, 'chain')}.json`, format: 'json' },
        instructions: 'Design the chain as JSON for the prompt library: {"name", "description", "steps": [{"order", "promptId", "inputMapping": {"<variable>": "input.<name>" or "step_<n>.<outputKey>"}, "outputKey"}]}. Reuse `availablePrompts` where they fit; steps sharing an order run in parallel.',
        typicalSeconds: 30,
      },
      custom('chains', 'markdown'),
    ],
  },
  {
    agentId: 'fragment-curator',
    name: 'Fragment Curator',
    domain: 'prompts',
    forgeStage: 'DESIGN',
    version: '1.0.0',
    description: 'Finds text repeated across prompt templates and turns it into reusable fragments (role, constraints, examples, context, format).',
    outputs: { ...PROMPT_OUTPUTS, proposedFragments: 'int: fragments proposed' },
    taskTypes: [
      {
        taskType: 'extract-fragments',
        title: 'Extract reusable fragments',
        description: 'Fragments extracted from templates, and the templates rewritten to reference them.',
        required: ['templates'],
        optional: ['types'],
        checks: { templates: isList },
        artifact: { path: () => 'fragments/catalogue.md', format: 'markdown' },
        sections: ['Fragments', 'Rewritten templates'],
        instructions: 'Find passages shared by the templates. Propose each as a fragment ("### <fragment_id> (<type>)" then its content) and show each template rewritten to reference them (the word fragment, a colon and the fragment id, inside double curly braces).',
        typicalSeconds: 25,
      },
      custom('fragments'),
    ],
  },

  // ---- Incident -------------------------------------------------------------------------------
  {
    agentId: 'incident-commander',
    name: 'Incident Commander',
    domain: 'incident',
    forgeStage: 'MONITOR',
    version: '1.0.0',
    description: 'Coordinates incident response: roles, priorities, decisions and stakeholder communication.',
    outputs: INCIDENT_OUTPUTS,
    taskTypes: [
      {
        taskType: 'coordinate-incident',
        title: 'Coordinate an incident',
        description: 'The incident’s command document: status, impact, roles, prioritised actions, communication plan.',
        required: ['incident', 'severity'],
        optional: ['affectedServices', 'timeline', 'responders'],
        checks: { severity: oneOf(SEVERITIES, true) },
        artifact: { path: (c) => `incidents/${slugify(c.incident, 'incident')}/coordination.md`, format: 'markdown' },
        sections: ['Status', 'Impact', 'Roles', 'Action items', 'Communication'],
        instructions: 'Take command of the incident: current status and impact, roles (commander, operations, communications), the next actions as "- [ ] <owner>: <action>" in priority order, and when and how stakeholders are updated.',
        typicalSeconds: 25,
      },
      {
        taskType: 'status-update',
        title: 'Write a status update',
        description: 'A stakeholder status update: what is known, impact, what is being done, next update time.',
        required: ['incident', 'status'],
        optional: ['audience', 'nextUpdateAt'],
        artifact: { path: (c) => `incidents/${slugify(c.incident, 'incident')}/status-update.md`, format: 'markdown' },
        sections: ['Current status', 'Impact', 'Next update'],
        instructions: 'Write a calm, factual status update for the audience (default: customers). No speculation about causes; say when the next update comes.',
        typicalSeconds: 15,
      },
      custom('incidents'),
    ],
  },
  {
    agentId: 'triage-responder',
    name: 'Triage Responder',
    domain: 'incident',
    forgeStage: 'MONITOR',
    version: '1.0.0',
    description: 'First responder for alerts: assesses severity, narrows likely causes and proposes the first safe steps.',
    outputs: INCIDENT_OUTPUTS,
    taskTypes: [
      {
        taskType: 'triage-alert',
        title: 'Triage an alert',
        description: 'Severity, likely causes ranked by evidence, and the first diagnostic and mitigation steps.',
        required: ['alert'],
        optional: ['service', 'recentDeploys', 'logs', 'metrics'],
        artifact: { path: (c) => `incidents/triage/${slugify((c.alert as any)?.name ?? c.alert, 'alert')}.md`, format: 'markdown' },
        sections: ['Assessment', 'Likely causes', 'Action items'],
        instructions: 'Triage the alert: state the severity as SEV1-SEV4 with the reason, rank the likely causes by the evidence (recent deploys, logs, metrics), and list the first steps as "- [ ] <action>", safest first.',
        typicalSeconds: 15,
      },
      custom('incidents/triage'),
    ],
  },
  {
    agentId: 'postmortem-analyst',
    name: 'Postmortem Analyst',
    domain: 'incident',
    forgeStage: 'MONITOR',
    version: '1.0.0',
    description: 'Writes blameless postmortems: timeline, contributing factors, root cause and owned action items.',
    outputs: INCIDENT_OUTPUTS,
    taskTypes: [
      {
        taskType: 'write-postmortem',
        title: 'Write a postmortem',
        description: 'A blameless postmortem with timeline, root cause analysis and owned action items.',
        required: ['incident', 'timeline'],
        optional: ['impact', 'rootCause', 'actionItems', 'severity'],
        artifact: { path: (c) => `postmortems/${slugify(c.incident, 'incident')}.md`, format: 'markdown' },
        sections: ['Summary', 'Impact', 'Timeline', 'Root cause', 'What went well', 'Action items'],
        instructions: 'Write a blameless postmortem: summary, customer impact with numbers when known, the timeline in UTC, contributing factors and the root cause (five whys), what went well, and action items as "- [ ] <owner>: <action> (<due date>)".',
        typicalSeconds: 40,
      },
      custom('postmortems'),
    ],
  },
];

const BY_ID = new Map(AGENTS.map((a) => [a.agentId, a]));

export function findAgent(agentId: string): AgentSpec | undefined {
  return BY_ID.get(agentId);
}

export function findTaskType(agent: AgentSpec, taskType: string): TaskTypeSpec | undefined {
  return agent.taskTypes.find((t) => t.taskType === taskType);
}

/** The prompt of one agent and task type in the prompt library (CONTRACT.md section 8). */
export function promptIdOf(agentId: string, taskType: string): string {
  return `${agentId}-${taskType}`;
}
