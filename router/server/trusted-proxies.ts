/**
 * Which clients may speak for others: the proxies in front of the router
 * (`server.trustedProxies`), recognised by their socket address.
 *
 * Request headers that describe the original client or how it should be
 * treated (`x-priority`, `X-Forwarded-*`, `Forwarded`, `X-Real-IP`) are
 * claims; any client can send them. They count only when the connection
 * comes from a trusted proxy, which is expected to set or strip them for its
 * own clients. Everyone else's are ignored or dropped.
 */
import { BlockList, isIP } from 'node:net';

/** True when the socket address belongs to a trusted proxy; undefined (socket gone) is never trusted. */
export type TrustedClientTest = (address: string | undefined) => boolean;

const NOBODY: TrustedClientTest = () => false;

/**
 * Builds the test for a list of addresses and CIDR blocks, IPv4 and IPv6
 * (`10.0.0.0/8`, `fd00::/8`, `192.0.2.7`). An IPv4 block also matches the
 * IPv4-mapped IPv6 form (`::ffff:10.1.2.3`) that a dual-stack listener reports.
 * An empty list trusts nobody and costs nothing per request.
 * @throws Error on an entry that is not an address or CIDR block (the
 *   configuration schema rejects those first).
 */
export function trustedProxies(entries: readonly string[]): TrustedClientTest {
  if (entries.length === 0) return NOBODY;
  const list = new BlockList();
  for (const entry of entries) {
    const slash = entry.indexOf('/');
    const address = slash === -1 ? entry : entry.slice(0, slash);
    const family = isIP(address);
    if (family === 0) throw new Error(`not an IP address or CIDR block: ${entry}`);
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (slash === -1) list.addAddress(address, type);
    else list.addSubnet(address, Number(entry.slice(slash + 1)), type);
  }
  return (address) => {
    if (address === undefined) return false;
    const family = isIP(address);
    return family !== 0 && list.check(address, family === 4 ? 'ipv4' : 'ipv6');
  };
}
