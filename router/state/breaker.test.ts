import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CircuitBreaker, type BreakerState } from './breaker.ts';

describe('CircuitBreaker', () => {
  it('opens after the configured consecutive failures, and a success in between resets the count', () => {
    let now = 0;
    const breaker = new CircuitBreaker({ failures: 3, openMs: 1000 }, () => now);
    breaker.failed();
    breaker.failed();
    breaker.succeeded();
    breaker.failed();
    breaker.failed();
    assert.equal(breaker.state, 'closed');
    breaker.failed();
    assert.equal(breaker.state, 'open');
    assert.equal(breaker.allow(), false);
    now = 999;
    assert.equal(breaker.allow(), false);
  });

  it('lets one trial through after openMs; its failure reopens, its success closes', () => {
    let now = 0;
    const transitions: BreakerState[] = [];
    const breaker = new CircuitBreaker({ failures: 1, openMs: 100 }, () => now);
    breaker.onTransition = (to) => transitions.push(to);
    breaker.failed();
    now = 100;
    assert.equal(breaker.allow(), true);
    assert.equal(breaker.allow(), false, 'only one trial at a time');
    breaker.failed();
    assert.equal(breaker.state, 'open');
    assert.equal(breaker.allow(), false, 'reopened: the wait starts again');
    now = 200;
    assert.equal(breaker.allow(), true);
    breaker.succeeded();
    assert.equal(breaker.state, 'closed');
    assert.equal(breaker.allow(), true);
    assert.equal(breaker.allow(), true);
    assert.deepEqual(transitions, ['open', 'half-open', 'open', 'half-open', 'closed']);
  });
});
