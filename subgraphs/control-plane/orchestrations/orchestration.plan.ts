import { AppError, errors, type FieldError } from '../../../kernel/errors';
import { STAGES, isStage, stageIndex, type StageName } from '../gates';

/**
 * Turns a create request into a checked plan (pure; orchestration.service.ts stores it): shape (400
 * validation_error), each task against the catalogue (`checkTask`), then dependencies (422
 * workflow_validation_failed: missing or circular). Rules: docs/control-plane.md. A dependency is
 * `stage:<STAGE>`, a task id, or an agentId run by exactly one task.
 */

export interface TaskSpec {
  id?: string | null;
  agentId: string;
  taskType: string;
  context?: Record<string, unknown> | null;
  dependencies?: string[] | null;
}

export interface StageSpec {
  stage: string;
  tasks: TaskSpec[];
  parallel?: boolean | null;
  gateValidation?: { exit?: { required?: string[] | null } | null } | null;
}

export interface PlannedTask {
  position: number;
  key: string;
  agentId: string;
  taskType: string;
  context: Record<string, unknown>;
  dependencies: string[];
  /** Keys of tasks of the same stage to wait for. */
  dependsOn: string[];
}

export interface PlannedStage {
  position: number;
  stage: StageName;
  parallel: boolean;
  gateEnabled: boolean;
  gateRequired: string[] | null;
  tasks: PlannedTask[];
}

export interface DependencyError {
  type: 'missing_dependency' | 'circular_dependency';
  message: string;
  stage: string;
  task: string;
  dependency?: string;
  /** For a cycle among tasks: the task keys around it, the first repeated at the end. */
  cycle?: string[];
}

