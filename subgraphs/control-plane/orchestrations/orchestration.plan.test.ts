import assert from 'node:assert/strict';
import { AppError } from '../../../kernel/errors';
import { planOrchestration, type StageSpec } from './orchestration.plan';

const accept = () => undefined;
const t = (agentId: string, extra: Record<string, unknown> = {}) => ({ agentId, taskType: 'x', context: {}, ...extra });

function errorsOf(stages: StageSpec[]): { type: string; task: string; dependency?: string }[] {
  try {
    planOrchestration(stages, accept);
  } catch (err) {
    assert.ok(err instanceof AppError);
    assert.equal(err.code, 'workflow_validation_failed');
    return (err.details.errors as { type: string; task: string; dependency?: string }[]).map(({ type, task, dependency }) => ({
      type,
      task,
      ...(dependency ? { dependency } : {}),
    }));
  }
  assert.fail('expected workflow_validation_failed');
}

describe('planOrchestration', () => {
  test('keys: the id, else the agentId made unique; dependencies resolve to same-stage keys only', () => {
    const plan = planOrchestration(
      [
        { stage: 'RESEARCH', tasks: [t('a'), t('a')] },
        { stage: 'DESIGN', parallel: true, tasks: [t('b', { id: 'first' }), t('c', { dependencies: ['first', 'stage:RESEARCH', 'a#2'] })] },
      ],
      accept,
    );
    assert.deepEqual(
      plan[0]!.tasks.map((x) => x.key),
      ['a', 'a#2'],
    );
    assert.deepEqual(plan[1]!.tasks[1]!.dependsOn, ['first']);
    assert.equal(plan[1]!.gateEnabled, false);
  });

  test('an agent run by several tasks is an ambiguous dependency; self and later references are cycles', () => {
    assert.deepEqual(errorsOf([{ stage: 'RESEARCH', tasks: [t('a'), t('a'), t('b', { dependencies: ['a'] })] }]), [
      { type: 'missing_dependency', task: 'b', dependency: 'a' },
    ]);
    assert.deepEqual(
      errorsOf([{ stage: 'RESEARCH', parallel: true, tasks: [t('a', { dependencies: ['a'] })] }]).map((e) => e.type),
      ['circular_dependency'],
    );
    assert.deepEqual(
      errorsOf([
        { stage: 'RESEARCH', tasks: [t('a', { dependencies: ['b'] })] },
        { stage: 'DESIGN', tasks: [t('b')] },
      ]),
      [{ type: 'circular_dependency', task: 'a', dependency: 'b' }],
    );
    assert.deepEqual(errorsOf([{ stage: 'DESIGN', tasks: [t('a', { dependencies: ['stage:RESEARCH'] })] }]), [
      { type: 'missing_dependency', task: 'a', dependency: 'stage:RESEARCH' },
    ]);
  });

  test('a three-task cycle in a parallel stage is reported once, with its path', () => {
    let details: { errors: { cycle: string[] }[] } | undefined;
    try {
      planOrchestration(
        [{ stage: 'IMPLEMENT', parallel: true, tasks: [t('a', { dependencies: ['c'] }), t('b', { dependencies: ['a'] }), t('c', { dependencies: ['b'] })] }],
        accept,
      );
    } catch (err) {
      details = (err as AppError).details as typeof details;
    }
    assert.ok(details);
    assert.equal(details.errors.length, 1);
    assert.equal(details.errors[0].cycle.length, 4);
    assert.equal(details.errors[0].cycle[0], details.errors[0].cycle[3]);
  });

  test('gates: per stage by default, all or none for the alternate layout', () => {
    const stages: StageSpec[] = [
      { stage: 'RESEARCH', tasks: [t('a')], gateValidation: { exit: { required: ['x'] } } },
      { stage: 'DESIGN', tasks: [t('b')] },
    ];
    assert.deepEqual(
      planOrchestration(stages, accept).map((s) => [s.gateEnabled, s.gateRequired]),
      [
        [true, ['x']],
        [false, null],
      ],
    );
    assert.deepEqual(
      planOrchestration(stages, accept, { gates: 'all' }).map((s) => s.gateEnabled),
      [true, true],
    );
    assert.deepEqual(
      planOrchestration(stages, accept, { gates: 'none' }).map((s) => [s.gateEnabled, s.gateRequired]),
      [
        [false, null],
        [false, null],
      ],
    );
  });

  test('the agent check names the task', () => {
    const refuse = () => {
      throw new AppError('AGENT_NOT_FOUND', 'Agent nobody not found', { agentId: 'nobody' });
    };
    assert.throws(
      () => planOrchestration([{ stage: 'RESEARCH', tasks: [t('ok'), t('nobody')] }], (agentId) => (agentId === 'nobody' ? refuse() : undefined)),
      (e: unknown) => e instanceof AppError && e.code === 'AGENT_NOT_FOUND' && e.details.field === 'stages[0].tasks[1]' && e.status === 404,
    );
  });
});
