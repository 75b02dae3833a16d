import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

// `npm start`'s prestart, run in a small project whose build counts its runs.
const SCRIPT = path.join(__dirname, '..', '..', 'scripts', 'build-if-stale.mjs');

test('npm start builds when a source changed, was added or deleted since its last build, and never otherwise', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'build-if-stale-'));
  try {
    mkdirSync(path.join(dir, 'scripts'));
    mkdirSync(path.join(dir, 'src'));
    copyFileSync(SCRIPT, path.join(dir, 'scripts', 'build-if-stale.mjs'));
    writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { outDir: 'dist' }, include: ['src/**/*.ts'] }));
    const build = "require('fs').mkdirSync('dist',{recursive:true});require('fs').appendFileSync('builds','x')";
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'p', private: true, scripts: { build: `node -e "${build}"` } }));
    writeFileSync(path.join(dir, 'src', 'a.ts'), 'export {};');
    const start = () => {
      execFileSync('node', ['scripts/build-if-stale.mjs'], { cwd: dir, stdio: 'pipe' });
      return readFileSync(path.join(dir, 'builds'), 'utf8').length;
    };

    assert.equal(start(), 1, 'no build yet: it builds');
    assert.equal(start(), 1, 'nothing changed: no build');
    writeFileSync(path.join(dir, 'src', 'a.ts'), 'export const a = 1;');
    assert.equal(start(), 2, 'a source changed: it builds');
    assert.equal(start(), 2, 'built since: no build');
    rmSync(path.join(dir, 'src', 'a.ts'));
    assert.equal(start(), 3, 'a source deleted (its folder changed): it builds');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
