/**
 * Admission: after the policy has ordered the candidates and before any byte
 * goes upstream, decide whether the request goes ahead and to which endpoint
 * first. Shedding on saturation, router-wide caps and the wait queue plug in
 * here; the proxy only ever sees admitted requests.
 */
import { SwitchyardError } from '../errors/errors.ts';

/** The decision for one request. */
export type AdmissionDecision<T> =
  | { readonly kind: 'admit'; readonly attempts: readonly T[] }
  | { readonly kind: 'reject'; readonly error: SwitchyardError };

/** Seconds a client should wait before retrying when no endpoint can serve it. */
const NO_ENDPOINT_RETRY_AFTER_S = 5;

/**
 * Decides admission for a request whose candidates are already ordered.
 * `attempts` holds the endpoints to try in order (the first, then at most one
 * retry target).
 */
export function admit<T>(model: string, ordered: readonly T[]): AdmissionDecision<T> {
  if (ordered.length === 0) {
    return {
      kind: 'reject',
      error: new SwitchyardError('SWITCHYARD_NO_ENDPOINT', `No endpoint is ready to serve the model \`${model}\`.`, {
        retryAfterSeconds: NO_ENDPOINT_RETRY_AFTER_S,
      }),
    };
  }
  return { kind: 'admit', attempts: ordered.slice(0, 2) };
}
