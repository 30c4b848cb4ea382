import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type { EndpointSetListener, EndpointSource } from '../../discovery/endpoint.ts';
import { loadConfig } from '../../router/config/load.ts';
import { Router } from '../../router/compose.ts';
import { createLogger } from '../../router/log.ts';
import { errorOf, postJson, send, startFleet, waitFor, type Fleet } from '../kit/harness.ts';

describe('routing by model', () => {
  let fleet: Fleet;
  before(async () => {
    fleet = await startFleet([
      { model: 'alpha', knobs: { ttftMs: 0, itlMs: 0 } },
      { model: 'alpha', knobs: { ttftMs: 0, itlMs: 0 } },
      { model: 'beta', knobs: { ttftMs: 0, itlMs: 0 } },
    ]);
  });
  after(() => fleet.close());

  it('lists the union of models served by ready endpoints in OpenAI list shape', async () => {
    const response = await send(`${fleet.base}/v1/models`, { method: 'GET' });
    const list = JSON.parse(response.body.toString('utf8')) as { object: string; data: { id: string; object: string }[] };
    assert.equal(list.object, 'list');
    assert.deepEqual(list.data.map((m) => m.id), ['alpha', 'beta']);
    assert.ok(list.data.every((m) => m.object === 'model'));
  });

  it('sends each request only to endpoints serving its model, spreading over them', async () => {
    const [a1, a2, b] = fleet.engines as [NonNullable<Fleet['engines'][0]>, NonNullable<Fleet['engines'][0]>, NonNullable<Fleet['engines'][0]>];
    const before = [a1.requests, a2.requests, b.requests];
    for (let i = 0; i < 40; i++) assert.equal((await postJson(`${fleet.base}/v1/completions`, { model: 'alpha', prompt: 'x' })).status, 200);
    for (let i = 0; i < 5; i++) assert.equal((await postJson(`${fleet.base}/v1/embeddings`, { model: 'beta', input: 'x' })).status, 200);
    const delta = [a1.requests - (before[0] ?? 0), a2.requests - (before[1] ?? 0), b.requests - (before[2] ?? 0)];
    assert.equal((delta[0] ?? 0) + (delta[1] ?? 0), 40);
    assert.ok((delta[0] ?? 0) >= 5 && (delta[1] ?? 0) >= 5, `ties broken at random: ${delta.join(',')}`);
    assert.equal(delta[2], 5);
  });

  it('routes a multipart audio upload by its model form field, forwarding it as-is', async () => {
    const boundary = 'XyZ123';
    const body = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\n`),
      Buffer.from([0x52, 0x49, 0x46, 0x46, 0xff, 0x00, 0xfe]),
      Buffer.from(`\r\n--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\nbeta\r\n--${boundary}--\r\n`),
    ]);
    const response = await send(`${fleet.base}/v1/audio/transcriptions`, {
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'x-request-id': 'audio-1' },
      body,
    });
    assert.equal(response.status, 200);
    const received = fleet.engines[2]?.received('audio-1');
    assert.equal(received?.path, '/v1/audio/transcriptions');
    assert.equal(received?.bodyBytes, body.length);
  });

  it('asks for a model when a multipart upload names none and the fleet serves several', async () => {
    const boundary = 'b';
    const response = await send(`${fleet.base}/v1/audio/transcriptions`, {
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      body: `--${boundary}\r\nContent-Disposition: form-data; name="file"\r\n\r\nxx\r\n--${boundary}--\r\n`,
    });
    assert.equal(response.status, 400);
    assert.equal(errorOf(response).code, 'SWITCHYARD_MISSING_MODEL');
  });

  it('strips hop-by-hop headers, sets X-Forwarded-*, and forwards the client Authorization by default', async () => {
    const response = await postJson(`${fleet.base}/v1/chat/completions`, { model: 'beta' }, {
      'x-request-id': 'hdr-1',
      connection: 'keep-alive, x-secret-hop',
      'x-secret-hop': 'must-not-pass',
      'keep-alive': 'timeout=5',
      'proxy-authorization': 'Basic abc',
      te: 'trailers',
      'x-forwarded-for': '203.0.113.9',
      authorization: 'Bearer client-key',
      'x-custom': 'kept',
    });
    assert.equal(response.status, 200);
    const headers = fleet.engines[2]?.received('hdr-1')?.headers ?? {};
    for (const name of ['x-secret-hop', 'keep-alive', 'proxy-authorization', 'te']) assert.equal(headers[name], undefined, name);
    assert.equal(headers['x-custom'], 'kept');
    // The client is not a trusted proxy: its X-Forwarded-For is replaced by its socket address.
    assert.equal(headers['x-forwarded-for'], '127.0.0.1');
    assert.equal(headers['x-forwarded-proto'], 'http');
    assert.equal(headers['authorization'], 'Bearer client-key');
    assert.equal(headers['x-request-id'], 'hdr-1');
    assert.equal(response.headers['connection'], 'keep-alive');
  });

  it('never forwards to a URL the client names in an absolute-form target', async () => {
    const net = await import('node:net');
    const url = new URL(fleet.base);
    const body = '{"model":"beta"}';
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(Number(url.port), url.hostname, () =>
        socket.write(`POST http://198.51.100.7:81/v1/chat/completions HTTP/1.1\r\nHost: 198.51.100.7\r\nContent-Type: application/json\r\nX-Request-Id: abs-1\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`),
      );
      const chunks: Buffer[] = [];
      socket.on('data', (c: Buffer) => chunks.push(c));
      socket.on('close', () => resolve(Buffer.concat(chunks).toString()));
      socket.on('error', reject);
    });
    assert.match(raw, /^HTTP\/1.1 200/);
    assert.equal(fleet.engines[2]?.received('abs-1')?.path, '/v1/chat/completions');
  });
});

