/**
 * The store through a real Sentinel group (valkey-server --sentinel on
 * loopback): it finds the master through the Sentinels, and across a
 * failover (a clean SENTINEL FAILOVER, then the master killed with -9) no
 * command waits longer than the command timeout, the status goes degraded
 * and comes back up by itself on the new master, with no restart.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { freePorts } from '../kit/free-ports.ts';
import type { SharedStore } from '../../router/state/shared-store.ts';
import { startSentinelGroup, type SentinelGroup } from '../kit/redis/redis-sentinel.ts';
import { recorder, storeFor, until, type RecordingObserver } from '../kit/redis/store-fixture.ts';

const COMMAND_TIMEOUT_MS = 50;
/** What a command may take beyond its timeout on a loaded CI machine (event-loop turns, timer slack). */
const SLACK_MS = 150;

/**
 * Writes through the store every 20 ms until `done` resolves, and returns
 * the longest a single command took and how many were answered. Run while a
 * failover happens: the bound on each command is the behaviour under test.
 */
async function writeThrough(store: SharedStore, done: Promise<unknown>): Promise<{ slowestMs: number; answered: number; asked: number }> {
  let finished = false;
  void done.finally(() => (finished = true));
  let slowestMs = 0;
  let answered = 0;
  let asked = 0;
  while (!finished) {
    const started = performance.now();
    const answer = await store.run('set', (c) => c.set(store.key('during'), String(asked), 'PX', 60_000));
    slowestMs = Math.max(slowestMs, performance.now() - started);
    asked++;
    if (answer === 'OK') answered++;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await done;
  return { slowestMs, answered, asked };
}

/** The port of the server the store's connection is on, asked through the store (so: the server it writes to). */
async function portBehind(store: SharedStore): Promise<number | undefined> {
  const answer = await store.run('config', (c) => c.config('GET', 'port'));
  return Array.isArray(answer) ? Number(answer[1]) : undefined;
}

/** Asks every 50 ms (the router's fleet publisher does the same) until a write succeeds and the store is up. */
async function untilWritable(store: SharedStore, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await store.run('set', (c) => c.set(store.key('probe'), '1', 'PX', 60_000));
    if (answer === 'OK' && store.status === 'up') return;
    if (Date.now() > deadline) throw new Error(`no write through the store after ${timeoutMs} ms (status ${store.status})`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Each report is a change: never the same status twice in a row (one log line per transition). */
function assertTransitionsOnly(observer: RecordingObserver): void {
  for (let i = 1; i < observer.statuses.length; i++) assert.notEqual(observer.statuses[i], observer.statuses[i - 1], `statuses ${observer.statuses.join(' → ')}`);
}

describe('shared store through Redis Sentinel (real redis-sentinel, master and replica)', () => {
  let group: SentinelGroup;
  let store: SharedStore;
  const observer = recorder();
  before(async () => {
    group = await startSentinelGroup();
    // A Sentinel that is down comes first: the client tries the next one.
    const [nobody] = await freePorts(1);
    store = storeFor({ mode: 'sentinel', nodes: [`127.0.0.1:${nobody!}`, ...group.nodes], sentinelMasterName: group.masterName, commandTimeoutMs: COMMAND_TIMEOUT_MS, breakerOpenMs: 200 }, observer);
  });
  after(async () => {
    await store.close();
    await group.stop();
  });

  it('comes up on the master the Sentinels name, past a Sentinel that is down', async () => {
    await until(() => store.status === 'up', 10_000);
    assert.equal(await store.run('set', (c) => c.set(store.key('k'), 'v')), 'OK');
    assert.equal(await portBehind(store), group.servers[0].port);
    assert.deepEqual(observer.failures, []);
  });

  it('follows a SENTINEL FAILOVER to the promoted replica: commands never wait past the timeout, and it is up again on its own', async (t) => {
    const from = await group.masterPort();
    // Writes keep going until one lands after the old master was demoted (it answers READONLY from then on).
    const failover = group
      .failover()
      .then(() => group.waitForFailoverFrom(from, 20_000, true))
      .then(() => untilWritable(store, 10_000));
    const during = await writeThrough(store, failover);
    t.diagnostic(`during the failover: ${during.answered} of ${during.asked} writes answered, slowest ${during.slowestMs.toFixed(1)} ms; statuses ${observer.statuses.join(' → ')}`);
    assert.ok(during.slowestMs < COMMAND_TIMEOUT_MS + SLACK_MS, `slowest command ${during.slowestMs.toFixed(0)} ms`);
    assert.equal(await portBehind(store), group.servers[1].port, 'writes go to the promoted replica');
    assertTransitionsOnly(observer);
  });

  it(
    'follows a failover away from a paused master (SIGSTOP, as a node cut off by the network): its open connection must not keep the store on it',
    async (t) => {
      const paused = await group.master();
      const before = observer.statuses.length;
      paused.pause();
      try {
        const failover = group.waitForFailoverFrom(paused.port, 20_000).then(() => untilWritable(store, 5_000));
        const during = await writeThrough(store, failover);
        t.diagnostic(`during the failover: ${during.answered} of ${during.asked} writes answered, slowest ${during.slowestMs.toFixed(1)} ms; statuses ${observer.statuses.join(' → ')}`);
        assert.ok(during.slowestMs < COMMAND_TIMEOUT_MS + SLACK_MS, `slowest command ${during.slowestMs.toFixed(0)} ms`);
        assert.equal(await portBehind(store), group.servers.find((server) => server !== paused)!.port);
        assert.deepEqual(observer.statuses.slice(before), ['degraded', 'up']);
      } finally {
        paused.resume();
        await group.rejoin(paused);
        await group.waitForFailoverFrom(paused.port, 20_000, true);
      }
    },
  );

  it('follows the master killed with -9: degraded while no master answers, fast failures, then up on the new master', async (t) => {
    // After the paused master's test the store may still be on its way back.
    await untilWritable(store, 10_000);
    const dead = await group.master();
    const before = observer.statuses.length;
    const failover = dead
      .kill()
      .then(() => group.waitForFailoverFrom(dead.port, 20_000))
      .then(() => untilWritable(store, 10_000));
    const during = await writeThrough(store, failover);
    t.diagnostic(`during the failover: ${during.answered} of ${during.asked} writes answered, slowest ${during.slowestMs.toFixed(1)} ms; statuses ${observer.statuses.join(' → ')}`);
    assert.ok(during.slowestMs < COMMAND_TIMEOUT_MS + SLACK_MS, `slowest command ${during.slowestMs.toFixed(0)} ms`);
    assert.ok(during.answered < during.asked, 'some writes found no master (the kill was seen)');
    const survivor = group.servers.find((server) => server !== dead)!;
    assert.equal(await portBehind(store), survivor.port);
    assert.deepEqual(observer.statuses.slice(before), ['degraded', 'up']);
    assertTransitionsOnly(observer);
  });
});

describe('shared store through Redis Sentinel with passwords (data nodes and the Sentinels themselves)', () => {
  let group: SentinelGroup;
  let dir: string;
  before(async () => {
    group = await startSentinelGroup({ password: 'data-secret', sentinelPassword: 'sentinel-secret' });
    dir = mkdtempSync(join(tmpdir(), 'switchyard-sentinel-secrets-'));
    writeFileSync(join(dir, 'redis'), 'data-secret\n', { mode: 0o600 });
    writeFileSync(join(dir, 'sentinel'), 'sentinel-secret\n', { mode: 0o600 });
  });
  after(async () => {
    await group.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('passwordFile and sentinelPasswordFile get it to the master', async () => {
    const observer = recorder();
    const store = storeFor(
      { mode: 'sentinel', nodes: group.nodes, sentinelMasterName: group.masterName, passwordFile: join(dir, 'redis'), sentinelPasswordFile: join(dir, 'sentinel'), commandTimeoutMs: COMMAND_TIMEOUT_MS },
      observer,
    );
    try {
      await until(() => store.status === 'up', 10_000);
      assert.equal(await store.run('set', (c) => c.set(store.key('k'), 'v')), 'OK');
      assert.deepEqual(observer.failures, []);
    } finally {
      await store.close();
    }
  });

  it('without sentinelPasswordFile the Sentinels refuse: degraded, never up, nothing thrown', async () => {
    const observer = recorder();
    const store = storeFor({ mode: 'sentinel', nodes: group.nodes, sentinelMasterName: group.masterName, passwordFile: join(dir, 'redis'), commandTimeoutMs: COMMAND_TIMEOUT_MS }, observer);
    try {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      assert.equal(await store.run('get', (c) => c.get(store.key('k'))), undefined);
      assert.equal(store.status, 'degraded');
      assert.deepEqual(observer.statuses, []);
    } finally {
      await store.close();
    }
  });
});
