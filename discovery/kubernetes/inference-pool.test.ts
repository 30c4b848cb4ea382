import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describePicker, isOwnPicker, readPool } from './inference-pool.ts';

const pool = (spec: unknown) => ({ apiVersion: 'inference.networking.k8s.io/v1', kind: 'InferencePool', metadata: { name: 'p', namespace: 'ns' }, spec });
const picker = { name: 'switchyard', port: { number: 9002 } };

describe('InferencePool reading', () => {
  it('reads the selector (keys sorted), the target ports in order, and the picker with its defaults', () => {
    const reading = readPool(pool({ selector: { matchLabels: { tier: 'gpu', app: 'vllm' } }, targetPorts: [{ number: 8001 }, { number: 8000 }], endpointPickerRef: picker }));
    assert.deepEqual(reading, { spec: { selector: 'app=vllm,tier=gpu', targetPorts: [8001, 8000], endpointPicker: { group: '', kind: 'Service', name: 'switchyard', port: 9002, failureMode: 'FailClose' } } });
  });

  it('answers every bad shape with why, never a throw', () => {
    const cases: [unknown, RegExp][] = [
      [null, /no spec/],
      [pool(undefined), /no spec/],
      [pool({ targetPorts: [{ number: 8000 }] }), /no selector/],
      [pool({ selector: { matchLabels: {} }, targetPorts: [{ number: 8000 }] }), /empty selector would select every pod/],
      [pool({ selector: { matchLabels: { app: 'x' }, matchExpressions: [] }, targetPorts: [{ number: 8000 }] }), /matchLabels only/],
      [pool({ selector: { matchLabels: { 'bad key!': 'x' } }, targetPorts: [{ number: 8000 }] }), /not a valid label/],
      [pool({ selector: { matchLabels: { app: 7 } }, targetPorts: [{ number: 8000 }] }), /not a valid label/],
      [pool({ selector: { matchLabels: { app: 'x' } } }), /no targetPorts/],
      [pool({ selector: { matchLabels: { app: 'x' } }, targetPorts: [] }), /no targetPorts/],
      [pool({ selector: { matchLabels: { app: 'x' } }, targetPorts: [{ number: 0 }] }), /no valid number/],
      [pool({ selector: { matchLabels: { app: 'x' } }, targetPorts: [{ port: 8000 }] }), /no valid number/],
      [pool({ selector: { matchLabels: { app: 'x' } }, targetPorts: [{ number: 8000 }, { number: 8000 }] }), /twice/],
      [pool({ selector: { matchLabels: { app: 'x' } }, targetPorts: Array.from({ length: 9 }, (_, i) => ({ number: 8000 + i })) }), /at most 8/],
    ];
    for (const [object, problem] of cases) {
      const reading = readPool(object);
      assert.ok('problem' in reading && problem.test(reading.problem), `${JSON.stringify(object)} → ${JSON.stringify(reading)}`);
    }
  });

  it('unknown fields are ignored: the fields read decide', () => {
    const reading = readPool(pool({ selector: { matchLabels: { app: 'x' } }, targetPorts: [{ number: 8000, appProtocol: 'http' }], endpointPickerRef: picker, extra: true }));
    assert.ok('spec' in reading);
  });

  it('knows its own picker from another one', () => {
    const own = { group: '', kind: 'Service', name: 'switchyard', port: 9002, failureMode: 'FailClose' };
    assert.equal(isOwnPicker(own, 'switchyard'), true);
    assert.equal(isOwnPicker({ ...own, name: 'vllm-epp' }, 'switchyard'), false);
    assert.equal(isOwnPicker({ ...own, group: 'example.com', kind: 'Picker' }, 'switchyard'), false);
    assert.equal(isOwnPicker(undefined, 'switchyard'), false);
    assert.equal(describePicker({ ...own, name: 'vllm-epp' }), 'Service/vllm-epp:9002');
  });
});
