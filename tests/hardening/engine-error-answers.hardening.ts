/**
 * Every router replica scrapes every engine's /metrics and asks its
 * /v1/models, so an engine answering anything but 200 there must cost one
 * failed scrape, never the router. The scrape fetch used to destroy the
 * unread body of a non-200 answer with no 'error' listener on it: undici then
 * emitted RequestAbortedError as an uncaught exception and the process exited
 * within a second. One pod running vLLM with `--api-key` (401), an engine
 * without /metrics (404) or a sidecar answering 503 crash-looped the fleet.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { test } from 'node:test';
import { startRouterProcess, waitFor, type RouterProcess } from '../kit/harness.ts';

/** A plain HTTP peer that answers every path the same broken way, and counts what it was asked. */
class BrokenEngine {
  readonly hits = new Map<string, number>();
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  url = '';

  constructor(answer: 'unauthorized' | 'not-found' | 'unavailable' | 'truncated') {
    this.#server = createServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://engine').pathname;
      this.hits.set(path, (this.hits.get(path) ?? 0) + 1);
      res.on('error', () => {}); // the router may drop the connection mid-answer
      switch (answer) {
        case 'unauthorized': // vLLM started with --api-key
          res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"Unauthorized"}');
          return;
        case 'not-found':
          res.writeHead(404, { 'content-type': 'text/plain' }).end('404 page not found\n');
          return;
        case 'unavailable':
          res.writeHead(503, { 'content-type': 'text/plain' }).end('upstream connect error or disconnect/reset before headers\n');
          return;
        case 'truncated': // promises more than it sends, then drops the socket
          res.writeHead(200, { 'content-length': '100000' });
          res.write('vllm:num_requests_', () => res.socket?.destroy());
          return;
      }
    });
    this.#server.on('connection', (socket: Socket) => {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

/** `switchyard_scrape_failures_total` per backend label, from the router's /metrics text. */
function scrapeFailures(metrics: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const match of metrics.matchAll(/^switchyard_scrape_failures_total\{backend="([^"]+)"\} (\d+)$/gm)) {
    counts.set(match[1] as string, Number(match[2]));
  }
  return counts;
}

test('regression: an engine answering 401, 404, 503 or a truncated body to /metrics and /v1/models crashed the router', async () => {
  const engines = (['unauthorized', 'not-found', 'unavailable', 'truncated'] as const).map((answer) => new BrokenEngine(answer));
  for (const engine of engines) await engine.listen();
  const startedAt = Date.now();
  let router: RouterProcess | undefined;
  let exitedAfterMs: number | undefined;
  try {
    router = await startRouterProcess([
      '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--lifecycle-pre-stop-delay-ms', '0',
      '--scrape-interval-ms', '100', '--scrape-timeout-ms', '500', '--models-refresh-retry-ms', '100',
      ...engines.flatMap((engine) => ['--backend', engine.url]),
    ]);
    void router.exit.then(() => (exitedAfterMs = Date.now() - startedAt));
    // About 2 s of scraping: 20 rounds at 100 ms, each engine asked for its metrics and models every time.
    await waitFor(
      () => exitedAfterMs !== undefined || engines.every((engine) => (engine.hits.get('/metrics') ?? 0) >= 20 && (engine.hits.get('/v1/models') ?? 0) >= 10),
      15_000,
    );
    assert.equal(exitedAfterMs, undefined, `the router exited ${exitedAfterMs} ms after it was started`);
    assert.equal(router.child.exitCode, null, 'the router process is still running');

    const admin = `http://127.0.0.1:${router.admin}`;
    assert.equal((await fetch(`${admin}/livez`)).status, 200);
    const failures = scrapeFailures(await (await fetch(`${admin}/metrics`)).text());
    for (const engine of engines) {
      assert.ok((failures.get(engine.url) ?? 0) >= 10, `scrape failures of ${engine.url} are counted: ${failures.get(engine.url)}`);
    }
  } catch (err) {
    // Exit before listening (startRouterProcess rejects) counts as a crash too; say when it happened.
    exitedAfterMs ??= router === undefined ? Date.now() - startedAt : undefined;
    if (router === undefined) assert.fail(`the router exited ${exitedAfterMs} ms after it was started: ${(err as Error).message}`);
    throw err;
  } finally {
    if (router !== undefined && router.child.exitCode === null) {
      router.child.kill('SIGTERM');
      await router.exit;
    }
    await Promise.all(engines.map((engine) => engine.close()));
  }
});
