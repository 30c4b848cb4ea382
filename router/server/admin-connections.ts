/**
 * The admin port's connection cap. The admin port had none, and it shares
 * the process's open-file limit with the traffic port: with a 1,024-descriptor
 * limit, 1,100 idle admin connections left the traffic port unable to accept
 * (its connections reset), and 8,000 half-sent admin requests cost 75 MiB.
 * The cap is reserved in the descriptor budget (admission/router-pressure.ts)
 * so traffic keeps its share whatever the admin port holds.
 *
 * The probes must still get through at the cap, so a new connection evicts
 * the oldest quiet one rather than being refused: quiet is a connection with
 * no request being answered, that is, idle after its last answer or not yet
 * done sending its first request. The admin port's real clients (kubelet,
 * Prometheus, an operator's curl) send their request as soon as they connect
 * and are answered in milliseconds, so the oldest quiet connection is the one
 * least likely to be one of them; closing it loses no answer. Only when every
 * connection is being answered is the newcomer closed instead, which keeps
 * the cap hard.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export class AdminConnectionCap {
  readonly #max: number;
  /** Every counted connection. */
  readonly #open = new Set<Socket>();
  /** Counted connections with no request being answered, oldest quiet first (a Set iterates in insertion order). */
  readonly #quiet = new Set<Socket>();
  #evicted = 0;
  #refused = 0;

  /** @param maxConnections open admin connections at most (≥ 1). */
  constructor(maxConnections: number) {
    this.#max = Math.max(1, maxConnections);
  }

  /** Open connections counted. */
  get count(): number {
    return this.#open.size;
  }

  /** Quiet connections closed to make room, since start. */
  get evicted(): number {
    return this.#evicted;
  }

  /** New connections closed because every counted one was being answered, since start. */
  get refused(): number {
    return this.#refused;
  }

  /** Call for every accepted connection (the server's 'connection' event). */
  accept(socket: Socket): void {
    if (this.#open.size >= this.#max && !this.#evictQuiet()) {
      this.#refused++;
      socket.destroy();
      return;
    }
    this.#open.add(socket);
    this.#quiet.add(socket);
    socket.once('close', () => {
      this.#open.delete(socket);
      this.#quiet.delete(socket);
    });
  }

  /** Call at the start of every request: its connection is not quiet until the answer is over. */
  begin(req: IncomingMessage, res: ServerResponse): void {
    const socket = req.socket;
    this.#quiet.delete(socket);
    res.once('close', () => {
      // To the end: now the most recently quiet.
      if (!socket.destroyed && this.#open.has(socket)) this.#quiet.add(socket);
    });
  }

  #evictQuiet(): boolean {
    const oldest = this.#quiet.values().next();
    if (oldest.done === true) return false;
    // Uncounted at once: its descriptor goes with the destroy, and its 'close' comes later.
    this.#quiet.delete(oldest.value);
    this.#open.delete(oldest.value);
    this.#evicted++;
    oldest.value.destroy();
    return true;
  }
}
