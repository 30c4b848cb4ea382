/**
 * The engine credentials of every discovery source, by source name.
 *
 * A key configured for one source is sent only to that source's endpoints:
 * with requests, scrapes and `/v1/models` probes alike. Keys live here, in
 * the composition root's hands, never on the endpoint objects that
 * `/debug/endpoints` renders. The rules:
 * - a source with a key of its own (`apiKey`/`apiKeyFile`) sends it, in place
 *   of whatever Authorization the client sent;
 * - the static `backends` and the `discovery.mode` source fall back to
 *   `upstream.apiKey`/`apiKeyFile`;
 * - a named `discovery.sources` entry without a key sends no engine key
 *   (`upstream.apiKey` is never sent to it);
 * - a source with no key at all forwards the client's Authorization when
 *   `upstream.forwardClientAuthorization` is on, else sends none.
 */
import type { AuthorizationRule } from './headers.ts';

/** Key settings of one source (config). `apiKeyFile` wins over `apiKey`. */
export interface KeySettings {
  readonly apiKey?: string | undefined;
  readonly apiKeyFile?: string | undefined;
}

/** What {@link EngineCredentials.build} reads. */
export interface CredentialSettings {
  /** `upstream.*`: the fallback key and the client-header rule. */
  readonly upstream: KeySettings & { readonly forwardClientAuthorization: boolean };
  /** Sources whose missing key falls back to the upstream key (static, `discovery.mode`). */
  readonly withFallback: Readonly<Record<string, KeySettings>>;
  /** Sources that only ever send their own key (`discovery.sources`). */
  readonly ownKeyOnly: Readonly<Record<string, KeySettings>>;
}

/**
 * Reads a key file (the composition root passes the file system and its
 * checks); `source` is the source it is for, undefined for `upstream`, so
 * an error can name the option. Throws on an unusable file.
 */
export type KeyFileReader = (path: string, source: string | undefined) => string;

/** Authorization rules per discovery source. Immutable. */
export class EngineCredentials {
  readonly #rules: ReadonlyMap<string, AuthorizationRule>;
  /** For endpoints of an unnamed source (an embedding's own source): the upstream rule. */
  readonly #fallback: AuthorizationRule;

  private constructor(rules: ReadonlyMap<string, AuthorizationRule>, fallback: AuthorizationRule) {
    this.#rules = rules;
    this.#fallback = fallback;
  }

  /** Reads every key (files once, now). @throws when a key file cannot be read. */
  static build(settings: CredentialSettings, readKeyFile: KeyFileReader): EngineCredentials {
    const clientRule: AuthorizationRule = settings.upstream.forwardClientAuthorization ? { kind: 'forward' } : { kind: 'strip' };
    const upstreamKey = keyOf(settings.upstream, undefined, readKeyFile);
    const fallback = upstreamKey === undefined ? clientRule : bearer(upstreamKey);
    const rules = new Map<string, AuthorizationRule>();
    for (const [name, own] of Object.entries(settings.withFallback)) {
      const key = keyOf(own, name, readKeyFile);
      rules.set(name, key === undefined ? fallback : bearer(key));
    }
    for (const [name, own] of Object.entries(settings.ownKeyOnly)) {
      const key = keyOf(own, name, readKeyFile);
      rules.set(name, key === undefined ? clientRule : bearer(key));
    }
    return new EngineCredentials(rules, fallback);
  }

  /** The rule for requests to an endpoint of `source`. */
  rule(source: string | undefined): AuthorizationRule {
    return (source === undefined ? undefined : this.#rules.get(source)) ?? this.#fallback;
  }

  /** The Authorization value for scrapes and model probes of `source`'s endpoints (no client to forward). */
  engineAuthorization(source: string | undefined): string | undefined {
    const rule = this.rule(source);
    return rule.kind === 'replace' ? rule.value : undefined;
  }

  /** Never shows a key, whatever serialises this object. */
  toJSON(): unknown {
    return { sources: [...this.#rules.keys()] };
  }
}

function keyOf(settings: KeySettings, source: string | undefined, readKeyFile: KeyFileReader): string | undefined {
  const key = settings.apiKeyFile !== undefined ? readKeyFile(settings.apiKeyFile, source).trim() : settings.apiKey;
  return key === undefined || key === '' ? undefined : key;
}

function bearer(key: string): AuthorizationRule {
  return { kind: 'replace', value: `Bearer ${key}` };
}
