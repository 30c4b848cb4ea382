import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { namespaceTrustGap } from './namespace-trust.ts';

describe('namespace trust gap (start-up warning)', () => {
  it('warns when several namespaces are watched and a source there has no allow-list', () => {
    assert.deepEqual(
      namespaceTrustGap([
        { name: 'default', namespace: 'prod', restricted: true },
        { name: 'team-b', namespace: 'team-b', restricted: false },
      ]),
      { namespaces: ['prod', 'team-b'], unrestricted: ['team-b'] },
    );
  });

  it('is quiet for one namespace, however many sources, and when every source has an allow-list', () => {
    assert.equal(
      namespaceTrustGap([
        { name: 'default', namespace: 'prod', restricted: false },
        { name: 'slices', namespace: 'prod', restricted: false },
      ]),
      undefined,
    );
    assert.equal(
      namespaceTrustGap([
        { name: 'default', namespace: 'prod', restricted: true },
        { name: 'team-b', namespace: 'team-b', restricted: true },
      ]),
      undefined,
    );
    assert.equal(namespaceTrustGap([]), undefined);
  });
});
