import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * The layout of the rooms, checked on the sources (dist/ may hold stale files): main.ts and server/ on
 * top; gateway/ and rest-adapter/ siblings that never import each other; each subgraphs/<service>/
 * alone; kernel/ at the bottom; and no import circle. Type-only imports count too: the layout is about
 * what a file may depend on, and a type-only circle becomes a load-order bug with one value import.
 */

const ROOT = path.join(__dirname, '..', '..');
const SKIP = new Set(['node_modules', 'dist', 'dist-dashboard', '.git']);

function sourceFiles(dir = ROOT, found: string[] = []): string[] {
  for (const entry of readdirSync(dir)) {
    if (SKIP.has(entry) || entry.startsWith('.')) continue;
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) sourceFiles(full, found);
    else if (entry.endsWith('.ts') && !entry.endsWith('.d.ts')) found.push(full);
  }
  return found;
}

/**
 * Import and re-export specifiers of one file, type-only ones included. The clause between
 * `import`/`export` and `from` admits only names, braces, commas and `*`, so a match cannot run
 * across statements; `import('…')` is a type query or a lazy load.
 */
const FROM = /^[ \t]*(?:import|export)\s+[\w\s{},*$]*?\s*from\s*['"]([^'"]+)['"]/gm;
const BARE = /^[ \t]*import\s*['"]([^'"]+)['"]/gm;
const CALL = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

export function importSpecifiers(source: string): string[] {
  return [FROM, BARE, CALL].flatMap((pattern) => [...source.matchAll(pattern)].map((m) => m[1]!));
}

