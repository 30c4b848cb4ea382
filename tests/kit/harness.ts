/**
 * Test harness: real engine simulators and a real router on 127.0.0.1 with
 * ephemeral ports, in this process, plus a small raw HTTP client.
 */
import type { ChildProcess } from 'node:child_process';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { Writable } from 'node:stream';
import { loadConfig } from '../../router/config/load.ts';
import { Router, type RouterOptions } from '../../router/compose.ts';
import { createLogger } from '../../router/log.ts';
import { EngineSimulator, type SimOptions } from '../../loadtest/sim/server.ts';
import { spawnSwitchyard } from './router-process.ts';

/** A running router with its engines. */
export interface Fleet {
  readonly router: Router;
  readonly engines: EngineSimulator[];
  /** `http://127.0.0.1:PORT` of the traffic port. */
  readonly base: string;
  /** `http://127.0.0.1:PORT` of the admin port. */
  readonly admin: string;
  close(): Promise<void>;
}

const silent = () =>
  createLogger(
    'silent',
    new Writable({
      write(_chunk, _encoding, done) {
        done();
      },
    }),
  );

/** A router started in this process by {@link startInProcessRouter}. */
export interface StartedRouter {
  readonly router: Router;
  /** `http://127.0.0.1:PORT` of the traffic port. */
  readonly base: string;
  /** `http://127.0.0.1:PORT` of the admin port. */
  readonly admin: string;
}

/**
 * Starts a router in this process on ephemeral ports with `flags` (after the
 * test defaults, so they can override them) and waits until `knownEngines`
 * endpoints have their models known. A router that fails to get there is
 * closed before the error goes up.
 */
export async function startInProcessRouter(flags: readonly string[], knownEngines: number, routerOptions: RouterOptions = {}): Promise<StartedRouter> {
  const loaded = loadConfig(
    [
      '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--lifecycle-pre-stop-delay-ms', '0',
      // The test client, the engines and the router share this one event loop, so its lag measures
      // the test, not the router; tests of lag shedding set their own threshold.
      '--admission-event-loop-lag-ms', '10000',
      ...flags,
    ],
    {},
  );
  if (loaded.kind !== 'config') throw new Error('unexpected help');
  const router = new Router(loaded.config, { logger: silent(), ...routerOptions });
  try {
    const ports = await router.start();
    await waitFor(() => [...router.view.all()].filter((s) => s.endpoint.models !== undefined).length >= knownEngines);
    return { router, base: `http://127.0.0.1:${ports.traffic}`, admin: `http://127.0.0.1:${ports.admin}` };
  } catch (err) {
    await router.close();
    throw err;
  }
}

/**
 * Starts the engines, then a router over them (plus any `extraBackends`),
 * and waits until every engine's models are known. `routerOptions` can
 * replace the logger or the endpoint source (a test that changes the
 * endpoint set passes its own source; the backend flags are then unused).
 */
export async function startFleet(engines: SimOptions[], flags: string[] = [], extraBackends: string[] = [], routerOptions: RouterOptions = {}): Promise<Fleet> {
  const sims = engines.map((options) => new EngineSimulator(options));
  for (const sim of sims) await sim.listen();
  const backends = [...sims.map((s) => s.url), ...extraBackends];
  let started: StartedRouter;
  try {
    started = await startInProcessRouter([...backends.flatMap((b) => ['--backend', b]), ...flags], sims.length, routerOptions);
  } catch (err) {
    // A fleet that fails to start must not leave listening engines behind: they would hold the
    // test process open until the runner's timeout instead of letting the failure show at once.
    await Promise.all(sims.map((s) => s.close()));
    throw err;
  }
  const { router } = started;
  return {
    router,
    engines: sims,
    base: started.base,
    admin: started.admin,
    async close() {
      await router.close();
      await Promise.all(sims.map((s) => s.close()));
    },
  };
}

/**
 * Waits until the router at `admin` reports its shared state (Redis) up on
 * /readyz: before that it routes on its own state alone (a degraded start).
 */
export async function waitForSharedStateUp(admin: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (((await (await fetch(`${admin}/readyz`)).json()) as { sharedState?: string }).sharedState !== 'up') {
    if (Date.now() > deadline) throw new Error('shared state not up in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Polls `condition` every 10 ms until true, failing after `timeoutMs`. */
export async function waitFor(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A complete HTTP response. */
export interface RawResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
  /** The response body ended cleanly (not cut by a destroyed connection). */
  readonly complete: boolean;
}

/** Sends one request on a fresh connection and collects the whole response. */
export function send(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string | Buffer; signal?: AbortSignal } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: options.method ?? 'POST', headers: options.headers, agent: false, signal: options.signal }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), complete: true }));
      res.on('error', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), complete: false }));
      res.on('aborted', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), complete: false }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** POSTs a JSON body. */
export function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<RawResponse> {
  return send(url, { headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

/** Parses an OpenAI error body. */
export function errorOf(response: RawResponse): { message: string; type: string; param: string | null; code: string } {
  return (JSON.parse(response.body.toString('utf8')) as { error: { message: string; type: string; param: string | null; code: string } }).error;
}

/** SSE `data:` payloads of a complete event stream, in order. */
export function sseData(body: Buffer): string[] {
  return body
    .toString('utf8')
    .split('\n\n')
    .filter((event) => event.startsWith('data: '))
    .map((event) => event.slice('data: '.length));
}

/** A router running as a child process, started by {@link startRouterProcess}. */
export interface RouterProcess {
  readonly child: ChildProcess;
  readonly traffic: number;
  readonly admin: number;
  /** Resolves with the exit code. */
  readonly exit: Promise<number | null>;
}

/**
 * Starts `switchyard serve ARGS` as a child process (through the kit's one
 * spawner, router-process.ts) and resolves with its ports once it listens.
 * `nodeArgs` go to node before the script (e.g. `--import`); `openFiles` sets
 * the child's open-file limit (`ulimit -n`) before it starts.
 */
export async function startRouterProcess(args: string[], nodeArgs: readonly string[] = [], openFiles?: number): Promise<RouterProcess> {
  const { child, ports, exit } = await spawnSwitchyard(['serve', ...args], { nodeArgs, openFiles });
  return { child, traffic: ports['traffic'] as number, admin: ports['admin'] as number, exit };
}

/** The index of the engine that received `requestId`, or -1. */
export function servedBy(engines: readonly EngineSimulator[], requestId: string): number {
  return engines.findIndex((engine) => engine.received(requestId) !== undefined);
}

/**
 * Holds `count` chat requests for `model` open directly on the engine at `url` (bypassing the
 * router, each with a 60 s time to first token) until released: a busy engine on demand.
 */
export function holdOnEngine(url: string, count: number, model: string): { release(): Promise<void> } {
  const controller = new AbortController();
  const held = Array.from({ length: count }, () =>
    fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-sim-ttft-ms': '60000' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hold' }] }),
      signal: controller.signal,
    }).catch(() => undefined),
  );
  return {
    async release() {
      controller.abort();
      await Promise.all(held);
    },
  };
}
