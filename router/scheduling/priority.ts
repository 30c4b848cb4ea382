/**
 * Request priority, from a request header (`admission.priorityHeader`,
 * default `x-priority`) sent by a trusted proxy: `high`, `normal` (the
 * default, and what any other value or an untrusted sender means) or `low`.
 * Under pressure low-priority work is shed first and high-priority work
 * last; in the wait queue, higher priority goes first.
 */
import { firstHeaderValue } from '../header-value.ts';

/** Priority levels, highest first. */
export const PRIORITIES = ['high', 'normal', 'low'] as const;
/** One of {@link PRIORITIES}. */
export type Priority = (typeof PRIORITIES)[number];

/** Reads the priority header value. */
export function parsePriority(value: string | string[] | undefined): Priority {
  const raw = firstHeaderValue(value)?.trim().toLowerCase();
  return raw === 'high' || raw === 'low' ? raw : 'normal';
}

/**
 * The priority a request runs at. Any client can send the header, and `high`
 * lets it past limits that shed everyone else, so the header counts only
 * when `trusted`: the connection comes from a trusted proxy
 * (`server.trustedProxies`), which sets or strips it for its own clients.
 * From anyone else it is ignored.
 *
 * With API keys, a tenant's priority class (`priority` in the keys file)
 * is what its requests run at when no trusted header says otherwise: a
 * key's class, else normal.
 */
export function requestPriority(value: string | string[] | undefined, trusted: boolean, keyPriority?: Priority): Priority {
  if (trusted && value !== undefined) return parsePriority(value);
  return keyPriority ?? 'normal';
}

/**
 * How much of each limit a priority may use before it is shed:
 * - `waiting`: share of `admission.maxWaiting` an endpoint may reach before it
 *   counts as saturated for this request;
 * - `caps`: share of the router's in-flight and connection caps;
 * - `lag`: multiple of the event-loop lag threshold.
 */
export const PRIORITY_LIMITS: Readonly<Record<Priority, { readonly waiting: number; readonly caps: number; readonly lag: number }>> = {
  high: { waiting: 1, caps: 1, lag: 2 },
  normal: { waiting: 1, caps: 1, lag: 1 },
  low: { waiting: 0.5, caps: 0.8, lag: 0.5 },
};

/** Rank for ordering: lower goes first. */
export function priorityRank(priority: Priority): number {
  return PRIORITIES.indexOf(priority);
}
