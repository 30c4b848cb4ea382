import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { countsCell, engineTrail, routerCounts } from './cold-start-counts.ts';

describe('engineTrail', () => {
  it('counts each change of engine between a key’s consecutive requests, a return home included', () => {
    const served = [
      { key: 'a', engine: 0 },
      { key: 'b', engine: 1 },
      { key: 'a', engine: 2 },
      { key: 'b', engine: 1 },
      { key: 'a', engine: 0 },
      { key: 'a', engine: 0 },
      { key: 'c', engine: 2 },
    ];
    // a: 0 → 2 → 0 → 0 is two changes, one request off its most-used engine 0; b and c never move.
    assert.deepEqual(engineTrail(served), { keys: 3, requests: 7, engineChanges: 2, offMostUsed: 1 });
  });

  it('is empty without requests', () => {
    assert.deepEqual(engineTrail([]), { keys: 0, requests: 0, engineChanges: 0, offMostUsed: 0 });
  });
});

describe('routerCounts', () => {
  it('adds the replicas’ counters by label and leaves out zero series', () => {
    const one = [
      '# HELP switchyard_session_moves_total x',
      'switchyard_session_moves_total{reason="saturated"} 3',
      'switchyard_shed_total{reason="queue_full",priority="normal"} 2',
      'switchyard_shed_total{reason="saturated",priority="low"} 0',
      'switchyard_policy_decisions_total{policy="auto",outcome="assigned"} 10',
      'switchyard_policy_decisions_total{policy="auto",outcome="placed"} 4',
      'switchyard_session_lookups_total{result="unavailable"} 7',
      'switchyard_shared_state_failures_total{command="session_get",kind="timeout"} 6',
      'switchyard_shared_state_failures_total{command="fleet_read",kind="timeout"} 1',
      'switchyard_shared_state_breaker_transitions_total{to="open"} 1',
    ].join('\n');
    const two = ['switchyard_session_moves_total{reason="saturated"} 2', 'switchyard_session_moves_total{reason="gone"} 1', 'switchyard_policy_decisions_total{policy="auto",outcome="assigned"} 5'].join('\n');
    const counts = routerCounts([one, two]);
    assert.deepEqual(counts, {
      shed: { queue_full: 2 },
      moves: { saturated: 5, gone: 1 },
      decisions: { assigned: 15, placed: 4 },
      lookups: { unavailable: 7 },
      redisFailures: { timeout: 7 },
      breaker: { open: 1 },
    });
    assert.equal(countsCell(counts.moves), 'saturated 5, gone 1');
    assert.equal(countsCell({}), '-');
  });
});
