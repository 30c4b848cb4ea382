import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ResponsePins } from '../load/response-pins.ts';
import { responseIdIn } from './response-id.ts';

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

describe('response pins', () => {
  it('remembers the engine of a response and drops the least recently used beyond the bound', () => {
    const pins = new ResponsePins(2);
    pins.remember('resp_a', 'e1');
    pins.remember('resp_b', 'e2');
    assert.equal(pins.endpointOf('resp_a'), 'e1'); // a is now the most recent
    pins.remember('resp_c', 'e3');
    assert.equal(pins.endpointOf('resp_b'), undefined);
    assert.equal(pins.endpointOf('resp_a'), 'e1');
    assert.equal(pins.size, 2);
  });
});
