import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { waitForModels } from '../kit/processes.ts';
import { EngineSimulator } from '../../loadtest/sim/server.ts';
import { postJson, startRouterProcess } from '../kit/harness.ts';

const MODEL = 'm-imports';
const LOADTEST = new URL('../../loadtest/', import.meta.url).href;
const OPENTELEMETRY = new URL('../../node_modules/@opentelemetry/', import.meta.url).href;

/**
 * The router image ships without most of loadtest/, and the product must not
 * depend on its test tools: `switchyard serve` loads none of it (the CLI's
 * sim, bench and demo import it on demand). Lint catches a static import in a
 * router/ file; this catches any path into loadtest/ however it is reached.
 */
describe('switchyard serve', () => {
  const engine = new EngineSimulator({ model: MODEL, knobs: { ttftMs: 1, itlMs: 0, outputTokens: 2 } });
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-modules-'));
  before(() => engine.listen());
  after(async () => {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The URLs of every module `serve` with `flags` loaded, from start-up through a routed stream. */
  async function modulesLoaded(name: string, flags: readonly string[]): Promise<string[]> {
    const log = join(dir, `${name}.txt`);
    const hook = new URL('../kit/module-log-hook.ts', import.meta.url);
    hook.searchParams.set('log', log);
    const router = await startRouterProcess(['--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--backend', engine.url, '--lifecycle-pre-stop-delay-ms', '0', ...flags], ['--import', hook.href]);
    try {
      const base = `http://127.0.0.1:${router.traffic}`;
      await waitForModels(base);
      const answer = await postJson(`${base}/v1/chat/completions`, { model: MODEL, stream: true, messages: [{ role: 'user', content: 'hi' }] });
      assert.equal(answer.status, 200);
    } finally {
      router.child.kill('SIGKILL');
      await router.exit;
    }
    const loaded = readFileSync(log, 'utf8').split('\n');
    assert.ok(loaded.includes(new URL('../../router/compose.ts', import.meta.url).href), 'the hook saw the router load');
    return loaded;
  }

  it('loads no module under loadtest/ and, with tracing off, no OpenTelemetry SDK or exporter', async () => {
    const loaded = await modulesLoaded('default', []);
    assert.deepEqual(
      loaded.filter((url) => url.startsWith(LOADTEST)),
      [],
      'modules under loadtest/ that `switchyard serve` loaded',
    );
    // @opentelemetry/api itself (its no-op API, no SDK) is required by prom-client for exemplars, tracing or not.
    assert.deepEqual(
      loaded.filter((url) => url.startsWith(OPENTELEMETRY) && !url.startsWith(`${OPENTELEMETRY}api/`)),
      [],
      'OpenTelemetry modules loaded with tracing off',
    );
  });

  it('loads OpenTelemetry with tracing on, and only the configured exporter (no gRPC for OTLP over HTTP)', async () => {
    // The collector is not there: export fails in the background and the request is served all the same.
    const loaded = await modulesLoaded('tracing', ['--tracing-enabled', '--tracing-endpoint', 'http://127.0.0.1:9']);
    assert.ok(loaded.some((url) => url.startsWith(`${OPENTELEMETRY}sdk-trace/`)), 'the tracing SDK was loaded');
    assert.ok(loaded.some((url) => url.startsWith(`${OPENTELEMETRY}exporter-trace-otlp-proto/`)), 'the HTTP/protobuf exporter was loaded');
    assert.ok(!loaded.some((url) => url.startsWith(`${OPENTELEMETRY}exporter-trace-otlp-grpc/`) || url.includes('/node_modules/@grpc/')), 'no gRPC module was loaded');
  });
});
