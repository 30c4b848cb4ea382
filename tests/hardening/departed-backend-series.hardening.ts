/**
 * Series with a `backend` label must follow the endpoint's lifetime exactly:
 * once an endpoint leaves the set, nothing may bring its series back, or the
 * router's /metrics grows with every pod that ever existed. The writes that
 * used to do it arrive late: a scrape that was already out when the pod left,
 * and a stream whose engine dies after the pod left.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import type { EndpointSetListener, EndpointSource } from '../../discovery/endpoint.ts';
import { EngineSimulator } from '../../loadtest/sim/server.ts';
import { createLogger } from '../../router/log.ts';
import { send, startFleet, waitFor } from '../kit/harness.ts';

const MODEL = 'm-churn';

/** An endpoint source the test changes by hand, as pod churn changes a Kubernetes source. */
class SwitchableSource implements EndpointSource {
  #urls: readonly string[];
  #listener: EndpointSetListener | undefined;
  #version = 0;

  constructor(urls: readonly string[]) {
    this.#urls = urls;
  }

  start(listener: EndpointSetListener): void {
    this.#listener = listener;
    this.#emit();
  }

  set(urls: readonly string[]): void {
    this.#urls = urls;
    this.#emit();
  }

  stop(): Promise<void> {
    this.#listener = undefined;
    return Promise.resolve();
  }

  #emit(): void {
    this.#listener?.({
      version: ++this.#version,
      endpoints: this.#urls.map((url) => ({ id: url, url, models: undefined, labels: {}, ready: true, draining: false })),
    });
  }
}

/** A streaming chat request: resolves `firstByte` once body bytes arrive, `done` with the whole body once it ends. */
function openStream(base: string): { firstByte: Promise<void>; done: Promise<string> } {
  let markFirst!: () => void;
  const firstByte = new Promise<void>((resolve) => (markFirst = resolve));
  const done = new Promise<string>((resolve, reject) => {
    const req = request(
      `${base}/v1/chat/completions`,
      {
        method: 'POST',
        agent: false,
        // One token now, the next a minute later: the stream is open for the whole test.
        headers: { 'content-type': 'application/json', 'x-sim-ttft-ms': '0', 'x-sim-itl-ms': '60000', 'x-sim-output-tokens': '4' },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
          markFirst();
        });
        res.on('end', () => resolve(text));
        res.on('close', () => resolve(text));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify({ model: MODEL, stream: true, messages: [{ role: 'user', content: 'hi' }] }));
  });
  return { firstByte, done };
}

test('regression: metric series of departed endpoints came back when a late scrape or a mid-stream error finished after they left', async () => {
  // Four engines leave, two stay. The leaving ones never answer /metrics, so a scrape of each is out
  // when they leave; each also carries a stream that is cut after they left.
  const leaving = Array.from({ length: 4 }, () => new EngineSimulator({ model: MODEL, knobs: { metricsHang: true } }));
  const staying = Array.from({ length: 2 }, () => new EngineSimulator({ model: MODEL }));
  const engines = [...leaving, ...staying];
  for (const engine of engines) await engine.listen();
  const source = new SwitchableSource(engines.map((e) => e.url));
  const logLines: string[] = [];
  const logger = createLogger(
    'warn',
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        logLines.push(...chunk.toString('utf8').split('\n').filter((line) => line !== ''));
        done();
      },
    }),
  );
  const fleet = await startFleet(
    [],
    ['--routing-policy', 'round-robin', '--scrape-interval-ms', '100', '--scrape-timeout-ms', '60000'],
    [],
    { source, logger },
  );
  try {
    const { router } = fleet;
    await waitFor(() => [...router.view.all()].filter((s) => s.endpoint.models !== undefined).length === engines.length);
    const leavingIds = new Set(leaving.map((e) => e.url));
    const leavingStates = [...router.view.all()].filter((s) => leavingIds.has(s.id));
    // A scrape has begun (and, with /metrics hanging and a one-minute timeout, is still out).
    await waitFor(() => leavingStates.every((s) => s.awaitingScrape));

    // Round robin over six endpoints, one stream at a time: one stream per engine.
    const streams = new Map<string, ReturnType<typeof openStream>>();
    for (let i = 0; i < engines.length; i++) {
      const stream = openStream(fleet.base);
      await stream.firstByte;
      const served = engines.find((e) => e.requests === 1 && !streams.has(e.url));
      assert.ok(served !== undefined, 'each stream went to an engine without one');
      streams.set(served.url, stream);
    }
    assert.deepEqual(engines.map((e) => e.requests), [1, 1, 1, 1, 1, 1]);

    source.set(staying.map((e) => e.url));
    assert.ok(leavingStates.every((s) => !s.present), 'the leaving endpoints left the set');
    // Their engines die now: the scrape that is out fails and the stream breaks mid-way, both late.
    await Promise.all(leaving.map((e) => e.close()));
    for (const engine of leaving) {
      const body = await (streams.get(engine.url) as ReturnType<typeof openStream>).done;
      assert.match(body, /SWITCHYARD_UPSTREAM_FAILED/, 'the stream ended with the mid-stream error event, so the router settled it');
    }
    // The router logs the first failed scrape of an endpoint after recording its metrics: once every
    // leaving endpoint has its line, every late scrape has been through the metrics.
    await waitFor(() => [...leavingIds].every((id) => logLines.some((line) => line.includes('started failing') && line.includes(JSON.stringify(id)))));

    const metrics = (await send(`${fleet.admin}/metrics`, { method: 'GET' })).body.toString('utf8');
    const leaked = metrics.split('\n').filter((line) => !line.startsWith('#') && [...leavingIds].some((id) => line.includes(`backend="${id}"`)));
    assert.deepEqual(leaked, [], 'no series may carry the label of a departed endpoint');
    for (const engine of staying) {
      assert.match(metrics, new RegExp(`switchyard_backend_in_flight_requests\\{backend="${engine.url}"\\} 1`), 'endpoints that stayed keep their series');
    }
  } finally {
    await fleet.close();
    await Promise.all(staying.map((e) => e.close()));
  }
});
