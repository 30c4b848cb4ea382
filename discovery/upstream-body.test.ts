import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { Agent } from 'undici';
import { KubeApi, KubeApiError } from './kubernetes/kube-api.ts';
import { httpModelFetcher } from './model-probe.ts';
import { fetchText, upstreamGet } from './upstream-body.ts';

const STATUSES = [200, 401, 404, 500, 503] as const;
/** `long` streams past every cap (chunked); `declared` says so in Content-Length; `truncated` promises more than it sends, then drops the socket. */
const BODIES = ['empty', 'short', 'long', 'declared', 'truncated'] as const;
type BodyKind = (typeof BODIES)[number];

const CAP_BYTES = 64 * 1024; // scrape and Kubernetes caps in this test
const LONG_BYTES = 1536 * 1024; // past the model probe's fixed 1 MiB cap too
const TIMEOUT_MS = 2_000;
const SETTLE_MS = 5_000;

/** The short body a real peer would send on that path with that status. */
function shortBody(path: string, status: number): string {
  if (status !== 200) return JSON.stringify({ kind: 'Status', code: status, reason: 'Refused', message: 'injected' });
  if (path.endsWith('/metrics')) return 'vllm:num_requests_waiting{model_name="m"} 0\n';
  if (path.endsWith('/v1/models')) return JSON.stringify({ object: 'list', data: [{ id: 'm' }] });
  if (path.endsWith('watch')) return `${JSON.stringify({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '8' } } })}\n`;
  return JSON.stringify({ kind: 'PodList', metadata: { resourceVersion: '7' }, items: [] });
}

/**
 * A real HTTP peer on 127.0.0.1 that answers by case: `/case/<status>/<body>/…`
 * on the engine paths, `?case=<status>-<body>` on the Kubernetes ones.
 */
class Peer {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  connections = 0;
  base = '';

  constructor() {
    this.#server = createServer((req, res) => this.#answer(req, res));
    this.#server.on('connection', (socket: Socket) => {
      this.connections++;
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #answer(req: IncomingMessage, res: ServerResponse): void {
    res.on('error', () => {}); // the client cuts long bodies short on purpose
    const url = new URL(req.url ?? '/', 'http://peer');
    const [, , statusText, kind] = url.pathname.split('/');
    const picked = url.searchParams.get('case')?.split('-') ?? [statusText, kind];
    const status = Number(picked[0]);
    const body = picked[1] as BodyKind;
    const path = url.pathname + (url.searchParams.get('watch') === 'true' ? 'watch' : '');
    const short = shortBody(path, status);
    switch (body) {
      case 'empty':
        res.writeHead(status, { 'content-length': '0' }).end();
        return;
      case 'short':
        res.writeHead(status, { 'content-type': 'application/json' }).end(short);
        return;
      case 'long':
        res.writeHead(status); // no length: chunked, so the cap is met mid-transfer
        res.write('x'.repeat(LONG_BYTES));
        res.end();
        return;
      case 'declared':
        res.writeHead(status, { 'content-length': String(LONG_BYTES) }).end('x'.repeat(LONG_BYTES));
        return;
      case 'truncated':
        res.writeHead(status, { 'content-length': String(short.length + 100_000) });
        res.write(short.slice(0, 10), () => res.socket?.destroy());
        return;
    }
  }
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: Error };

