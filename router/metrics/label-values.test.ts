import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UPSTREAM_FAILURE_KINDS } from '../load/upstream-failure-kinds.ts';
import { ASSIGNMENT_MOVES, DECISION_OUTCOMES } from '../scheduling/candidate.ts';
import {
  AUTH_FAILURE_REASONS,
  BACKGROUND_TASKS,
  BREAKER_STATES,
  COMMAND_FAILURES,
  QUOTA_LIMITS,
  RETRY_REASONS,
  SESSION_LOOKUP_RESULTS,
  SHED_REASONS,
  listLabelValues,
} from './label-values.ts';
import { RouterMetrics } from './metrics.ts';
import { SharedStateMetrics } from './shared-state-metrics.ts';

/** Each metric whose label takes the values of a union, with that union's values. */
const LABEL_UNIONS: Readonly<Record<string, readonly string[]>> = {
  switchyard_upstream_errors_total: UPSTREAM_FAILURE_KINDS,
  switchyard_retries_total: RETRY_REASONS,
  switchyard_policy_decisions_total: DECISION_OUTCOMES,
  switchyard_shed_total: SHED_REASONS,
  switchyard_background_failures_total: BACKGROUND_TASKS,
  switchyard_shared_state_failures_total: COMMAND_FAILURES,
  switchyard_shared_state_breaker_transitions_total: BREAKER_STATES,
  switchyard_session_moves_total: ASSIGNMENT_MOVES,
  switchyard_session_lookups_total: SESSION_LOOKUP_RESULTS,
  switchyard_quota_rejections_total: QUOTA_LIMITS,
  switchyard_auth_failures_total: AUTH_FAILURE_REASONS,
};

/** Help texts by metric name, from a registry built the way the router builds it. */
async function helpTexts(): Promise<Map<string, string>> {
  const metrics = new RouterMetrics({ backends: () => [], routerInFlight: () => 0, connections: () => 0, eventLoopLagMs: () => 0, queueLength: () => 0, bufferedBodyBytes: () => 0 });
  new SharedStateMetrics(metrics.registry, undefined);
  return new Map((await metrics.registry.getMetricsAsJSON()).map((metric) => [metric.name, metric.help]));
}

/** The values of `values` that `help` does not name as a word of its own. */
function unnamed(help: string, values: readonly string[]): string[] {
  const words = new Set(help.split(/[\s(),.:;]+/));
  return values.filter((value) => !words.has(value));
}

describe('metric label values', () => {
  it('each labelled metric names every value of its union in its help text', async () => {
    const help = await helpTexts();
    for (const [name, values] of Object.entries(LABEL_UNIONS)) {
      const text = help.get(name);
      assert.ok(text !== undefined, `${name} is registered`);
      assert.deepEqual(unnamed(text, values), [], `${name}'s help names every value: ${text}`);
    }
  });

  it('a value missing from a help text is caught', () => {
    assert.deepEqual(unnamed('Redis commands by kind (timeout, connection, server, breaker_open).', COMMAND_FAILURES), ['invalid_reply']);
    // A value that only occurs inside a longer one is not named.
    assert.deepEqual(unnamed('Shed by reason (queue_full_soon).', ['queue_full']), ['queue_full']);
  });

  it('lists values in their declared order, each note in parentheses after its value', () => {
    assert.equal(listLabelValues(['a', 'b', 'c'] as const), 'a, b, c');
    assert.equal(listLabelValues(['cache', 'redis', 'miss'] as const, { miss: 'no assignment yet' }), 'cache, redis, miss (no assignment yet)');
  });
});
