/**
 * Test hosts with non-loopback addresses, for EndpointSlices (which reject
 * 127.0.0.0/8): one network namespace per host, joined to this namespace by
 * a veth pair, host side 10.251.N.1/30, namespace side 10.251.N.2/30, an
 * engine simulator listening inside on 10.251.N.2:8000 (started by the kit's one spawner).
 *
 * Traffic goes only to namespaces created here. As a safety net, an
 * `unreachable` route covers all of 10.251.0.0/16, so if a veth is already
 * gone, packets to its address fail locally instead of leaving the machine.
 * `destroy()` removes everything; an exit handler does the same if the test
 * process dies first, and `create()` first removes leftovers of runs whose
 * process is gone.
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import { spawnSwitchyard } from './router-process.ts';

const PREFIX = '10.251';
const GUARD_ROUTE = `${PREFIX}.0.0/16`;
// A signal (the test runner's timeout, Ctrl-C) becomes a normal exit, so exit handlers clean up.
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
  if (process.listenerCount(signal) === 0) process.once(signal, () => process.exit(128 + (signal === 'SIGTERM' ? 15 : signal === 'SIGINT' ? 2 : 1)));
}

/** Runs `ip ARGS` (iproute2) and returns its output. @throws on a non-zero exit. */
export function ip(...args: string[]): string {
  return execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Runs `ip ARGS` for cleanup: a failure (the thing is already gone) is ignored. */
export function tryIp(...args: string[]): void {
  try {
    ip(...args);
  } catch {
    // already gone
  }
}

/** One test host. */
export interface NetnsHost {
  readonly netns: string;
  /** Address inside the namespace, where the simulator listens. */
  readonly address: string;
  /** `http://ADDRESS:8000`. */
  readonly url: string;
}

/** Test hosts in network namespaces, each running an engine simulator. */
export class NetnsHosts {
  readonly hosts: NetnsHost[] = [];
  readonly #sims: ChildProcess[] = [];
  #destroyed = false;
  readonly #onExit = () => this.#cleanupSync();

  private constructor() {
    process.on('exit', this.#onExit);
  }

  /** Creates `count` hosts and starts a simulator of `model` in each; resolves when every simulator answers. */
  static async create(count: number, model: string): Promise<NetnsHosts> {
    removeLeftovers();
    const hosts = new NetnsHosts();
    try {
      ip('route', 'replace', 'unreachable', GUARD_ROUTE);
      for (let i = 0; i < count; i++) hosts.#addHost(i);
      await Promise.all(hosts.hosts.map((host) => hosts.#startSim(host, model)));
    } catch (err) {
      await hosts.destroy();
      throw err;
    }
    return hosts;
  }

  /** Stops the simulators and removes the namespaces, veth pairs and the guard route. */
  async destroy(): Promise<void> {
    const exits = this.#sims.map((sim) => (sim.exitCode !== null || sim.signalCode !== null ? Promise.resolve() : new Promise<void>((resolve) => sim.once('exit', () => resolve()))));
    for (const sim of this.#sims) sim.kill('SIGKILL');
    await Promise.all(exits);
    this.#cleanupSync();
  }

  #addHost(i: number): void {
    const netns = `sy-e2e-${process.pid}-${i}`;
    const outside = `sy${process.pid}h${i}`;
    const inside = `sy${process.pid}n${i}`;
    const address = `${PREFIX}.${i}.2`;
    ip('netns', 'add', netns);
    this.hosts.push({ netns, address, url: `http://${address}:8000` });
    ip('link', 'add', outside, 'type', 'veth', 'peer', 'name', inside);
    ip('link', 'set', inside, 'netns', netns);
    ip('addr', 'add', `${PREFIX}.${i}.1/30`, 'dev', outside);
    ip('link', 'set', outside, 'up');
    ip('-n', netns, 'addr', 'add', `${address}/30`, 'dev', inside);
    ip('-n', netns, 'link', 'set', inside, 'up');
    ip('-n', netns, 'link', 'set', 'lo', 'up');
  }

  async #startSim(host: NetnsHost, model: string): Promise<void> {
    const sim = await spawnSwitchyard(['sim', '--listen', `${host.address}:8000`, '--model', model, '--ttft-ms', '0', '--itl-ms', '1', '--output-tokens', '4'], {
      launcher: ['ip', 'netns', 'exec', host.netns],
      marker: 'engine simulator listening',
      timeoutMs: 15_000,
    });
    this.#sims.push(sim.child);
  }

  #cleanupSync(): void {
    if (this.#destroyed) return;
    this.#destroyed = true;
    process.off('exit', this.#onExit);
    for (const sim of this.#sims) sim.kill('SIGKILL');
    // Deleting a namespace destroys the veth end inside it, and so its peer.
    for (const host of this.hosts) tryIp('netns', 'del', host.netns);
    tryIp('route', 'del', 'unreachable', GUARD_ROUTE);
  }
}

/** Removes namespaces (and the guard route) left by earlier runs whose process is gone. */
function removeLeftovers(): void {
  let stale = false;
  for (const line of ip('netns', 'list').split('\n')) {
    const match = /^(sy-e2e-(\d+)-\d+)/.exec(line);
    if (match === null) continue;
    if (isAlive(Number(match[2]))) continue;
    tryIp('netns', 'del', match[1] as string);
    stale = true;
  }
  if (stale) tryIp('route', 'del', 'unreachable', GUARD_ROUTE);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Reads a counter or gauge value from a Prometheus text body (first matching series). */
export function metricValue(text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(name) && (l[name.length] === '{' || l[name.length] === ' '));
  return line === undefined ? NaN : Number(line.slice(line.lastIndexOf(' ') + 1));
}
