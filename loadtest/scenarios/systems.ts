/**
 * Starts the systems a scenario measures side by side, as separate
 * processes on loopback: engine simulators, switchyard, nginx, the vLLM
 * project router. Each comes back as a {@link System}: where to send load,
 * what it is, which processes to charge CPU and memory to, and how to stop it.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startNginx } from './baselines/nginx.ts';
import { startStaticEngine } from './baselines/static-engine.ts';
import { startPeerRouter, type PeerRouterName, type PeerRouterPolicy } from './baselines/peer-router.ts';
import { cpuTimeMs, waitForModels } from '../../tests/kit/processes.ts';
import { spawnSwitchyard, type SwitchyardProcess } from '../../tests/kit/router-process.ts';

/** Something load is sent to. */
export interface System {
  /** `direct`, `nginx`, `switchyard`, ... */
  readonly name: string;
  readonly url: string;
  /** Version and configuration, for the report. */
  readonly description: string;
  /** Probe and metrics URL, for systems that have one (switchyard). */
  readonly adminUrl?: string;
  pids(): number[];
  stop(): Promise<void>;
}

/** The engines the systems forward to: simulator processes, or the static engine. */
export interface Engines {
  readonly urls: string[];
  /** What the engine is, for the report. */
  readonly description: string;
  /** Processes of the first engine, which `direct` addresses. */
  firstEnginePids(): number[];
  stop(): Promise<void>;
}

/** Starts `count` simulator processes serving `model`, with `simArgs` knobs (e.g. `--max-seqs 256`). */
export async function startEngineProcesses(count: number, model: string, simArgs: readonly string[], core?: number): Promise<Engines> {
  const processes = await Promise.all(Array.from({ length: count }, () => spawnSwitchyard(['sim', '--listen', '127.0.0.1:0', '--model', model, ...simArgs], { marker: 'engine simulator listening', core })));
  const first = processes[0] as SwitchyardProcess;
  return {
    urls: processes.map((p) => `http://127.0.0.1:${p.ports['port'] as number}`),
    description: 'engine simulator',
    firstEnginePids: () => (first.child.pid === undefined ? [] : [first.child.pid]),
    stop: async () => void (await Promise.all(processes.map((p) => p.stop()))),
  };
}

/** The static engine ({@link startStaticEngine}) as the one engine systems forward to. */
export async function startStaticEngines(model: string, core?: number): Promise<Engines> {
  const engine = await startStaticEngine({ model, ...(core === undefined ? {} : { core }) });
  return { urls: [engine.url], description: engine.description, firstEnginePids: () => engine.pids(), stop: () => engine.stop() };
}

/** The first engine, addressed directly: the floor every proxy is compared with. */
export function direct(engines: Engines): System {
  return { name: 'direct', url: engines.urls[0] as string, description: `${engines.description}, no proxy`, pids: () => engines.firstEnginePids(), stop: async () => {} };
}

/** `serve` flags that turn the safe start off, for comparisons that measure the proxy rather than it (see {@link startComparedSystems}). */
export const SAFE_START_OFF: readonly string[] = ['--load-safe-start-enabled', 'false'];

/**
 * Another checkout of switchyard measured beside this one in the same run
 * (`--before DIR`): a worktree of an earlier commit with its own
 * `npm ci`, so a before/after comparison shares the machine's hour, the
 * engines and the load generator, and only the router's code differs.
 */
export interface RouterCheckout {
  readonly dir: string;
  /** Its short commit id. */
  readonly commit: string;
  /** What reports call it: `switchyard@<commit>` (no space: load generators prefix request ids with it, and the router keeps only visible ASCII ids). */
  readonly name: string;
}

