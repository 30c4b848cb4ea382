/**
 * A pod network for one container run by the in-cluster validation: a
 * network namespace joined to this one by a veth pair, host side
 * 10.252.0.1/30 (where the engine simulators listen, as "pod IPs"), namespace
 * side 10.252.0.2/30 (the router pod's IP: its rendered 0.0.0.0 ports bind
 * there, unchanged). The kube-apiserver listens on the host's loopback, so a
 * relay inside the namespace listens on 127.0.0.1:<api port> (an address the
 * serving certificate names) and forwards through the veth to a relay on
 * 10.252.0.1 that forwards to the apiserver.
 *
 * Traffic stays on this machine: the namespace has no default route, and an
 * `unreachable` route covers 10.252.0.0/16 on the host, so a packet for an
 * address whose veth is gone fails locally. `destroy()` removes everything;
 * an exit handler does the same if the test process dies first, and
 * `create()` first removes leftovers of runs whose process is gone.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { ip, tryIp } from '../kit/netns.ts';

const GUARD_ROUTE = '10.252.0.0/16';
/** Host side of the veth: where the engine simulators listen. */
export const HOST_ADDRESS = '10.252.0.1';
/** Namespace side: the pod's IP. */
export const POD_ADDRESS = '10.252.0.2';
const RELAY = fileURLToPath(new URL('./tcp-relay.ts', import.meta.url));

/** One network namespace with a veth pair and the apiserver relays. */
export class PodNetwork {
  readonly netns = `sy-chart-${process.pid}`;
  readonly #outside = `syc${process.pid}h`;
  readonly #relayServer: Server;
  readonly #sockets = new Set<Socket>();
  #relay: ChildProcess | undefined;
  #destroyed = false;
  readonly #onExit = () => this.#cleanupSync();

  private constructor(apiPort: number) {
    process.on('exit', this.#onExit);
    this.#relayServer = createServer((client) => {
      const upstream = connect(apiPort, '127.0.0.1');
      for (const socket of [client, upstream]) {
        this.#sockets.add(socket);
        socket.once('close', () => this.#sockets.delete(socket));
      }
      client.pipe(upstream).pipe(client);
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
    });
  }

  /** Creates the namespace, the veth pair and both relays for the apiserver on 127.0.0.1:`apiPort`. */
  static async create(apiPort: number): Promise<PodNetwork> {
    removeLeftovers();
    const network = new PodNetwork(apiPort);
    try {
      const inside = `syc${process.pid}n`;
      tryIp('route', 'replace', 'unreachable', GUARD_ROUTE);
      ip('netns', 'add', network.netns);
      ip('link', 'add', network.#outside, 'type', 'veth', 'peer', 'name', inside);
      ip('link', 'set', inside, 'netns', network.netns);
      ip('addr', 'add', `${HOST_ADDRESS}/30`, 'dev', network.#outside);
      ip('link', 'set', network.#outside, 'up');
      ip('-n', network.netns, 'addr', 'add', `${POD_ADDRESS}/30`, 'dev', inside);
      ip('-n', network.netns, 'link', 'set', inside, 'up');
      ip('-n', network.netns, 'link', 'set', 'lo', 'up');
      network.#relayServer.listen(apiPort, HOST_ADDRESS);
      await once(network.#relayServer, 'listening');
      const relay = spawn('ip', ['netns', 'exec', network.netns, process.execPath, RELAY, `127.0.0.1:${apiPort}`, `${HOST_ADDRESS}:${apiPort}`], { stdio: ['ignore', 'pipe', 'inherit'] });
      network.#relay = relay;
      await new Promise<void>((resolve, reject) => {
        relay.stdout?.once('data', () => resolve());
        relay.once('exit', (code) => reject(new Error(`the apiserver relay in ${network.netns} exited with ${code}`)));
      });
    } catch (err) {
      await network.destroy();
      throw err;
    }
    return network;
  }

  /** Stops the relays and removes the namespace, the veth pair and the guard route. */
  async destroy(): Promise<void> {
    const relay = this.#relay;
    if (relay !== undefined && relay.exitCode === null && relay.signalCode === null) {
      relay.kill('SIGKILL');
      await once(relay, 'exit');
    }
    for (const socket of this.#sockets) socket.destroy();
    if (this.#relayServer.listening) await new Promise((resolve) => this.#relayServer.close(resolve));
    this.#cleanupSync();
  }

  #cleanupSync(): void {
    if (this.#destroyed) return;
    this.#destroyed = true;
    process.off('exit', this.#onExit);
    this.#relay?.kill('SIGKILL');
    // Deleting the namespace destroys the veth end inside it, and so its peer.
    tryIp('netns', 'del', this.netns);
    tryIp('route', 'del', 'unreachable', GUARD_ROUTE);
  }
}

/** Removes namespaces (and the guard route) left by earlier runs whose process is gone. */
function removeLeftovers(): void {
  let stale = false;
  for (const line of ip('netns', 'list').split('\n')) {
    const match = /^(sy-chart-(\d+))/.exec(line);
    if (match === null) continue;
    try {
      process.kill(Number(match[2]), 0);
      continue; // its owner still runs
    } catch {
      // owner gone
    }
    tryIp('netns', 'del', match[1] as string);
    stale = true;
  }
  if (stale) tryIp('route', 'del', 'unreachable', GUARD_ROUTE);
}
