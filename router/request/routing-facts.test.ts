import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { SwitchyardError } from '../errors/errors.ts';
import { MAX_MULTIPART_PARTS, multipartBodyFacts } from './routing-facts.ts';

const code = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return err instanceof SwitchyardError ? err.code : 'other';
  }
  return 'none';
};

const form = (fields: [string, string][], boundary = 'b') =>
  Buffer.from(
    fields.map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`).join('') + `--${boundary}--\r\n`,
    'latin1',
  );

describe('routing facts from multipart bodies', () => {
  it('reads the model and stream fields', () => {
    const body = Buffer.from('--b\r\nContent-Disposition: form-data; name="model"\r\n\r\nwhisper\r\n--b\r\nContent-Disposition: form-data; name="file"; filename="x"\r\n\r\n\xff\xfe\r\n--b--\r\n', 'latin1');
    assert.equal(multipartBodyFacts(body, 'multipart/form-data; boundary=b').model, 'whisper');
    assert.equal(multipartBodyFacts(body, 'multipart/form-data; boundary="b"').model, 'whisper');
    assert.equal(multipartBodyFacts(form([['stream', 'true'], ['model', 'm']]), 'multipart/form-data; boundary=b').stream, true);
  });

  it('finds the fields after a preamble, and ignores a delimiter that does not start a line', () => {
    const body = Buffer.concat([Buffer.from('preamble'), Buffer.from('\r\n'), form([['file', 'x--b y'], ['model', 'm']])]);
    assert.equal(multipartBodyFacts(body, 'multipart/form-data; boundary=b').model, 'm');
  });

  it('leaves the model unset when the field is missing and rejects a missing boundary', () => {
    assert.equal(multipartBodyFacts(Buffer.from('--b--\r\n'), 'multipart/form-data; boundary=b').model, undefined);
    assert.equal(code(() => multipartBodyFacts(Buffer.from(''), 'multipart/form-data')), 'SWITCHYARD_BAD_REQUEST');
  });

  it('regression: a tiny boundary repeated through the body cost seconds of CPU; now more parts than the cap are refused', () => {
    const many = form(Array.from({ length: MAX_MULTIPART_PARTS + 1 }, (_, i): [string, string] => [`f${i}`, 'v']), 'a');
    assert.equal(code(() => multipartBodyFacts(many, 'multipart/form-data; boundary=a')), 'SWITCHYARD_BAD_REQUEST');
    const enough = form([...Array.from({ length: MAX_MULTIPART_PARTS - 1 }, (_, i): [string, string] => [`f${i}`, 'v']), ['model', 'm']], 'a');
    assert.equal(multipartBodyFacts(enough, 'multipart/form-data; boundary=a').model, 'm');
  });

  it('never throws anything but a SwitchyardError on arbitrary bytes (property)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.constantFrom('a', 'b', 'xyz'), (bytes, boundary) => {
        assert.notEqual(code(() => multipartBodyFacts(Buffer.from(bytes), `multipart/form-data; boundary=${boundary}`)), 'other');
      }),
    );
  });
});
