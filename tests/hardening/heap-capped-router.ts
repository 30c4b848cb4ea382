/**
 * Test support for the memory findings: a router process at the chart's heap
 * cap (`--max-old-space-size=384`), with a full GC on SIGUSR2
 * (tests/kit/gc-on-signal.ts) so a heap read is what the router holds, and
 * its exit and stderr recorded, so a test can tell a crash from a failure.
 */
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import type { EngineSimulator } from '../../loadtest/sim/server.ts';
import { postJson, startRouterProcess, type RouterProcess } from '../kit/harness.ts';

/** A router process started by {@link startHeapCappedRouter}. */
export interface HeapCappedRouter {
  readonly router: RouterProcess;
  readonly base: string;
  readonly admin: string;
  /** How it exited (`code …, signal …`), undefined while it runs. */
  exited: string | undefined;
  /** The last 4,000 characters of its stderr. */
  stderr: string;
}

/** Starts a router over `engine` with Redis at `redisUrl` (and `extra` flags), and waits until it serves `model`. */
export async function startHeapCappedRouter(engine: EngineSimulator, redisUrl: string, model: string, extra: readonly string[] = []): Promise<HeapCappedRouter> {
  const router = await startRouterProcess(
    ['--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--lifecycle-pre-stop-delay-ms', '0', '--log-level', 'info', '--backend', engine.url, '--redis-url', redisUrl, ...extra],
    ['--max-old-space-size=384', '--expose-gc', '--import', fileURLToPath(new URL('../kit/gc-on-signal.ts', import.meta.url))],
  );
  const started: HeapCappedRouter = { router, base: `http://127.0.0.1:${router.traffic}`, admin: `http://127.0.0.1:${router.admin}`, exited: undefined, stderr: '' };
  router.child.once('exit', (code, signal) => (started.exited = `code ${String(code)}, signal ${String(signal)}`));
  router.child.stderr?.on('data', (text: string) => (started.stderr = (started.stderr + text).slice(-4_000)));
  // Serving once discovery listed the model (503 before that, which is not what these tests are about).
  for (let i = 0; (await postJson(`${started.base}/v1/chat/completions`, { model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 1 })).status !== 200; i++) {
    assert.ok(i < 200 && started.exited === undefined, `the router never served (${started.exited ?? 'running'}): ${started.stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return started;
}

/** Kills the router if it still runs (SIGKILL: these tests are about crashes, not drains) and waits for it. */
export async function killHeapCappedRouter(started: HeapCappedRouter | undefined): Promise<void> {
  if (started === undefined || started.exited !== undefined) return;
  started.router.child.kill('SIGKILL');
  await started.router.exit;
}

/** The first sample of `name` whose labels contain `labels` on the router's /metrics; 0 when absent. */
export async function metric(admin: string, name: string, labels = ''): Promise<number> {
  const text = await (await fetch(`${admin}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(name) && l.includes(labels) && !l.startsWith('#'));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

/** The heap the router holds: read after a full GC. */
export async function heldHeap(started: HeapCappedRouter): Promise<number> {
  started.router.child.kill('SIGUSR2');
  await new Promise((resolve) => setTimeout(resolve, 500));
  return metric(started.admin, 'nodejs_heap_size_used_bytes');
}
