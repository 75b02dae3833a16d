// ESLint flat config: the rules that catch what `tsc` cannot — promises nobody awaits, `any` written
// out, and values typed `any` flowing on unchecked. Formatting is Prettier's job (.prettierrc), not ESLint's.
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    // Build output, installed packages, generated code (OpenAPI client types, the surfaces' typed documents) and the dashboard (a separate Vite/React build with its own tsconfig).
    ignores: [
      'dist/**',
      'test/support/openapi-types.ts',
      'rest-adapter/surfaces/generated.ts',
      'dist-dashboard/**',
      'node_modules/**',
      'dashboard/**',
      'test-screenshots/**',
      '**/*.js',
      '**/*.mjs',
      '**/*.cjs',
    ],
  },
  {
    files: ['**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      // One TypeScript program for the whole tree, the same one `tsc -p tsconfig.json` builds.
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // A promise left floating loses its rejection (an unhandled rejection ends the process) and its ordering.
      '@typescript-eslint/no-floating-promises': 'error',
      // An async function where a void callback is expected (an event listener, Array#forEach) has its rejection dropped.
      '@typescript-eslint/no-misused-promises': 'error',
      // An explicit `any` switches the checker off for every value it touches; `unknown` with narrowing keeps it on.
      '@typescript-eslint/no-explicit-any': 'error',
    },
  },
  {
    // The edges: where outside data enters (HTTP bodies, headers, query strings, JSON from other hosts).
    // There an `any` must be checked before it flows on, so every unsafe use of one is an error.
    // Inside (kernel, subgraphs) values come typed from these edges, from TypeORM entities and from
    // GraphQL resolvers whose arguments the schema already validated; the rules are off there because
    // their findings would be the libraries' own `any`s (TypeORM raw rows, decorators' metadata), not unchecked input.
    files: ['rest-adapter/**/*.ts', 'server/**/*.ts', 'gateway/**/*.ts'],
    // The route tables included: a request body is `unknown` (read through bodyField) and each route's
    // operation is a generated document (npm run codegen), so a `pick` reads the data its selection types.
    rules: {
      '@typescript-eslint/no-unsafe-argument': 'error',
      '@typescript-eslint/no-unsafe-assignment': 'error',
      '@typescript-eslint/no-unsafe-call': 'error',
      '@typescript-eslint/no-unsafe-member-access': 'error',
      '@typescript-eslint/no-unsafe-return': 'error',
    },
  },
);
