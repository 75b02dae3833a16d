import 'reflect-metadata';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { services } from '../subgraphs';

/**
 * docker-compose.yml is the split deployment as shipped: every subgraph the code has runs in a
 * container of its own, and the gateway reaches each one at the address of that container.
 */

const ROOT = path.join(__dirname, '..', '..');
const compose = parse(readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, { build?: string; image?: string; command?: string[]; environment?: Record<string, string>; depends_on?: Record<string, unknown> }>;
};

/** The compose service running `subgraph <name>`, by subgraph name. */
function subgraphContainers(): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [container, def] of Object.entries(compose.services)) {
    if (def.command?.[0] === 'subgraph') (out[def.command[1]!] ??= []).push(container);
  }
  return out;
}

describe('docker-compose.yml', () => {
  test('every subgraph of the code runs in a container of its own, built from this repository', () => {
    const containers = subgraphContainers();
    const names = services.map((s) => s.name);
    assert.ok(names.length >= 6, names.join(', '));
    assert.deepEqual(Object.keys(containers).sort(), [...names].sort(), 'one subgraph container per service, and none for an unknown one');
    for (const name of names) {
      assert.equal(containers[name]!.length, 1, `${name}: exactly one container`);
      const def = compose.services[containers[name]![0]!]!;
      assert.equal(def.build, '.', `${name}: the platform image`);
      assert.ok(def.environment?.DATABASE_URL && def.environment.INTERNAL_SECRET, `${name}: the shared database and internal secret`);
    }
  });

  test("the gateway's SUBGRAPH_URLS name every subgraph at its container, on the port it listens on", () => {
    const gateway = Object.values(compose.services).find((d) => d.command?.[0] === 'gateway');
    assert.ok(gateway, 'a gateway container');
    const urls = Object.fromEntries(
      (gateway.environment?.SUBGRAPH_URLS ?? '').split(',').map((pair) => {
        const at = pair.indexOf('=');
        return [pair.slice(0, at), new URL(pair.slice(at + 1))];
      }),
    );
    const containers = subgraphContainers();
    assert.deepEqual(Object.keys(urls).sort(), services.map((s) => s.name).sort());
    for (const [name, url] of Object.entries(urls)) {
      const container = containers[name]?.[0];
      assert.equal(url.hostname, container, `${name}: the URL's host is the container running it`);
      const port = compose.services[container!]!.environment?.PORT ?? '4000';
      assert.equal(url.port || '80', port, `${name}: the port its container listens on`);
      assert.equal(url.pathname, '/graphql');
      assert.ok(gateway.depends_on && container! in gateway.depends_on, `${name}: the gateway starts after it`);
    }
    assert.equal(
      compose.services[containers['links']![0]!]!.environment?.INTERNAL_SECRET,
      gateway.environment?.INTERNAL_SECRET,
      'the gateway signs identities with the secret the subgraphs check',
    );
  });

  test('the Dockerfile runs dist/main.js, whose roles the compose commands use', () => {
    const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
    assert.match(dockerfile, /ENTRYPOINT \["node", [^\]]*"dist\/main\.js"\]/);
    const roles = new Set(Object.values(compose.services).flatMap((d) => (d.build ? [d.command?.[0]] : [])));
    assert.deepEqual([...roles].sort(), ['gateway', 'subgraph', 'worker']);
  });
});
