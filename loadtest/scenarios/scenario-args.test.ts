import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ROUTER_NAMES } from './prefix-targets.ts';
import { WORKLOAD_NAMES } from './prefix-workloads.ts';
import { COMMON_OPTIONS, SCENARIOS, scenarioEntry, type OptionSpec } from './registry.ts';
import { scenarioOptions } from './results.ts';
import { parseArgv, parseScenarioArgs, scenarioHelp, ScenarioUsage } from './scenario-args.ts';

const SPECS: readonly OptionSpec[] = [
  { name: 'quick', description: 'short' },
  { name: 'out', value: 'DIR', description: 'where' },
  { name: 'router-args', value: '"ARGS"', description: 'router flags' },
];

/** What parsing `argv` for scenario `name` threw, as a `ScenarioUsage`. */
function usage(name: Parameters<typeof parseScenarioArgs>[0], argv: readonly string[]): ScenarioUsage {
  try {
    parseScenarioArgs(name, argv);
  } catch (err) {
    assert.ok(err instanceof ScenarioUsage, `threw ${String(err)}`);
    return err;
  }
  assert.fail(`${name} ${argv.join(' ')} parsed`);
}

describe('parseArgv', () => {
  it('takes flags, values after a space or an =, and a value that starts with a dash', () => {
    const parsed = parseArgv(SPECS, ['--quick', '--out', '/tmp/x', '--router-args', '--admission-queue-length 1000']);
    assert.deepEqual(parsed, { kind: 'values', values: new Map<string, string | true>([['quick', true], ['out', '/tmp/x'], ['router-args', '--admission-queue-length 1000']]) });
    assert.deepEqual(parseArgv(SPECS, ['--out=/tmp/y']), { kind: 'values', values: new Map([['out', '/tmp/y']]) });
  });

  it('asks for help with --help or -h', () => {
    assert.deepEqual(parseArgv(SPECS, ['--quick', '-h']), { kind: 'help' });
    assert.deepEqual(parseArgv(SPECS, ['--help']), { kind: 'help' });
  });

  it('names the first thing it cannot take', () => {
    assert.deepEqual(parseArgv(SPECS, ['--quick', '--x', '5']), { kind: 'error', error: 'unknown option --x' });
    assert.deepEqual(parseArgv(SPECS, ['--x=5']), { kind: 'error', error: 'unknown option --x' });
    assert.deepEqual(parseArgv(SPECS, ['quick']), { kind: 'error', error: 'unexpected argument "quick"' });
    assert.deepEqual(parseArgv(SPECS, ['--out']), { kind: 'error', error: 'option --out needs a value (DIR)' });
    assert.deepEqual(parseArgv(SPECS, ['--out', '--quick']), { kind: 'error', error: 'option --out needs a value (DIR)' });
    assert.deepEqual(parseArgv(SPECS, ['--quick=yes']), { kind: 'error', error: 'option --quick takes no value' });
  });
});

describe('scenario options', () => {
  it('has a registry entry for every scenario with options, and the 13 scenarios in it', () => {
    assert.equal(SCENARIOS.length, 13);
    assert.equal(new Set(SCENARIOS.map((s) => s.name)).size, SCENARIOS.length);
    for (const entry of SCENARIOS) assert.equal(scenarioEntry(entry.name), entry);
  });

  it("documents in every scenario's --help each option its parser takes, with its description", () => {
    for (const entry of SCENARIOS) {
      const help = usage(entry.name, ['--help']);
      assert.equal(help.exitCode, 0);
      assert.equal(help.text, scenarioHelp(entry));
      assert.ok(help.text.startsWith(`bench ${entry.name}: ${entry.title}\n`), entry.name);
      const specs: readonly OptionSpec[] = [...COMMON_OPTIONS, ...entry.options];
      for (const spec of specs) {
        const line = help.text.split('\n').find((l) => l.trimStart().startsWith(`--${spec.name} `));
        assert.ok(line?.includes(spec.description), `${entry.name} --help documents --${spec.name}`);
        // The parser takes what the help shows: the option with its placeholder as the value.
        const argv = spec.value === undefined ? [`--${spec.name}`] : [`--${spec.name}`, '1'];
        assert.equal(parseScenarioArgs(entry.name, argv).get(spec.name), spec.value === undefined ? true : '1', `${entry.name} --${spec.name}`);
      }
    }
  });

  it('answers an option a scenario does not take with one line that says where the help is', () => {
    for (const entry of SCENARIOS) {
      const refused = usage(entry.name, ['--quick', '--x']);
      assert.equal(refused.exitCode, 2);
      assert.equal(refused.text, `bench ${entry.name}: unknown option --x (see npm run bench -- ${entry.name} --help)`);
    }
    // Another scenario's option is unknown here too.
    assert.equal(usage('lora', ['--streams', '5']).text, 'bench lora: unknown option --streams (see npm run bench -- lora --help)');
  });

  it('gives each scenario its own options by name, and the common ones', () => {
    const options = scenarioOptions(['--quick', '--requests', '3000', '--rate', '300', '--out', '/tmp/r'], 'tool-call-integrity');
    assert.deepEqual(options, { quick: true, smoke: false, out: '/tmp/r', quiet: false, generators: 0, extra: { requests: '3000', rate: '300' } });
    assert.equal(scenarioOptions(['--smoke'], 'replicas').quick, true, 'a smoke run is a quick run too');
  });

  it("lists prefix-affinity's workloads and routers as the scenario names them", () => {
    const text = (name: string) => scenarioEntry('prefix-affinity').options.find((o) => o.name === name)?.description ?? '';
    assert.match(text('workloads'), new RegExp(`of ${WORKLOAD_NAMES.join(',')} `));
    assert.match(text('routers'), new RegExp(`of ${ROUTER_NAMES.join(',')} `));
  });
});
