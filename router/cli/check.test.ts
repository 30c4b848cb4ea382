import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { EngineSimulator } from '../../loadtest/sim/server.ts';
import { check } from './check.ts';

async function run(argv: string[]): Promise<{ code: number; lines: string[]; errors: string[] }> {
  const lines: string[] = [];
  const errors: string[] = [];
  const code = await check(argv, (line) => lines.push(line), (line) => errors.push(line));
  return { code, lines, errors };
}

describe('switchyard check', () => {
  let engine: EngineSimulator;
  let enginePort = 0;
  // Answers a path-chosen status or body that a real engine does not give on demand (503, an empty model list, a hang).
  let odd: Server;
  let oddUrl = '';

  before(async () => {
    engine = new EngineSimulator({ model: 'check-model', knobs: { ttftMs: 0, itlMs: 0, outputTokens: 1 } });
    enginePort = await engine.listen('127.0.0.1', 0);
    odd = createServer((req, res) => {
      if (req.url === '/unready') res.writeHead(503).end('draining');
      else if (req.url === '/empty/v1/models') res.writeHead(200, { 'content-type': 'application/json' }).end('{"object":"list","data":[]}');
      else if (req.url === '/hang') return; // never answers
      else res.writeHead(204).end();
    });
    await new Promise<void>((resolve) => odd.listen(0, '127.0.0.1', resolve));
    oddUrl = `http://127.0.0.1:${(odd.address() as AddressInfo).port}`;
  });

  after(async () => {
    odd.closeAllConnections();
    await new Promise((resolve) => odd.close(resolve));
    await engine.close();
  });

  it('exits 0 when every URL answers 2xx, one line each', async () => {
    const { code, lines } = await run(['--require-models', `http://127.0.0.1:${enginePort}/v1/models`, `${oddUrl}/readyz`]);
    assert.equal(code, 0);
    assert.equal(lines.length, 2);
    assert.match(lines[0] as string, /^ok {3}http:\/\/127\.0\.0\.1:\d+\/v1\/models 200 1 model \(\d+ ms\)$/);
    assert.match(lines[1] as string, /^ok {3}http:\/\/127\.0\.0\.1:\d+\/readyz 204 \(\d+ ms\)$/);
  });

  it('exits 1 when one URL answers non-2xx, and still checks the others', async () => {
    const { code, lines } = await run([`${oddUrl}/unready`, `${oddUrl}/readyz`]);
    assert.equal(code, 1);
    assert.match(lines[0] as string, /^FAIL .*\/unready 503 /);
    assert.match(lines[1] as string, /^ok /);
  });

  it('with --require-models, an empty model list fails; without it, it passes', async () => {
    assert.equal((await run(['--require-models', `${oddUrl}/empty/v1/models`])).code, 1);
    assert.match((await run(['--require-models', `${oddUrl}/empty/v1/models`])).lines[0] as string, /lists no model/);
    assert.equal((await run([`${oddUrl}/empty/v1/models`])).code, 0);
  });

  it('a refused connection and a hung server fail within the timeout', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const started = performance.now();
    const { code, lines } = await run(['--timeout-ms', '300', `http://127.0.0.1:${port}/readyz`, `${oddUrl}/hang`]);
    assert.equal(code, 1);
    assert.match(lines[0] as string, /^FAIL .*ECONNREFUSED/);
    assert.match(lines[1] as string, /^FAIL .*\/hang /);
    assert.ok(performance.now() - started < 3_000, 'bounded by the timeout');
  });

  it('usage errors exit 2', async () => {
    const none = await run([]);
    assert.equal(none.code, 2);
    assert.deepEqual(none.errors, ['switchyard check: no URL given (see --help)']);
    assert.equal((await run(['ftp://example.invalid/x'])).code, 2);
    assert.equal((await run(['--timeout-ms', '0', 'http://127.0.0.1:1/'])).code, 2);
    assert.equal((await run(['--bogus', 'http://127.0.0.1:1/'])).code, 2);
  });
});
