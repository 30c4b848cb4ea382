/**
 * Keeps one client from holding the traffic port's connection cap cheaply.
 * An idle keep-alive socket used to count toward `admission.maxConnections`
 * for the whole keep-alive timeout (650 s), so a client could open sockets,
 * send nothing more, and leave every newcomer a 429. Rules:
 * - At the cap, a new connection evicts the longest-idle keep-alive
 *   connection (one that has been answered and has no request in progress):
 *   closing it loses no request, and is what its keep-alive timeout would do
 *   anyway. A connection that has not sent its first request yet is not
 *   idle: its request may be on the wire (the headers timeout bounds it).
 * - Optionally, one client address may hold at most `maxPerClient`
 *   connections; requests on the ones beyond get 429 and their connection
 *   closes (never a reset). Off by default: clients behind one proxy or NAT
 *   share an address.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** Limits of the guard. */
export interface ConnectionGuardLimits {
  /** Router-wide connection cap; at it, idle connections are evicted first. */
  readonly maxConnections: number;
  /** Connections one client address may hold (0: no limit). */
  readonly maxPerClient: number;
}

/** Tracks the traffic port's connections: count, idleness, per-address share. */
export class ConnectionGuard {
  readonly #limits: ConnectionGuardLimits;
  /** Answered connections with no request in progress, longest-idle first (a Set iterates in insertion order). */
  readonly #idle = new Set<Socket>();
  readonly #perClient = new Map<string, number>();
  readonly #overLimit = new WeakSet<Socket>();
  #count = 0;
  #evicted = 0;

  constructor(limits: ConnectionGuardLimits) {
    this.#limits = limits;
  }

  /** Open connections. */
  get count(): number {
    return this.#count;
  }

  /** Idle connections closed to make room, since start. */
  get evicted(): number {
    return this.#evicted;
  }

  /** Call for every accepted connection (the server's 'connection' event). */
  accept(socket: Socket): void {
    this.#count++;
    if (this.#count > this.#limits.maxConnections) this.#evictIdle();
    const address = socket.remoteAddress ?? '';
    if (this.#limits.maxPerClient > 0) {
      const held = (this.#perClient.get(address) ?? 0) + 1;
      this.#perClient.set(address, held);
      if (held > this.#limits.maxPerClient) this.#overLimit.add(socket);
    }
    socket.once('close', () => {
      this.#count--;
      this.#idle.delete(socket);
      if (this.#limits.maxPerClient > 0) {
        const held = (this.#perClient.get(address) ?? 1) - 1;
        if (held === 0) this.#perClient.delete(address);
        else this.#perClient.set(address, held);
      }
    });
  }

  /**
   * Call at the start of every request: marks its connection busy until the
   * response is over. False when the connection is beyond its client's share
   * (answer 429 with `Connection: close`).
   */
  begin(req: IncomingMessage, res: ServerResponse): boolean {
    const socket = req.socket;
    this.#idle.delete(socket);
    res.once('close', () => {
      if (!socket.destroyed) this.#idle.add(socket); // to the end: now the most recently idle
    });
    return !this.#overLimit.has(socket);
  }

  #evictIdle(): void {
    const oldest = this.#idle.values().next();
    if (oldest.done === true) return;
    this.#idle.delete(oldest.value);
    this.#evicted++;
    oldest.value.destroy();
  }
}
