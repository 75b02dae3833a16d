import { errors } from '../../../kernel/errors';

/**
 * The gate catalogue of the six-stage delivery model (pure; documented in docs/control-plane.md). An
 * entry gate expects exactly the previous stage's exit outputs. A criterion is met by a non-empty
 * value under its name or an `evidence` name: the fields the agents really produce (agent.catalog.ts).
 */

export const STAGES = ['RESEARCH', 'DESIGN', 'IMPLEMENT', 'VERIFY', 'DEPLOY', 'MONITOR'] as const;
export type StageName = (typeof STAGES)[number];
export type GateType = 'entry' | 'exit';

export interface GateCriterion {
  name: string;
  required: boolean;
  description: string;
  /** Agent output names that also meet the criterion. */
  evidence: readonly string[];
}

export interface GateCriterionResult {
  name: string;
  required: boolean;
  met: boolean;
}

export interface GateValidationResult {
  stage: string;
  gateType: GateType;
  passed: boolean;
  criteria: GateCriterionResult[];
  /** The required criteria not met; present only when the gate failed. */
  missingCriteria?: string[];
  validatedAt: Date;
}

const c = (name: string, required: boolean, description: string, evidence: string[] = []): GateCriterion => ({
  name,
  required,
  description,
  evidence,
});

/** Exit criteria of each stage, in delivery order. */
export const EXIT_CRITERIA: Readonly<Record<StageName, readonly GateCriterion[]>> = {
  RESEARCH: [
    c('researchFindings', true, 'What was learned, written down: prior art, constraints, options, the plan', ['planPath', 'documentationPath', 'reportPath']),
    c('requirements', false, 'The requirements the later stages build to'),
    c('risks', false, 'Known risks and open questions'),
  ],
  DESIGN: [
    c('design', true, 'The design artefact: architecture, workflow, prompt or interface definition', [
      'workflowPath',
      'promptPath',
      'documentationPath',
      'planPath',
    ]),
    c('apiContract', false, 'The interfaces to build: endpoints, schemas, events'),
    c('dataModel', false, 'Entities, storage and migrations'),
  ],
  IMPLEMENT: [
    c('implementation', true, 'What was built: code, configuration, workflow, prompt or documents', [
      'entryPoint',
      'manifestPath',
      'workflowPath',
      'promptPath',
      'documentationPath',
    ]),
    c('tests', true, 'The tests written with the implementation', ['testFiles']),
    c('documentation', false, 'Where the change is documented', ['documentationPath']),
  ],
  VERIFY: [
    c('verificationReport', true, 'The outcome of the checks: review, audit or gate report', ['reportPath', 'gate', 'findings', 'manifestPath']),
    c('testResults', false, 'The results of the test suites run against the implementation'),
    c('approval', false, 'The proceed-or-hold recommendation', ['recommendation']),
  ],
  DEPLOY: [
    c('deploymentManifest', true, 'What is deployed: manifests, pipeline or release definition', ['manifestPath']),
    c('rollbackPlan', false, 'How to go back to the previous release'),
    c('releaseNotes', false, 'What changed for users', ['documentationPath']),
  ],
  MONITOR: [
    c('monitoringPlan', true, 'How the release is watched: runbooks, schedules, incident reports', ['reportPath', 'documentationPath', 'schedules']),
    c('alertRules', false, 'The alerts that page someone, and their thresholds'),
    c('incidentRunbook', false, 'What to do when an alert fires', ['documentationPath']),
  ],
};

export function isStage(value: string): value is StageName {
  return (STAGES as readonly string[]).includes(value);
}

export function stageIndex(stage: StageName): number {
  return STAGES.indexOf(stage);
}

/** The documented criteria of one gate: entry = the exit criteria of the previous stage. */
export function gateCriteria(stage: StageName, gateType: GateType): readonly GateCriterion[] {
  if (gateType === 'exit') return EXIT_CRITERIA[stage];
  const previous = STAGES[stageIndex(stage) - 1];
  return previous ? EXIT_CRITERIA[previous] : [];
}

/** True when `value` is a non-empty output value (see the file comment). */
export function hasValue(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value === 'string') return value.trim().length > 0;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.keys(value as object).length > 0;
  if (typeof value === 'number') return !Number.isNaN(value);
  return true;
}

/**
 * Validates one gate against a map of outputs. `required`, when given (an orchestration stage's
 * `gateValidation.exit.required`), replaces the catalogue's required flags: exactly those names are
 * required; catalogue criteria not listed are still reported, as optional; listed names the
 * catalogue does not know are added as required criteria of their own.
 * Throws validation_error for an unknown stage or gate type; a failed gate is a result, not an error.
 */
export function validateGate(stage: string, gateType: GateType, outputs: Record<string, unknown>, required?: readonly string[]): GateValidationResult {
  if (!isStage(stage)) throw errors.field('stage', `must be one of ${STAGES.join(', ')}`);
  if (gateType !== 'entry' && gateType !== 'exit') throw errors.field('gateType', 'must be entry or exit');
  const source = outputs ?? {};
  const catalogue = gateCriteria(stage, gateType);
  const wanted = required ? new Set(required) : undefined;
  const list: { name: string; required: boolean; evidence: readonly string[] }[] = catalogue.map((k) => ({
    name: k.name,
    required: wanted ? wanted.has(k.name) : k.required,
    evidence: k.evidence,
  }));
  for (const name of required ?? []) {
    if (!list.some((k) => k.name === name)) list.push({ name, required: true, evidence: [] });
  }
  const criteria = list.map((k) => ({
    name: k.name,
    required: k.required,
    // Own entries only: a criterion named `constructor` is not met by Object.prototype's.
    met: [k.name, ...k.evidence].some((n) => Object.hasOwn(source, n) && hasValue(source[n])),
  }));
  const missing = criteria.filter((k) => k.required && !k.met).map((k) => k.name);
  const result: GateValidationResult = { stage, gateType, passed: missing.length === 0, criteria, validatedAt: new Date() };
  if (missing.length) result.missingCriteria = missing;
  return result;
}
