/**
 * `npm start`: three simulated engines and a router in one process, for a
 * first look. Prints a curl line that works.
 */
import { loadConfig } from '../config/load.ts';
import { Router } from '../compose.ts';

// loadtest/ is loaded on demand only (lint forbids static imports of it from router/).
const { EngineSimulator } = await import('../../loadtest/sim/server.ts');

const MODEL = 'demo-model';
const listen = process.env['SWITCHYARD_LISTEN'] ?? '127.0.0.1:8080';
const adminListen = process.env['SWITCHYARD_ADMIN_LISTEN'] ?? '127.0.0.1:9090';

const engines = [
  new EngineSimulator({ model: MODEL, knobs: { maxSeqs: 8, ttftMs: 80, itlMs: 20 } }),
  new EngineSimulator({ model: MODEL, knobs: { maxSeqs: 8, ttftMs: 120, itlMs: 30 } }),
  new EngineSimulator({ model: MODEL, knobs: { maxSeqs: 4, ttftMs: 200, itlMs: 40 } }),
];
for (const engine of engines) await engine.listen();

const loaded = loadConfig(
  ['--listen', listen, '--admin-listen', adminListen, '--lifecycle-pre-stop-delay-ms', '0', ...engines.flatMap((e) => ['--backend', e.url])],
  {},
);
if (loaded.kind !== 'config') throw new Error('unreachable');
const router = new Router(loaded.config);
await router.start();
const base = `http://${listen}`;
console.log(`
switchyard demo: router on ${base} (admin http://${adminListen}), engines ${engines.map((e) => e.url).join(', ')}

  curl -sN ${base}/v1/chat/completions -H 'content-type: application/json' \\
    -d '{"model":"${MODEL}","stream":true,"messages":[{"role":"user","content":"hi"}]}'

  curl -s http://${adminListen}/debug/endpoints
  curl -s http://${adminListen}/metrics | grep switchyard_

Ctrl-C to stop.
`);
const stop = () => {
  void router.drainAndClose().then(() => Promise.all(engines.map((e) => e.close())));
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
