// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', 'scratch/**', 'docs/**', 'charts/switchyard/**', '**/*.d.ts', 'discovery/kubernetes/e2e/apiserver/go-wrapper/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: { allowDefaultProject: ['eslint.config.js'] }, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        // node:test's describe/it return promises the runner itself tracks.
        { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['describe', 'it', 'test', 'suite'] }] },
      ],
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      '@typescript-eslint/only-throw-error': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'error',
    },
  },
  {
    files: ['**/*.test.ts', 'loadtest/**/*.ts', 'router/cli/**/*.ts'],
    rules: { 'no-console': 'off' },
  },
  {
    // Undici response bodies the router reads itself come only from discovery/upstream-body.ts:
    // an unread body destroyed with no 'error' listener is an uncaught exception, and one engine
    // answering 401 to /metrics took every replica down that way. So nothing else may start a
    // request that yields a body (the forwarder's dispatch() yields none). Tests, e2e harnesses
    // and loadtest/ read their own bodies.
    files: ['router/**/*.ts', 'discovery/**/*.ts'],
    ignores: ['discovery/upstream-body.ts', '**/*.test.ts', '**/e2e/**', 'discovery/kubernetes/test-support/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.type='MemberExpression'][callee.property.name=/^(request|stream|pipeline)$/]",
          message: 'Read upstream HTTP answers through discovery/upstream-body.ts (upstreamGet, fetchText): it owns every response body.',
        },
        {
          selector: "ImportDeclaration[source.value='undici'] > ImportSpecifier[imported.name=/^(request|stream|pipeline|fetch)$/]",
          message: 'Read upstream HTTP answers through discovery/upstream-body.ts (upstreamGet, fetchText): it owns every response body.',
        },
        {
          selector: "CallExpression[callee.name='fetch']",
          message: 'Read upstream HTTP answers through discovery/upstream-body.ts (upstreamGet, fetchText): it owns every response body.',
        },
      ],
    },
  },
);
