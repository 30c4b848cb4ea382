import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HeadSampler, TraceIds, incomingParent } from './head-sampling.ts';

const TRACE = '0af7651916cd43dd8448eb211c80319c';
const SAMPLED = `00-${TRACE}-b7ad6b7169203331-01`;
const UNSAMPLED = `00-${TRACE}-b7ad6b7169203331-00`;

const decide = (sampler: HeadSampler, headers: Record<string, string>, trusted: boolean) => sampler.sampled(incomingParent(headers, trusted));

describe('HeadSampler', () => {
  it("follows a trusted proxy's sampled flag either way (parent-based)", () => {
    const sampler = new HeadSampler({ sampler: 'parentbased_traceidratio', samplerArg: 0.5 }, () => 0.99);
    assert.equal(decide(sampler, { traceparent: SAMPLED }, true), true);
    assert.equal(decide(new HeadSampler({ sampler: 'parentbased_traceidratio', samplerArg: 0.5 }, () => 0), { traceparent: UNSAMPLED }, true), false);
  });

  it('lets the ratio decide for an untrusted client, by a random draw, whatever its flag or trace id', () => {
    const never = new HeadSampler({ sampler: 'parentbased_traceidratio', samplerArg: 0.01 }, () => 0.5);
    assert.equal(decide(never, { traceparent: SAMPLED }, false), false, 'the sampled flag does not force tracing');
    // Its 32-bit words XOR to 1: OpenTelemetry's trace-id ratio samples it at any ratio above 1 in 4 billion.
    assert.equal(decide(never, { traceparent: `00-${'0'.repeat(31)}1-b7ad6b7169203331-01` }, false), false, 'a trace id chosen to pass the ratio does not either');
    const always = new HeadSampler({ sampler: 'parentbased_traceidratio', samplerArg: 0.01 }, () => 0.001);
    assert.equal(decide(always, { traceparent: UNSAMPLED }, false), true, 'nor does an unsampled flag stop it');
  });

  it('samples by ratio without a parent; always_on, always_off and non-parent-based samplers as named', () => {
    assert.equal(decide(new HeadSampler({ sampler: 'parentbased_traceidratio', samplerArg: 1 }, () => 0.999), {}, false), true);
    assert.equal(decide(new HeadSampler({ sampler: 'parentbased_traceidratio', samplerArg: 0 }, () => 0), {}, false), false);
    assert.equal(decide(new HeadSampler({ sampler: 'always_on', samplerArg: 0 }, () => 0.99), { traceparent: UNSAMPLED }, true), true, 'not parent-based: the flag is ignored');
    assert.equal(decide(new HeadSampler({ sampler: 'traceidratio', samplerArg: 0.5 }, () => 0.9), { traceparent: SAMPLED }, true), false, 'not parent-based: the ratio decides');
    assert.equal(decide(new HeadSampler({ sampler: 'parentbased_always_off', samplerArg: 1 }, () => 0), {}, false), false);
  });
});

describe('incomingParent', () => {
  it('reads a valid traceparent; the sampled flag and tracestate only from a trusted proxy', () => {
    const trusted = incomingParent({ traceparent: SAMPLED, tracestate: 'a=1,b=2' }, true);
    assert.equal(trusted?.traceId, TRACE);
    assert.equal(trusted?.sampled, true);
    assert.equal(trusted?.traceState?.serialize(), 'a=1,b=2');
    const untrusted = incomingParent({ traceparent: SAMPLED, tracestate: 'a=1' }, false);
    assert.equal(untrusted?.traceId, TRACE, 'the trace continues');
    assert.equal(untrusted?.sampled, false);
    assert.equal(untrusted?.traceState, undefined);
  });

  it('ignores a malformed traceparent, or several (joined by Node), and keeps tracestate within the W3C limits', () => {
    for (const bad of ['garbage', `${SAMPLED}, ${SAMPLED}`, `00-${'0'.repeat(32)}-b7ad6b7169203331-01`, `ff-${TRACE}-b7ad6b7169203331-01`]) {
      assert.equal(incomingParent({ traceparent: bad }, true), undefined, bad);
    }
    const members = Array.from({ length: 100 }, (_, i) => `k${i}=v${i}`).join(',');
    const state = incomingParent({ traceparent: SAMPLED, tracestate: members }, true)?.traceState?.serialize() ?? '';
    assert.ok(state.split(',').length <= 32 && state.length <= 512, `${state.split(',').length} members, ${state.length} characters`);
  });
});

describe('TraceIds', () => {
  it('draws distinct lower-case hex ids of W3C length across pool refills', () => {
    const ids = new TraceIds();
    const traces = new Set(Array.from({ length: 1_000 }, () => ids.traceId()));
    const spans = new Set(Array.from({ length: 1_000 }, () => ids.spanId()));
    assert.equal(traces.size, 1_000);
    assert.equal(spans.size, 1_000);
    assert.ok([...traces].every((id) => /^[0-9a-f]{32}$/.test(id)) && [...spans].every((id) => /^[0-9a-f]{16}$/.test(id)));
  });
});
