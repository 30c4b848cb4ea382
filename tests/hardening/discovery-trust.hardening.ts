/**
 * Discovery trusted every pod that matched a selector: with two namespaces
 * watched, a pod in the second (another team's) annotated
 * `switchyard.io/models: llama-prod` received production prompts, and every
 * pod of every source received the one engine key (requests, scrapes and
 * `/v1/models` probes alike). A retry could also carry the first endpoint's
 * Authorization to an endpoint of another source.
 *
 * The real composition path: the router is built from a config file as
 * `switchyard serve` builds it, its Kubernetes sources list and watch pods
 * through the fake API server (real HTTP), the production engine is the real
 * simulator. The other team's engine is a plain HTTP server that records the
 * headers of every request it gets, scrapes and model probes included, which
 * the simulator does not record.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, it } from 'node:test';
import { FakeKubeApi } from '../kit/kube/fake-kube-api.ts';
import { pod, podsPath, writeKubeconfig } from '../kit/kube/fixtures.ts';
import { EngineSimulator } from '../../loadtest/sim/server.ts';
import { Router } from '../../router/compose.ts';
import { loadConfig } from '../../router/config/load.ts';
import { createLogger } from '../../router/log.ts';
import { postJson, waitFor } from '../kit/harness.ts';

const PROD_KEY = 'prod-engine-key';
const TEAM_B_KEY = 'team-b-engine-key';

/** One request as an engine saw it. */
interface Seen {
  readonly method: string;
  readonly path: string;
  readonly authorization: string | undefined;
}

/** An engine that serves `models` and records every request's Authorization. */
class RecordingEngine {
  readonly seen: Seen[] = [];
  readonly #server: Server;
  port = 0;

  constructor(models: readonly string[]) {
    this.#server = createServer((req, res) => {
      this.seen.push({ method: req.method ?? '', path: req.url ?? '', authorization: req.headers.authorization });
      req.resume();
      req.on('end', () => {
        if (req.url === '/v1/models') return json(res, { object: 'list', data: models.map((id) => ({ id, object: 'model' })) });
        if (req.url === '/metrics') return void res.end('vllm:num_requests_waiting{model_name="x"} 0\n');
        json(res, { id: 'chatcmpl-rec', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }] });
      });
    });
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.port = (this.#server.address() as AddressInfo).port;
    return this.port;
  }

  close(): Promise<void> {
    this.#server.closeAllConnections();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }

  posts(): Seen[] {
    return this.seen.filter((s) => s.method === 'POST');
  }
}

