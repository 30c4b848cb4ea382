import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { SwitchyardError } from '../errors/errors.ts';
import { JsonBodyScanner, MAX_FIELD_BYTES } from './json-body-scanner.ts';

const LIMITS = { maxDepth: 16, promptPrefixBytes: 64 };

/** Scans `body` split at `cuts` (byte offsets), as it would arrive in chunks. */
function scan(body: Buffer, cuts: readonly number[] = [], limits = LIMITS) {
  const scanner = new JsonBodyScanner(limits);
  let from = 0;
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    scanner.push(body.subarray(from, Math.max(from, cut)));
    from = Math.max(from, cut);
  }
  scanner.push(body.subarray(from));
  return scanner.finish(body);
}

const outcome = (fn: () => unknown): string => {
  try {
    fn();
    return 'ok';
  } catch (err) {
    return err instanceof SwitchyardError ? err.code : `other: ${String(err)}`;
  }
};

const text = (value: string, cuts: readonly number[] = []) => scan(Buffer.from(value), cuts);

describe('bounded JSON body scanner', () => {
  it('reads model, stream and user from the top level only', () => {
    assert.deepEqual(text('{"model":"m","stream":true,"user":"u1"}'), { model: 'm', stream: true, user: 'u1', promptPrefix: undefined });
    const nested = text('{"x":{"model":"inner","stream":true},"model":"outer","user":""}');
    assert.equal(nested.model, 'outer');
    assert.equal(nested.stream, false);
    assert.equal(nested.user, undefined);
    assert.equal(text('{"model":"m","stream":"yes"}').stream, false);
  });

  it('takes the last of duplicate keys and decodes escapes in keys and values, as JSON.parse does', () => {
    const body = '{"model":"a","mod\\u0065l":"b\\u00e9\\n","stream":true,"stream":false}';
    const parsed = JSON.parse(body) as { model: string; stream: boolean };
    const facts = text(body);
    assert.equal(facts.model, parsed.model);
    assert.equal(facts.stream, parsed.stream);
  });

  it('rejects each kind of bad body with its own code', () => {
    assert.equal(outcome(() => text('{"model":')), 'SWITCHYARD_INVALID_JSON');
    assert.equal(outcome(() => scan(Buffer.from([0x7b, 0x22, 0x6d, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]))), 'SWITCHYARD_INVALID_UTF8');
    assert.equal(outcome(() => text('null')), 'SWITCHYARD_INVALID_BODY');
    assert.equal(outcome(() => text('"model"')), 'SWITCHYARD_INVALID_BODY');
    assert.equal(outcome(() => text('{"model":""}')), 'SWITCHYARD_MISSING_MODEL');
    assert.equal(outcome(() => text('{"model":7}')), 'SWITCHYARD_MISSING_MODEL');
    assert.equal(outcome(() => text('{"model":"m","model":null}')), 'SWITCHYARD_MISSING_MODEL');
    assert.equal(outcome(() => text(`{"model":"${'m'.repeat(MAX_FIELD_BYTES)}"}`)), 'SWITCHYARD_INVALID_BODY');
    assert.equal(outcome(() => text(`{"model":"m","a":${'{"b":'.repeat(20)}1${'}'.repeat(20)}}`)), 'SWITCHYARD_NESTING_TOO_DEEP');
  });

  it('regression: a deeply nested body was parsed whole before its depth was checked; now the first bracket past the limit throws', () => {
    const scanner = new JsonBodyScanner(LIMITS);
    const opening = Buffer.from('{"model":"m","x":' + '['.repeat(LIMITS.maxDepth - 1));
    scanner.push(opening); // exactly at the limit: fine
    assert.equal(outcome(() => scanner.push(Buffer.from('['))), 'SWITCHYARD_NESTING_TOO_DEEP');
  });

  it('accepts exactly what JSON.parse accepts, and reads the same facts, however the body is cut (property)', () => {
    const value = fc.jsonValue({ maxDepth: 6 });
    const body = fc.oneof(
      // objects with a model: valid requests
      fc.tuple(fc.dictionary(fc.string(), value, { maxKeys: 5 }), fc.string({ minLength: 1 }), fc.boolean()).map(([rest, model, stream]) =>
        JSON.stringify({ ...rest, model, stream }, null, stream ? 1 : undefined),
      ),
      // anything JSON
      value.map((v) => JSON.stringify(v) ?? 'null'),
      // near-JSON text: truncated, with a character replaced
      fc.tuple(value, fc.nat(), fc.constantFrom('', '"', '\\', ',', '}', ']', '-', '0', 'e', ' ', '\u0001', 'tru')).map(([v, at, with_]) => {
        const json = JSON.stringify(v) ?? 'null';
        const i = json.length === 0 ? 0 : at % json.length;
        return json.slice(0, i) + with_ + json.slice(i + 1);
      }),
    );
    fc.assert(
      fc.property(body, fc.array(fc.nat({ max: 400 }), { maxLength: 6 }), (source, cuts) => {
        let expected: string;
        let parsed: unknown;
        try {
          parsed = JSON.parse(source);
          const fields = parsed as { model?: unknown } | null;
          if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) expected = 'SWITCHYARD_INVALID_BODY';
          else if (typeof fields?.model !== 'string' || fields.model === '') expected = 'SWITCHYARD_MISSING_MODEL';
          else if (depthOf(parsed) > LIMITS.maxDepth) expected = 'SWITCHYARD_NESTING_TOO_DEEP';
          else if (Buffer.byteLength(JSON.stringify(fields.model)) > MAX_FIELD_BYTES) expected = 'SWITCHYARD_INVALID_BODY';
          else expected = 'ok';
        } catch {
          expected = 'SWITCHYARD_INVALID_JSON';
        }
        const bytes = Buffer.from(source);
        let facts: ReturnType<typeof scan> | undefined;
        const got = outcome(() => (facts = scan(bytes, cuts)));
        // A non-object body may be refused as invalid JSON or as a non-object, whichever byte tells first.
        const bodyErrors = ['SWITCHYARD_INVALID_BODY', 'SWITCHYARD_INVALID_JSON'];
        if (!source.trimStart().startsWith('{') && bodyErrors.includes(expected) && bodyErrors.includes(got)) return;
        assert.equal(got, expected, source);
        if (facts !== undefined) {
          const fields = parsed as { model: string; stream?: unknown; user?: unknown };
          assert.equal(facts.model, fields.model);
          assert.equal(facts.stream, fields.stream === true);
          assert.equal(facts.user, typeof fields.user === 'string' && fields.user !== '' ? fields.user : undefined);
        }
      }),
      { numRuns: 2_000 },
    );
  });

  it('keeps a canonical prompt prefix: the same for bodies that differ only in whitespace and field order', () => {
    const messages = [{ role: 'system', content: 'You are terse.  Keep  spaces in strings.' }, { role: 'user', content: 'hi' }];
    const a = text(JSON.stringify({ model: 'm', messages }));
    const b = text(JSON.stringify({ messages, stream: true, model: 'm' }, null, 2));
    assert.ok(a.promptPrefix !== undefined && b.promptPrefix !== undefined);
    assert.equal(a.promptPrefix.length, LIMITS.promptPrefixBytes);
    assert.deepEqual(a.promptPrefix, b.promptPrefix);
    assert.equal(a.promptPrefix.toString(), JSON.stringify(messages).slice(0, LIMITS.promptPrefixBytes));
    assert.equal(text('{"model":"m","prompt":"Once upon"}').promptPrefix?.toString(), '"Once upon"');
    assert.equal(scan(Buffer.from('{"model":"m","prompt":"x"}'), [], { maxDepth: 16, promptPrefixBytes: 0 }).promptPrefix, undefined);
  });
});

function depthOf(value: unknown): number {
  return typeof value === 'object' && value !== null ? 1 + Math.max(0, ...Object.values(value).map(depthOf)) : 0;
}
