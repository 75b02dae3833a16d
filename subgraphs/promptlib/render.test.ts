import assert from 'node:assert/strict';
import { AppError } from '../../kernel/errors';
import { recommend } from './ab-rule';
import { validateSteps } from './chain-steps';
import { checkDeclaredVariables, expandTemplate, MAX_FRAGMENT_DEPTH, parseTemplate, renderTemplate, type FragmentLookup, type FragmentSource } from './render';

/** A lookup over fragment versions: bare references resolve to the highest version. */
function library(...fragments: FragmentSource[]): FragmentLookup {
  return (ref) => {
    const versions = fragments.filter((f) => f.id === ref.id);
    if (ref.version !== undefined) return versions.find((f) => f.version === ref.version);
    return versions.sort((a, b) => b.version - a.version)[0];
  };
}

function appError(fn: () => unknown): AppError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof AppError, `expected an AppError, got ${err}`);
    return err;
  }
  assert.fail('expected an error');
}

describe('parseTemplate', () => {
  test('finds variables and fragment references in order of first use', () => {
    const p = parseTemplate('Hi {{ name }}, {{fragment:role-expert}} {{topic}} {{name}} {{fragment:fmt:2}}');
    assert.deepEqual(p.variables, ['name', 'topic']);
    assert.deepEqual(p.fragments, [{ id: 'role-expert' }, { id: 'fmt', version: 2 }]);
  });

  test('other double-brace text is kept literally', () => {
    const p = parseTemplate('JSON: {{"a": 1}} and {{ not a name }} and {{}}');
    assert.deepEqual(p.variables, []);
    assert.equal(renderTemplate('x {{"a": 1}} {{}}', {}).text, 'x {{"a": 1}} {{}}');
  });

  test('a malformed fragment reference is a 400 on the template', () => {
    for (const bad of ['{{fragment:}}', '{{fragment:Bad_ID}}', '{{fragment:a:0}}', '{{fragment:a:x}}', '{{fragment:a:1:2}}']) {
      const err = appError(() => parseTemplate(`x ${bad}`));
      assert.equal(err.code, 'validation_error', bad);
      assert.equal((err.details.errors as { field: string; message: string }[])[0].field, 'template');
    }
  });

  test('a text parsed again is not parsed again: the parse is shared, frozen; a refusal is not remembered', () => {
    const text = 'Remembered {{who}} {{fragment:kept:3}}';
    const first = parseTemplate(text);
    assert.equal(parseTemplate(text, 'content'), first);
    assert.ok(Object.isFrozen(first) && Object.isFrozen(first.tokens) && Object.isFrozen(first.tokens[1]) && Object.isFrozen(first.variables));
    assert.throws(() => (first.variables as string[]).push('other'), TypeError);
    assert.deepEqual(renderTemplate('Remembered {{who}}', { who: 'me' }).text, 'Remembered me');

    // Lenient (text a model wrote) keeps a malformed reference as text; the strict parse still refuses it, under each caller's field.
    const bad = 'x {{fragment:Bad_ID}}';
    assert.deepEqual(parseTemplate(bad, 'template', true).tokens, [{ kind: 'text', text: bad }]);
    assert.equal((appError(() => parseTemplate(bad, 'content')).details.errors as { field: string; message: string }[])[0].field, 'content');
    assert.equal((appError(() => parseTemplate(bad, 'steps.0.template')).details.errors as { field: string; message: string }[])[0].field, 'steps.0.template');
  });
});

