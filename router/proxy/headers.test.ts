import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { acceptableRequestId, authorizationValue, downstreamResponseHeaders, isForwardingHeader, isHopByHop, upstreamRequestHeaders, type UpstreamHeaderContext } from './headers.ts';

const ctx: UpstreamHeaderContext = { clientAddress: '10.1.2.3', trustedClient: false, requestIdHeader: 'x-request-id', requestId: 'rid' };
const trustedCtx: UpstreamHeaderContext = { ...ctx, trustedClient: true };
const FORWARDING = ['X-Forwarded-Host', 'X-Forwarded-Port', 'X-Forwarded-Prefix', 'X-Forwarded-Proto', 'X-Forwarded-For', 'Forwarded', 'X-Real-IP', 'x-forwarded-server'];
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
          return !isHopByHop(l) && !namedLower.has(l) && !isForwardingHeader(l) && !['host', 'content-length', 'authorization', 'x-request-id'].includes(l);
        });
        assert.deepEqual(out.slice(0, kept.length), kept);
      }),
    );
  });

  it('drops every forwarding header of an untrusted client; X-Forwarded-For is its socket address alone, X-Forwarded-Proto is http (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.oneof(token, fc.constantFrom(...FORWARDING)), fc.string({ maxLength: 20 })), { maxLength: 20 }), (headers) => {
        const out = pairs(upstreamRequestHeaders(headers.flat(), ctx));
        const forwarding = out.filter(([name]) => isForwardingHeader(name.toLowerCase()));
        assert.deepEqual(forwarding.map(([name]) => name), ['x-forwarded-for', 'x-forwarded-proto']);
        assert.equal(forwarding[0]?.[1], ctx.clientAddress);
        assert.equal(forwarding[1]?.[1], 'http');
      }),
    );
  });

  it("passes a trusted proxy's forwarding headers on unchanged, appending this hop to X-Forwarded-For and Forwarded (property)", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom(...FORWARDING), fc.stringMatching(/^[\x21-\x7e]{1,12}$/)), { maxLength: 12 }), (headers) => {
        const out = pairs(upstreamRequestHeaders(headers.flat(), trustedCtx));
        const valuesOf = (list: [string, string][], name: string) => list.filter(([n]) => n.toLowerCase() === name).map(([, v]) => v);
        // Single-valued claims pass on as sent, in order.
        const passed = (name: string) => !['x-forwarded-for', 'x-forwarded-proto', 'forwarded'].includes(name.toLowerCase());
        assert.deepEqual(out.filter(([n]) => isForwardingHeader(n.toLowerCase()) && passed(n)), headers.filter(([n]) => passed(n)));
        const sentFor = valuesOf(headers, 'x-forwarded-for');
        assert.deepEqual(valuesOf(out, 'x-forwarded-for'), [[...sentFor, '10.1.2.3'].join(', ')]);
        const sentForwarded = valuesOf(headers, 'forwarded');
        assert.deepEqual(valuesOf(out, 'forwarded'), sentForwarded.length === 0 ? [] : [[...sentForwarded, 'for=10.1.2.3'].join(', ')]);
        assert.deepEqual(valuesOf(out, 'x-forwarded-proto'), [valuesOf(headers, 'x-forwarded-proto')[0] ?? 'http']);
      }),
    );
  });

  it('writes an IPv6 hop into Forwarded bracketed and quoted', () => {
    const out = pairs(upstreamRequestHeaders(['Forwarded', 'for=192.0.2.60;proto=https'], { ...trustedCtx, clientAddress: '2001:db8::7' }));
    assert.deepEqual(out.find(([n]) => n === 'forwarded'), ['forwarded', 'for=192.0.2.60;proto=https, for="[2001:db8::7]"']);
  });

  it("replaces an untrusted client's X-Forwarded-For with its address and sets the request id once", () => {
    const out = pairs(upstreamRequestHeaders(['X-Forwarded-For', '1.1.1.1', 'x-request-id', 'client-chosen', 'Host', 'evil'], ctx));
    assert.deepEqual(out, [
      ['x-forwarded-for', '10.1.2.3'],
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

  it('accepts only request ids of at most 128 characters of [A-Za-z0-9._:-]', () => {
    assert.equal(acceptableRequestId('abc-123'), 'abc-123');
    assert.equal(acceptableRequestId('01J9Z.trace:span_'.replace('_', '-')), '01J9Z.trace:span-');
    assert.equal(acceptableRequestId('a'.repeat(128)), 'a'.repeat(128));
    for (const odd of ['a"b', 'a=b', 'a/b', 'a\\b', '{x}', 'a,b', 'a;b']) assert.equal(acceptableRequestId(odd), undefined, odd);
    assert.equal(acceptableRequestId('a'.repeat(129)), undefined);
    assert.equal(acceptableRequestId('has space'), undefined);
    assert.equal(acceptableRequestId('ünïcode'), undefined);
    assert.equal(acceptableRequestId(['a', 'b']), undefined);
    assert.equal(acceptableRequestId(''), undefined);
  });
});
