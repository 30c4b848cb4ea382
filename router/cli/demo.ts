/**
 * `npm start`: three simulated engines and a router in one process, for a
 * first look. Prints a curl line that works. Every `switchyard serve` flag
 * and SWITCHYARD_* variable applies (`npm start -- --listen 127.0.0.1:8081`);
 * the demo's own defaults are the loopback ports and no pre-stop delay.
 */
import { formatHostPort, parseHostPort } from '../config/host-port.ts';
import { ConfigError, loadConfig } from '../config/load.ts';
import { profilesCheck } from '../scheduling/profiles/presets.ts';
import { Router } from '../compose.ts';

// loadtest/ is loaded on demand only (lint forbids static imports of it from router/).
const { EngineSimulator } = await import('../../loadtest/sim/server.ts');

const MODEL = 'demo-model';
const DEMO_DEFAULTS = ['--listen', '127.0.0.1:8080', '--admin-listen', '127.0.0.1:9090', '--lifecycle-pre-stop-delay-ms', '0'];
const USAGE = `Usage: npm start [-- serve flags]

Three simulated engines (model ${MODEL}) and a router in one process. Defaults:
traffic on 127.0.0.1:8080, admin on 127.0.0.1:9090, no pre-stop delay. Any
switchyard serve flag or SWITCHYARD_* variable overrides them, e.g.
  npm start -- --listen 127.0.0.1:8081 --admin-listen 127.0.0.1:9091
  SWITCHYARD_LISTEN=127.0.0.1:8081 npm start
(switchyard serve --help lists them all.)`;

/** Runs the demo until a signal; returns the exit code when it cannot start. */
async function demo(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number | undefined> {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(USAGE);
    return 0;
  }
  // Variables set the demo's addresses too: they go in as flags, before the user's own flags.
  const fromEnv = [
    ...(env['SWITCHYARD_LISTEN'] === undefined ? [] : ['--listen', env['SWITCHYARD_LISTEN']]),
    ...(env['SWITCHYARD_ADMIN_LISTEN'] === undefined ? [] : ['--admin-listen', env['SWITCHYARD_ADMIN_LISTEN']]),
  ];
  const engines = [
    new EngineSimulator({ model: MODEL, knobs: { maxSeqs: 8, ttftMs: 80, itlMs: 20 } }),
    new EngineSimulator({ model: MODEL, knobs: { maxSeqs: 8, ttftMs: 120, itlMs: 30 } }),
    new EngineSimulator({ model: MODEL, knobs: { maxSeqs: 4, ttftMs: 200, itlMs: 40 } }),
  ];
  for (const engine of engines) await engine.listen();
  const closeEngines = () => Promise.all(engines.map((e) => e.close()));
  let router: Router;
  try {
    const loaded = loadConfig([...DEMO_DEFAULTS, ...fromEnv, ...engines.flatMap((e) => ['--backend', e.url]), ...argv], env, [profilesCheck()]);
    if (loaded.kind !== 'config') throw new Error('unreachable: --help is handled above');
    router = new Router(loaded.config);
  } catch (err) {
    await closeEngines();
    console.error(`switchyard demo: ${err instanceof Error ? err.message : String(err)}`);
    return err instanceof ConfigError ? 2 : 1;
  }
  let ports;
  try {
    ports = await router.start();
  } catch (err) {
    // A taken port: one line that says which, not a stack trace.
    await closeEngines();
    console.error(`switchyard demo: cannot start: ${(err as Error).message}`);
    return 1;
  }
  const base = `http://${formatHostPort(parseHostPort(router.config.listen).host, ports.traffic)}`;
  const admin = `http://${formatHostPort(parseHostPort(router.config.adminListen).host, ports.admin)}`;
  console.log(`
switchyard demo: router on ${base} (admin ${admin}), engines ${engines.map((e) => e.url).join(', ')}

  curl -sN ${base}/v1/chat/completions -H 'content-type: application/json' \\
    -d '{"model":"${MODEL}","stream":true,"messages":[{"role":"user","content":"hi"}]}'

  curl -s ${admin}/debug/endpoints
  curl -s ${admin}/metrics | grep switchyard_

Ctrl-C to stop.
`);
  const stop = () => {
    void router.drainAndClose().then(closeEngines);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return undefined;
}

const code = await demo(process.argv.slice(2), process.env);
if (code !== undefined) process.exit(code);