export const LIMITS = { stages: STAGES.length, tasksPerStage: 50, tasks: 100, dependencies: 50, gateCriteria: 50 };
const TASK_ID = /^[A-Za-z0-9][A-Za-z0-9_.#-]{0,99}$/;
const CRITERION = /^[A-Za-z_][A-Za-z0-9_.-]{0,99}$/;

/** Checks one task against the agent catalogue; throws the catalogue's AppError. */
export type TaskChecker = (agentId: string, taskType: string, context: Record<string, unknown>) => void;

export function planOrchestration(stages: StageSpec[], checkTask: TaskChecker, opts: { gates?: 'stage' | 'all' | 'none' } = {}): PlannedStage[] {
  checkShape(stages);
  const planned = assignKeys(stages, opts.gates ?? 'stage');
  stages.forEach((s, i) =>
    s.tasks.forEach((t, j) => {
      try {
        checkTask(t.agentId, t.taskType, t.context ?? {});
      } catch (err) {
        if (err instanceof AppError) {
          throw new AppError(err.code, `stages[${i}].tasks[${j}]: ${err.message}`, { ...err.details, field: `stages[${i}].tasks[${j}]` }, err.status);
        }
        throw err;
      }
    }),
  );
  const explicit = new Set(stages.flatMap((s) => s.tasks.map((t) => t.id).filter((id): id is string => !!id)));
  const problems = resolveDependencies(planned, explicit);
  if (problems.length) {
    throw new AppError('workflow_validation_failed', `The orchestration's dependencies are invalid: ${problems.map((p) => p.message).join('; ')}`, {
      errors: problems,
    });
  }
  return planned;
}

function checkShape(stages: StageSpec[]): void {
  const problems: FieldError[] = [];
  if (!Array.isArray(stages) || stages.length === 0) throw errors.field('stages', 'must hold at least one stage');
  if (stages.length > LIMITS.stages) problems.push({ field: 'stages', message: `must hold at most ${LIMITS.stages} stages` });
  let last = -1;
  let lastName = '';
  const ids = new Map<string, string>();
  let total = 0;
  stages.forEach((s, i) => {
    const at = `stages[${i}]`;
    if (!isStage(s.stage)) {
      problems.push({ field: `${at}.stage`, message: `must be one of ${STAGES.join(', ')}` });
    } else {
      const index = stageIndex(s.stage);
      if (index === last) problems.push({ field: `${at}.stage`, message: `${s.stage} appears more than once` });
      else if (index < last) {
        problems.push({ field: `${at}.stage`, message: `${s.stage} must come before ${lastName}: stages run in delivery order ${STAGES.join(' → ')}` });
      } else {
        last = index;
        lastName = s.stage;
      }
    }
    const tasks = Array.isArray(s.tasks) ? s.tasks : [];
    total += tasks.length;
    if (tasks.length === 0) problems.push({ field: `${at}.tasks`, message: 'must hold at least one task' });
    if (tasks.length > LIMITS.tasksPerStage) problems.push({ field: `${at}.tasks`, message: `must hold at most ${LIMITS.tasksPerStage} tasks` });
    tasks.forEach((t, j) => {
      const tat = `${at}.tasks[${j}]`;
      if (t.id !== undefined && t.id !== null) {
        if (typeof t.id !== 'string' || !TASK_ID.test(t.id)) {
          problems.push({ field: `${tat}.id`, message: 'must be 1 to 100 letters, digits, ".", "_", "-" or "#", starting with a letter or digit' });
        } else if (ids.has(t.id)) problems.push({ field: `${tat}.id`, message: `"${t.id}" is already the id of ${ids.get(t.id)}` });
        else ids.set(t.id, tat);
      }
      if (typeof t.agentId !== 'string' || t.agentId === '') problems.push({ field: `${tat}.agentId`, message: 'is required' });
      if (typeof t.taskType !== 'string' || t.taskType === '') problems.push({ field: `${tat}.taskType`, message: 'is required' });
      const deps = t.dependencies ?? [];
      if (deps.length > LIMITS.dependencies) problems.push({ field: `${tat}.dependencies`, message: `must hold at most ${LIMITS.dependencies} entries` });
      deps.forEach((d, k) => {
        if (typeof d !== 'string' || d.trim() === '' || d.length > 200) {
          problems.push({ field: `${tat}.dependencies[${k}]`, message: 'must be a task id, an agentId or stage:<STAGE>' });
        }
      });
      if (t.context !== undefined && t.context !== null && JSON.stringify(t.context).length > 256 * 1024) {
        problems.push({ field: `${tat}.context`, message: 'must be at most 256 KiB as JSON' });
      }
    });
    const required = s.gateValidation?.exit?.required;
    if (required) {
      if (required.length > LIMITS.gateCriteria)
        problems.push({ field: `${at}.gateValidation.exit.required`, message: `must hold at most ${LIMITS.gateCriteria} criteria` });
      required.forEach((name, k) => {
        if (typeof name !== 'string' || !CRITERION.test(name)) {
          problems.push({ field: `${at}.gateValidation.exit.required[${k}]`, message: 'must be a criterion name (letters, digits, "_", ".", "-")' });
        }
      });
    }
  });
  if (total > LIMITS.tasks) problems.push({ field: 'stages', message: `must hold at most ${LIMITS.tasks} tasks in all` });
  if (problems.length) throw errors.validation(problems);
}

function assignKeys(stages: StageSpec[], gates: 'stage' | 'all' | 'none'): PlannedStage[] {
  const taken = new Set<string>(stages.flatMap((s) => s.tasks.map((t) => t.id).filter((id): id is string => !!id)));
  return stages.map((s, i) => ({
    position: i,
    stage: s.stage as StageName,
    parallel: s.parallel === true,
    gateEnabled: gates === 'all' || (gates === 'stage' && !!s.gateValidation),
    gateRequired: gates === 'none' ? null : (s.gateValidation?.exit?.required ?? null),
    tasks: s.tasks.map((t, j) => {
      let key = t.id ?? t.agentId;
      if (!t.id) {
        for (let n = 2; taken.has(key); n++) key = `${t.agentId}#${n}`;
        taken.add(key);
      }
      return {
        position: j,
        key,
        agentId: t.agentId,
        taskType: t.taskType,
        context: t.context ?? {},
        dependencies: [...(t.dependencies ?? [])],
        dependsOn: [],
      };
    }),
  }));
}

function resolveDependencies(stages: PlannedStage[], explicit: Set<string>): DependencyError[] {
  const problems: DependencyError[] = [];
  const byId = new Map<string, { stage: number; task: PlannedTask }>();
  const byAgent = new Map<string, { stage: number; task: PlannedTask }[]>();
  for (const s of stages) {
    for (const t of s.tasks) {
      const entry = { stage: s.position, task: t };
      byAgent.set(t.agentId, [...(byAgent.get(t.agentId) ?? []), entry]);
      byId.set(t.key, entry);
    }
  }

  for (const s of stages) {
    for (const t of s.tasks) {
      const here = { stage: s.stage, task: t.key };
      for (const raw of t.dependencies) {
        const dep = raw.trim();
        const stageRef = /^stage:(.+)$/i.exec(dep);
        if (stageRef) {
          const name = stageRef[1]!.trim().toUpperCase();
          const target = stages.find((x) => x.stage === name);
          if (!target) {
            problems.push({
              type: 'missing_dependency',
              ...here,
              dependency: raw,
              message: `${t.key} (${s.stage}) depends on stage ${name}, which is not a stage of this orchestration`,
            });
          } else if (target.position >= s.position) {
            problems.push({
              type: 'circular_dependency',
              ...here,
              dependency: raw,
              message: `${t.key} (${s.stage}) depends on stage ${name}, which ${target.position === s.position ? 'is its own stage' : 'runs after it'}`,
            });
          }
          continue;
        }
        let target = explicit.has(dep) ? byId.get(dep) : undefined;
        if (!target) {
          const running = byAgent.get(dep) ?? [];
          if (running.length > 1) {
            problems.push({
              type: 'missing_dependency',
              ...here,
              dependency: raw,
              message: `${t.key} (${s.stage}) depends on ${dep}, which ${running.length} tasks run: give the task an id and depend on that`,
            });
            continue;
          }
          target = running[0] ?? byId.get(dep);
        }
        if (!target) {
          problems.push({
            type: 'missing_dependency',
            ...here,
            dependency: raw,
            message: `${t.key} (${s.stage}) depends on ${dep}, which is no task of this orchestration`,
          });
        } else if (target.stage > s.position) {
          problems.push({
            type: 'circular_dependency',
            ...here,
            dependency: raw,
            message: `${t.key} (${s.stage}) depends on ${target.task.key} of ${stages[target.stage]!.stage}, a stage that runs after it`,
          });
        } else if (target.stage === s.position && !t.dependsOn.includes(target.task.key)) {
          t.dependsOn.push(target.task.key);
        }
      }
    }
  }
  for (const s of stages) problems.push(...cyclesOf(s));
  return problems;
}

/** Cycles among a stage's tasks: explicit dependencies plus, when not parallel, each task after the one before it. */
function cyclesOf(stage: PlannedStage): DependencyError[] {
  const edges = new Map<string, string[]>();
  stage.tasks.forEach((t, i) => {
    const after = [...t.dependsOn];
    if (!stage.parallel && i > 0) after.push(stage.tasks[i - 1]!.key);
    edges.set(t.key, after);
  });
  const state = new Map<string, 'visiting' | 'done'>();
  const found: DependencyError[] = [];
  const seen = new Set<string>();
  const path: string[] = [];
  const visit = (key: string) => {
    state.set(key, 'visiting');
    path.push(key);
    for (const next of edges.get(key) ?? []) {
      const s = state.get(next);
      if (s === 'visiting') {
        const cycle = [...path.slice(path.indexOf(next)), next].reverse();
        const signature = [...new Set(cycle)].sort().join('|');
        if (!seen.has(signature)) {
          seen.add(signature);
          found.push({
            type: 'circular_dependency',
            stage: stage.stage,
            task: cycle[0]!,
            cycle,
            message: `${stage.stage}: ${cycle.join(' → ')} is a cycle${stage.parallel ? '' : ' (tasks of a stage that is not parallel also wait for the task before them)'}`,
          });
        }
      } else if (!s) visit(next);
    }
    path.pop();
    state.set(key, 'done');
  };
  for (const t of stage.tasks) if (!state.has(t.key)) visit(t.key);
  return found;
}
