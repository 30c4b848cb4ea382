// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * Module boundaries (docs/architecture.md "Dependency direction"). Each module may import
 * what LEAVES and LAYERS allow it and nothing else in router/ or discovery/;
 * discovery/ imports nothing from router/; none imports loadtest/ statically
 * (`switchyard serve` never loads it; the CLI's sim, bench and demo paths use a
 * dynamic import()). The rule covers `import type` too: a type is a dependency.
 * Tests (tests/ and the unit tests beside their modules) may import across
 * boundaries; no product file imports tests/ or loadtest/scenarios/ (NO_TESTS).
 * The rule matches the
 * import specifier as written, so a module is known by its directory (or file)
 * name, which no other directory in router/, discovery/ or loadtest/ uses.
 */
const MODULE_TARGETS = {
  discovery: '**/discovery/**',
  'router/errors': '**/errors/**',
  'router/config': '**/config/**',
  'router/log.ts': '**/log.ts',
  'router/header-value.ts': '**/header-value.ts',
  'router/metrics': '**/metrics/**',
  'router/load': '**/load/**',
  'router/state': '**/state/**',
  'router/scheduling': '**/scheduling/**',
  'router/admission': '**/admission/**',
  'router/proxy': '**/proxy/**',
  'router/request': '**/request/**',
  'router/server': '**/server/**',
  'router/tracing': '**/tracing/**',
  'router/compose.ts': '**/compose.ts',
  'router/compose': '**/compose/**',
  'router/cli': '**/cli/**',
};
/** Shared leaves and what each may import: what they import today, and no more. */
const LEAVES = {
  'router/errors': [],
  'router/log.ts': ['router/errors'],
  'router/config': ['router/errors', 'router/log.ts'],
  'router/header-value.ts': [],
};
/**
 * The layers left to right: each module may import discovery, the leaves, the
 * modules of its own layer and of every layer to its left. router/scheduling
 * sits right above router/load, below everything that does I/O or keeps
 * counters: scheduling is pure, so what it needs of Redis (a session's shared
 * assignment) or metrics (counting a decision) reaches it as a request fact
 * from router/request or a callback from router/compose.ts. router/metrics
 * sits above it (it labels series with the load view's failure kinds), and
 * router/state (Redis) above both: it feeds the load view fleet counts and
 * the request stages shared facts. router/tracing implements the request
 * lifecycle's tracer and is loaded by the composition root only when tracing
 * is on. The composition root is router/compose.ts with its builders in
 * router/compose/.
 * @type {string[][]}
 */
const LAYERS = [['router/load'], ['router/scheduling'], ['router/metrics'], ['router/state'], ['router/admission'], ['router/proxy'], ['router/request'], ['router/server', 'router/tracing'], ['router/compose.ts', 'router/compose'], ['router/cli']];
/** @type {[string, string[]][]} */
const MODULES = [
  ...Object.entries(LEAVES),
  ...LAYERS.flatMap((layer, i) => layer.map((name) => /** @type {[string, string[]]} */ ([name, ['discovery', ...Object.keys(LEAVES), ...LAYERS.slice(0, i + 1).flat()]]))),
];
/** What each module may import, by module. */
const ALLOWED = new Map(MODULES);
/** The layers as a chain for the messages, built from LAYERS so the two cannot disagree. */
const CHAIN_TEXT = ['discovery', ...LAYERS.map((layer) => layer.join(' + '))].join(' ← ');
/** Test code: the unit tests beside their modules, the test house (tests/) and the benchmark scenarios. */
const TEST_FILES = ['**/*.test.ts', 'tests/**', 'loadtest/scenarios/**'];
/**
 * Product code (router/, discovery/, the simulator, the load generator and report helpers the
 * scenarios build on, the chart and dashboard generators) never imports test code: the image ships
 * router/, discovery/ and loadtest/'s sim, bench, report and load, and a product module that reached into tests/ would
 * either break there or drag a test into it.
 */
const NO_TESTS = {
  group: ['**/tests/**', '**/scenarios/**', '**/*.test.ts'],
  message: 'Product code never imports test code (tests/, loadtest/scenarios/, *.test.ts): move what both need into the product module and let the test import it.',
};
/**
 * Scheduling's core, the files directly in router/scheduling/, declares the contracts its plugins
 * (filters/, scorers/, pickers/) implement and never imports a plugin: router/scheduling/profiles/
 * puts them together. So a plugin is added or replaced without touching the core, and code that
 * needs only the core's types (admission, request) never loads a plugin through them.
 */
const SCHEDULING_PLUGINS = {
  group: ['**/filters/**', '**/scorers/**', '**/pickers/**'],
  message: 'Files directly in router/scheduling/ never import its plugins (filters/, scorers/, pickers/): declare the contract in the core and put the plugins together in router/scheduling/profiles/ (docs/architecture.md, "Dependency direction").',
};
const NO_LOADTEST = {
  group: ['**/loadtest/**'],
  message: 'router/ and discovery/ code must not import loadtest/ statically: `switchyard serve` never loads it. Load it with a dynamic import() on the command that needs it (sim, bench, demo).',
};
/**
 * Size limits (docs/architecture.md, "Size limits"): a product file in router/ or discovery/ stays
 * within MAX_FILE_LINES lines, counted as `wc -l` counts them (blank lines and comments included), so
 * a module that outgrows its one job gets split instead of scrolled. Classes stay within 300 lines;
 * tests/kit/size-limits.test.ts checks those, since no core ESLint rule measures a class.
 */