/** A relative specifier resolved the way node16 resolution finds a .ts source; packages give undefined. */
function resolve(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = path.resolve(path.dirname(from), specifier);
  for (const candidate of [base, `${base}.ts`, path.join(base, 'index.ts')]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return undefined;
}

function buildGraph(files: string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const targets = importSpecifiers(readFileSync(file, 'utf8'))
      .map((s) => resolve(file, s))
      .filter((t): t is string => t !== undefined && t.endsWith('.ts'));
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

const rel = (file: string) => path.relative(ROOT, file).split(path.sep).join('/');

/** The room of a file: its top folder, `subgraphs/<service>` for a service, `main.ts` for itself. */
function room(file: string): string {
  const parts = rel(file).split('/');
  if (parts[0] === 'subgraphs' && parts.length > 2) return `subgraphs/${parts[1]}`;
  return parts.length === 1 ? parts[0]! : parts[0]!;
}

const ABOVE_KERNEL = ['gateway', 'rest-adapter', 'server', 'subgraphs', 'main.ts'];

/** Why an import from one room into another breaks the layout, or undefined when it does not. */
function violation(fromRoom: string, toRoom: string): string | undefined {
  const to = toRoom.startsWith('subgraphs') ? 'subgraphs' : toRoom;
  if (fromRoom === 'kernel' && ABOVE_KERNEL.includes(to)) return 'kernel/ is the bottom and imports no room above it';
  if (fromRoom === 'gateway' && to === 'rest-adapter') return 'gateway/ and rest-adapter/ are siblings';
  if (fromRoom === 'rest-adapter' && to === 'gateway') return 'gateway/ and rest-adapter/ are siblings';
  if ((fromRoom === 'gateway' || fromRoom === 'rest-adapter') && ['server', 'main.ts', 'subgraphs'].includes(to)) {
    return `${fromRoom}/ sits below server/ and knows no service`;
  }
  if (fromRoom.startsWith('subgraphs/')) {
    if (['gateway', 'rest-adapter', 'server', 'main.ts'].includes(to)) return 'a subgraph imports only kernel/ and its own files';
    if (toRoom.startsWith('subgraphs') && toRoom !== fromRoom) return 'a subgraph never imports another subgraph';
  }
  return undefined;
}

export function layoutViolations(graph: Map<string, string[]>): string[] {
  const found: string[] = [];
  for (const [file, targets] of graph) {
    for (const target of targets) {
      const why = violation(room(file), room(target));
      if (why) found.push(`${rel(file)} -> ${rel(target)}: ${why}`);
    }
  }
  return found.sort();
}

/**
 * Inside a service split into concept folders: which folder may import which (its arrows point down;
 * kernel/ and packages are always allowed). A file reaches another folder only through that
 * folder's index.ts. The service's own root files (index.ts, the module, and its root resolvers)
 * may reach every folder, through its face too; `migrations/` has no face (the root lists its
 * files) and may reach any folder's face; a test may reach any face, since nothing imports it.
 */
export const CONCEPT_ARROWS: Record<string, Record<string, readonly string[]>> = {
  engine: {
    sandbox: [],
    expressions: ['sandbox'],
    nodes: ['expressions', 'sandbox'],
    n8n: ['nodes', 'expressions', 'sandbox'],
    executor: ['n8n', 'nodes', 'expressions', 'sandbox'],
    credentials: ['nodes'],
    workflows: ['executor', 'n8n', 'nodes'],
    executions: ['workflows', 'executor', 'nodes', 'expressions', 'sandbox'],
    webhooks: ['executions', 'workflows', 'nodes'],
    schedules: ['executions', 'workflows', 'nodes'],
    variables: [],
    resolvers: ['webhooks', 'schedules', 'variables', 'executions', 'workflows', 'credentials', 'nodes'],
  },
  'control-plane': {
    keys: [],
    audit: [],
    gates: [],
    agents: ['gates'],
    tasks: ['agents', 'gates'],
    orchestrations: ['tasks', 'agents', 'gates'],
    metrics: ['tasks', 'agents'],
  },
};

/** Where a file sits in a service with concept folders: its folder, `(root)` or `migrations`; undefined elsewhere. */
function conceptOf(file: string): { service: string; folder: string } | undefined {
  const parts = rel(file).split('/');
  if (parts[0] !== 'subgraphs' || parts.length < 3 || !CONCEPT_ARROWS[parts[1]!]) return undefined;
  return { service: parts[1]!, folder: parts.length === 3 ? '(root)' : parts[2]! };
}

/** Why an import between two folders of one service breaks its arrows, or undefined when it does not. */
function conceptViolation(file: string, target: string): string | undefined {
  const from = conceptOf(file);
  const to = conceptOf(target);
  if (!from || !to || from.service !== to.service || from.folder === to.folder) return undefined;
  const arrows = CONCEPT_ARROWS[from.service]!;
  if (to.folder === '(root)') return 'a folder never imports the service root, which imports it';
  if (to.folder === 'migrations') return from.folder === '(root)' ? undefined : 'only the service root lists the migrations';
  if (!arrows[to.folder]) return `${to.folder}/ is not in the table of concept folders`;
  if (path.basename(target) !== 'index.ts' || path.dirname(rel(target)) !== `subgraphs/${to.service}/${to.folder}`) {
    return `another folder is reached through its index.ts (subgraphs/${to.service}/${to.folder}/index.ts)`;
  }
  if (from.folder === '(root)' || from.folder === 'migrations' || file.endsWith('.test.ts')) return undefined;
  if (!arrows[from.folder]) return `${from.folder}/ is not in the table of concept folders`;
  if (!arrows[from.folder]!.includes(to.folder)) return `${from.folder}/ may import only ${arrows[from.folder]!.join(', ') || 'the kernel'}`;
  return undefined;
}

export function conceptViolations(graph: Map<string, string[]>): string[] {
  const found: string[] = [];
  for (const [file, targets] of graph) {
    for (const target of targets) {
      const why = conceptViolation(file, target);
      if (why) found.push(`${rel(file)} -> ${rel(target)}: ${why}`);
    }
  }
  return found.sort();
}

/** Every import circle, one path per strongly connected component (Tarjan), as file lists. */
export function circles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      const selfLoop = (graph.get(v) ?? []).includes(v);
      if (component.length > 1 || selfLoop) components.push(component);
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  // Show one actual circle per component: a shortest way back from its first file to itself.
  return components.map((component) => shortestCycle(graph, new Set(component), component.sort()[0]!));
}

function shortestCycle(graph: Map<string, string[]>, members: Set<string>, start: string): string[] {
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length) {
    const v = queue.shift()!;
    for (const w of graph.get(v) ?? []) {
      if (!members.has(w)) continue;
      if (w === start) {
        const pathBack = [v];
        while (pathBack[0] !== start) pathBack.unshift(previous.get(pathBack[0]!)!);
        return [...pathBack, start];
      }
      if (!previous.has(w)) {
        previous.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start];
}

describe('the layout', () => {
  const graph = buildGraph(sourceFiles());

  test('the scanner reads every import, type-only ones too', () => {
    const source = [
      "import 'reflect-metadata';",
      "import type { A } from './a';",
      "import { type B, type C } from './b';",
      "import { type D, e } from './d';",
      'import f, {',
      '  g,',
      "} from './f';",
      "export { h } from './h';",
      "export * from './i';",
      "export type { J } from './j';",
      "const text = `import x from './not-an-import'`;",
      "let k: typeof import('./k');",
    ].join('\n');
    assert.deepEqual(importSpecifiers(source).sort(), ['./a', './b', './d', './f', './h', './i', './j', './k', 'reflect-metadata']);
    assert.ok(graph.size > 100, `only ${graph.size} source files found under ${ROOT}`);
  });

  test('kernel/ at the bottom; gateway/ and rest-adapter/ siblings; each subgraph alone', () => {
    const found = layoutViolations(graph);
    assert.deepEqual(found, [], `imports that climb or cross rooms:\n  ${found.join('\n  ')}`);
  });

  test("inside a service's concept folders: only through a folder's index.ts, and only down the arrows", () => {
    for (const [service, arrows] of Object.entries(CONCEPT_ARROWS)) {
      // The table itself has no circle: the arrows order the folders.
      const folders = new Map(Object.entries(arrows).map(([folder, to]) => [folder, to.map((t) => `${service}/${t}`)]));
      const table = new Map([...folders].map(([folder, to]): [string, string[]] => [`${service}/${folder}`, to]));
      assert.deepEqual(circles(table), [], `the arrows of ${service} form a circle`);
      for (const folder of Object.keys(arrows)) {
        assert.ok(existsSync(path.join(ROOT, 'subgraphs', service, folder, 'index.ts')), `subgraphs/${service}/${folder}/index.ts, its face`);
      }
    }
    const found = conceptViolations(graph);
    assert.deepEqual(found, [], `imports across concept folders that skip a face or climb:\n  ${found.join('\n  ')}`);
  });

  test('no import circle', () => {
    const found = circles(graph).map((c) => c.map(rel).join(' -> '));
    assert.deepEqual(found, [], `import circles:\n  ${found.join('\n  ')}`);
  });

  test('SQL lives in the stores: no statement, repository or entity class elsewhere in a service', () => {
    const SQL = /\.query(<[^>]*>)?\(|getRepository\(|createQueryBuilder\(|@Entity\(/;
    const found: string[] = [];
    for (const file of sourceFiles(path.join(ROOT, 'subgraphs'))) {
      const name = rel(file);
      if (name.endsWith('.store.ts') || name.endsWith('.test.ts') || name.includes('/migrations/')) continue;
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => SQL.test(line) && found.push(`${name}:${i + 1}: ${line.trim()}`));
    }
    assert.deepEqual(found, [], `SQL outside <thing>.store.ts:\n  ${found.join('\n  ')}`);
  });

  test('each service says at the top of its index.ts what it owns and which services it calls', () => {
    const services = readdirSync(path.join(ROOT, 'subgraphs')).filter((d) => statSync(path.join(ROOT, 'subgraphs', d)).isDirectory());
    assert.ok(services.length >= 6);
    for (const service of services) {
      const head = readFileSync(path.join(ROOT, 'subgraphs', service, 'index.ts'), 'utf8').split('*/')[0]!;
      assert.match(head, /^\/\*\*/, `${service}/index.ts starts with its notes`);
      assert.match(head, /\n \* Owns: /, `${service}/index.ts says what it owns`);
      assert.match(head, /\n \* Calls: /, `${service}/index.ts says which services it calls`);
    }
  });
});
