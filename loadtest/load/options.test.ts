import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chatPath, loadUsage, parseLoadOptions, UsageError, type LoadOptions } from './options.ts';

const BASE = ['--target', 'http://127.0.0.1:8080', '--model', 'm'];

function options(argv: readonly string[]): LoadOptions {
  const parsed = parseLoadOptions(argv);
  assert.equal(parsed.kind, 'options');
  return (parsed as { options: LoadOptions }).options;
}

function refused(argv: readonly string[]): string {
  try {
    parseLoadOptions(argv);
  } catch (err) {
    assert.ok(err instanceof UsageError, String(err));
    assert.doesNotMatch(err.message, /\n/, 'one line');
    return err.message;
  }
  assert.fail(`accepted ${argv.join(' ')}`);
}

describe('switchyard bench load options', () => {
  it('defaults: streamed, 512 prompt and 128 output tokens with ignore_eos, 30 s after 5 s of warm-up', () => {
    const o = options([...BASE, '--rate', '2.5']);
    assert.deepEqual(o.steps, [{ kind: 'rate', perS: 2.5 }]);
    assert.deepEqual([o.stream, o.ignoreEos, o.durationS, o.warmupS, o.sessions, o.turns, o.processes], [true, true, 30, 5, 0, 1, 1]);
    assert.deepEqual([o.promptTokens, o.outputTokens], [{ min: 512, max: 512 }, { min: 128, max: 128 }]);
    assert.equal(o.target.href, 'http://127.0.0.1:8080/');
  });

  it('reads sweeps, ranges, switches and --flag=value', () => {
    const o = options([...BASE, '--rates', '20, 50', '--prompt-tokens', '100-200', '--output-tokens=64', '--stream', 'false', '--ignore-eos', '--quiet', '--sessions', '8', '--turns', '3', '--duration', '5']);
    assert.deepEqual(o.steps, [{ kind: 'rate', perS: 20 }, { kind: 'rate', perS: 50 }]);
    assert.deepEqual([o.promptTokens, o.outputTokens], [{ min: 100, max: 200 }, { min: 64, max: 64 }]);
    assert.deepEqual([o.stream, o.ignoreEos, o.quiet, o.sessions, o.turns, o.durationS], [false, true, true, 8, 3, 5]);
    assert.equal(options([...BASE, '--concurrency', '1,4', '--ignore-eos', 'false']).ignoreEos, false);
    assert.deepEqual(options([...BASE, '--concurrency', '1,4']).steps, [{ kind: 'concurrency', clients: 1 }, { kind: 'concurrency', clients: 4 }]);
  });

  it('refuses, in one line: a target that is not http(s) or carries credentials, missing flags, two shapes, bad numbers', () => {
    assert.match(refused(['--target', 'ftp://h/', '--model', 'm', '--rate', '1']), /only http:\/\/ and https:\/\//);
    assert.match(refused(['--target', 'localhost:8080', '--model', 'm', '--rate', '1']), /only http/);
    assert.match(refused(['--target', 'not a url', '--model', 'm', '--rate', '1']), /is not a URL/);
    assert.match(refused(['--target', 'http://u:secret@h/', '--model', 'm', '--rate', '1']), /carries credentials/);
    assert.doesNotMatch(refused(['--target', 'http://u:secret@h/', '--model', 'm', '--rate', '1']), /secret/);
    assert.match(refused(['--model', 'm', '--rate', '1']), /--target URL is required/);
    assert.match(refused([...BASE.slice(0, 2), '--rate', '1']), /--model M is required/);
    assert.match(refused(BASE), /exactly one load shape/);
    assert.match(refused([...BASE, '--rate', '1', '--concurrency', '2']), /exactly one load shape/);
    assert.match(refused([...BASE, '--rate', '1', '--rates', '2,3']), /exactly one load shape/);
    assert.match(refused([...BASE, '--rate', '0']), /--rate: expected a number ≥ 0.001/);
    assert.match(refused([...BASE, '--concurrency', '1.5']), /expected an integer/);
    assert.match(refused([...BASE, '--rate', '1', '--prompt-tokens', '9-3']), /empty range/);
    assert.match(refused([...BASE, '--rate', '1', '--stream', 'yes']), /expected true or false/);
    assert.match(refused([...BASE, '--rate', '1', '--turns', '3']), /--turns needs --sessions/);
    assert.match(refused([...BASE, '--rate', '1', '--sessions', '1', '--processes', '2']), /at least --processes/);
    assert.match(refused([...BASE, '--rate']), /--rate needs a value/);
  });

  it('an unknown option is one line with the nearest flag', () => {
    assert.equal(refused([...BASE, '--rate', '1', '--duraton', '5']), 'unknown option "--duraton"; did you mean --duration? (see switchyard bench load --help)');
    assert.match(refused([...BASE, '--rate', '1', 'extra']), /unknown option "extra"/);
  });

  it('--help lists every option on its own line, and says token counts are approximate', () => {
    assert.deepEqual(parseLoadOptions(['--rate', 'x', '--help']), { kind: 'help' });
    const help = loadUsage();
    for (const flag of ['target', 'model', 'rate', 'rates', 'concurrency', 'duration', 'warmup', 'stream', 'prompt-tokens', 'output-tokens', 'ignore-eos', 'sessions', 'turns', 'api-key-file', 'out', 'processes', 'max-connections', 'quiet', 'help']) {
      assert.equal(help.split('\n').filter((line) => line.startsWith(`  --${flag} `)).length, 1, flag);
    }
    assert.match(help, /~4 characters a token/);
  });

  it('finds the chat path under a base URL with or without /v1', () => {
    assert.equal(chatPath(new URL('http://h:1')), '/v1/chat/completions');
    assert.equal(chatPath(new URL('http://h:1/v1/')), '/v1/chat/completions');
    assert.equal(chatPath(new URL('https://h/openai')), '/openai/v1/chat/completions');
  });
});
