// `npm start` builds only when a source changed since the last build: a no-op `tsc` still takes
// seconds, and a start should not pay them. Stale means a file or folder under the compiled roots
// (a deletion changes its folder's time) is newer than the stamp written when this
// script's last build began (tsc leaves its own build info untouched when nothing changed).
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const root = path.join(import.meta.dirname, '..');
const tsconfig = JSON.parse(readFileSync(path.join(root, 'tsconfig.json'), 'utf8'));
const stamp = path.join(root, tsconfig.compilerOptions.outDir, '.build-stamp');
const built = mtime(stamp);

function mtime(file) {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
}

function newer(entry) {
  const stat = statSync(entry);
  if (stat.mtimeMs > built) return true;
  return stat.isDirectory() && readdirSync(entry).some((name) => name !== 'node_modules' && newer(path.join(entry, name)));
}

const roots = new Set(['tsconfig.json', 'package-lock.json', ...tsconfig.include.map((pattern) => pattern.split('/')[0])]);
const stale = built === undefined || [...roots].some((entry) => mtime(path.join(root, entry)) !== undefined && newer(path.join(root, entry)));
if (stale) {
  const began = new Date();
  const run = spawnSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
  if (run.status !== 0) process.exit(run.status ?? 1);
  writeFileSync(stamp, '');
  utimesSync(stamp, began, began);
}
