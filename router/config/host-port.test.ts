import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatHostPort, parseHostPort, portOutOfRange, unbracketHost } from './host-port.ts';

describe('HOST:PORT', () => {
  it('parses an IPv4 address and its port', () => {
    assert.deepEqual(parseHostPort('0.0.0.0:8080'), { host: '0.0.0.0', port: 8080 });
    assert.deepEqual(parseHostPort('127.0.0.1:0'), { host: '127.0.0.1', port: 0 });
  });

  it('parses an IPv6 address in brackets, without them', () => {
    assert.deepEqual(parseHostPort('[::1]:9090'), { host: '::1', port: 9090 });
    assert.deepEqual(parseHostPort('[fd00::10:2]:6379'), { host: 'fd00::10:2', port: 6379 });
    assert.deepEqual(parseHostPort('[::ffff:10.0.0.1]:65535'), { host: '::ffff:10.0.0.1', port: 65535 });
  });

  it('parses hostnames', () => {
    assert.deepEqual(parseHostPort('localhost:8000'), { host: 'localhost', port: 8000 });
    assert.deepEqual(parseHostPort('redis-sentinel-0.redis.svc.cluster.local:26379'), { host: 'redis-sentinel-0.redis.svc.cluster.local', port: 26379 });
  });

  it('refuses an address without a port, or without a host', () => {
    for (const text of ['8080', 'localhost', 'localhost:', '127.0.0.1', ':8080', '[::1]', '']) {
      assert.throws(() => parseHostPort(text), { message: `must be HOST:PORT, e.g. 0.0.0.0:8080 (got ${JSON.stringify(text)})` }, text);
    }
  });

  it('refuses an IPv6 address without brackets: its last group would be taken for the port', () => {
    assert.throws(() => parseHostPort('::1:8080'), /must be HOST:PORT/);
    assert.throws(() => parseHostPort('fd00::1:80'), /must be HOST:PORT/);
  });

  it('refuses a bad port', () => {
    for (const text of ['localhost:http', 'localhost:80a', 'localhost:-1', 'localhost:1.5', 'localhost:123456']) {
      assert.throws(() => parseHostPort(text), { message: `must be HOST:PORT, e.g. 0.0.0.0:8080 (got ${JSON.stringify(text)})` }, text);
    }
    for (const text of ['localhost:65536', '[::1]:99999']) {
      assert.throws(() => parseHostPort(text), { message: `port must be 0-65535 (got ${JSON.stringify(text)})` }, text);
    }
  });

  it('says a port is out of range only when the text ends in digits over 65535', () => {
    assert.equal(portOutOfRange('h:65535'), false);
    assert.equal(portOutOfRange('h:65536'), true);
    assert.equal(portOutOfRange('h:9999999'), true);
    assert.equal(portOutOfRange('8080'), false);
    assert.equal(portOutOfRange('h:x'), false);
  });

  it('takes the brackets off an IPv6 host, and puts them back for HOST:PORT text', () => {
    assert.equal(unbracketHost('[::1]'), '::1');
    assert.equal(unbracketHost('10.0.0.1'), '10.0.0.1');
    assert.equal(unbracketHost(new URL('redis://[fd00::2]:6379').hostname), 'fd00::2');
    assert.equal(formatHostPort('::1', 8080), '[::1]:8080');
    assert.equal(formatHostPort('10.0.0.1', 8080), '10.0.0.1:8080');
    assert.equal(formatHostPort('localhost', 0), 'localhost:0');
    for (const text of ['127.0.0.1:8080', '[::1]:9090', 'localhost:1']) {
      const { host, port } = parseHostPort(text);
      assert.equal(formatHostPort(host, port), text);
    }
  });
});
