import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FOREIGN, ResponsePins } from './response-pins.ts';
import { ResponseIdSearch, responseIdIn } from './response-id.ts';

describe('response id', () => {
  it('finds the id of a non-streamed and of a streamed Responses answer', () => {
    assert.equal(responseIdIn(Buffer.from('{"id":"resp_abc123","object":"response","status":"completed"}')), 'resp_abc123');
    const created = 'event: response.created\ndata: {"type":"response.created","sequence_number":0,"response":{"id":"resp_9f_x-1","object":"response"}}\n\n';
    assert.equal(responseIdIn(Buffer.from(created)), 'resp_9f_x-1');
  });
  it('finds nothing in other answers', () => {
    assert.equal(responseIdIn(Buffer.from('{"id":"chatcmpl-1","object":"chat.completion"}')), undefined);
    assert.equal(responseIdIn(Buffer.from('{"error":{"message":"x"}}')), undefined);
  });
});

describe('response id search across chunks', () => {
  const answers = [
    '{"id":"resp_abc123","object":"response","status":"completed"}',
    'event: response.created\ndata: {"type":"response.created","sequence_number":0,"response":{"id":"resp_9f_x-1","object":"response"}}\n\n',
  ];

  it('regression: an id split across the first chunks lost the pin (the follow-up got a 404 from another engine)', () => {
    for (const answer of answers) {
      const whole = responseIdIn(Buffer.from(answer));
      for (let cut = 1; cut < answer.length; cut++) {
        const search = new ResponseIdSearch();
        const first = search.push(Buffer.from(answer.slice(0, cut)));
        const found = first ?? search.push(Buffer.from(answer.slice(cut)));
        assert.equal(found, whole, `cut at ${cut}`);
      }
    }
  });

  it('gives up after the first 4 KiB without an id', () => {
    const search = new ResponseIdSearch();
    assert.equal(search.push(Buffer.alloc(4_000, 0x20)), undefined);
    assert.equal(search.push(Buffer.from(' '.repeat(200) + '{"id":"resp_late"}')), null);
  });
});

describe('response pins', () => {
  it('remembers the engine of a response and drops the least recently used beyond the bound', () => {
    const pins = new ResponsePins(2);
    pins.remember('resp_a', 'e1', undefined);
    pins.remember('resp_b', 'e2', undefined);
    assert.equal(pins.lookUp('resp_a', undefined), 'e1'); // a is now the most recent
    pins.remember('resp_c', 'e3', undefined);
    assert.equal(pins.lookUp('resp_b', undefined), undefined);
    assert.equal(pins.lookUp('resp_a', undefined), 'e1');
    assert.equal(pins.size, 2);
  });

  it("hands a pin only to the tenant whose request stored the response; another tenant's look-up does not refresh it", () => {
    const pins = new ResponsePins(2);
    pins.remember('resp_a', 'e1', 'team-a');
    pins.remember('resp_b', 'e2', 'team-a');
    assert.equal(pins.lookUp('resp_a', 'team-b'), FOREIGN);
    assert.equal(pins.lookUp('resp_a', undefined), FOREIGN);
    pins.remember('resp_c', 'e3', 'team-b'); // resp_a is still the least recent
    assert.equal(pins.lookUp('resp_a', 'team-a'), undefined);
    assert.equal(pins.lookUp('resp_b', 'team-a'), 'e2');
    assert.equal(pins.lookUp('resp_c', 'team-b'), 'e3');
  });
});
