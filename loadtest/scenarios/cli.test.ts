import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, it, mock } from 'node:test';
import { bench } from './cli.ts';
import { SCENARIOS } from './registry.ts';

/** `bench(argv)`'s exit code and what it printed to stdout and stderr. */
async function run(argv: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const log = mock.method(console, 'log', () => {});
  const error = mock.method(console, 'error', () => {});
  try {
    const code = await bench(argv);
    const text = (calls: readonly { arguments: readonly unknown[] }[]) => calls.map((c) => c.arguments.map(String).join(' ')).join('\n');
    return { code, stdout: text(log.mock.calls), stderr: text(error.mock.calls) };
  } finally {
    log.mock.restore();
    error.mock.restore();
  }
}

describe('npm run bench -- <scenario> --help', () => {
  // Each scenario's module is loaded and entered: one that started anything before reading its options would hang here.
  for (const scenario of SCENARIOS) {
    it(`${scenario.name} answers --help and -h with its title, what it does and its options, exit 0`, async () => {
      for (const flag of ['--help', '-h']) {
        const { code, stdout, stderr } = await run([scenario.name, flag]);
        assert.equal(code, 0);
        assert.equal(stderr, '');
        assert.ok(stdout.startsWith(`bench ${scenario.name}: ${scenario.title}\n`), stdout.slice(0, 200));
        for (const option of ['--quick', '--smoke', '--quiet', '--out DIR', '--generators N', ...scenario.options.map((o) => `--${o.name}`)]) assert.ok(stdout.includes(`  ${option} `), `${scenario.name} ${flag}: ${option}`);
      }
    });
  }

  it('answers an unknown option of `all` with one line, exit 2', async () => {
    assert.deepEqual(await run(['all', '--x']), { code: 2, stdout: '', stderr: 'bench all: unknown option --x (see npm run bench -- all --help)' });
  });
});

describe('npm run bench -- <scenario> --x', () => {
  it('prints one line to stderr, no stack trace, and exits 2', () => {
    const cli = fileURLToPath(new URL('./cli.ts', import.meta.url));
    const child = spawnSync(process.execPath, [cli, 'tool-call-integrity', '--quick', '--x'], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(child.status, 2);
    assert.equal(child.stdout, '');
    assert.equal(child.stderr, 'bench tool-call-integrity: unknown option --x (see npm run bench -- tool-call-integrity --help)\n');
  });
});
