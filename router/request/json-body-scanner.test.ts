import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { SwitchyardError } from '../errors/errors.ts';
import { prefixKeys } from '../scheduling/prefix-keys.ts';
import { canonicalPrefix, JsonBodyScanner, MAX_FIELD_BYTES, type JsonScanLimits } from './json-body-scanner.ts';

const LIMITS = { maxDepth: 16, promptPrefixBytes: 64 };

/** Scans `body` split at `cuts` (byte offsets), as it would arrive in chunks. */
function scan(body: Buffer, cuts: readonly number[] = [], limits: JsonScanLimits = LIMITS) {
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
    assert.deepEqual(text('{"model":"m","stream":true,"user":"u1"}'), {
      model: 'm',
      stream: true,
      user: 'u1',
      cacheSalt: undefined,
      previousResponseId: undefined,
      promptPrefix: undefined,
      promptKind: undefined,
      promptTruncated: false,
    });
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

  it('keeps which container is open at every depth as its stack grows, up to the default limit of 128', () => {
    const limits = { maxDepth: 128, promptPrefixBytes: 64 };
    // Objects and arrays alternate, so a stack that lost a level in a growth closes the wrong kind.
    const nested = (levels: number, wrongCloseAt?: number) => {
      const open = Array.from({ length: levels }, (_, i) => (i % 2 === 0 ? '[' : '{"k":'));
      const close = Array.from({ length: levels }, (_, i) => (i % 2 === 0 ? ']' : '}')).reverse();
      if (wrongCloseAt !== undefined) close[levels - 1 - wrongCloseAt] = wrongCloseAt % 2 === 0 ? '}' : ']';
      return Buffer.from(`{"model":"m","x":${open.join('')}1${close.join('')}}`);
    };
    assert.equal(scan(nested(127), [], limits).model, 'm');
    for (const depth of [15, 16, 40, 100]) assert.equal(outcome(() => scan(nested(127, depth), [], limits)), 'SWITCHYARD_INVALID_JSON', `wrong bracket at depth ${depth}`);
    assert.equal(outcome(() => scan(nested(128), [], limits)), 'SWITCHYARD_NESTING_TOO_DEEP');
  });

  for (const [path, nativeRunsFrom] of [['a JavaScript loop', Number.POSITIVE_INFINITY], ['WebAssembly', 0]] as const) {
  it(`accepts exactly what JSON.parse accepts, and reads the same facts, however the body is cut, string runs found by ${path} (property)`, () => {
    const limits = { ...LIMITS, nativeRunsFrom };
    const value = fc.jsonValue({ maxDepth: 6 });
    const body = fc.oneof(
      // objects with a model: valid requests
      fc.tuple(fc.dictionary(fc.string(), value, { maxKeys: 5 }), fc.string({ minLength: 1 }), fc.boolean()).map(([rest, model, stream]) =>
        JSON.stringify({ ...rest, model, stream }, null, stream ? 1 : undefined),
      ),
      // requests with the string fields routing reads, as strings or not
      fc
        .record({ model: fc.string({ minLength: 1 }), user: value, cache_salt: fc.oneof(fc.string(), value), previous_response_id: fc.oneof(fc.string(), value) }, { requiredKeys: ['model'] })
        .map((fields) => JSON.stringify(fields)),
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
        const got = outcome(() => (facts = scan(bytes, cuts, limits)));
        // A non-object body may be refused as invalid JSON or as a non-object, whichever byte tells first.
        const bodyErrors = ['SWITCHYARD_INVALID_BODY', 'SWITCHYARD_INVALID_JSON'];
        if (!source.trimStart().startsWith('{') && bodyErrors.includes(expected) && bodyErrors.includes(got)) return;
        assert.equal(got, expected, source);
        if (facts !== undefined) {
          const fields = parsed as { model: string; stream?: unknown; user?: unknown; cache_salt?: unknown; previous_response_id?: unknown };
          const nonEmpty = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
          assert.equal(facts.model, fields.model);
          assert.equal(facts.stream, fields.stream === true);
          assert.equal(facts.user, nonEmpty(fields.user));
          assert.equal(facts.cacheSalt, nonEmpty(fields.cache_salt));
          assert.equal(facts.previousResponseId, nonEmpty(fields.previous_response_id));
        }
      }),
      { numRuns: 2_000 },
    );
  });
  }

  it('finds string runs in WebAssembly for large chunks: a 200 KB prompt with escapes and a control byte (regression: ~1-3 ns a byte in a JavaScript loop)', () => {
    const content = 'Line of a long document, with "quotes" and a tab\t. '.repeat(4_000);
    const body = Buffer.from(JSON.stringify({ messages: [{ role: 'user', content }], stream: true, model: 'm' }));
    assert.ok(body.length > 200_000);
    const facts = scan(body, [70_000, 140_000], { ...LIMITS, nativeRunsFrom: 1_024 });
    assert.equal(facts.model, 'm');
    assert.equal(facts.stream, true);
    // The same body with one escaped tab sent raw, as a control byte inside a string.
    const raw = Buffer.from(body);
    const escape = raw.indexOf('\\t', 150_000);
    raw[escape] = 0x09;
    raw[escape + 1] = 0x20;
    assert.equal(outcome(() => scan(raw, [], { ...LIMITS, nativeRunsFrom: 1_024 })), 'SWITCHYARD_INVALID_JSON', 'a raw tab inside a string');
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

  it('reads cache_salt and previous_response_id like user: top-level non-empty strings, the last of duplicates', () => {
    const facts = text('{"model":"m","cache_salt":"s\\u00e9","previous_response_id":"resp_1","x":{"cache_salt":"inner"}}');
    assert.equal(facts.cacheSalt, 's\u00e9');
    assert.equal(facts.previousResponseId, 'resp_1');
    assert.equal(text('{"model":"m","cache_salt":"a","cache_salt":7}').cacheSalt, undefined);
    assert.equal(text('{"model":"m","previous_response_id":""}').previousResponseId, undefined);
    assert.equal(text(`{"model":"m","cache_salt":"${'s'.repeat(MAX_FIELD_BYTES)}"}`).cacheSalt, undefined);
  });

  it('tells a chat prompt from a completion prompt, Responses input by its type, the last prompt field counting', () => {
    const kind = (body: string) => text(body).promptKind;
    assert.equal(kind('{"model":"m","messages":[{"role":"user","content":"hi"}]}'), 'chat');
    assert.equal(kind('{"model":"m","prompt":"hi"}'), 'completion');
    assert.equal(kind('{"model":"m","prompt":["a","b"]}'), 'completion');
    assert.equal(kind('{"model":"m","input":[{"role":"user","content":"hi"}]}'), 'chat');
    assert.equal(kind('{"model":"m","input":"hi"}'), 'completion');
    assert.equal(kind('{"model":"m","messages":[],"prompt":"p"}'), 'completion');
    assert.equal(kind('{"model":"m","input":"p","messages":[]}'), 'chat');
    assert.equal(kind('{"model":"m","x":{"messages":[]}}'), undefined);
    const input = text('{"model":"m","input" : "Once"}');
    assert.equal(input.promptPrefix?.toString(), '"Once"');
  });

  it('says whether the prompt prefix was cut: at the cap, not when the value is exactly the cap long', () => {
    const limits = { maxDepth: 16, promptPrefixBytes: 8 };
    const cut = (prompt: string) => {
      const facts = scan(Buffer.from(`{"model":"m","prompt":${prompt}}`), [], limits);
      return [facts.promptPrefix?.toString(), facts.promptTruncated];
    };
    assert.deepEqual(cut('"123456"'), ['"123456"', false]);
    assert.deepEqual(cut('"1234567"'), ['"1234567', true]);
    assert.deepEqual(cut('[ 1 , 2 , 3 , 4 ]'), ['[1,2,3,4', true]);
    assert.deepEqual(cut('[ 1 , 2 , 3 ]'), ['[1,2,3]', false]);
    // Whitespace past the input bound (4 × the cap) counts as a cut too: the rest was never read.
    assert.deepEqual(cut(`[${' '.repeat(40)}1]`), ['[', true]);
  });

  it('gives the same prefix keys to one conversation however each client formats its body', () => {
    const messages = [
      { role: 'system', content: 'You are terse.  Keep  spaces in strings. '.repeat(300) },
      { role: 'user', content: 'What is a "KV cache"?\n' },
      { role: 'assistant', content: 'Reused attention state.' },
      { role: 'user', content: 'And prefix caching?' },
    ];
    const limits = { maxDepth: 16, promptPrefixBytes: 64 * 1024 };
    const keysOf = (body: string) => {
      const facts = scan(Buffer.from(body), [7, 300, 9000], limits);
      assert.ok(facts.promptPrefix !== undefined && facts.promptKind !== undefined);
      return prefixKeys(facts.model, facts.cacheSalt, facts.promptKind, facts.promptPrefix, facts.promptTruncated);
    };
    const compact = keysOf(JSON.stringify({ model: 'm', messages }));
    for (const body of [JSON.stringify({ stream: true, messages, model: 'm' }, null, 2), JSON.stringify({ messages, model: 'm', temperature: 0 }, null, '\t')]) {
      const keys = keysOf(body);
      assert.deepEqual({ ...keys, blocks: [...keys.blocks] }, { ...compact, blocks: [...compact.blocks] });
    }
    assert.notEqual(keysOf(JSON.stringify({ model: 'm', messages, cache_salt: 'tenant' })).conversation, compact.conversation);
  });

  it('canonical prefix: the bytes of a reference byte-by-byte canonicalisation, and cut exactly when longer (property)', () => {
    const formatted = fc.tuple(fc.jsonValue({ maxDepth: 4 }), fc.constantFrom(undefined, 1, 2, '\t'), fc.string({ maxLength: 3 })).map(([v, indent, pad]) => {
      const json = JSON.stringify(v, null, indent) ?? 'null';
      // Escapes the way other clients write them (\u, \/), and padding inside the value where JSON allows it.
      return json.replaceAll('/', '\\/').replaceAll(',', `${pad.replace(/\S/g, ' ')},`);
    });
    fc.assert(
      fc.property(formatted, fc.integer({ min: 1, max: 200 }), fc.nat(7), (json, maxBytes, offset) => {
        const body = Buffer.from(' '.repeat(offset) + json + ' ');
        const span = { start: offset, end: offset + Buffer.byteLength(json) };
        const got = canonicalPrefix(body, span, maxBytes);
        const reference = referenceCanonical(body.subarray(span.start, span.end));
        const readable = referenceCanonical(body.subarray(span.start, Math.min(span.end, span.start + 4 * maxBytes)));
        assert.ok(got !== undefined);
        assert.deepEqual(got.bytes, readable.subarray(0, maxBytes));
        if (readable.length === reference.length) assert.equal(got.truncated, reference.length > maxBytes);
        else assert.equal(got.truncated, true);
      }),
      { numRuns: 2_000 },
    );
  });
});

/** Canonical JSON text, one byte at a time: the oracle for canonicalPrefix. */
function referenceCanonical(value: Buffer): Buffer {
  const out: number[] = [];
  let inString = false;
  for (let i = 0; i < value.length; i++) {
    const c = value[i] as number;
    if (inString && c === 0x5c) {
      out.push(c);
      if (i + 1 < value.length) out.push(value[++i] as number);
      continue;
    }
    if (c === 0x22) inString = !inString;
    else if (!inString && (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09)) continue;
    out.push(c);
  }
  return Buffer.from(out);
}

function depthOf(value: unknown): number {
  return typeof value === 'object' && value !== null ? 1 + Math.max(0, ...Object.values(value).map(depthOf)) : 0;
}
