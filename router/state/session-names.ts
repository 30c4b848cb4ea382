/**
 * The name of a session: HMAC-SHA256 over (tenant, model, session key) with a
 * per-install secret, base64url (43 characters). It names the session in
 * Redis, in each replica's table of assignments and in rendezvous hashing.
 *
 * Sessions used to be named by the plain SHA-256 of the client's key, one
 * namespace for every tenant and model: the same `x-session-id` from two
 * tenants (or one client's chat and embeddings models sharing `user`) flipped
 * the stored engine on every request (5 moves in 6 requests), each move
 * losing the KV cache, and a low-entropy key (a user id, an e-mail in `user`)
 * could be recovered from Redis by hashing guesses. The rules that follow:
 * - Each field is framed by its UTF-8 length (4 bytes, big-endian), so no
 *   two triples frame alike (`("a", "bc")` is not `("ab", "c")`).
 * - No tenant (API keys off) frames as the empty string: tenant names are
 *   1-64 characters, so it never equals a real tenant.
 * - Every replica of an install must hold the same secret, or they disagree
 *   on where a session lives (`sessions.keySecretFile`, the chart's Secret).
 *   Without one, a secret derived from an install-wide value keeps placement
 *   consistent but lets whoever knows that value test guesses again.
 */
import { createHash, createHmac } from 'node:crypto';

/** A session's name: 43 base64url characters. Only {@link SessionNames.name} makes one. */
export type SessionName = string & { readonly __sessionName: true };

/** Domain label mixed into a derived secret, so it is good for nothing else. */
const DERIVED_LABEL = 'switchyard session names v1\0';

export class SessionNames {
  readonly #secret: Buffer;

  /** @param secret the install's secret (any length; at least 16 bytes of entropy to be worth having). */
  constructor(secret: Buffer | string) {
    this.#secret = Buffer.from(secret);
  }

  /**
   * A secret derived from an install-wide value (the Redis key prefix), for
   * installs that configure none: every replica derives the same, so
   * placement agrees, but anyone who knows the value can derive it too.
   */
  static derivedFrom(installValue: string): SessionNames {
    return new SessionNames(createHash('sha256').update(DERIVED_LABEL).update(installValue).digest());
  }

  /**
   * The session's name. `tenant` is the API key's tenant (undefined without
   * API keys), `model` the model the request names, `key` the client's
   * session key (header or `user`). Pure: same inputs and secret, same name.
   */
  name(tenant: string | undefined, model: string, key: string): SessionName {
    const hmac = createHmac('sha256', this.#secret);
    for (const field of [tenant ?? '', model, key]) {
      const bytes = Buffer.from(field, 'utf8');
      const length = Buffer.allocUnsafe(4);
      length.writeUInt32BE(bytes.length);
      hmac.update(length).update(bytes);
    }
    return hmac.digest('base64url') as SessionName;
  }
}

/**
 * The name releases before tenant-scoped names gave a session: the plain
 * SHA-256 of the key, base64url. Read once on a miss during a rolling
 * upgrade (see SharedAssignments.lookUp), never written.
 */
export function legacySessionName(key: string): string {
  return createHash('sha256').update(key).digest('base64url');
}

/** Shortest session secret accepted (characters): a random 32-character secret has well over 128 bits. */
export const MIN_SESSION_SECRET_LENGTH = 32;

/** Where the session names' secret comes from (`sessions.keySecretFile`, `redis.*`). */
export interface SessionSecretSettings {
  readonly keySecretFile: string | undefined;
  /** The install-wide value a secret is derived from when no file is given (`redis.keyPrefix`). */
  readonly keyPrefix: string;
  /** Redis is configured: names are stored where others may read them. */
  readonly shared: boolean;
}

/**
 * The install's {@link SessionNames}: from `keySecretFile` when set (read
 * with `readSecret`, which throws a configuration error naming the file),
 * else derived from the key prefix. With Redis and no file, `warn` is told
 * once why that is weaker. Without Redis nothing is stored, and a derived
 * secret keeps rendezvous hashing identical on every replica (a random
 * per-process one would not).
 * @throws Error (from `readSecret`, or with `tooShort`'s message) for an unusable file.
 */
export function sessionNamesFor(
  settings: SessionSecretSettings,
  readSecret: (path: string, option: string) => string,
  warn: (message: string) => void,
  tooShort: (message: string) => Error,
): SessionNames {
  if (settings.keySecretFile !== undefined) {
    const secret = readSecret(settings.keySecretFile, 'sessions.keySecretFile');
    if (secret.length < MIN_SESSION_SECRET_LENGTH) {
      throw tooShort(`sessions.keySecretFile ${settings.keySecretFile}: shorter than ${MIN_SESSION_SECRET_LENGTH} characters; use a random secret (e.g. openssl rand -hex 32)`);
    }
    return new SessionNames(secret);
  }
  if (settings.shared) {
    warn(
      'sessions.keySecretFile is not set: session names in Redis use a secret derived from redis.keyPrefix. Placement stays consistent across replicas, but whoever knows the prefix and can read Redis can test guesses of session keys (user ids, e-mails); set sessions.keySecretFile (the chart does)',
    );
  }
  return SessionNames.derivedFrom(settings.keyPrefix);
}
