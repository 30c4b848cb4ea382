/**
 * The secret and key files the router reads at construction: engine keys,
 * the admin token, the API keys and the session-name secret. They are read
 * before anything is started, so an unusable file stops start-up with a
 * ConfigError before a socket, a watch or a Redis connection is open.
 */
import { MODE_SOURCE_NAME } from '../../discovery/kubernetes/kubernetes-discovery.ts';
import { STATIC_SOURCE_NAME } from '../../discovery/static-source.ts';
import { ConfigError } from '../config/load.ts';
import type { Config } from '../config/schema.ts';
import { readSecretFile } from '../config/secret-file.ts';
import type { Logger } from '../log.ts';
import { EngineCredentials } from '../proxy/engine-credentials.ts';
import { ApiKeysFile } from '../request/api-keys-file.ts';
import { redisConfigured } from '../state/redis-client.ts';
import { sessionNamesFor, type SessionNames } from '../state/session-names.ts';

/** What {@link readSecrets} read; every field is fixed for the process's life except the API keys, which reload. */
export interface Secrets {
  /** Engine keys by source name; kept here, never on the endpoints /debug/endpoints renders. */
  readonly credentials: EngineCredentials;
  /** The admin port's bearer token; undefined without adminTokenFile (the port is open). */
  readonly adminToken: string | undefined;
  /** API keys, reloaded once started (the router starts and stops it); undefined without auth.apiKeysFile. */
  readonly apiKeys: ApiKeysFile | undefined;
  /** Names sessions with the install's secret, the same on every replica. */
  readonly sessionNames: SessionNames;
}

/** Reads every secret file `config` names. @throws ConfigError (or the secret reader's error) naming an unusable file. */
export function readSecrets(config: Config, logger: Logger): Secrets {
  const credentials = engineCredentials(config);
  const adminToken = config.adminTokenFile === undefined ? undefined : readSecretFile(config.adminTokenFile, 'adminTokenFile');
  const apiKeys = config.auth.apiKeysFile === undefined ? undefined : ApiKeysFile.open(config.auth.apiKeysFile, logger);
  const sessionNames = sessionNamesFor(
    { keySecretFile: config.sessions.keySecretFile, keyPrefix: config.redis.keyPrefix, shared: redisConfigured(config.redis) },
    readSecretFile,
    (message) => logger.warn(message),
    (message) => new ConfigError(message),
  );
  return { credentials, adminToken, apiKeys, sessionNames };
}

/** Engine keys per source; key files are read once, here, and checked like every secret file. */
function engineCredentials(config: Config): EngineCredentials {
  const { discovery } = config;
  const withFallback: Record<string, { apiKey?: string | undefined; apiKeyFile?: string | undefined }> = { [STATIC_SOURCE_NAME]: discovery.static };
  if (discovery.mode !== 'static') withFallback[MODE_SOURCE_NAME] = discovery;
  const option = (source: string | undefined) =>
    source === undefined ? 'upstream.apiKeyFile' : source === STATIC_SOURCE_NAME ? 'discovery.static.apiKeyFile' : source === MODE_SOURCE_NAME ? 'discovery.apiKeyFile' : `discovery.sources.${source}.apiKeyFile`;
  // With API keys on, the client's Authorization header authenticates it to switchyard and is never forwarded.
  const forwardClientAuthorization = config.upstream.forwardClientAuthorization ?? config.auth.apiKeysFile === undefined;
  return EngineCredentials.build({ upstream: { ...config.upstream, forwardClientAuthorization }, withFallback, ownKeyOnly: discovery.sources }, (path, source) => readSecretFile(path, option(source)));
}
