import assert from 'node:assert/strict';
import { AppError } from '../../../kernel/errors';
import { EXIT_CRITERIA, STAGES, gateCriteria, hasValue, validateGate } from './gate.catalog';

const fullExit = (stage: (typeof STAGES)[number]) => Object.fromEntries(EXIT_CRITERIA[stage].map((k) => [k.name, `${k.name} value`]));

describe('gate catalogue', () => {
  test('six stages in delivery order, each exit gate documented with at least one required criterion', () => {
    assert.deepEqual([...STAGES], ['RESEARCH', 'DESIGN', 'IMPLEMENT', 'VERIFY', 'DEPLOY', 'MONITOR']);
    for (const stage of STAGES) {
      const exit = gateCriteria(stage, 'exit');
      assert.ok(
        exit.some((k) => k.required),
        stage,
      );
      for (const k of exit) assert.ok(k.name && k.description, `${stage}.${k.name}`);
      assert.equal(new Set(exit.map((k) => k.name)).size, exit.length, `${stage} names unique`);
    }
  });

  test('the entry gate of a stage expects the exit outputs of the stage before it', () => {
    assert.deepEqual(gateCriteria('RESEARCH', 'entry'), []);
    for (let i = 1; i < STAGES.length; i++) {
      assert.deepEqual(gateCriteria(STAGES[i], 'entry'), gateCriteria(STAGES[i - 1], 'exit'));
    }
  });

  test('RESEARCH entry passes on nothing', () => {
    const r = validateGate('RESEARCH', 'entry', {});
    assert.equal(r.passed, true);
    assert.deepEqual(r.criteria, []);
    assert.equal(r.missingCriteria, undefined);
  });

  for (const stage of STAGES) {
    test(`${stage} exit passes with every criterion and fails listing the required ones when empty`, () => {
      const ok = validateGate(stage, 'exit', fullExit(stage));
      assert.equal(ok.passed, true);
      assert.ok(ok.criteria.every((k) => k.met));
      assert.equal(ok.missingCriteria, undefined);
      assert.ok(ok.validatedAt instanceof Date);

      const bad = validateGate(stage, 'exit', {});
      assert.equal(bad.passed, false);
      assert.deepEqual(
        bad.missingCriteria,
        EXIT_CRITERIA[stage].filter((k) => k.required).map((k) => k.name),
      );
      assert.equal(bad.stage, stage);
      assert.equal(bad.gateType, 'exit');
    });
  }

  test('optional criteria are reported but do not fail the gate', () => {
    const r = validateGate('RESEARCH', 'exit', { requirements: 'r', researchFindings: ['x'] });
    assert.equal(r.passed, true);
    assert.deepEqual(r.criteria, [
      { name: 'researchFindings', required: true, met: true },
      { name: 'requirements', required: false, met: true },
      { name: 'risks', required: false, met: false },
    ]);
  });

  test('DESIGN entry = RESEARCH exit outputs', () => {
    const r = validateGate('DESIGN', 'entry', { requirements: 'r' });
    assert.equal(r.passed, false);
    assert.deepEqual(r.missingCriteria, ['researchFindings']);
  });

  test('a criterion is also met by the agent outputs named as its evidence', () => {
    // What backend-engineer produces (task.results.ts): entryPoint and testFiles.
    const code = validateGate('IMPLEMENT', 'exit', { summary: 's', entryPoint: 'src/api.ts', testFiles: ['src/api.test.ts'] });
    assert.equal(code.passed, true);
    assert.deepEqual(
      code.criteria.map((k) => [k.name, k.met]),
      [
        ['implementation', true],
        ['tests', true],
        ['documentation', false],
      ],
    );
    const untested = validateGate('IMPLEMENT', 'exit', { entryPoint: 'src/api.ts', testFiles: [] });
    assert.deepEqual(untested.missingCriteria, ['tests']);
    assert.equal(validateGate('RESEARCH', 'exit', { planPath: 'plans/x.md' }).passed, true);
    assert.equal(validateGate('DEPLOY', 'exit', { manifestPath: 'deploy/app.yaml' }).passed, true);
    for (const stage of STAGES) {
      for (const k of EXIT_CRITERIA[stage]) assert.ok(!k.evidence.includes('summary'), `${stage}.${k.name}: every agent writes a summary`);
    }
  });

  test('an explicit required list replaces the catalogue flags and may add own criteria', () => {
    const r = validateGate('DESIGN', 'exit', { workflowPath: 'w.json', threatModel: '' }, ['design', 'threatModel']);
    assert.equal(r.passed, false);
    assert.deepEqual(r.missingCriteria, ['threatModel']);
    assert.deepEqual(
      r.criteria.map((k) => [k.name, k.required, k.met]),
      [
        ['design', true, true],
        ['apiContract', false, false],
        ['dataModel', false, false],
        ['threatModel', true, false],
      ],
    );
    assert.equal(validateGate('DESIGN', 'exit', {}, []).passed, true, 'an empty list requires nothing');
  });

  test('a value is non-empty unless null, undefined, blank, [] or {}', () => {
    for (const v of [undefined, null, '', '   ', [], {}, NaN]) assert.equal(hasValue(v), false, String(v));
    for (const v of ['x', 0, false, [0], { a: 1 }, true]) assert.equal(hasValue(v), true, String(v));
  });

  test('unknown stage or gate type is a validation_error', () => {
    assert.throws(
      () => validateGate('TESTING', 'exit', {}),
      (e: unknown) => e instanceof AppError && e.code === 'validation_error',
    );
    assert.throws(
      () => validateGate('DESIGN', 'middle' as 'exit', {}),
      (e: unknown) => e instanceof AppError && e.code === 'validation_error',
    );
  });
});
