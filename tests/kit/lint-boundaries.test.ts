/**
 * The module boundaries of eslint.config.js (docs/architecture.md, "Dependency
 * direction"), each shown refusing one wrong import and letting one right
 * import of the same kind through. The probe files do not exist: ESLint picks
 * their config by path and lints the text given.
 *
 * The repo's config parses with the TypeScript project service, which knows
 * only files on disk (a probe is a parsing error there) and takes ~25 s to
 * start here. The boundaries are plain `no-restricted-imports` patterns that
 * need no types, so this ESLint loads the repo's config, turns type-aware
 * parsing off and runs that one rule.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';

const ROOT = join(import.meta.dirname, '..', '..');
const RULE = 'no-restricted-imports';

const eslint = new ESLint({
  cwd: ROOT,
  overrideConfigFile: join(ROOT, 'eslint.config.js'),
  overrideConfig: tseslint.configs.disableTypeChecked,
  ruleFilter: ({ ruleId }) => ruleId === RULE,
});

/** The `no-restricted-imports` messages for `code` linted as if it were the file at `filePath` (relative to the repo). */
async function boundaryErrors(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: join(ROOT, filePath) });
  assert.ok(result !== undefined);
  const others = result.messages.filter((m) => m.ruleId !== RULE);
  assert.deepEqual(others, [], `only ${RULE} runs here`);
  return result.messages.map((m) => m.message);
}

/** One import that must be refused, and one of the same kind that must pass. */
interface Case {
  readonly rule: string;
  readonly refused: { readonly file: string; readonly code: string; readonly message: RegExp };
  readonly allowed: { readonly file: string; readonly code: string };
}

