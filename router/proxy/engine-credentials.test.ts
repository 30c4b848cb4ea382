import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EngineCredentials, type CredentialSettings } from './engine-credentials.ts';

const files: Record<string, string> = { '/keys/team-b': 'team-b-key\n', '/keys/empty': '  \n' };
const read = (path: string): string => {
  const text = files[path];
  if (text === undefined) throw new Error(`ENOENT: ${path}`);
  return text;
};

function build(settings: Partial<CredentialSettings> & Pick<CredentialSettings, 'upstream'>): EngineCredentials {
  return EngineCredentials.build({ withFallback: {}, ownKeyOnly: {}, ...settings }, read);
}

describe('engine credentials per discovery source', () => {
  it("each source sends its own key; static and discovery.mode fall back to upstream's; named sources never get it", () => {
    const credentials = build({
      upstream: { apiKey: 'prod-key', forwardClientAuthorization: true },
      withFallback: { static: {}, default: { apiKey: 'mode-key' } },
      ownKeyOnly: { 'team-b': { apiKeyFile: '/keys/team-b' }, 'team-c': {} },
    });
    assert.deepEqual(credentials.rule('static'), { kind: 'replace', value: 'Bearer prod-key' });
    assert.deepEqual(credentials.rule('default'), { kind: 'replace', value: 'Bearer mode-key' });
    assert.deepEqual(credentials.rule('team-b'), { kind: 'replace', value: 'Bearer team-b-key' });
    assert.deepEqual(credentials.rule('team-c'), { kind: 'forward' }, 'no key of its own: the client header rule, never the upstream key');
    assert.equal(credentials.engineAuthorization('team-c'), undefined, 'scrapes and probes carry no key');
    assert.equal(credentials.engineAuthorization('team-b'), 'Bearer team-b-key');
    assert.deepEqual(credentials.rule(undefined), { kind: 'replace', value: 'Bearer prod-key' }, "an embedding's unnamed source: the upstream rule");
  });

  it('without any key: forward or strip the client header, by upstream.forwardClientAuthorization', () => {
    const forward = build({ upstream: { forwardClientAuthorization: true }, withFallback: { static: {} }, ownKeyOnly: { b: { apiKeyFile: '/keys/empty' } } });
    assert.deepEqual(forward.rule('static'), { kind: 'forward' });
    assert.deepEqual(forward.rule('b'), { kind: 'forward' }, 'an empty key file is no key');
    const strip = build({ upstream: { forwardClientAuthorization: false }, withFallback: { static: {} }, ownKeyOnly: { b: {} } });
    assert.deepEqual(strip.rule('static'), { kind: 'strip' });
    assert.deepEqual(strip.rule('b'), { kind: 'strip' });
  });

  it('a key file wins over an inline key; an unreadable one fails the start', () => {
    assert.deepEqual(build({ upstream: { forwardClientAuthorization: true }, ownKeyOnly: { b: { apiKey: 'inline', apiKeyFile: '/keys/team-b' } } }).rule('b'), {
      kind: 'replace',
      value: 'Bearer team-b-key',
    });
    assert.throws(() => build({ upstream: { forwardClientAuthorization: true }, ownKeyOnly: { b: { apiKeyFile: '/keys/missing' } } }), /ENOENT/);
  });

  it('never shows a key when serialised', () => {
    const credentials = build({ upstream: { apiKey: 'prod-key', forwardClientAuthorization: true }, ownKeyOnly: { b: { apiKey: 'b-key' } } });
    const text = `${JSON.stringify(credentials)} ${JSON.stringify({ credentials })}`;
    assert.doesNotMatch(text, /prod-key|b-key/);
  });
});
