/**
 * `switchyard check-config [FILE] [options]`: validates a configuration the
 * way `serve` would load it (file, `SWITCHYARD_*` environment and flags) and
 * prints the effective configuration with each value's source, secrets
 * redacted; it starts nothing. The habit is `nginx -t` before a reload: run
 * it in CI or as the chart's test before a rollout. The files a
 * configuration names (API-key files, the admin token, Redis passwords) are
 * read and checked as at start-up; their contents are never printed.
 */
import { effectiveConfigLines } from '../config/effective.ts';
import { ConfigError, loadConfig } from '../config/load.ts';
import { profilesCheck } from '../scheduling/profiles/presets.ts';
import type { Config } from '../config/schema.ts';
import { readSecretFile } from '../config/secret-file.ts';
import { ApiKeysFile } from '../request/api-keys-file.ts';
import { readExporterHeaders } from '../config/exporter-headers.ts';

const USAGE = `Usage: switchyard check-config [FILE] [--config FILE] [options]

Validates the configuration that \`switchyard serve\` would run with the same
file, environment and flags (every serve option is accepted), checks the
files it names, and prints one line per option: key = value  # source (flag,
env, file or default). Secrets are never printed. Exits 0 when valid, 2 when
not (one line per problem on stderr, naming the key and the nearest valid
one for a typo).
`;

/** Output sinks, injectable for tests. */
export interface CheckConfigOutput {
  readonly print: (line: string) => void;
  readonly printError: (line: string) => void;
}

const CONSOLE: CheckConfigOutput = { print: (line) => console.log(line), printError: (line) => console.error(line) };

/** Returns the exit code: 0 valid, 2 invalid or a usage error. */
export function checkConfig(argv: readonly string[], env: Readonly<Record<string, string | undefined>>, out: CheckConfigOutput = CONSOLE): number {
  const args = argv[0] !== undefined && !argv[0].startsWith('-') ? ['--config', ...argv] : [...argv];
  let loaded;
  try {
    loaded = loadConfig(args, env, [profilesCheck()]);
    if (loaded.kind === 'help') {
      out.print(USAGE);
      return 0;
    }
    checkNamedFiles(loaded.config);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    out.printError(`switchyard check-config: ${err.message}`);
    return 2;
  }
  for (const warning of loaded.warnings) out.printError(`switchyard check-config: warning: ${warning}`);
  out.print(`# switchyard configuration is valid${loaded.layers.file === undefined ? '' : ` (${loaded.layers.file})`}`);
  for (const line of effectiveConfigLines(loaded.config, loaded.layers)) out.print(line);
  return 0;
}

/** Reads every secret file the configuration names, as start-up does; throws ConfigError. */
function checkNamedFiles(config: Config): void {
  const files: [string | undefined, string][] = [
    [config.adminTokenFile, 'adminTokenFile'],
    [config.upstream.apiKeyFile, 'upstream.apiKeyFile'],
    [config.discovery.apiKeyFile, 'discovery.apiKeyFile'],
    [config.discovery.static.apiKeyFile, 'discovery.static.apiKeyFile'],
    [config.redis.passwordFile, 'redis.passwordFile'],
    [config.redis.sentinelPasswordFile, 'redis.sentinelPasswordFile'],
    ...Object.entries(config.discovery.sources).map(([name, source]): [string | undefined, string] => [source.apiKeyFile, `discovery.sources.${name}.apiKeyFile`]),
  ];
  for (const [path, option] of files) if (path !== undefined) readSecretFile(path, option);
  if (config.tracing.headersFile !== undefined) readExporterHeaders(config.tracing.headersFile);
  if (config.auth.apiKeysFile !== undefined) ApiKeysFile.open(config.auth.apiKeysFile, { info: () => undefined, error: () => undefined });
}
