import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { acceptableRequestId, authorizationValue, downstreamResponseHeaders, isHopByHop, upstreamRequestHeaders, type UpstreamHeaderContext } from './headers.ts';

const ctx: UpstreamHeaderContext = { clientAddress: '10.1.2.3', requestIdHeader: 'x-request-id', requestId: 'rid' };
const HOP = ['Connection', 'Keep-Alive', 'TE', 'Trailer', 'Transfer-Encoding', 'Upgrade', 'Proxy-Authorization', 'Proxy-Connection', 'Expect', 'Proxy-Foo'];

function pairs(flat: readonly string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i < flat.length; i += 2) out.push([flat[i] as string, flat[i + 1] as string]);
  return out;
}

const token = fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,15}$/);

describe('forwarded headers', () => {
  it('never forwards a hop-by-hop header or a header named in Connection (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.oneof(token, fc.constantFrom(...HOP)), fc.string({ maxLength: 20 })), { maxLength: 20 }), fc.array(token, { maxLength: 4 }), (headers, named) => {
        const raw = headers.flat();
        raw.push('Connection', named.join(', '));
        const out = pairs(upstreamRequestHeaders(raw, ctx));
        const namedLower = new Set(named.map((n) => n.toLowerCase()));
        for (const [name] of out) {
          const lower = name.toLowerCase();
          assert.ok(!isHopByHop(lower), `hop-by-hop ${name} forwarded`);
          if (!['x-forwarded-for', 'x-forwarded-proto', 'x-request-id'].includes(lower)) assert.ok(!namedLower.has(lower), `${name} named by Connection`);
        }
        // Every other header passes through with its value, in order.
        const kept = headers.filter(([n]) => {
          const l = n.toLowerCase();
          return !isHopByHop(l) && !namedLower.has(l) && !['host', 'content-length', 'x-forwarded-for', 'x-forwarded-proto', 'authorization', 'x-request-id'].includes(l);
        });
        assert.deepEqual(out.slice(0, kept.length), kept);
      }),
    );
  });

  it('appends the client address to X-Forwarded-For and sets the request id once', () => {
    const out = pairs(upstreamRequestHeaders(['X-Forwarded-For', '1.1.1.1', 'x-request-id', 'client-chosen', 'Host', 'evil'], ctx));
    assert.deepEqual(out, [
      ['x-forwarded-for', '1.1.1.1, 10.1.2.3'],
      ['x-forwarded-proto', 'http'],
      ['x-request-id', 'rid'],
    ]);
  });

  it("never puts the client's Authorization in the shared list: each attempt adds its endpoint's own", () => {
    assert.equal(pairs(upstreamRequestHeaders(['Authorization', 'Bearer client', 'authorization', 'Bearer again'], ctx)).find(([n]) => n.toLowerCase() === 'authorization'), undefined);
  });

  it('forwards, strips or replaces Authorization by rule', () => {
    assert.equal(authorizationValue({ kind: 'forward' }, 'Bearer client'), 'Bearer client');
    assert.equal(authorizationValue({ kind: 'forward' }, undefined), undefined);
    assert.equal(authorizationValue({ kind: 'strip' }, 'Bearer client'), undefined);
    assert.equal(authorizationValue({ kind: 'replace', value: 'Bearer engine' }, 'Bearer client'), 'Bearer engine');
    assert.equal(authorizationValue({ kind: 'replace', value: 'Bearer engine' }, undefined), 'Bearer engine');
  });

  it('strips hop-by-hop response headers and adds the request id', () => {
    const out = pairs(
      downstreamResponseHeaders(
        { 'content-type': 'text/event-stream', 'transfer-encoding': 'chunked', connection: 'close, x-hop', 'x-hop': '1', 'set-cookie': ['a=1', 'b=2'], 'x-request-id': 'engine' },
        'x-request-id',
        'rid',
      ),
    );
    assert.deepEqual(out, [
      ['content-type', 'text/event-stream'],
      ['set-cookie', 'a=1'],
      ['set-cookie', 'b=2'],
      ['x-request-id', 'rid'],
    ]);
  });

  it('accepts only short printable request ids', () => {
    assert.equal(acceptableRequestId('abc-123'), 'abc-123');
    assert.equal(acceptableRequestId('a'.repeat(129)), undefined);
    assert.equal(acceptableRequestId('has space'), undefined);
    assert.equal(acceptableRequestId('ünïcode'), undefined);
    assert.equal(acceptableRequestId(['a', 'b']), undefined);
    assert.equal(acceptableRequestId(''), undefined);
  });
});