const CASES: readonly Case[] = [
  {
    rule: 'scheduling does not import router/state (Redis)',
    refused: { file: 'router/scheduling/lint-probe.ts', code: "import type { SharedStore } from '../state/shared-store.ts';\nexport type S = SharedStore;\n", message: /pattern\. router\/scheduling may import only discovery, router\/errors, router\/log\.ts, router\/config, router\/header-value\.ts, router\/load\. .*docs\/architecture\.md/ },
    allowed: { file: 'router/scheduling/lint-probe.ts', code: "import { mix32 } from '../load/hash.ts';\nexport const m = mix32;\n" },
  },
  {
    rule: 'scheduling does not import router/metrics, in its plugins either',
    refused: { file: 'router/scheduling/pickers/lint-probe.ts', code: "import { RouterMetrics } from '../../metrics/metrics.ts';\nexport const m = RouterMetrics;\n", message: /pattern\. router\/scheduling may import only / },
    allowed: { file: 'router/scheduling/pickers/lint-probe.ts', code: "import { SwitchyardError } from '../../errors/errors.ts';\nexport const e = SwitchyardError;\n" },
  },
  {
    rule: 'a core scheduling file does not import a plugin folder',
    refused: { file: 'router/scheduling/lint-probe.ts', code: "import { keepRoutable } from './filters/routable.ts';\nexport const k = keepRoutable;\n", message: /pattern\. Files directly in router\/scheduling\/ never import its plugins/ },
    allowed: { file: 'router/scheduling/profiles/lint-probe.ts', code: "import { keepRoutable } from '../filters/routable.ts';\nexport const k = keepRoutable;\n" },
  },
  {
    rule: 'a core scheduling file does not import a scorer, even as a type',
    refused: { file: 'router/scheduling/lint-probe.ts', code: "import type { PrefixAffinityScorer } from './scorers/prefix-affinity.ts';\nexport type P = PrefixAffinityScorer;\n", message: /pattern\. Files directly in router\/scheduling\/ never import its plugins/ },
    allowed: { file: 'router/scheduling/scorers/lint-probe.ts', code: "import type { Candidate } from '../candidate.ts';\nexport type C = Candidate;\n" },
  },
  {
    rule: 'discovery/ imports nothing from router/',
    refused: { file: 'discovery/lint-probe.ts', code: "import { SwitchyardError } from '../router/errors/errors.ts';\nexport const e = SwitchyardError;\n", message: /pattern\. discovery\/ imports nothing from router\/\. .*docs\/architecture\.md/ },
    allowed: { file: 'discovery/kubernetes/lint-probe.ts', code: "import { fetchText } from '../upstream-body.ts';\nexport const f = fetchText;\n" },
  },
  {
    rule: 'a product file does not import tests/ (a unit test beside it may)',
    refused: { file: 'router/request/lint-probe.ts', code: "import { startFleet } from '../../tests/kit/harness.ts';\nexport const s = startFleet;\n", message: /pattern\. Product code never imports test code/ },
    allowed: { file: 'router/request/lint-probe.test.ts', code: "import { startFleet } from '../../tests/kit/harness.ts';\nexport const s = startFleet;\n" },
  },
  {
    rule: 'the load generator does not import tests/ (the scenarios may)',
    refused: { file: 'loadtest/bench/lint-probe.ts', code: "import { startFleet } from '../../tests/kit/harness.ts';\nexport const s = startFleet;\n", message: /pattern\. Product code never imports test code/ },
    allowed: { file: 'loadtest/scenarios/lint-probe.ts', code: "import { startFleet } from '../../tests/kit/harness.ts';\nexport const s = startFleet;\n" },
  },
  {
    rule: 'router/ does not import loadtest/ statically (a dynamic import() may)',
    refused: { file: 'router/cli/lint-probe.ts', code: "import { seededRng } from '../../loadtest/sim/random.ts';\nexport const r = seededRng;\n", message: /pattern\. router\/ and discovery\/ code must not import loadtest\/ statically/ },
    allowed: { file: 'router/cli/lint-probe.ts', code: "export const load = () => import('../../loadtest/sim/random.ts');\n" },
  },
  {
    rule: 'a leaf does not import a layer',
    refused: { file: 'router/errors/lint-probe.ts', code: "import { mix32 } from '../load/hash.ts';\nexport const m = mix32;\n", message: /pattern\. router\/errors may import nothing from router\/ or discovery\// },
    allowed: { file: 'router/config/lint-probe.ts', code: "import { SwitchyardError } from '../errors/errors.ts';\nexport const e = SwitchyardError;\n" },
  },
  {
    rule: 'router/log.ts imports only router/errors of the modules',
    refused: { file: 'router/log.ts', code: "import type { Config } from './config/schema.ts';\nexport type C = Config;\n", message: /pattern\. router\/log\.ts may import only router\/errors\./ },
    allowed: { file: 'router/log.ts', code: "import { SwitchyardError } from './errors/errors.ts';\nexport const e = SwitchyardError;\n" },
  },
  {
    rule: 'a layer imports only layers to its left (metrics may import scheduling, not state)',
    refused: { file: 'router/metrics/lint-probe.ts', code: "import type { SharedStore } from '../state/shared-store.ts';\nexport type S = SharedStore;\n", message: /pattern\. router\/metrics may import only / },
    allowed: { file: 'router/metrics/lint-probe.ts', code: "import type { DecisionOutcome } from '../scheduling/candidate.ts';\nexport type D = DecisionOutcome;\n" },
  },
];

describe('module boundaries (eslint.config.js)', () => {
  for (const { rule, refused, allowed } of CASES) {
    it(rule, async () => {
      const errors = await boundaryErrors(refused.file, refused.code);
      assert.equal(errors.length, 1, `${refused.file}: ${errors.join(' | ')}`);
      assert.match(errors[0] as string, refused.message);
      assert.deepEqual(await boundaryErrors(allowed.file, allowed.code), [], allowed.file);
    });
  }

  it('names no module that is gone (router/policy)', async () => {
    const errors = await boundaryErrors('router/errors/lint-probe.ts', "import '../scheduling/candidate.ts';\n");
    assert.equal(errors.length, 1);
    assert.doesNotMatch(errors[0] as string, /policy/);
    assert.match(errors[0] as string, /discovery ← router\/load ← router\/scheduling ← router\/metrics ← router\/state ← /);
  });
});
