import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fleetAgrees, replicaView, samplesOf, sumByLabel, sumOf } from './shared-state-prom.ts';

const EXPOSITION = `# HELP switchyard_session_moves_total Sessions moved off their assigned engine.
# TYPE switchyard_session_moves_total counter
switchyard_session_moves_total{reason="saturated"} 7
switchyard_session_moves_total{reason="gone"} 2
switchyard_session_moves_total_extra 100
switchyard_shared_state_up 1
switchyard_fleet_replicas 3
switchyard_quota_rejections_total{tenant="a \\"quoted\\" one",limit="rate"} 4
`;

describe('samplesOf', () => {
  it('reads the labels and values of one metric name only', () => {
    assert.deepEqual(samplesOf(EXPOSITION, 'switchyard_session_moves_total'), [
      { labels: { reason: 'saturated' }, value: 7 },
      { labels: { reason: 'gone' }, value: 2 },
    ]);
  });

  it('unescapes label values', () => {
    assert.equal(samplesOf(EXPOSITION, 'switchyard_quota_rejections_total')[0]?.labels['tenant'], 'a "quoted" one');
  });
});

describe('sumOf and sumByLabel', () => {
  it('sum the series of a metric, by label when asked', () => {
    assert.equal(sumOf(EXPOSITION, 'switchyard_session_moves_total'), 9);
    assert.deepEqual(sumByLabel(EXPOSITION, 'switchyard_session_moves_total', 'reason'), { saturated: 7, gone: 2 });
  });

  it('tells an absent metric (undefined) from a zero one', () => {
    assert.equal(sumOf(EXPOSITION, 'switchyard_fleet_load_age_seconds'), undefined);
    assert.equal(sumOf('switchyard_x 0\n', 'switchyard_x'), 0);
  });
});

describe('fleetAgrees', () => {
  it('needs every replica up and seeing the whole fleet', () => {
    const view = replicaView(EXPOSITION);
    assert.equal(fleetAgrees([view, view, view], 3), true);
    assert.equal(fleetAgrees([view, view, { ...view, fleetReplicas: 2 }], 3), false);
    assert.equal(fleetAgrees([view, view, { ...view, up: 0 }], 3), false);
    assert.equal(fleetAgrees([view, view], 3), false);
  });

  it('judges a replica without a fleet gauge on up alone, and one without up as not agreeing', () => {
    assert.equal(fleetAgrees([{ up: 1, fleetReplicas: undefined, fleetLoadAgeS: undefined }], 1), true);
    assert.equal(fleetAgrees([{ up: undefined, fleetReplicas: undefined, fleetLoadAgeS: undefined }], 1), false);
  });
});
