import { readFileSync } from 'node:fs';
import path from 'node:path';
import { platformNodeFlags, spawnServer } from './child';

const ROOT = path.join(__dirname, '..', '..');

describe('bench children run the platform as npm start does (bench/child.ts)', () => {
  it("reads the flags of package.json's start script, and the Docker image starts with the same", () => {
    const flags = platformNodeFlags();
    expect(flags).toContain('--max-semi-space-size=64');
    const entrypoint = /^ENTRYPOINT\s+(\[.*\])\s*$/m.exec(readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8'))?.[1];
    expect(JSON.parse(entrypoint!)).toEqual(['node', ...flags, 'dist/main.js']);
  });

  it('spawns a child with those flags', async () => {
    const child = await spawnServer<{ url: string; execArgv: string[] }>(
      'flags probe',
      '-e',
      [`process.stdout.write(JSON.stringify({ url: 'none', execArgv: process.execArgv }) + '\\n'); setInterval(() => {}, 1000);`],
      process.env,
    );
    try {
      expect(child.info.execArgv).toEqual(expect.arrayContaining(platformNodeFlags()));
    } finally {
      await child.stop();
    }
  });
});