describe('renderTemplate', () => {
  test('replaces variables; numbers, booleans and objects as JSON text', () => {
    const r = renderTemplate('{{a}}|{{b}}|{{c}}|{{d}}', { a: 'x', b: 3, c: true, d: { k: [1] } });
    assert.equal(r.text, 'x|3|true|{"k":[1]}');
  });

  test('values are inserted literally: a value holding placeholders is not rendered again', () => {
    const lookup = library({ id: 'secret', version: 1, content: 'SECRET' });
    const r = renderTemplate('say {{text}}', { text: '{{fragment:secret}} and {{text}}' }, lookup);
    assert.equal(r.text, 'say {{fragment:secret}} and {{text}}');
  });

  test('a missing or null variable is a 400 naming each, never an empty string', () => {
    const err = appError(() => renderTemplate('{{a}} {{b}} {{c}}', { a: 'x', c: null }));
    assert.equal(err.code, 'validation_error');
    assert.equal(err.status, 400);
    assert.deepEqual(err.details.missingVariables, ['b', 'c']);
    assert.deepEqual(
      (err.details.errors as { field: string; message: string }[]).map((e) => e.field),
      ['variables.b', 'variables.c'],
    );
    assert.match(err.message, /"b", "c"/);
  });

  test('inherited object keys are not variables', () => {
    const err = appError(() => renderTemplate('{{constructor}}', {}));
    assert.deepEqual(err.details.missingVariables, ['constructor']);
  });

  test('fragments: a bare reference resolves to the newest version, an explicit one stays pinned', () => {
    const lookup = library({ id: 'tone', version: 1, content: 'be formal' }, { id: 'tone', version: 2, content: 'be friendly' });
    assert.equal(renderTemplate('{{fragment:tone}}', {}, lookup).text, 'be friendly');
    const pinned = renderTemplate('{{fragment:tone:1}}', {}, lookup);
    assert.equal(pinned.text, 'be formal');
    assert.deepEqual(pinned.fragments, [{ fragmentId: 'tone', version: 1 }]);
  });

  test('fragments may embed fragments, and their variables are the template’s', () => {
    const lookup = library(
      { id: 'role', version: 1, content: 'You are a {{persona}}. {{fragment:rules}}' },
      { id: 'rules', version: 3, content: 'Answer in {{language}}.' },
    );
    const r = renderTemplate('{{fragment:role}} Task: {{task}}', { persona: 'chef', language: 'French', task: 'soup' }, lookup);
    assert.equal(r.text, 'You are a chef. Answer in French. Task: soup');
    assert.deepEqual(r.variables, ['persona', 'language', 'task']);
    assert.deepEqual(r.fragments, [
      { fragmentId: 'role', version: 1 },
      { fragmentId: 'rules', version: 3 },
    ]);
  });

  test('an unknown fragment or version is a 400 naming it', () => {
    const lookup = library({ id: 'tone', version: 1, content: 'x' });
    assert.match(appError(() => renderTemplate('{{fragment:nope}}', {}, lookup)).message, /fragment "nope" does not exist/);
    assert.match(appError(() => renderTemplate('{{fragment:tone:7}}', {}, lookup)).message, /fragment "tone" has no version 7/);
  });

  test('cycles are rejected with the path', () => {
    const lookup = library({ id: 'a', version: 1, content: 'A {{fragment:b}}' }, { id: 'b', version: 1, content: 'B {{fragment:a}}' });
    const err = appError(() => renderTemplate('{{fragment:a}}', {}, lookup));
    assert.match(err.message, /cycle: a:1 → b:1 → a:1/);
    assert.deepEqual(err.details.cycle, ['a:1', 'b:1', 'a:1']);
    // A fragment embedding an older version of itself is not a cycle.
    const own = library({ id: 'a', version: 1, content: 'old' }, { id: 'a', version: 2, content: 'new, {{fragment:a:1}}' });
    assert.equal(renderTemplate('{{fragment:a}}', {}, own).text, 'new, old');
  });

  test(`fragments nest at most ${MAX_FRAGMENT_DEPTH} levels`, () => {
    const chain = (n: number) =>
      library(...Array.from({ length: n }, (_, i) => ({ id: `f${i + 1}`, version: 1, content: i + 1 < n ? `{{fragment:f${i + 2}}}` : 'end' })));
    assert.equal(renderTemplate('{{fragment:f1}}', {}, chain(MAX_FRAGMENT_DEPTH)).text, 'end');
    const err = appError(() => renderTemplate('{{fragment:f1}}', {}, chain(MAX_FRAGMENT_DEPTH + 1)));
    assert.match(err.message, /deeper than 5 levels/);
  });

  test('each fragment version is looked up once per expansion', () => {
    let calls = 0;
    const inner = library({ id: 'x', version: 1, content: 'X' });
    const counting: FragmentLookup = (ref) => {
      calls++;
      return inner(ref);
    };
    expandTemplate('{{fragment:x}}{{fragment:x}}{{fragment:x}}', counting);
    assert.equal(calls, 3); // the lookup is a map read; parsing happens once
  });
});

