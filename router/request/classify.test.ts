import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SwitchyardError } from '../errors/errors.ts';
import { SessionNames } from '../state/session-names.ts';
import { Classifier, type ClassifierDeps } from './classify.ts';
import { jsonBodyFacts, multipartBodyFacts } from './routing-facts.ts';

const LIMITS = { maxDepth: 32, promptPrefixBytes: 0 };
const NAMES = SessionNames.derivedFrom('test');

function classifier(models: readonly string[], overrides: Partial<ClassifierDeps> = {}): Classifier {
  return new Classifier({ models: { knowsModel: (model) => models.includes(model), routableModels: () => models, adapterParent: (model) => (model.startsWith('lora-') ? 'base' : undefined) }, sessionHeader: 'x-session-id', sessionFromUser: true, sessionNames: NAMES, defaultModel: undefined, ...overrides });
}

const body = (value: Record<string, unknown>) => jsonBodyFacts(Buffer.from(JSON.stringify(value)), LIMITS);
const unnamed = () => multipartBodyFacts(Buffer.from('--b\r\nContent-Disposition: form-data; name="file"\r\n\r\nx\r\n--b--\r\n'), 'multipart/form-data; boundary=b');

describe('classify', () => {
  it('takes the named model, else the default, else the only model, and refuses the rest', () => {
    assert.equal(classifier(['a', 'b']).classify({}, body({ model: 'b' }), 9, undefined).model, 'b');
    assert.equal(classifier(['a', 'b'], { defaultModel: 'a' }).classify({}, unnamed(), 9, undefined).model, 'a');
    assert.equal(classifier(['only']).classify({}, unnamed(), 9, undefined).model, 'only');
    assert.throws(() => classifier(['a', 'b']).classify({}, unnamed(), 9, undefined), (err: unknown) => err instanceof SwitchyardError && err.status === 400 && err.code === 'SWITCHYARD_MISSING_MODEL');
    assert.throws(() => classifier(['a']).classify({}, body({ model: 'x' }), 9, undefined), (err: unknown) => err instanceof SwitchyardError && err.status === 404 && err.code === 'SWITCHYARD_MODEL_NOT_FOUND');
  });

  it("names the session from the header, else the body's user, per tenant and model, never as the client's key", () => {
    const classify = classifier(['a']);
    const fromHeader = classify.classify({ 'x-session-id': 'k1' }, body({ model: 'a', user: 'u1' }), 9, undefined);
    assert.equal(fromHeader.sessionKey, NAMES.name(undefined, 'a', 'k1'));
    assert.equal(fromHeader.legacySessionKey, 'k1');
    assert.equal(classify.classify({}, body({ model: 'a', user: 'u1' }), 9, undefined).sessionKey, NAMES.name(undefined, 'a', 'u1'));
    assert.equal(classify.classify({ 'x-session-id': 'k1' }, body({ model: 'a' }), 9, 'acme').sessionKey, NAMES.name('acme', 'a', 'k1'));
    assert.notEqual(NAMES.name('acme', 'a', 'k1'), NAMES.name(undefined, 'a', 'k1'));
    assert.equal(classifier(['a'], { sessionFromUser: false }).classify({}, body({ model: 'a', user: 'u1' }), 9, undefined).sessionKey, undefined);
    assert.equal(classify.classify({ 'x-session-id': '' }, body({ model: 'a' }), 9, undefined).sessionKey, undefined);
  });

  it('builds facts with every field a hook may set, unset', () => {
    const facts = classifier(['a']).classify({}, body({ model: 'a', stream: true }), 42, undefined);
    assert.deepEqual(facts, { model: 'a', requestedModel: undefined, rewrite: undefined, stream: true, sessionKey: undefined, legacySessionKey: undefined, bodyBytes: 42, loraBaseModel: undefined, prefix: undefined, pinnedEndpoint: undefined, assignedEndpoint: undefined, placeSession: undefined });
    assert.deepEqual(Object.keys(facts), ['model', 'requestedModel', 'rewrite', 'stream', 'sessionKey', 'legacySessionKey', 'bodyBytes', 'loraBaseModel', 'prefix', 'pinnedEndpoint', 'assignedEndpoint', 'placeSession']);
  });

  it('names the base model of a LoRA adapter, so the LoRA walk applies to it alone', () => {
    assert.equal(classifier(['a', 'lora-x']).classify({}, body({ model: 'lora-x' }), 9, undefined).loraBaseModel, 'base');
    assert.equal(classifier(['a', 'lora-x']).classify({}, body({ model: 'a' }), 9, undefined).loraBaseModel, undefined);
  });
});
