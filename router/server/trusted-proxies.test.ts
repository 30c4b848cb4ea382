import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { trustedProxies } from './trusted-proxies.ts';

describe('trusted proxies', () => {
  it('trusts nobody by default', () => {
    const trusted = trustedProxies([]);
    for (const address of ['127.0.0.1', '::1', '10.0.0.1', undefined]) assert.equal(trusted(address), false);
  });

  it('matches IPv4 and IPv6 blocks and single addresses', () => {
    const trusted = trustedProxies(['10.0.0.0/8', '192.0.2.7', 'fd00::/8', '2001:db8::1']);
    assert.equal(trusted('10.255.1.2'), true);
    assert.equal(trusted('11.0.0.1'), false);
    assert.equal(trusted('192.0.2.7'), true);
    assert.equal(trusted('192.0.2.8'), false);
    assert.equal(trusted('fd12:3456::1'), true);
    assert.equal(trusted('fe80::1'), false);
    assert.equal(trusted('2001:db8::1'), true);
    assert.equal(trusted('2001:db8::2'), false);
    assert.equal(trusted(undefined), false);
    assert.equal(trusted('not-an-address'), false);
  });

  it('matches the IPv4-mapped form a dual-stack listener reports', () => {
    assert.equal(trustedProxies(['10.0.0.0/8'])('::ffff:10.1.2.3'), true);
    assert.equal(trustedProxies(['10.0.0.0/8'])('::ffff:11.1.2.3'), false);
  });

  it('rejects an entry that is not an address', () => {
    assert.throws(() => trustedProxies(['proxy.internal']), /not an IP address or CIDR block/);
  });
});