describe('checkDeclaredVariables', () => {
  test('declared variables must be exactly the used ones', () => {
    checkDeclaredVariables(['a', 'b'], ['b', 'a']);
    const err = appError(() => checkDeclaredVariables(['a', 'extra', 'bad name'], ['a', 'missing']));
    const messages = (err.details.errors as { field: string; message: string }[]).map((e) => `${e.field}: ${e.message}`);
    assert.equal(messages.length, 3);
    assert.ok(messages.some((m) => m.startsWith('variables: "extra" is not used')));
    assert.ok(messages.some((m) => m.includes('{{missing}}')));
    assert.ok(messages.some((m) => m.startsWith('variables.2:')));
  });
});

describe('A/B recommendation rule', () => {
  const arm = (successfulTests: number, failedTests: number, averageTokens: number, averageLatency: number) => ({
    successfulTests,
    failedTests,
    averageTokens,
    averageLatency,
  });
  test('success rate first, then tokens, then latency, then promptA', () => {
    assert.equal(recommend(arm(2, 1, 10, 0.1), arm(3, 0, 50, 0.9)).recommendation, 'promptB');
    assert.equal(recommend(arm(3, 0, 40, 0.1), arm(3, 0, 20, 0.9)).recommendation, 'promptB');
    assert.equal(recommend(arm(3, 0, 20, 0.3), arm(3, 0, 20, 0.2)).recommendation, 'promptB');
    const tie = recommend(arm(3, 0, 20, 0.2), arm(3, 0, 20, 0.2));
    assert.equal(tie.recommendation, 'promptA');
    assert.match(tie.reason, /tie/);
    assert.equal(recommend(arm(0, 3, 0, 0), arm(0, 3, 0, 0)).recommendation, 'promptA');
    assert.match(recommend(arm(3, 0, 40, 0.1), arm(3, 0, 20, 0.9)).reason, /fewer tokens on average \(20 against 40\)/);
  });
});

describe('chain step rules', () => {
  const step = (order: number, outputKey: string, extra: Record<string, unknown> = {}) => ({ order, promptId: 'p', outputKey, ...extra });
  test('valid steps, including a parallel order', () => {
    const { problems } = validateSteps([
      step(1, 'a'),
      step(2, 'b', { parallel: true, inputMapping: { text: 'step_1.a' } }),
      step(2, 'c', { parallel: true, inputMapping: { text: 'step_1.a' } }),
      step(3, 'd', { inputMapping: { x: 'step_2.b', y: 'step_2.c' } }),
    ]);
    assert.deepEqual(problems, []);
  });
  test('unknown step, later step, unknown output key, bad reference, gaps and missing parallel', () => {
    const { problems } = validateSteps([
      step(1, 'a', { inputMapping: { x: 'step_1.a' } }),
      step(2, 'b', { inputMapping: { x: 'step_9.a', y: 'step_1.zzz', z: 'nonsense' } }),
      step(2, 'c'),
      step(4, 'd'),
    ]);
    const text = problems.map((p) => `${p.field}: ${p.message}`).join('\n');
    assert.match(text, /steps\.0\.inputMapping\.x: step_1 does not run before this step/);
    assert.match(text, /steps\.1\.inputMapping\.x: step_9 does not exist/);
    assert.match(text, /steps\.1\.inputMapping\.y: step_1 has no output "zzz"/);
    assert.match(text, /steps\.1\.inputMapping\.z: "nonsense" is not a reference/);
    assert.match(text, /steps: orders must run 1 to 3 without gaps/);
    assert.match(text, /steps\.2\.parallel: must be true/);
  });
});
