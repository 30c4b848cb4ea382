/**
 * The admin port's listener, in a worker thread of its own. It answers
 * `/livez` and `/readyz` itself, from state the main thread shares, so
 * probes are answered in milliseconds even while the main event loop works
 * through a burst; every other admin path (metrics, debug) is handed to the
 * main thread. `/livez` still tells the truth about the main loop: it fails
 * once the main thread's heartbeat is older than the stall limit.
 *
 * With an admin token configured, the other paths are checked here, before
 * they reach the main thread (see admin-auth.ts).
 */
import { createServer, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';
import { adminAuthorized, needsAdminToken, unauthorizedAnswer } from './admin-auth.ts';
import { AdminConnectionCap } from './admin-connections.ts';
import { readiness } from './health.ts';
import { PROBE_STATE, SHARED_STATE_CODES, type AdminRequestMessage, type AdminResponseMessage, type ProbeWorkerData } from './probe-protocol.ts';

const data = workerData as ProbeWorkerData;
const state = new BigInt64Array(data.state);
const port = parentPort;
if (port === null) throw new Error('the probe worker must run in a worker thread');

const pending = new Map<number, ServerResponse>();
const connections = new AdminConnectionCap(data.maxConnections);
let nextId = 0;

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

port.on('message', (message: AdminResponseMessage) => {
  const res = pending.get(message.id);
  if (res === undefined) return;
  pending.delete(message.id);
  res.writeHead(message.status, message.headers);
  res.end(Buffer.from(message.body));
});

const server = createServer({ headersTimeout: 10_000, requestTimeout: 30_000, keepAliveTimeout: 5_000 }, (req, res) => {
  connections.begin(req, res);
  const path = (req.url ?? '/').split('?')[0];
  if (req.method === 'GET' && path === '/livez') {
    const stalledMs = Date.now() - Number(Atomics.load(state, PROBE_STATE.heartbeat));
    if (stalledMs <= data.livenessStallMs) json(res, 200, { live: true });
    else json(res, 503, { live: false, reason: `the main event loop has not run for ${stalledMs} ms` });
    return;
  }
  if (req.method === 'GET' && path === '/readyz') {
    const { status, body } = readiness({
      discoverySynced: Atomics.load(state, PROBE_STATE.synced) === 1n,
      draining: Atomics.load(state, PROBE_STATE.draining) === 1n,
      sharedState: SHARED_STATE_CODES[Number(Atomics.load(state, PROBE_STATE.sharedState))] ?? 'off',
    });
    json(res, status, body);
    return;
  }
  if (data.tokenSha256 !== undefined && needsAdminToken(path ?? '/') && !adminAuthorized(req.headers.authorization, data.tokenSha256)) {
    const answer = unauthorizedAnswer();
    res.writeHead(answer.status, answer.headers);
    res.end(answer.body);
    req.resume();
    return;
  }
  const id = nextId++;
  pending.set(id, res);
  res.once('close', () => pending.delete(id));
  const message: AdminRequestMessage = { id, method: req.method ?? 'GET', url: req.url ?? '/' };
  port.postMessage(message);
  req.resume();
});
server.on('connection', (socket: Socket) => connections.accept(socket));
server.on('clientError', (_err, socket) => socket.destroy());

server.listen({ host: data.host, port: data.port, backlog: 511 }, () => {
  const address = server.address();
  port.postMessage({ listening: typeof address === 'object' && address !== null ? address.port : data.port });
});
server.on('error', (err) => port.postMessage({ error: err.message }));
