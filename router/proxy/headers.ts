/**
 * Header rules for forwarding in both directions.
 *
 * Hop-by-hop headers describe one connection, not the message, so a proxy
 * must not forward them (RFC 9110 §7.6.1, https://www.rfc-editor.org/rfc/rfc9110#section-7.6.1):
 * `Connection` and every header it names, plus the fixed list below.
 * `Proxy-*` headers are for this hop's proxy only, and `Expect` is answered by
 * this hop (RFC 9110 §10.1.1).
 *
 * Forwarding headers (`X-Forwarded-*`, `Forwarded`, RFC 7239,
 * https://www.rfc-editor.org/rfc/rfc7239, and `X-Real-IP`) describe the
 * original client to the engine. Any client can send them, so they pass on
 * only from a trusted proxy (`server.trustedProxies`); the router writes
 * `X-Forwarded-For` and `X-Forwarded-Proto` itself. X-Forwarded-For is the
 * socket address, the one entry the router vouches for, after a trusted
 * proxy's chain; an untrusted client's chain is dropped like its other claims,
 * since engines and their logs read the leftmost entry as the client.
 */
import type { IncomingHttpHeaders } from 'node:http';

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'expect',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
]);

/** True when `name` (lower case) must never cross the proxy. */
export function isHopByHop(name: string): boolean {
  return HOP_BY_HOP.has(name) || name.startsWith('proxy-');
}

/** What `Connection` says on almost every message: hop-by-hop already, so it names nothing more to drop. */
const PLAIN_CONNECTION = /^\s*(?:keep-alive|close)\s*$/i;
const NO_TOKENS: ReadonlySet<string> = new Set();

/** Lower-cased header names listed in a `Connection` header value (the caller must not change the set). */
export function connectionTokens(value: string | readonly string[] | undefined): ReadonlySet<string> {
  // Every engine answer and most requests carry one of these: no set to build for them.
  if (value === undefined || (typeof value === 'string' && PLAIN_CONNECTION.test(value))) return NO_TOKENS;
  const tokens = new Set<string>();
  for (const part of typeof value === 'string' ? [value] : value) {
    for (const token of part.split(',')) {
      const name = token.trim().toLowerCase();
      if (name !== '') tokens.add(name);
    }
  }
  return tokens;
}

/**
 * How the `Authorization` header to an engine is chosen, per discovery
 * source: forward the client's, send none, or replace it with the source's
 * engine key (`value` is the whole header value, e.g. `Bearer KEY`).
 */
export type AuthorizationRule =
  | { readonly kind: 'forward' }
  | { readonly kind: 'strip' }
  | { readonly kind: 'replace'; readonly value: string };

/** The `Authorization` value one attempt sends under `rule`, or undefined for none. */
export function authorizationValue(rule: AuthorizationRule, clientAuthorization: string | undefined): string | undefined {
  if (rule.kind === 'replace') return rule.value;
  return rule.kind === 'forward' ? clientAuthorization : undefined;
}

/** Inputs of {@link upstreamRequestHeaders}. */
export interface UpstreamHeaderContext {
  /** The client's socket address: X-Forwarded-For (after a trusted proxy's chain). */
  readonly clientAddress: string | undefined;
  /**
   * The client is a trusted proxy: its forwarding headers pass on (its
   * `X-Forwarded-Proto` is kept, its `Forwarded` gets this hop appended).
   * Otherwise they are dropped.
   */
  readonly trustedClient: boolean;
  readonly requestIdHeader: string;
  readonly requestId: string;
  /**
   * With tracing on: the router span's W3C trace context (`traceparent`
   * and, when any, `tracestate`; a flat name/value list), sent in place of
   * the client's so the engine's span is the router span's child. Undefined:
   * the client's trace context passes through untouched.
   */
  readonly traceContext?: readonly string[] | undefined;
}

/** W3C Trace Context headers (https://www.w3.org/TR/trace-context/#relationship-between-the-headers). */
const TRACE_CONTEXT = new Set(['traceparent', 'tracestate']);

/** Headers the router sets itself, so the client's copies are dropped. */
const REPLACED_ON_REQUEST = new Set(['host', 'content-length', 'x-forwarded-for', 'x-forwarded-proto', 'forwarded', 'authorization']);

