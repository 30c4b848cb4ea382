import { setFlagsFromString } from 'node:v8';
import { ConfigError, loadConfig } from '../config/load.ts';
import { helpText } from '../config/options.ts';
import { Router } from '../compose.ts';
import { lowerHelperThreadPriority } from './helper-thread-priority.ts';

const USAGE = `Usage: switchyard serve [--config FILE] [options]

Runs the router. Every option can also be set in the config file (YAML or
JSON, nested as in the reference) and as an environment variable.
Precedence: flags > environment > config file > defaults.

  --config FILE
      YAML or JSON config file. Env: SWITCHYARD_CONFIG.
${helpText()}
`;

/**
 * `switchyard serve`: returns the process exit code once the router has
 * stopped: 0 after a drain, 1 when a port cannot be bound, 2 for invalid
 * configuration.
 */
export async function serve(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  let loaded;
  try {
    loaded = loadConfig(argv, env);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`switchyard: ${err.message}`);
      return 2;
    }
    throw err;
  }
  if (loaded.kind === 'help') {
    console.log(USAGE);
    return 0;
  }
  tuneCollector();
  const loweredHelpers = lowerHelperThreadPriority();
  let router: Router;
  try {
    router = new Router(loaded.config);
  } catch (err) {
    // Files named by the configuration (key files) are read and checked here.
    if (err instanceof ConfigError) {
      console.error(`switchyard: ${err.message}`);
      return 2;
    }
    throw err;
  }
  if (loweredHelpers.length > 0) router.logger.debug({ threads: loweredHelpers.length }, "V8's helper threads run at a low priority, behind the event loop");
  try {
    await router.start();
  } catch (err) {
    // start() already released what it started; the process must not linger without a port.
    router.logger.fatal({ err: (err as Error).message }, 'switchyard could not start; exiting');
    return 1;
  }
  await new Promise<void>((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      router.logger.info({ signal }, 'shutdown requested');
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      router.drainAndClose().then(resolve, resolve);
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
  return 0;
}

/**
 * Two V8 collector settings, set first thing in `serve`, before the heap
 * grows and before any request is served:
 *
 * - Large request bodies live outside the JavaScript heap (socket reads, the
 *   body buffer), and V8 by default starts a full collection each time such
 *   memory grows by a fixed step: with 200 KB prompts at ~1,000 a second the
 *   router ran ~11 mark-compacts a second over a 23 MB heap, and collection
 *   took 39% of its CPU (`--trace-gc`, ab -c 16). Counting that memory in the
 *   heap's own growing limits cut them to ~3 a second and the CPU per request
 *   from 685-827 to ~520 µs.
 * - Allocation-site pretenuring is off. Once requests had lived long for a
 *   while (a few seconds of queueing in the router), V8 began allocating the
 *   request path's objects straight into the old generation. A dead request
 *   there is only freed by a full collection, and until then it keeps every
 *   young object it points to (headers, buffers, the upstream request) alive
 *   through each young collection, so nearly everything was copied and
 *   promoted, which made the next decision to pretenure look right. The
 *   router stayed in that state for good: scavenges of ~21 ms promoting
 *   ~11 MB each at 3,500 requests a second, p99 71 ms against the engine's
 *   12; with pretenuring off, 2.0 ms scavenges and p99 6-12 ms, at no CPU
 *   cost measurable under ab (docs/performance.md, "The tail's second
 *   cause").
 */
function tuneCollector(): void {
  setFlagsFromString('--external-memory-accounted-in-global-limit');
  setFlagsFromString('--no-allocation-site-pretenuring');
}
