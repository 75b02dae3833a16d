import { defineConfig } from 'vitest/config';

// The tests run compiled (npm test builds first): TypeGraphQL needs tsc's decorator metadata, and
// the split-mode tests start dist/main.js as separate processes, so the files under test are the
// ones that ship. Each file runs in its own process with its own fresh database
// (test/support/database.ts); test files use Vitest's globals (tsconfig's "vitest/globals").
export default defineConfig({
  test: {
    include: ['dist/**/*.test.js'],
    exclude: ['node_modules/**'],
    globals: true,
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 180_000,
    hookTimeout: 180_000,
    teardownTimeout: 30_000,
    // The platform's modules load through Node's require, outside Vitest's module graph: in watch
    // mode any recompiled file reruns the selected tests (narrow them with a name filter).
    forceRerunTriggers: ['**/package.json/**', '**/vitest.config.*/**', 'dist/**/*.js'],
    coverage: {
      provider: 'v8',
      include: ['dist/**/*.js'],
      exclude: ['dist/**/*.test.js', 'dist/test/**', 'dist/bench/**', 'dist/schema/**'],
      reporter: ['text-summary', 'json-summary'],
      reportsDirectory: 'coverage',
    },
  },
});
