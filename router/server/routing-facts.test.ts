import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { SwitchyardError } from '../errors/errors.ts';
import { jsonBodyFacts, jsonDepth, multipartBodyFacts } from './routing-facts.ts';

const facts = (text: string) => jsonBodyFacts(Buffer.from(text), 64);
const code = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return err instanceof SwitchyardError ? err.code : 'other';
  }
  return 'none';
};

describe('routing facts from JSON bodies', () => {
  it('reads model, stream and user', () => {
    assert.deepEqual(facts('{"model":"m","stream":true,"user":"u1"}'), { model: 'm', stream: true, user: 'u1' });
    assert.deepEqual(facts('{"model":"m","stream":"yes","user":""}'), { model: 'm', stream: false, user: undefined });
  });

  it('rejects each kind of bad body with its own code', () => {
    assert.equal(code(() => facts('{"model":')), 'SWITCHYARD_INVALID_JSON');
    assert.equal(code(() => jsonBodyFacts(Buffer.from([0xff, 0xfe]), 64)), 'SWITCHYARD_INVALID_UTF8');
    assert.equal(code(() => facts('null')), 'SWITCHYARD_INVALID_BODY');
    assert.equal(code(() => facts('"model"')), 'SWITCHYARD_INVALID_BODY');
    assert.equal(code(() => facts('{"model":""}')), 'SWITCHYARD_MISSING_MODEL');
    assert.equal(code(() => facts(`{"model":"m","a":${'{"b":'.repeat(70)}1${'}'.repeat(70)}}`)), 'SWITCHYARD_NESTING_TOO_DEEP');
  });

  it('measures nesting depth the way a parser sees it (property)', () => {
    const depthOf = (value: unknown): number =>
      typeof value === 'object' && value !== null ? 1 + Math.max(0, ...Object.values(value).map(depthOf)) : 0;
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), (value) => {
        const text = JSON.stringify(value);
        assert.equal(jsonDepth(text, 1_000), depthOf(value));
      }),
    );
  });

  it('never throws anything but a SwitchyardError on arbitrary bytes (property)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        const result = code(() => jsonBodyFacts(Buffer.from(bytes), 16));
        assert.notEqual(result, 'other');
      }),
    );
  });
});

describe('routing facts from multipart bodies', () => {
  it('reads the model field', () => {
    const body = Buffer.from('--b\r\nContent-Disposition: form-data; name="model"\r\n\r\nwhisper\r\n--b\r\nContent-Disposition: form-data; name="file"; filename="x"\r\n\r\n\xff\xfe\r\n--b--\r\n', 'latin1');
    assert.equal(multipartBodyFacts(body, 'multipart/form-data; boundary=b').model, 'whisper');
    assert.equal(multipartBodyFacts(body, 'multipart/form-data; boundary="b"').model, 'whisper');
  });

  it('leaves the model unset when the field is missing and rejects a missing boundary', () => {
    assert.equal(multipartBodyFacts(Buffer.from('--b--\r\n'), 'multipart/form-data; boundary=b').model, undefined);
    assert.equal(code(() => multipartBodyFacts(Buffer.from(''), 'multipart/form-data')), 'SWITCHYARD_BAD_REQUEST');
  });
});