function json(res: ServerResponse, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** A port nothing listens on (bound, then closed): connecting is refused. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

interface Rig {
  readonly router: Router;
  readonly base: string;
  readonly logs: Record<string, unknown>[];
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The fake API with `pods` in it, and a router over it configured by `yaml` (plus the lines this adds). */
async function startRig(yaml: string, pods: readonly ReturnType<typeof pod>[]): Promise<Rig> {
  const fake = new FakeKubeApi();
  const server = await fake.listen();
  cleanups.push(() => fake.close());
  for (const p of pods) fake.put(podsPath(p.metadata.namespace), p);
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-trust-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const kubeconfig = writeKubeconfig(join(dir, 'kubeconfig'), { server, token: 'router-token', namespace: 'prod' });
  const file = join(dir, 'config.yaml');
  writeFileSync(file, `listen: 127.0.0.1:0\nadminListen: 127.0.0.1:0\nkubeconfig: ${kubeconfig}\nscrape: {intervalMs: 100}\nlifecycle: {preStopDelayMs: 0}\n${yaml}`);
  const loaded = loadConfig(['--config', file, '--admission-event-loop-lag-ms', '10000'], {});
  if (loaded.kind !== 'config') throw new Error('unexpected help');
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') logs.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const router = new Router(loaded.config, { logger: createLogger('info', sink), env: {} });
  const ports = await router.start();
  cleanups.push(() => router.close());
  return { router, base: `http://127.0.0.1:${ports.traffic}`, logs };
}

const state = (rig: Rig, id: string) => [...rig.router.view.all()].find((s) => s.id === id);
const chat = (rig: Rig, model: string, id: string) =>
  postJson(`${rig.base}/v1/chat/completions`, { model, messages: [{ role: 'user', content: 'the quarterly numbers are...' }] }, { 'x-request-id': id, authorization: 'Bearer client-token' });

describe('discovery trust', () => {
  it('regression: a pod in a second watched namespace claiming a production model received its prompts and the engine key', async () => {
    const prod = new EngineSimulator({ model: 'llama-prod', knobs: { ttftMs: 0, itlMs: 0 } });
    const intruder = new RecordingEngine(['llama-prod']);
    cleanups.push(() => prod.close(), () => intruder.close());
    const prodPort = await prod.listen();
    const intruderPort = await intruder.listen();
    const rig = await startRig(
      `upstream: {apiKey: ${PROD_KEY}}
discovery:
  mode: pods
  namespace: prod
  crossNamespace: true
  labelSelector: app=engine
  allowedModels: [llama-prod]
  sources:
    team-b:
      kind: pods
      namespace: team-b
      labelSelector: app=engine
      allowedModels: [team-b-*]
`,
      [
        pod('engine-0', { namespace: 'prod', ip: '127.0.0.1', port: prodPort }),
        pod('intruder', { namespace: 'team-b', ip: '127.0.0.1', port: intruderPort, annotations: { 'switchyard.io/models': 'llama-prod' } }),
      ],
    );
    await waitFor(() => state(rig, 'prod/engine-0')?.routable === true && state(rig, 'team-b/intruder') !== undefined);
    await waitFor(() => intruder.seen.some((s) => s.path === '/metrics'), 5_000); // scraped at least once
    assert.deepEqual(state(rig, 'team-b/intruder')?.endpoint.models, [], 'its claim to llama-prod is dropped');
    assert.equal(state(rig, 'team-b/intruder')?.routable, false);

    for (let i = 0; i < 20; i++) assert.equal((await chat(rig, 'llama-prod', `prompt-${i}`)).status, 200);
    assert.equal(prod.requests, 20, 'every production prompt reached the production engine');
    assert.equal(prod.received('prompt-0')?.headers['authorization'], `Bearer ${PROD_KEY}`);
    assert.deepEqual(intruder.posts(), [], 'the intruder got no prompt');
    assert.ok(intruder.seen.every((s) => s.authorization === undefined), `the intruder never saw an engine key: ${JSON.stringify(intruder.seen.slice(0, 3))}`);
    const dropped = rig.logs.filter((l) => l['msg'] === "endpoint claims models its source's allowedModels do not allow; ignoring them");
    assert.deepEqual(dropped.map((l) => [l['level'], l['backend'], l['source'], l['dropped']]), [[40, 'team-b/intruder', 'team-b', ['llama-prod']]], 'logged once, at warn');
    assert.doesNotMatch(JSON.stringify(rig.logs), new RegExp(PROD_KEY));
  });

  it("regression: the production engine key reached a second source's pods with its scrapes, model probes and requests", async () => {
    const prod = new EngineSimulator({ model: 'llama-prod', knobs: { ttftMs: 0, itlMs: 0 } });
    const teamB = new RecordingEngine(['team-b-model']);
    cleanups.push(() => prod.close(), () => teamB.close());
    const prodPort = await prod.listen();
    const teamBPort = await teamB.listen();
    // Valid before per-source keys existed: upstream.apiKey for every source, no allow-lists.
    const rig = await startRig(
      `upstream: {apiKey: ${PROD_KEY}}
discovery:
  mode: pods
  namespace: prod
  crossNamespace: true
  labelSelector: app=engine
  sources:
    team-b:
      kind: pods
      namespace: team-b
      labelSelector: app=engine
`,
      [pod('engine-0', { namespace: 'prod', ip: '127.0.0.1', port: prodPort }), pod('engine-0', { namespace: 'team-b', ip: '127.0.0.1', port: teamBPort })],
    );
    await waitFor(() => state(rig, 'prod/engine-0')?.routable === true && state(rig, 'team-b/engine-0')?.routable === true);
    await waitFor(() => teamB.seen.some((s) => s.path === '/metrics'), 5_000);
    assert.equal((await chat(rig, 'team-b-model', 'b-1')).status, 200);
    assert.equal((await chat(rig, 'llama-prod', 'p-1')).status, 200);
    assert.equal(prod.received('p-1')?.headers['authorization'], `Bearer ${PROD_KEY}`);
    assert.ok(teamB.seen.some((s) => s.path === '/v1/models'), 'team-b was probed for its models');
    const leaked = teamB.seen.filter((s) => s.authorization === `Bearer ${PROD_KEY}`);
    assert.deepEqual(leaked, [], 'the production key never reached team-b');
    // No key of its own: the client's header is forwarded (upstream.forwardClientAuthorization), never upstream.apiKey.
    assert.deepEqual(teamB.posts().map((s) => s.authorization), ['Bearer client-token']);
    const warnings = rig.logs.filter((l) => typeof l['msg'] === 'string' && l['msg'].startsWith('discovery watches several namespaces'));
    assert.deepEqual(warnings.map((l) => [l['level'], l['namespaces'], l['sourcesWithoutAllowedModels']]), [[40, ['prod', 'team-b'], ['default', 'team-b']]]);
  });

  it("regression: a retry to another source's endpoint carried the first endpoint's engine key", async () => {
    const teamB = new RecordingEngine(['shared-model']);
    cleanups.push(() => teamB.close());
    const teamBPort = await teamB.listen();
    const dead = await closedPort();
    const rig = await startRig(
      `upstream: {apiKey: ${PROD_KEY}}
routing: {policy: round-robin}
discovery:
  mode: pods
  namespace: prod
  crossNamespace: true
  labelSelector: app=engine
  sources:
    team-b:
      kind: pods
      namespace: team-b
      labelSelector: app=engine
      apiKey: ${TEAM_B_KEY}
`,
      [
        // Refuses connections: every request sent to it first is retried on team-b's engine.
        pod('engine-0', { namespace: 'prod', ip: '127.0.0.1', port: dead, annotations: { 'switchyard.io/models': 'shared-model' } }),
        pod('engine-0', { namespace: 'team-b', ip: '127.0.0.1', port: teamBPort }),
      ],
    );
    await waitFor(() => state(rig, 'prod/engine-0')?.routable === true && state(rig, 'team-b/engine-0')?.routable === true);
    for (let i = 0; i < 4; i++) assert.equal((await chat(rig, 'shared-model', `r-${i}`)).status, 200);
    const retries = await rig.router.metrics.registry.getSingleMetric('switchyard_retries_total')?.get();
    assert.ok((retries?.values.reduce((sum, v) => sum + v.value, 0) ?? 0) >= 1, 'some requests went to the dead endpoint first and were retried');
    assert.equal(teamB.posts().length, 4);
    assert.ok(
      teamB.seen.every((s) => s.authorization === `Bearer ${TEAM_B_KEY}`),
      `team-b's engine only ever saw its own key: ${JSON.stringify(teamB.seen.map((s) => [s.method, s.path, s.authorization]))}`,
    );
  });
});
