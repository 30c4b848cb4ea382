/**
 * The admin port, served from a worker thread (see probe-worker.ts) so that
 * probes never wait behind inference traffic on the main event loop. The
 * main thread beats a heartbeat, publishes readiness, and answers the other
 * admin paths (metrics, debug) through the Hono admin app. With a token,
 * the worker refuses those paths without it (see admin-auth.ts).
 */
import { Worker } from 'node:worker_threads';
import { parseHostPort } from '../config/host-port.ts';
import { errorResponse } from '../errors/error-answer.ts';
import { SwitchyardError } from '../errors/errors.ts';
import { adminTokenDigest } from './admin-auth.ts';
import { PROBE_STATE, PROBE_STATE_SLOTS, SHARED_STATE_CODES, type AdminRequestMessage, type AdminResponseMessage, type ProbeWorkerData } from './probe-protocol.ts';
import type { ReadinessState } from './health.ts';

/** How often the main thread beats (ms). */
const HEARTBEAT_MS = 100;

/** Options of {@link AdminPort}. */
export interface AdminPortOptions {
  /** HOST:PORT. */
  readonly address: string;
  /** `/livez` fails once the main event loop has not run for this long (ms). */
  readonly livenessStallMs: number;
  /** Answers a non-probe admin request (the Hono admin app's fetch). */
  readonly fetch: (request: Request) => Response | Promise<Response>;
  readonly readiness: () => ReadinessState;
  /** Bearer token every path but `/livez` and `/readyz` needs; undefined: open. Only its digest reaches the worker. */
  readonly token?: string | undefined;
  /** Open admin connections at most, fitted to the open-file limit (see admin-connections.ts). */
  readonly maxConnections: number;
}

export class AdminPort {
  readonly #options: AdminPortOptions;
  readonly #state = new BigInt64Array(new SharedArrayBuffer(PROBE_STATE_SLOTS * 8));
  #worker: Worker | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: AdminPortOptions) {
    this.#options = options;
  }

  /** Starts the worker; resolves with the bound port. */
  async start(): Promise<number> {
    const { host, port } = parseHostPort(this.#options.address);
    const data: ProbeWorkerData = {
      host,
      port,
      state: this.#state.buffer,
      livenessStallMs: this.#options.livenessStallMs,
      tokenSha256: this.#options.token === undefined ? undefined : adminTokenDigest(this.#options.token),
      maxConnections: this.#options.maxConnections,
    };
    this.publish();
    this.#timer = setInterval(() => this.publish(), HEARTBEAT_MS);
    this.#timer.unref();
    const worker = new Worker(new URL('./probe-worker.ts', import.meta.url), { workerData: data });
    this.#worker = worker;
    worker.unref();
    return new Promise((resolve, reject) => {
      worker.on('message', (message: AdminRequestMessage | { listening: number } | { error: string }) => {
        if ('listening' in message) resolve(message.listening);
        else if ('error' in message) reject(new Error(`admin port: ${message.error}`));
        else void this.#answer(worker, message);
      });
      worker.once('error', reject);
    });
  }

  /** Beats the heartbeat and publishes readiness; call at once when readiness changes. */
  publish(): void {
    const ready = this.#options.readiness();
    Atomics.store(this.#state, PROBE_STATE.heartbeat, BigInt(Date.now()));
    Atomics.store(this.#state, PROBE_STATE.synced, ready.discoverySynced ? 1n : 0n);
    Atomics.store(this.#state, PROBE_STATE.draining, ready.draining ? 1n : 0n);
    Atomics.store(this.#state, PROBE_STATE.sharedState, BigInt(SHARED_STATE_CODES.indexOf(ready.sharedState ?? 'off')));
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#worker?.terminate();
  }

  async #answer(worker: Worker, message: AdminRequestMessage): Promise<void> {
    let reply: AdminResponseMessage;
    try {
      reply = await replyOf(message.id, await this.#options.fetch(new Request(`http://admin${message.url}`, { method: message.method })));
    } catch {
      reply = await replyOf(message.id, errorResponse(ADMIN_REQUEST_FAILED));
    }
    worker.postMessage(reply, [reply.body]);
  }
}

/** The answer when the admin app threw or its body failed: a 500 that names nothing inside. */
const ADMIN_REQUEST_FAILED = new SwitchyardError('SWITCHYARD_INTERNAL', 'admin request failed');

/** `response` as the message the worker writes out (the body is transferred, not copied). */
async function replyOf(id: number, response: Response): Promise<AdminResponseMessage> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => (headers[name] = value));
  return { id, status: response.status, headers, body: await response.arrayBuffer() };
}
