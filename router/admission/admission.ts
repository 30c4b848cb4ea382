/**
 * Admission: after the policy has ordered the candidates and before any byte
 * goes upstream, decide whether the request goes ahead and to which endpoint
 * first. The proxy only ever sees admitted requests.
 */
import { SwitchyardError } from '../errors/errors.ts';

/** The decision for one request. */
export type AdmissionDecision<T> =
  /** Go ahead: try `attempts` in order (the first, then at most one retry target). */
  | { readonly kind: 'admit'; readonly attempts: readonly T[] }
  /** Every candidate is saturated: queue briefly or shed (the caller's choice). */
  | { readonly kind: 'saturated'; readonly candidates: readonly T[] }
  /** Refused for good (no endpoint serves the model). */
  | { readonly kind: 'reject'; readonly error: SwitchyardError };

/** Seconds a client should wait before retrying when no endpoint can serve it. */
const NO_ENDPOINT_RETRY_AFTER_S = 5;

/**
 * Admits the request to the first candidate that is not saturated. The retry
 * target is the next candidate that is not saturated, else the next at all:
 * after a failed connect, a queue at another engine beats an error.
 */
export function admit<T>(model: string, ordered: readonly T[], saturated: (endpoint: T) => boolean): AdmissionDecision<T> {
  if (ordered.length === 0) {
    return {
      kind: 'reject',
      error: new SwitchyardError('SWITCHYARD_NO_ENDPOINT', `No endpoint is ready to serve the model \`${model}\`.`, {
        retryAfterSeconds: NO_ENDPOINT_RETRY_AFTER_S,
      }),
    };
  }
  let first: T | undefined;
  let fallback: T | undefined;
  for (const endpoint of ordered) {
    if (saturated(endpoint)) {
      if (first !== undefined) fallback ??= endpoint;
      continue;
    }
    if (first === undefined) first = endpoint;
    else return { kind: 'admit', attempts: [first, endpoint] };
  }
  if (first === undefined) return { kind: 'saturated', candidates: ordered };
  // A saturated endpoint ordered before `first` is also a fine retry target.
  fallback ??= ordered.find((endpoint) => endpoint !== first);
  return { kind: 'admit', attempts: fallback === undefined ? [first] : [first, fallback] };
}
