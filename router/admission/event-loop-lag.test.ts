import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EventLoopLagMonitor } from './event-loop-lag.ts';

/** A monitor on a hand-driven clock: `late(ms)` fires the next probe tick `ms` after it was due. */
function driven(graceMs = 0) {
  const clock = { now: 10_000 };
  const monitor = new EventLoopLagMonitor({ now: () => clock.now, graceMs, timers: { setInterval: () => 0, clearInterval: () => {} } });
  monitor.start();
  const late = (ms: number) => {
    clock.now += 50 + ms;
    monitor.tick();
  };
  return { clock, monitor, late };
}

describe('event-loop lag', () => {
  it('does not count a single stall, however long, but shows it in the raw lag', () => {
    const { monitor, late } = driven();
    for (let i = 0; i < 5; i++) late(0);
    late(2_000);
    assert.equal(monitor.lagMs, 2_000);
    assert.equal(monitor.sustainedLagMs, 0, 'a stall is over before a 429 for it would go out');
    late(0);
    assert.equal(monitor.sustainedLagMs, 0);
  });

  it('counts lag that lasted four ticks: the least of them', () => {
    const { monitor, late } = driven();
    for (const ms of [300, 250, 400]) late(ms);
    assert.equal(monitor.sustainedLagMs, 0, 'three late ticks are not yet sustained');
    late(260);
    assert.equal(monitor.sustainedLagMs, 250);
    late(10);
    assert.equal(monitor.sustainedLagMs, 10, 'one tick (nearly) on time ends it');
  });

  it('counts a loop that is blocked now after three late ticks', () => {
    const { clock, monitor, late } = driven();
    for (const ms of [300, 300, 300]) late(ms);
    clock.now += 50 + 220; // the next tick is 220 ms overdue and has not fired
    assert.equal(monitor.sustainedLagMs, 220);
    assert.equal(monitor.lagMs, 300);
  });

  it('counts lag that grows at every tick: the latest', () => {
    const { monitor, late } = driven();
    for (const ms of [40, 90, 160]) late(ms);
    late(320);
    assert.equal(monitor.sustainedLagMs, 320, 'falling further behind each tick');
    const noise = driven();
    for (const ms of [3, 5, 95, 264]) noise.late(ms);
    assert.equal(noise.monitor.sustainedLagMs, 3, 'growth out of timer noise is a spike, not a trend (seen in a ramp of 8,000 streams)');
  });

  it('never sheds within the start-up grace', () => {
    const { clock, monitor, late } = driven(2_000);
    for (let i = 0; i < 4; i++) late(400);
    assert.equal(monitor.sustainedLagMs, 0, 'start-up work');
    clock.now += 1_000;
    for (let i = 0; i < 4; i++) late(400);
    assert.equal(monitor.sustainedLagMs, 400);
  });

  it('reports nothing once stopped', () => {
    const { monitor, late } = driven();
    for (let i = 0; i < 4; i++) late(400);
    monitor.stop();
    assert.equal(monitor.sustainedLagMs, 0);
  });
});
