import { ConfigError, loadConfig } from '../config/load.ts';
import { profilesCheck } from '../scheduling/profiles/presets.ts';
import { helpText } from '../config/options.ts';
import { Router, loadTracing } from '../compose.ts';
import { createLogger } from '../log.ts';
import { VERSION } from '../version.ts';
import { installProcessNet } from './process-net.ts';
import { tuneProcess } from './process-tuning.ts';

const USAGE = `Usage: switchyard serve [--config FILE] [options]

Runs the router. Every option can also be set in the config file (YAML or
JSON, nested as in the reference) and as an environment variable.
Precedence: flags > environment > config file > defaults. Unknown keys and
flags are refused (exit 2). To validate a configuration and see the effective
values without starting: switchyard check-config [FILE] [options].

  --config FILE
      YAML or JSON config file. Env: SWITCHYARD_CONFIG.
  --version
      Print the version and exit.
${helpText()}
`;

/**
 * `switchyard serve`: returns the process exit code once the router has
 * stopped: 0 after a drain, 1 when a port cannot be bound, 2 for invalid
 * configuration.
 */
export async function serve(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  if (argv.includes('--version')) {
    console.log(`switchyard ${VERSION}`);
    return 0;
  }
  let loaded;
  try {
    loaded = loadConfig(argv, env, [profilesCheck()]);
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
  const loweredHelpers = tuneProcess();
  let router: Router;
  try {
    const logger = createLogger(loaded.config.logLevel);
    // Loaded (or not: tracing off loads no OpenTelemetry module) before the router is built around it.
    router = new Router(loaded.config, { logger, tracing: await loadTracing(loaded.config, logger) });
  } catch (err) {
    // Files named by the configuration (key files) are read and checked here.
    if (err instanceof ConfigError) {
      console.error(`switchyard: ${err.message}`);
      return 2;
    }
    // What the environment lacks (no Kubernetes API outside a cluster, an unreadable kubeconfig):
    // one line that says what, not a stack trace.
    console.error(`switchyard: cannot start: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
  // Once, at start-up: a misspelt SWITCHYARD_* variable sets nothing.
  for (const warning of loaded.warnings) router.logger.warn(warning);
  // From here on nothing a peer sends can end the process by a failure nobody awaited.
  installProcessNet((kind, err) => router.reportBackgroundFailure(kind, err));
  if (loweredHelpers.length > 0) router.logger.debug({ threads: loweredHelpers.length }, "V8's helper threads run at a low priority, behind the event loop");
  // The handlers go in before start(): the ready line is logged inside it, and a signal sent on
  // seeing that line must drain, not kill the process by Node's default.
  const started = router.start();
  const stopped = new Promise<void>((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      router.logger.info({ signal, preStopDelayMs: loaded.config.lifecycle.preStopDelayMs }, 'shutdown requested: draining; a second Ctrl-C (or signal) exits now');
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      process.once('SIGTERM', exitNow);
      process.once('SIGINT', exitNow);
      started.then(() => router.drainAndClose()).then(resolve, resolve);
    };
    const exitNow = (signal: NodeJS.Signals) => {
      router.logger.warn({ signal }, 'second signal: exiting without waiting for the drain');
      process.exit(signal === 'SIGINT' ? 130 : 143);
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
  try {
    await started;
  } catch (err) {
    // start() already released what it started; the process must not linger without a port.
    router.logger.fatal({ err: (err as Error).message }, 'switchyard could not start; exiting');
    return 1;
  }
  await stopped;
  return 0;
}
