import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { AppError, ERROR_STATUS, registerErrorCodes } from '../kernel/errors';
import { services } from '../subgraphs';

/**
 * Every code an AppError is made with in the sources is declared, by the kernel or by the module of
 * the service that raises it: an undeclared code would answer 500 whatever it means.
 */

const ROOT = path.join(__dirname, '..', '..');
const SKIP = new Set(['node_modules', 'dist', 'dist-dashboard', '.git', 'test', 'bench']);

function sources(dir = ROOT, found: string[] = []): string[] {
  for (const entry of readdirSync(dir)) {
    if (SKIP.has(entry) || entry.startsWith('.')) continue;
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) sources(full, found);
    else if (entry.endsWith('.ts') && !entry.endsWith('.test.ts') && !entry.endsWith('.d.ts')) found.push(full);
  }
  return found;
}

const RAISED = /new AppError\(\s*['"]([A-Za-z_]+)['"]/g;

describe('error codes', () => {
  it('declares every code an AppError is made with, with the status its service gave it', () => {
    assert.ok(services.length > 0);
    const undeclared = new Set<string>();
    let seen = 0;
    for (const file of sources()) {
      for (const [, code] of readFileSync(file, 'utf8').matchAll(RAISED)) {
        seen++;
        if (!Object.hasOwn(ERROR_STATUS, code!)) undeclared.add(`${code} (${path.relative(ROOT, file)})`);
      }
    }
    assert.ok(seen > 50, `only ${seen} AppErrors found: is the scan reading the sources?`);
    assert.deepEqual([...undeclared], []);
    assert.equal(new AppError('already_voted', 'x').status, 409);
    assert.equal(new AppError('forge_gate_failure', 'x').status, 422);
    assert.equal(new AppError('link_gone', 'x').status, 410);
    assert.equal(new AppError('PROMPT_NOT_FOUND', 'x').status, 404);
  });

  it('refuses a code declared again with another status, and answers 500 for an undeclared one', () => {
    assert.throws(() => registerErrorCodes({ already_voted: 400 }), /already_voted is already declared with status 409/);
    assert.doesNotThrow(() => registerErrorCodes({ already_voted: 409 }));
    assert.equal(new AppError('no_such_code_anywhere', 'x').status, 500);
  });
});
