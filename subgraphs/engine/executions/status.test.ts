import assert from 'node:assert/strict';
import { CONTROL_PLANE_STATUS, controlPlaneStatus, fromControlPlaneStatus } from './status';

test('execution statuses: one mapping between the engine and the control plane', () => {
  assert.deepEqual(CONTROL_PLANE_STATUS, { running: 'running', success: 'completed', error: 'failed', waiting: 'waiting', canceled: 'cancelled' });
  for (const [engine, cp] of Object.entries(CONTROL_PLANE_STATUS)) {
    assert.equal(controlPlaneStatus(engine), cp);
    assert.equal(fromControlPlaneStatus(cp), engine);
  }
  assert.equal(fromControlPlaneStatus('success'), undefined);
});