/** True when `name` (lower case) claims something about the original client: only a trusted proxy's pass on. */
export function isForwardingHeader(name: string): boolean {
  return name.startsWith('x-forwarded-') || name === 'forwarded' || name === 'x-real-ip';
}

/**
 * Builds the upstream request headers from the client's raw header list
 * (`IncomingMessage.rawHeaders`, name/value pairs, original case) as a flat
 * name/value list for undici. Content-Length is left to undici, which sets it
 * from the (unchanged) body. Authorization is never in the list: which one an
 * engine gets depends on the endpoint's source, so each forwarding attempt
 * appends its own (see {@link authorizationValue}).
 */
export function upstreamRequestHeaders(rawHeaders: readonly string[], ctx: UpstreamHeaderContext): string[] {
  let named: ReadonlySet<string> | undefined;
  let forwardedFor: string | undefined;
  let forwarded: string | undefined;
  let forwardedProto: string | undefined;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = (rawHeaders[i] as string).toLowerCase();
    const value = rawHeaders[i + 1] as string;
    if (name === 'connection') named = connectionTokens(value);
    else if (name === 'x-forwarded-for') forwardedFor = forwardedFor === undefined ? value : `${forwardedFor}, ${value}`;
    else if (name === 'forwarded') forwarded = forwarded === undefined ? value : `${forwarded}, ${value}`;
    else if (name === 'x-forwarded-proto') forwardedProto ??= value;
  }
  const requestIdHeader = ctx.requestIdHeader;
  const trusted = ctx.trustedClient;
  const out: string[] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string;
    const lower = name.toLowerCase();
    if (isHopByHop(lower) || REPLACED_ON_REQUEST.has(lower) || lower === requestIdHeader || named?.has(lower)) continue;
    if (!trusted && isForwardingHeader(lower)) continue;
    if (ctx.traceContext !== undefined && TRACE_CONTEXT.has(lower)) continue;
    out.push(name, rawHeaders[i + 1] as string);
  }
  if (ctx.traceContext !== undefined) out.push(...ctx.traceContext);
  if (ctx.clientAddress !== undefined) {
    out.push('x-forwarded-for', !trusted || forwardedFor === undefined ? ctx.clientAddress : `${forwardedFor}, ${ctx.clientAddress}`);
  }
  if (trusted && forwarded !== undefined) out.push('forwarded', ctx.clientAddress === undefined ? forwarded : `${forwarded}, for=${forwardedNode(ctx.clientAddress)}`);
  out.push('x-forwarded-proto', trusted && forwardedProto !== undefined ? forwardedProto : 'http', requestIdHeader, ctx.requestId);
  return out;
}

/** An address as a `Forwarded` node (RFC 7239 §6): IPv6 bracketed and quoted. */
function forwardedNode(address: string): string {
  return address.includes(':') ? `"[${address}]"` : address;
}

/**
 * Builds the client response headers from the engine's parsed headers as a
 * flat list for `ServerResponse.writeHead`, without hop-by-hop headers, and
 * with the request id.
 */
export function downstreamResponseHeaders(
  headers: IncomingHttpHeaders,
  requestIdHeader: string,
  requestId: string,
  /** The endpoint header's name and value, replacing any the engine sent under that name. */
  endpoint?: readonly [name: string, value: string],
): string[] {
  const named = connectionTokens(headers['connection']);
  const out: string[] = [];
  for (const name in headers) {
    if (isHopByHop(name) || named.has(name) || name === requestIdHeader || name === endpoint?.[0]) continue;
    const value = headers[name];
    if (value === undefined) continue;
    if (typeof value === 'string') out.push(name, value);
    else for (const item of value) out.push(name, item);
  }
  out.push(requestIdHeader, requestId);
  if (endpoint !== undefined) out.push(endpoint[0], endpoint[1]);
  return out;
}

const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The client's request id when it is 1-128 characters of `[A-Za-z0-9._:-]`
 * (UUIDs, ULIDs, trace-style ids); otherwise undefined (the caller generates
 * one), so nothing odd is echoed, logged or forwarded.
 */
export function acceptableRequestId(value: string | string[] | undefined): string | undefined {
  return typeof value === 'string' && REQUEST_ID_PATTERN.test(value) ? value : undefined;
}