/** Waits for `promise` to settle; fails the test when it has not within SETTLE_MS. */
async function settle(promise: Promise<unknown>): Promise<Outcome> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`did not settle within ${SETTLE_MS} ms`)), SETTLE_MS);
  });
  try {
    return await Promise.race([
      promise.then(
        (value): Outcome => ({ ok: true, value }),
        (error: unknown): Outcome => {
          assert.ok(error instanceof Error, `rejects with an Error, got ${String(error)}`);
          return { ok: false, error };
        },
      ),
      deadline,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function assertRejects(outcome: Outcome, pattern: RegExp, label: string): void {
  assert.equal(outcome.ok, false, `${label}: should reject`);
  if (!outcome.ok) assert.match(outcome.error.message, pattern, label);
}

describe('upstream bodies: every status and body shape settles, nothing escapes as an uncaught error', () => {
  const peer = new Peer();
  // One connection: the follow-up call after each case can only succeed if that case released it.
  const agent = new Agent({ connections: 1 });
  const uncaught: unknown[] = [];
  const record = (err: unknown) => uncaught.push(err);
  let kube: KubeApi;

  before(async () => {
    process.on('uncaughtException', record);
    process.on('unhandledRejection', record);
    await peer.listen();
    const config = new KubeConfig();
    config.loadFromOptions({
      clusters: [{ name: 'c', server: peer.base, skipTLSVerify: true }], // client-node refuses plain HTTP without it
      users: [{ name: 'u', token: 'tok' }],
      contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
      currentContext: 'c',
    });
    kube = new KubeApi(config, { listTimeoutMs: TIMEOUT_MS, maxListBytes: CAP_BYTES, maxLineBytes: CAP_BYTES });
  });

  after(async () => {
    process.off('uncaughtException', record);
    process.off('unhandledRejection', record);
    await kube.close();
    await agent.close();
    await peer.close();
  });

  const scrape = (status: number, body: BodyKind) =>
    fetchText(agent, new URL(`${peer.base}/case/${status}/${body}/metrics`), { timeoutMs: TIMEOUT_MS, maxBytes: CAP_BYTES, headers: { authorization: 'Bearer k' } });
  const probe = (status: number, body: BodyKind) => httpModelFetcher(agent, TIMEOUT_MS, 'Bearer k')(`${peer.base}/case/${status}/${body}`);
  const list = (status: number, body: BodyKind) => kube.list('/api/v1/pods', { case: `${status}-${body}` }, AbortSignal.timeout(TIMEOUT_MS));
  const watched: string[] = [];
  const watch = (status: number, body: BodyKind) =>
    kube.watch('/api/v1/pods', { case: `${status}-${body}` }, AbortSignal.timeout(TIMEOUT_MS), (lines) => watched.push(...lines));

  /** After each case: no uncaught error, and the same pool still answers (the case's socket was released). */
  async function assertClean(label: string, followUp: () => Promise<unknown>): Promise<void> {
    const next = await settle(followUp());
    assert.equal(next.ok, true, `${label}: the next request on the same pool succeeds (${next.ok ? '' : next.error.message})`);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(uncaught, [], `${label}: no uncaught error`);
  }

  for (const status of STATUSES) {
    it(`scrape (GET /metrics) answered ${status}`, async () => {
      for (const body of BODIES) {
        const label = `scrape ${status} ${body}`;
        const outcome = await settle(scrape(status, body));
        if (status !== 200) assertRejects(outcome, new RegExp(`^answered ${status}$`), label);
        else if (body === 'empty') assert.deepEqual(outcome, { ok: true, value: '' }, label);
        else if (body === 'short') assert.deepEqual(outcome, { ok: true, value: shortBody('/metrics', 200) }, label);
        else if (body === 'truncated') assertRejects(outcome, /./, label);
        else assertRejects(outcome, new RegExp(`^body larger than ${CAP_BYTES} bytes$`), label);
        await assertClean(label, () => scrape(200, 'short'));
      }
    });

    it(`model probe (GET /v1/models) answered ${status}`, async () => {
      for (const body of BODIES) {
        const label = `probe ${status} ${body}`;
        const outcome = await settle(probe(status, body));
        if (status !== 200) assertRejects(outcome, new RegExp(`^answered ${status}$`), label);
        else if (body === 'short') assert.deepEqual(outcome, { ok: true, value: [{ id: 'm' }] }, label);
        else if (body === 'long' || body === 'declared') assertRejects(outcome, /^body larger than 1048576 bytes$/, label);
        else assertRejects(outcome, /./, label); // empty: not JSON; truncated: cut
        await assertClean(label, () => probe(200, 'short'));
      }
    });

    it(`Kubernetes list answered ${status}`, async () => {
      for (const body of BODIES) {
        const label = `list ${status} ${body}`;
        const outcome = await settle(list(status, body));
        if (status !== 200) {
          assert.equal(outcome.ok, false, label);
          if (!outcome.ok) {
            assert.ok(outcome.error instanceof KubeApiError, `${label}: ${outcome.error.message}`);
            assert.equal(outcome.error.statusCode, status, label);
            if (body === 'short') assert.match(outcome.error.message, /\(Refused: injected\)$/, label);
          }
        } else if (body === 'short') assert.deepEqual(outcome, { ok: true, value: { items: [], resourceVersion: '7' } }, label);
        else if (body === 'long' || body === 'declared') assertRejects(outcome, new RegExp(`^list /api/v1/pods: body larger than ${CAP_BYTES} bytes$`), label);
        else assertRejects(outcome, /./, label); // empty: not JSON; truncated: cut
        // Its pool has 4 connections: a case that kept one would make a later follow-up hang.
        await assertClean(label, () => list(200, 'short'));
      }
    });

    it(`Kubernetes watch answered ${status}`, async () => {
      for (const body of BODIES) {
        const label = `watch ${status} ${body}`;
        watched.length = 0;
        const outcome = await settle(watch(status, body));
        if (status !== 200) {
          assert.equal(outcome.ok, false, label);
          if (!outcome.ok) assert.ok(outcome.error instanceof KubeApiError && outcome.error.statusCode === status, `${label}: ${outcome.error.message}`);
        } else if (body === 'empty') assert.deepEqual([outcome.ok, watched], [true, []], label);
        else if (body === 'short') assert.deepEqual([outcome.ok, watched], [true, [shortBody('watch', 200).trim()]], label);
        else if (body === 'truncated') assertRejects(outcome, /./, label);
        else assertRejects(outcome, new RegExp(`^watch /api/v1/pods: line larger than ${CAP_BYTES} bytes$`), label);
        await assertClean(label, () => watch(200, 'short'));
      }
    });
  }
});

describe('upstreamGet', () => {
  const peer = new Peer();
  before(() => peer.listen());
  after(() => peer.close());

  it('discards a short body its reader never read, keeping the connection for the next request', async () => {
    const agent = new Agent({ connections: 1 });
    try {
      const get = { url: new URL(`${peer.base}/case/401/short/metrics`), headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS };
      const before = peer.connections;
      assert.equal(await upstreamGet(agent, get, (answer) => Promise.resolve(answer.statusCode)), 401);
      assert.equal(await upstreamGet(agent, get, (answer) => answer.text(1024)), shortBody('/metrics', 401));
      assert.equal(peer.connections - before, 1, 'one connection served both');
    } finally {
      await agent.close();
    }
  });

  it('lets a reader read a body once, and only while it runs', async () => {
    const agent = new Agent();
    try {
      const get = { url: new URL(`${peer.base}/case/200/short/metrics`), headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS };
      await assert.rejects(
        upstreamGet(agent, get, async (answer) => {
          await answer.text(1024);
          return answer.text(1024);
        }),
        /read at most once/,
      );
      let kept: { text(maxBytes: number): Promise<string> } | undefined;
      await upstreamGet(agent, get, (answer) => Promise.resolve((kept = answer)));
      await assert.rejects(kept?.text(1024) ?? Promise.resolve(), /read at most once, while its reader runs/);
    } finally {
      await agent.close();
    }
  });
});