/** The checkout at `dir` (`--before DIR`), or undefined without one; throws when `dir` is not a switchyard checkout with its modules installed. */
export function routerCheckout(dir: string | undefined): RouterCheckout | undefined {
  if (dir === undefined) return undefined;
  const absolute = resolve(dir);
  if (!existsSync(join(absolute, 'router/cli/bin.ts')) || !existsSync(join(absolute, 'node_modules'))) {
    throw new Error(`--before ${dir}: not a switchyard checkout with its modules installed (git worktree add DIR COMMIT && npm ci --prefix DIR)`);
  }
  const commit = execFileSync('git', ['-C', absolute, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  return { dir: absolute, commit, name: `switchyard@${commit}` };
}

/** Starts one switchyard router over `backends`; `args` adds or overrides flags. */
export async function startRouterSystem(
  backends: readonly string[],
  options: {
    readonly core?: number;
    readonly args?: readonly string[];
    readonly name?: string;
    /** Node flags, e.g. `--cpu-prof`. */
    readonly nodeArgs?: readonly string[];
    /** Another checkout of switchyard to run instead of this one (its own node_modules installed), e.g. a worktree of an earlier commit. */
    readonly checkout?: RouterCheckout;
  } = {},
): Promise<System> {
  const args = ['serve', '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--log-level', 'info', '--lifecycle-pre-stop-delay-ms', '0', ...backends.flatMap((url) => ['--backend', url]), ...(options.args ?? [])];
  const router =
    options.checkout === undefined
      ? await spawnSwitchyard(args, { core: options.core, nodeArgs: options.nodeArgs })
      : await spawnSwitchyard(args, { script: join(options.checkout.dir, 'router/cli/bin.ts'), core: options.core, nodeArgs: options.nodeArgs });
  const url = `http://127.0.0.1:${router.ports['traffic'] as number}`;
  await waitForModels(url);
  return {
    name: options.name ?? options.checkout?.name ?? 'switchyard',
    url,
    description: `switchyard serve${options.checkout === undefined ? '' : ` from ${options.checkout.dir} (commit ${options.checkout.commit})`} over ${backends.length} backend${backends.length === 1 ? '' : 's'}${options.args === undefined || options.args.length === 0 ? '' : ` with ${options.args.join(' ')}`}${options.core === undefined ? '' : `, pinned to core ${options.core}`}`,
    pids: () => (router.child.pid === undefined ? [] : [router.child.pid]),
    adminUrl: `http://127.0.0.1:${router.ports['admin'] as number}`,
    stop: async () => void (await router.stop()),
  };
}

/** Starts nginx as a plain reverse proxy over `backends`. */
export async function startNginxProxy(backends: readonly string[], core?: number): Promise<System> {
  const nginx = await startNginx({ upstreams: backends, ...(core === undefined ? {} : { core }) });
  return { name: 'nginx', url: nginx.url, description: nginx.description, pids: () => nginx.pids(), stop: () => nginx.stop() };
}

/**
 * Starts a peer router over `backends` (the vLLM project's router unless
 * `options.peer` says otherwise; round-robin unless `options.policy` says
 * otherwise, e.g. `cache_aware`), or says why it cannot run here.
 */
export async function startPeer(
  backends: readonly string[],
  model: string,
  core?: number,
  options: { readonly peer?: PeerRouterName; readonly policy?: PeerRouterPolicy } = {},
): Promise<System | { unavailable: string }> {
  const peer = await startPeerRouter({ backends, model, ...(core === undefined ? {} : { core }), ...options });
  if ('unavailable' in peer) return peer;
  return { name: options.peer ?? 'vllm-router', url: peer.url, description: peer.description, pids: () => (peer.pid === undefined ? [] : [peer.pid]), stop: () => peer.stop() };
}

/** CPU time (ms) used so far by all of `pids`. */
export function cpuMs(pids: readonly number[]): number {
  return pids.reduce((sum, pid) => sum + (cpuTimeMs(pid) ?? 0), 0);
}

/** Resident memory (bytes) of all of `pids` now, from /proc. */
export function rssBytes(pids: readonly number[]): number {
  let total = 0;
  for (const pid of pids) {
    try {
      const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (match !== null) total += Number(match[1]) * 1024;
    } catch {
      // the process is gone: it holds no memory
    }
  }
  return total;
}

/**
 * The engine directly, nginx, switchyard and (when it installs here) the
 * vLLM project's router, all over the same engines; the proxies pinned to
 * `core` when given. The router runs with the safe start off: these
 * comparisons measure the proxy, and the benchmark engine's 100,000 slots
 * never show the queue that would hand the limit over, while its first
 * bytes come late whenever the core it shares with the load generator is
 * full, which the safe start reads as an engine falling behind (it then
 * queued 132-342 of 1,000 streams a round and held them ~2 s; `bench
 * cold-start` measures the safe start itself).
 */
export async function startComparedSystems(
  engines: Engines,
  model: string,
  options: { readonly core?: number; readonly peer: boolean; readonly routerNodeArgs?: readonly string[]; /** An earlier switchyard to measure beside this one. */ readonly before?: RouterCheckout | undefined },
): Promise<System[]> {
  const routerOptions = { args: SAFE_START_OFF, ...(options.core === undefined ? {} : { core: options.core }), ...(options.routerNodeArgs === undefined ? {} : { nodeArgs: options.routerNodeArgs }) };
  const systems: System[] = [direct(engines)];
  try {
    systems.push(await startNginxProxy(engines.urls, options.core));
    systems.push(await startRouterSystem(engines.urls, routerOptions));
    if (options.before !== undefined) systems.push(await startRouterSystem(engines.urls, { ...routerOptions, checkout: options.before }));
    const peer = options.peer ? await startPeer(engines.urls, model, options.core) : { unavailable: 'turned off with --peer off' };
    if ('unavailable' in peer) console.error(`peer router skipped: ${peer.unavailable}`);
    else systems.push(peer);
  } catch (err) {
    await stopAll(systems);
    throw err;
  }
  return systems;
}

/**
 * The Node flags that write a process's V8 CPU profile into `dir` when it
 * stops; none when `dir` is undefined (the scenario was not asked to profile).
 */
export function cpuProfileArgs(dir: string | undefined): string[] {
  return dir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${dir}`];
}

/** The name reports give the bare forwarder. */
export const BARE_FORWARDER_NAME = 'bare node:http + undici';
const BARE_FORWARDER = fileURLToPath(new URL('./baselines/bare-forwarder.ts', import.meta.url));

/**
 * Starts the bare `node:http` + undici forwarder over `upstream`
 * (loadtest/scenarios/baselines/bare-forwarder.ts): the floor Node allows, so what
 * switchyard shows above it is the router's own. `nodeArgs` are Node flags,
 * e.g. `--cpu-prof`.
 */
export async function startBareForwarder(upstream: string, core: number | undefined, nodeArgs: readonly string[] = []): Promise<System> {
  const child = await spawnSwitchyard(['--listen', '127.0.0.1:0', '--upstream', upstream], { script: BARE_FORWARDER, marker: 'bare forwarder listening', core, nodeArgs });
  const pid = child.child.pid;
  return {
    name: BARE_FORWARDER_NAME,
    url: `http://127.0.0.1:${child.ports['port'] as number}`,
    description: `loadtest/scenarios/baselines/bare-forwarder.ts (node:http, undici Pool.dispatch, no routing)${core === undefined ? '' : `, pinned to core ${core}`}`,
    pids: () => (pid === undefined ? [] : [pid]),
    stop: async () => void (await child.stop()),
  };
}

/** Stops every system, in order. */
export async function stopAll(systems: readonly System[]): Promise<void> {
  for (const system of systems) await system.stop();
}

/**
 * Busy, stolen and total jiffies so far of one CPU core, or of the whole
 * machine without `core`, from /proc/stat; undefined elsewhere. Steal is
 * time the hypervisor gave this virtual CPU's turn to someone else: the
 * process on it was ready and did not run, and no process here caused it.
 */
export function coreTimes(core?: number): { busy: number; steal: number; total: number } | undefined {
  try {
    const prefix = core === undefined ? 'cpu ' : `cpu${core} `;
    const line = readFileSync('/proc/stat', 'utf8')
      .split('\n')
      .find((l) => l.startsWith(prefix));
    if (line === undefined) return undefined;
    // user nice system idle iowait irq softirq steal ...
    const fields = line.trim().split(/\s+/).slice(1).map(Number);
    const total = fields.slice(0, 8).reduce((a, b) => a + b, 0);
    const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
    return { busy: total - idle, steal: fields[7] ?? 0, total };
  } catch {
    return undefined;
  }
}
