/**
 * The shared quota check: one Lua script, so one round trip per request,
 * atomic across replicas. It checks the tenant's concurrency first (the sum
 * of every live replica's in-progress count) and then its request rate
 * (GCRA on Redis' own clock, `TIME`, so replicas with skewed clocks agree),
 * and only when both pass does it consume a rate slot and record this
 * replica's new in-progress count: a request refused for concurrency costs
 * the tenant no rate.
 *
 * Every key carries the tenant's hash tag `{quota:<tenant>}` so a Redis
 * Cluster keeps them in one slot, as a script needs.
 *
 * Each replica writes only its own in-progress key, and always as "set to my
 * count" (never INCR/DECR): a write that was lost while Redis was away is
 * made good by the next one, and the key expires with the replica's
 * heartbeat TTL, so a killed replica leaks nothing.
 */
import type { QuotaLimit } from '../metrics/label-values.ts';
import { LuaScript } from './shared-store.ts';

/**
 * KEYS[1] rate state (TAT, µs); KEYS[2] this replica's in-progress count;
 * KEYS[3..] other live replicas' in-progress counts.
 * ARGV[1] emission interval (µs; 0: no rate limit); ARGV[2] burst;
 * ARGV[3] max concurrent (0: no concurrency limit); ARGV[4] this replica's
 * in-progress count, this request included; ARGV[5] in-progress key TTL (ms).
 * Answers {allowed 0|1, refused by 0 none|1 rate|2 concurrency, remaining
 * (-1: no rate limit), retry after (ms), reset (ms)}.
 */
const BODY = `
local interval = tonumber(ARGV[1])
local maxConcurrent = tonumber(ARGV[3])
if maxConcurrent > 0 then
  local total = tonumber(ARGV[4])
  for i = 3, #KEYS do
    total = total + (tonumber(redis.call('GET', KEYS[i])) or 0)
  end
  if total > maxConcurrent then return {0, 2, 0, 1000, 0} end
end
local remaining, reset = -1, 0
if interval > 0 then
  local time = redis.call('TIME')
  local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
  local burst = tonumber(ARGV[2])
  local tat = tonumber(redis.call('GET', KEYS[1])) or now
  if tat < now then tat = now end
  local nextTat = tat + interval
  local allowAt = nextTat - burst * interval
  -- 1 µs of slack: a fractional interval, added up and stored rounded, lands a hair off the boundary.
  if allowAt - now > 1 then
    return {0, 1, 0, math.ceil((allowAt - now) / 1000), math.ceil((tat - now) / 1000)}
  end
  redis.call('SET', KEYS[1], string.format('%.0f', nextTat), 'PX', math.ceil((nextTat - now) / 1000) + 1)
  remaining = math.floor((now - allowAt + 1) / interval)
  reset = math.ceil((nextTat - now) / 1000)
end
if maxConcurrent > 0 then
  redis.call('SET', KEYS[2], ARGV[4], 'PX', ARGV[5])
end
return {1, 0, remaining, 0, reset}
`;

/** The script, loaded by its SHA (sent whole where EVALSHA is refused). */
export const QUOTA_SCRIPT = new LuaScript('quota_check', BODY);

/** The tenant's hash tag: every key of one tenant lands in one cluster slot. */
export function quotaTag(tenant: string): string {
  return `{quota:${tenant}}`;
}

/** Name (before the store's prefix) of a tenant's rate state. */
export function rateKeyName(tenant: string): string {
  return `${quotaTag(tenant)}:rate`;
}

/** Name (before the store's prefix) of one replica's in-progress count for a tenant. */
export function concurrencyKeyName(tenant: string, replicaId: string): string {
  return `${quotaTag(tenant)}:conc:${replicaId}`;
}

/** The script's answer, decoded. */
export type SharedQuotaAnswer =
  | { readonly allowed: true; readonly remaining: number | undefined; readonly resetMs: number }
  | { readonly allowed: false; readonly limit: QuotaLimit; readonly retryAfterMs: number; readonly resetMs: number };

/** Decodes the script's reply; undefined for anything else (treated as no answer). */
export function decodeQuotaAnswer(reply: unknown): SharedQuotaAnswer | undefined {
  if (!Array.isArray(reply) || reply.length !== 5 || !reply.every((n) => typeof n === 'number' && Number.isFinite(n))) return undefined;
  const [allowed, refusedBy, remaining, retryAfterMs, resetMs] = reply as [number, number, number, number, number];
  if (allowed === 1) return { allowed: true, remaining: remaining < 0 ? undefined : remaining, resetMs };
  return { allowed: false, limit: refusedBy === 2 ? 'concurrency' : 'rate', retryAfterMs, resetMs };
}
