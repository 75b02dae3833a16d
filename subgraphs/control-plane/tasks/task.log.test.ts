import assert from 'node:assert/strict';
import { taskLog } from './task.log';
import type { Task } from './task.types';

const at = (s: number) => new Date(Date.UTC(2026, 10, 29, 6, 0, s));
const base: Task = {
  taskId: 't1',
  status: 'queued',
  agentId: 'docs-author',
  taskType: 'write-guide',
  priority: 'high',
  mode: 'async',
  timeout: 300,
  context: {},
  forge: null,
  progress: null,
  result: null,
  error: null,
  createdAt: at(0),
  startedAt: null,
  completedAt: null,
  failedAt: null,
  cancelledAt: null,
  cancelReason: null,
  estimatedDuration: 10,
  estimatedCompletionAt: null,
  duration: null,
  orchestrationId: null,
  stage: null,
  version: 1,
  traceId: null,
};

describe('a task’s log', () => {
  test('a queued task: one line', () => {
    assert.deepEqual(taskLog(base), [{ at: at(0), level: 'info', message: 'Queued (high priority, async, timeout 300 s)' }]);
  });

  test('a failed task says where it stopped, as an error', () => {
    const log = taskLog({
      ...base,
      status: 'failed',
      startedAt: at(1),
      failedAt: at(9),
      progress: { percentage: 33, currentStep: 'calling the model (gpt-4o)', stepsCompleted: 1, stepsTotal: 3 },
      error: { code: 'TASK_TIMEOUT', message: 'The task exceeded its execution timeout of 300 s', details: {} },
    });
    assert.deepEqual(
      log.map((l) => [l.at.getUTCSeconds(), l.level, l.message]),
      [
        [0, 'info', 'Queued (high priority, async, timeout 300 s)'],
        [1, 'info', 'Started on docs-author'],
        [9, 'error', 'Failed at step 2 of 3 (calling the model (gpt-4o)): TASK_TIMEOUT: The task exceeded its execution timeout of 300 s'],
      ],
    );
  });

  test('a task of an orchestration, cancelled before it started', () => {
    const log = taskLog({ ...base, status: 'cancelled', orchestrationId: 'o1', stage: 'DESIGN', cancelledAt: at(2), cancelReason: 'not needed' });
    assert.deepEqual(
      log.map((l) => [l.level, l.message]),
      [
        ['info', 'Queued (high priority, async, timeout 300 s) for the DESIGN stage of orchestration o1'],
        ['warning', 'Cancelled: not needed'],
      ],
    );
  });
});
