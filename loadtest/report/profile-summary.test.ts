import assert from 'node:assert/strict';
import { test } from 'node:test';
import { selfTimes } from './profile-summary.ts';

test('self time is summed per function and per file, relative to the checkout', () => {
  const frame = (functionName: string, url: string, lineNumber: number) => ({ functionName, url, lineNumber });
  const profile = {
    nodes: [
      { id: 1, callFrame: frame('', '', 0) },
      { id: 2, callFrame: frame('handleInference', 'file:///any/checkout/router/server/traffic-listener.ts', 69) },
      { id: 3, callFrame: frame('parse', 'file:///x/node_modules/undici/lib/llhttp.js', 9) },
    ],
    samples: [2, 2, 3, 1, 2],
    timeDeltas: [100, 100, 300, 400, 100],
  };
  const { total, byFunction, byFile } = selfTimes(profile);
  assert.equal(total, 1000);
  assert.equal(byFunction.get('handleInference router/server/traffic-listener.ts:70'), 300);
  assert.equal(byFile.get('undici/lib/llhttp.js'), 300);
  assert.equal(byFile.get('(native or idle)'), 400);
});