const MAX_FILE_LINES = 400;
/** Product files allowed past MAX_FILE_LINES, each with the reason. */
const OVERSIZED_FILES = [
  // One state machine that reads best in one piece; its header says why.
  'router/request/json-body-scanner.ts',
];

/** @param {string} name @param {string[]} allowed */
function boundary(name, allowed) {
  allowed = allowed.filter((module) => module !== name);
  const denied = Object.keys(MODULE_TARGETS).filter((target) => target !== name && !allowed.includes(target));
  if (denied.length === 0) return [];
  return [{
    group: denied.map((target) => MODULE_TARGETS[/** @type {keyof typeof MODULE_TARGETS} */ (target)]),
    message: `${name} may import ${allowed.length === 0 ? 'nothing from router/ or discovery/' : `only ${allowed.join(', ')}`}. Dependency direction: ${CHAIN_TEXT}, with ${Object.keys(LEAVES).join(', ')} as shared leaves (docs/architecture.md, "Dependency direction"); pass anything else in from router/compose.ts.`,
  }];
}

export default tseslint.config(
  { ignores: ['node_modules/**', 'scratch/**', 'docs/**', 'charts/switchyard/**', '**/*.d.ts', 'tests/kit/kube/apiserver/go-wrapper/**'] },
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
    files: [...TEST_FILES, 'loadtest/**/*.ts', 'charts/**/*.ts', 'router/cli/**/*.ts'],
    rules: { 'no-console': 'off' },
  },
  {
    // Undici response bodies the router reads itself come only from discovery/upstream-body.ts:
    // an unread body destroyed with no 'error' listener is an uncaught exception, and one engine
    // answering 401 to /metrics took every replica down that way. So nothing else may start a
    // request that yields a body (the forwarder's dispatch() yields none). Tests, e2e harnesses
    // and loadtest/ read their own bodies.
    files: ['router/**/*.ts', 'discovery/**/*.ts'],
    ignores: ['discovery/upstream-body.ts', ...TEST_FILES],
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
        {
          // A getter or setter in an object literal is a new function per object, so each object
          // gets a hidden class of its own, in the old generation, which keeps everything the
          // accessor's closure sees alive through young collections: one such literal per request
          // promoted 6 MB per collection and made each 13-15 ms long (read-body.ts, BodyProgress).
          selector: "ObjectExpression > Property[kind=/^(get|set)$/]",
          message: 'No getters or setters in object literals: use a class (accessors on its prototype are shared) or a plain field.',
        },
      ],
    },
  },
  {
    // Product code outside router/ and discovery/ (simulator, load generator, report helpers,
    // chart and dashboard generators): no test code.
    files: ['loadtest/**/*.ts', 'charts/**/*.ts'],
    ignores: TEST_FILES,
    rules: { 'no-restricted-imports': ['error', { patterns: [NO_TESTS] }] },
  },
  {
    files: ['router/**/*.ts', 'discovery/**/*.ts'],
    ignores: [...TEST_FILES, ...OVERSIZED_FILES],
    rules: { 'max-lines': ['error', { max: MAX_FILE_LINES, skipBlankLines: false, skipComments: false }] },
  },
  {
    // Module boundaries: see MODULE_TARGETS. First every router/ and discovery/ file (loadtest and
    // tests only), then each module, whose options replace these for its files.
    files: ['router/**/*.ts', 'discovery/**/*.ts'],
    ignores: TEST_FILES,
    rules: { 'no-restricted-imports': ['error', { patterns: [NO_LOADTEST, NO_TESTS] }] },
  },
  {
    files: ['discovery/**/*.ts'],
    ignores: TEST_FILES,
    rules: { 'no-restricted-imports': ['error', { patterns: [NO_LOADTEST, NO_TESTS, { group: ['**/router/**'], message: `discovery/ imports nothing from router/. Dependency direction: ${CHAIN_TEXT} (docs/architecture.md).` }] }] },
  },
  ...MODULES.map(([name, allowed]) => ({
    files: name.endsWith('.ts') ? [name] : [`${name}/**/*.ts`],
    ignores: TEST_FILES,
    rules: { 'no-restricted-imports': ['error', { patterns: [NO_LOADTEST, NO_TESTS, ...boundary(name, allowed)] }] },
  })),
  {
    // Scheduling's core: its module boundary, and no plugin (SCHEDULING_PLUGINS).
    files: ['router/scheduling/*.ts'],
    ignores: TEST_FILES,
    rules: {
      'no-restricted-imports': ['error', { patterns: [NO_LOADTEST, NO_TESTS, ...boundary('router/scheduling', ALLOWED.get('router/scheduling') ?? []), SCHEDULING_PLUGINS] }],
    },
  },
);
