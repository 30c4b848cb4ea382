import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError } from './load.ts';
import { readSecretFile, secretValueProblem } from './secret-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'switchyard-secret-'));

function file(name: string, content: string | Buffer): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

/** Asserts a ConfigError that names the option and the file and quotes none of `content`. */
function rejects(path: string, content: string, reason: RegExp): void {
  assert.throws(
    () => readSecretFile(path, 'upstream.apiKeyFile'),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.ok(err.message.startsWith(`upstream.apiKeyFile ${path}: `), err.message);
      assert.match(err.message, reason);
      for (const part of content.split(/\s+/).filter((p) => p.length >= 4)) assert.ok(!err.message.includes(part), `message quotes ${part}`);
      return true;
    },
  );
}

describe('secret files', () => {
  it('reads a key with or without its trailing newline, trimmed', () => {
    assert.equal(readSecretFile(file('plain', 'sk-abc123')), 'sk-abc123');
    assert.equal(readSecretFile(file('newline', 'sk-abc123\n')), 'sk-abc123');
    assert.equal(readSecretFile(file('crlf', '  sk-abc123\r\n')), 'sk-abc123');
  });

  it('rejects a file with two keys on two lines, naming the file, not the keys', () => {
    rejects(file('two-lines', 'sk-first-key\nsk-second-key\n'), 'sk-first-key sk-second-key', /holds 2 lines/);
  });

  it('rejects an empty file, control characters and non-ASCII', () => {
    rejects(file('empty', '\n'), '', /empty/);
    rejects(file('tab', 'sk-abc\tdef'), 'sk-abc def', /control or non-ASCII/);
    rejects(file('nul', 'sk-abc\0def'), 'sk-abc def', /control or non-ASCII/);
    rejects(file('accent', 'sk-ābcdef'), 'sk-ābcdef', /control or non-ASCII/);
    rejects(file('binary', Buffer.from([0xff, 0xfe, 0x41])), '', /not text/);
  });

  it('rejects a missing file and one far larger than any key', () => {
    rejects(join(dir, 'absent'), '', /cannot read it \(ENOENT\)/);
    rejects(dir, '', /cannot read it \(EISDIR\)/);
    rejects(file('huge', 'k'.repeat(20_000)), '', /larger than 16384 bytes/);
  });

  it('describes value problems without quoting the value', () => {
    assert.equal(secretValueProblem('sk-abc'), undefined);
    assert.equal(secretValueProblem('a\r\nb'), 'holds 2 lines; it must hold only the key, on one line');
    assert.equal(secretValueProblem('a\u007fb'), 'holds a control or non-ASCII character; the key must be printable ASCII');
  });
});
