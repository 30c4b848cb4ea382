/**
 * HOST:PORT addresses: the listen addresses, the Redis nodes, the simulator's
 * `--listen`. One grammar for all of them, so an address the configuration
 * schema accepts is one every listener can bind and every client can dial:
 *
 * - HOST is a hostname or IPv4 address (`[A-Za-z0-9.-]+`), or an IPv6 address
 *   in brackets (`[::1]`): the brackets keep its colons apart from the port's
 *   (RFC 3986 §3.2.2, https://www.rfc-editor.org/rfc/rfc3986#section-3.2.2).
 *   Sockets take the address without them; URLs need them back.
 * - PORT is 0-65535; 0 asks the system for a free port.
 */

/** The shape of HOST:PORT (the configuration schema's pattern, and the chart's). */
export const HOST_PORT_PATTERN = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/;
/** What is wrong with an address that does not have {@link HOST_PORT_PATTERN}'s shape. */
export const HOST_PORT_SHAPE_MESSAGE = 'must be HOST:PORT, e.g. 0.0.0.0:8080';
/** What is wrong with an address whose port is over 65535. */
export const PORT_RANGE_MESSAGE = 'port must be 0-65535';

const MAX_PORT = 65_535;

/** A parsed HOST:PORT. */
export interface HostPort {
  /** Hostname or IP address, an IPv6 address without its brackets (as `listen()` and `connect()` take it). */
  readonly host: string;
  /** 0-65535. */
  readonly port: number;
}

/**
 * True when `text` ends in `:DIGITS` and those digits are over 65535. Whether
 * the rest has the HOST:PORT shape is {@link HOST_PORT_PATTERN}'s to say.
 */
export function portOutOfRange(text: string): boolean {
  return /:\d+$/.test(text) && Number(text.slice(text.lastIndexOf(':') + 1)) > MAX_PORT;
}

/**
 * Parses `text` as HOST:PORT.
 * @throws Error `must be HOST:PORT, e.g. 0.0.0.0:8080 (got "…")` when it has not that
 *   shape (no port, an empty host, a bare IPv6 address), or `port must be 0-65535 (got "…")`.
 */
export function parseHostPort(text: string): HostPort {
  if (!HOST_PORT_PATTERN.test(text)) throw new Error(`${HOST_PORT_SHAPE_MESSAGE} (got ${JSON.stringify(text)})`);
  if (portOutOfRange(text)) throw new Error(`${PORT_RANGE_MESSAGE} (got ${JSON.stringify(text)})`);
  const colon = text.lastIndexOf(':');
  return { host: unbracketHost(text.slice(0, colon)), port: Number(text.slice(colon + 1)) };
}

/** `host` without the brackets of an IPv6 literal (`[::1]` → `::1`, as URL's `hostname` keeps them); any other host as is. */
export function unbracketHost(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/** HOST:PORT text for `host` and `port`, an IPv6 address in brackets (for URLs and messages). */
export function formatHostPort(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}