describe('engine credentials', () => {
  let fleet: Fleet;
  before(async () => {
    fleet = await startFleet([{ model: 'gamma', knobs: { ttftMs: 0, itlMs: 0 } }], ['--upstream-api-key', 'engine-secret']);
  });
  after(() => fleet.close());

  it('sends the configured engine key instead of the client\'s', async () => {
    await postJson(`${fleet.base}/v1/chat/completions`, { model: 'gamma' }, { 'x-request-id': 'auth-1', authorization: 'Bearer client' });
    assert.equal(fleet.engines[0]?.received('auth-1')?.headers['authorization'], 'Bearer engine-secret');
  });

  it('never shows the key in /debug/endpoints or /metrics', async () => {
    const debug = await (await fetch(`${fleet.admin}/debug/endpoints`)).text();
    const metrics = await (await fetch(`${fleet.admin}/metrics`)).text();
    assert.doesNotMatch(debug + metrics, /engine-secret/);
  });
});

/** A source whose sets the test pushes by hand. */
class ManualSource implements EndpointSource {
  listener: EndpointSetListener | undefined;
  start(listener: EndpointSetListener): void {
    this.listener = listener;
  }
  stop(): Promise<void> {
    return Promise.resolve();
  }
}

describe('readiness and endpoint availability', () => {
  const source = new ManualSource();
  let router: Router;
  let base = '';
  let admin = '';
  before(async () => {
    const loaded = loadConfig(['--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0'], {});
    if (loaded.kind !== 'config') throw new Error('help');
    const logger = createLogger('silent', new Writable({ write: (_c, _e, done) => done() }));
    router = new Router(loaded.config, { source, logger });
    const ports = await router.start();
    base = `http://127.0.0.1:${ports.traffic}`;
    admin = `http://127.0.0.1:${ports.admin}`;
  });
  after(() => router.close());

  it('is live but not ready until discovery produced its first set, then ready even with no endpoints', async () => {
    assert.equal((await fetch(`${admin}/livez`)).status, 200);
    assert.equal((await fetch(`${admin}/readyz`)).status, 503);
    source.listener?.({ version: 1, endpoints: [] });
    await waitFor(() => router.view.synced);
    assert.equal((await fetch(`${admin}/readyz`)).status, 200);
    assert.equal((await fetch(`${base}/readyz`)).status, 200);
  });

  it('answers 503 with Retry-After for a known model whose endpoints are all not ready', async () => {
    source.listener?.({
      version: 2,
      endpoints: [{ id: 'e1', url: 'http://127.0.0.1:9', models: ['delta'], labels: {}, ready: false, draining: false }],
    });
    const response = await postJson(`${base}/v1/chat/completions`, { model: 'delta' });
    assert.equal(response.status, 503);
    assert.equal(errorOf(response).code, 'SWITCHYARD_NO_ENDPOINT');
    assert.ok(Number(response.headers['retry-after']) >= 1);
    assert.equal((await fetch(`${admin}/readyz`)).status, 200, 'backend health never affects readiness');
  });
});
