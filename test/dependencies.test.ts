import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');

/** Every installed copy of a package, wherever npm nested it. */
function copiesOf(name: string, dir = path.join(ROOT, 'node_modules'), found: string[] = []): string[] {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return found;
  }
  for (const entry of entries) {
    const full = path.join(dir, entry);
    if (entry.startsWith('@')) {
      copiesOf(name, full, found);
      continue;
    }
    if (entry === name) {
      try {
        const pkg = JSON.parse(readFileSync(path.join(full, 'package.json'), 'utf8'));
        if (pkg.name === name) found.push(`${path.relative(ROOT, full)}@${pkg.version}`);
      } catch {
        // not a package
      }
    }
    const nested = path.join(full, 'node_modules');
    try {
      if (statSync(nested).isDirectory()) copiesOf(name, nested, found);
    } catch {
      // no nested modules
    }
  }
  return found;
}

test('exactly one copy of graphql is installed, and it is graphql 16', () => {
  const copies = copiesOf('graphql');
  assert.equal(copies.length, 1, `graphql copies: ${copies.join(', ')}`);
  assert.match(copies[0]!, /@16\./);
});

test('type-graphql is pinned to 2.0.0-rc.4', () => {
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'node_modules', 'type-graphql', 'package.json'), 'utf8'));
  assert.equal(pkg.version, '2.0.0-rc.4');
});
