/**
 * The list+watch loop against an in-process fake of the Kubernetes list/watch
 * protocol over real HTTP, for the faults a real API server does not produce
 * on demand. The real server is exercised by e2e/*.e2e.ts (npm run test:k8s).
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { KubeApi, ListWatchApi } from './kube-api.ts';
import { ListWatcher, type Environment, type ListWatchTiming, type RestartReason } from './list-watcher.ts';
import { FakeKubeApi } from '../../tests/kit/kube/fake-kube-api.ts';
import { apiFor, FAST, pod, podsPath, waitFor } from '../../tests/kit/kube/fixtures.ts';

const PATH = podsPath('ns');

interface Harness {
  readonly watcher: ListWatcher;
  /** Names in the copy after each `changed` call. */
  readonly snapshots: string[][];
  readonly restarts: { reason: RestartReason; error: string | undefined; delayMs: number }[];
  names(): string[];
}

describe('list+watch loop (fake API server)', () => {
  let fake: FakeKubeApi;
  let api: KubeApi;
  let harness: Harness | undefined;

  beforeEach(async () => {
    fake = new FakeKubeApi();
    api = apiFor(await fake.listen());
  });

  afterEach(async () => {
    await harness?.watcher.stop();
    harness = undefined;
    await api.close();
    await fake.close();
  });

  function start(timing: ListWatchTiming = FAST, query: Record<string, string> = { labelSelector: 'app=engine' }): Harness {
    const snapshots: string[][] = [];
    const restarts: Harness['restarts'] = [];
    const watcher = new ListWatcher(api, PATH, query, timing, {
      changed: (objects) => snapshots.push([...objects.keys()].map((k) => k.split('/')[1] as string).sort()),
      restarting: (reason, error, delayMs) => restarts.push({ reason, error, delayMs }),
    });
    watcher.start();
    harness = { watcher, snapshots, restarts, names: () => snapshots.at(-1) ?? [] };
    return harness;
  }

  const watching = () => waitFor(() => fake.watchers > 0, 'a watch to be open');
  const kinds = () => fake.requests.map((r) => r.kind);

  it('lists, then applies watch events in order, sending the token and asking for bookmarks', async () => {
    fake.put(PATH, pod('a'));
    fake.put(PATH, pod('other', { labels: { app: 'something-else' } }));
    const h = start();
    await watching();
    assert.deepEqual(h.names(), ['a']);
    fake.put(PATH, pod('b'));
    await waitFor(() => h.names().join() === 'a,b', 'b added');
    fake.delete(PATH, 'a');
    await waitFor(() => h.names().join() === 'b', 'a deleted');
    const watch = fake.requests.find((r) => r.kind === 'watch');
    assert.equal(watch?.query['allowWatchBookmarks'], 'true');
    assert.equal(watch?.query['labelSelector'], 'app=engine');
    assert.equal(watch?.query['resourceVersion'], '102', 'watch starts at the list resourceVersion');
    assert.ok(fake.requests.every((r) => r.authorization === 'Bearer test-token'));
    assert.equal(h.restarts.length, 0);
  });

  it('follows list pagination (continue tokens)', async () => {
    for (let i = 0; i < 1_203; i++) fake.put(PATH, pod(`p${String(i).padStart(4, '0')}`));
    const h = start();
    await watching();
    assert.equal(h.names().length, 1_203);
    assert.equal(fake.requests.filter((r) => r.kind === 'list').length, 3, 'pages of 500');
  });

  it('410 Gone as a watch ERROR event re-lists at once and drops objects deleted meanwhile', async () => {
    fake.put(PATH, pod('a'));
    fake.put(PATH, pod('b'));
    const h = start();
    await watching();
    // The deletion's event is lost (history compacted), as after a long disconnect.
    fake.silenceWatches();
    fake.delete(PATH, 'b');
    fake.compact();
    fake.endWatches();
    await waitFor(() => h.names().join() === 'a', 'b gone after the re-list');
    await watching();
    assert.deepEqual(kinds().slice(0, 4), ['list', 'watch', 'list', 'watch'], 'restart re-listed');
  });

  it('410 Gone as an ERROR event on an open watch re-lists at once (delay 0)', async () => {
    fake.put(PATH, pod('a'));
    const h = start();
    await watching();
    fake.deleteSilently(PATH, 'a');
    fake.compact();
    await waitFor(() => h.names().length === 0, 'a gone after the re-list');
    assert.deepEqual(h.restarts[0], { reason: 'gone', error: undefined, delayMs: 0 });
    assert.equal(h.watcher.status().error, undefined, '410 is not a failure');
  });

  it('410 Gone as the HTTP status of a watch re-lists', async () => {
    fake.goneAsHttpStatus = true;
    fake.compactBeforeNextWatch = true; // the list's resourceVersion is too old by the time the watch starts
    fake.put(PATH, pod('a'));
    const h = start();
    await waitFor(() => h.restarts.length > 0, 'a restart');
    assert.equal(h.restarts[0]?.reason, 'gone');
    assert.equal(h.restarts[0]?.delayMs, 0);
    assert.match(h.restarts[0]?.error ?? '', /410/);
    await watching();
    assert.deepEqual(kinds().slice(0, 4), ['list', 'watch', 'list', 'watch']);
  });

  it('a watch stream cut mid-event restarts with backoff and a re-list, never applying the half event', async () => {
    fake.put(PATH, pod('a'));
    fake.put(PATH, pod('b'));
    const h = start();
    await watching();
    const lists = kinds().filter((k) => k === 'list').length;
    fake.deleteSilently(PATH, 'b'); // the repair must come from the re-list
    fake.cutWatches(true);
    await waitFor(() => h.names().join() === 'a', 'b gone after the re-list');
    assert.equal(h.restarts[0]?.reason, 'error');
    assert.ok((h.restarts[0]?.delayMs ?? 0) >= FAST.backoffInitialMs / 2, 'backed off');
    assert.ok(kinds().filter((k) => k === 'list').length > lists);
    assert.ok(h.snapshots.every((s) => s.includes('a')), 'the half DELETED event was never applied');
  });

  it('regression: a silent watch (22 h stale pod) is restarted after watchIdleTimeoutMs and the re-list repairs what it missed', async () => {
    fake.put(PATH, pod('a'));
    fake.put(PATH, pod('b'));
    const h = start({ ...FAST, watchIdleTimeoutMs: 150 });
    await watching();
    fake.silenceWatches(); // half-open connection: stays open, delivers nothing
    fake.delete(PATH, 'b');
    await waitFor(() => h.names().join() === 'a', 'b gone after the idle restart');
    assert.equal(h.restarts[0]?.reason, 'idle');
    assert.equal(h.restarts[0]?.delayMs, 0, 'an idle watch lasted long enough to restart at once');
    assert.equal(h.watcher.status().restarts.idle, 1);
  });

  it('bookmarks keep a quiet watch alive', async () => {
    fake.put(PATH, pod('a'));
    const h = start({ ...FAST, watchIdleTimeoutMs: 400 });
    await watching();
    for (let i = 0; i < 12; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      fake.bookmark();
    }
    assert.equal(h.watcher.status().restarts.idle, 0);
    assert.notEqual(h.watcher.status().lastEventAt, undefined);
  });

  for (const [what, line] of [
    ['not JSON', '{"type":"ADDED","object":{'],
    ['an unknown event type', '{"type":"EXPLODED","object":{"metadata":{"name":"x"}}}'],
    ['an object without a name', '{"type":"ADDED","object":{"metadata":{}}}'],
    ['no object', '{"type":"MODIFIED"}'],
  ] as const) {
    it(`a malformed event (${what}) restarts with backoff and a re-list`, async () => {
      fake.put(PATH, pod('a'));
      fake.put(PATH, pod('b'));
      const h = start();
      await watching();
      fake.deleteSilently(PATH, 'b');
      fake.sendRaw(line);
      await waitFor(() => h.names().join() === 'a', 'repaired by the re-list');
      assert.equal(h.restarts[0]?.reason, 'malformed');
      assert.ok((h.restarts[0]?.delayMs ?? 0) > 0);
    });
  }

  it('a non-410 ERROR event restarts with backoff', async () => {
    fake.put(PATH, pod('a'));
    const h = start();
    await watching();
    fake.sendRaw(JSON.stringify({ type: 'ERROR', object: { kind: 'Status', code: 500, reason: 'InternalError', message: 'boom' } }));
    await waitFor(() => h.restarts.length > 0, 'restart');
    assert.equal(h.restarts[0]?.reason, 'error');
    assert.match(h.restarts[0]?.error ?? '', /ERROR event 500 InternalError boom/);
  });

  it('keeps the last good copy while the API is down, reports it, and converges when it is back', async () => {
    fake.put(PATH, pod('a'));
    fake.put(PATH, pod('b'));
    const h = start();
    await watching();
    const before = h.snapshots.length;
    fake.goDown();
    await waitFor(() => h.restarts.filter((r) => r.reason === 'error').length >= 4, 'several failed attempts');
    const status = h.watcher.status();
    assert.notEqual(status.error, undefined);
    assert.notEqual(status.errorSince, undefined);
    assert.equal(h.snapshots.length, before, 'nothing emitted while down: the last good copy stays');
    const delays = h.restarts.map((r) => r.delayMs);
    assert.ok(delays.every((d) => d <= FAST.backoffMaxMs), `capped: ${delays.join()}`);
    assert.ok((delays[3] ?? 0) >= FAST.backoffMaxMs / 2, `grew: ${delays.join()}`);
    fake.comeBack();
    fake.delete(PATH, 'b'); // happened while the router could not see it
    fake.put(PATH, pod('c'));
    await waitFor(() => h.names().join() === 'a,c', 'converged');
    assert.equal(h.watcher.status().error, undefined);
  });

  it('lists that fail are retried with backoff; nothing is emitted before the first successful list', async () => {
    fake.failLists = { count: 3, status: 503 };
    fake.put(PATH, pod('a'));
    const h = start();
    await waitFor(() => h.names().join() === 'a', 'first list');
    assert.equal(h.snapshots.length, 1, 'nothing was emitted before the first successful list');
    assert.deepEqual(h.restarts.map((r) => r.reason), ['error', 'error', 'error']);
    assert.match(h.restarts[0]?.error ?? '', /answered 503/);
    assert.equal(h.watcher.status().synced, true);
    assert.equal(h.watcher.status().error, undefined, 'cleared by the successful list');
  });

  it('a watch the server ends cleanly restarts with a re-list', async () => {
    fake.put(PATH, pod('a'));
    const h = start();
    await watching();
    fake.put(PATH, pod('b')); // makes the watch productive
    await waitFor(() => h.names().length === 2, 'b');
    fake.deleteSilently(PATH, 'a');
    fake.endWatches();
    await waitFor(() => h.names().join() === 'b', 'repaired');
    assert.deepEqual(h.restarts[0], { reason: 'closed', error: undefined, delayMs: 0 });
  });

  it('a server that closes every watch at once is backed off, not hammered', async () => {
    const h = start({ ...FAST, backoffInitialMs: 30, backoffMaxMs: 30 });
    await watching();
    const timer = setInterval(() => fake.endWatches(), 1);
    try {
      await waitFor(() => h.restarts.length >= 4, 'a few restarts');
    } finally {
      clearInterval(timer);
    }
    assert.ok(h.restarts.slice(1).every((r) => r.delayMs >= 15), h.restarts.map((r) => r.delayMs).join());
  });

  it('the periodic resync re-lists a healthy watch and repairs silent drift', async () => {
    fake.put(PATH, pod('a'));
    fake.put(PATH, pod('b'));
    const h = start({ ...FAST, resyncIntervalMs: 100 });
    await watching();
    fake.deleteSilently(PATH, 'b');
    await waitFor(() => h.names().join() === 'a', 'repaired by the resync');
    assert.equal(h.restarts[0]?.reason, 'resync');
    assert.equal(h.restarts[0]?.delayMs, 0);
    const watch = fake.requests.find((r) => r.kind === 'watch');
    assert.ok(Number(watch?.query['timeoutSeconds']) >= 1, 'server-side timeout as a backstop');
  });

  it('every restart re-lists: each watch request follows a list', async () => {
    fake.put(PATH, pod('a'));
    const h = start({ ...FAST, resyncIntervalMs: 40 });
    await waitFor(() => h.restarts.length >= 3, 'a few resyncs');
    await waitFor(() => {
      fake.cutWatches(true);
      return h.restarts.some((r) => r.reason === 'error');
    }, 'an error restart');
    await watching();
    const sequence = kinds();
    sequence.forEach((kind, i) => {
      if (kind === 'watch') assert.equal(sequence[i - 1], 'list', `request ${i} is a watch not preceded by a list: ${sequence.join()}`);
    });
  });

  it('stop() ends the loop and closes the watch', async () => {
    fake.put(PATH, pod('a'));
    const h = start();
    await watching();
    await h.watcher.stop();
    await waitFor(() => fake.watchers === 0, 'watch closed');
    harness = undefined;
  });
});

describe('list+watch backoff (injected timers)', () => {
  it('is exponential, jittered within [cap/2, cap], and capped', async () => {
    const delays: number[] = [];
    const pending: (() => void)[] = [];
    const env: Environment = {
      now: () => 0,
      random: () => 0.5,
      setTimeout: (fn, ms) => {
        if (ms < 1_000_000) pending.push(fn);
        return fn;
      },
      clearTimeout: () => undefined,
    };
    const failing: ListWatchApi = {
      list: () => Promise.reject(new Error('connect ECONNREFUSED')),
      watch: () => Promise.reject(new Error('unused')),
    };
    const watcher = new ListWatcher(failing, PATH, {}, { resyncIntervalMs: 1e7, watchIdleTimeoutMs: 1e7, backoffInitialMs: 100, backoffMaxMs: 1_000 }, {
      changed: () => undefined,
      restarting: (_reason, _error, delay) => delays.push(delay),
    }, env);
    watcher.start();
    for (let i = 0; i < 7; i++) {
      await waitFor(() => pending.length > 0, 'a backoff timer');
      pending.shift()?.();
    }
    // cap = min(1000, 100 * 2^(n-1)); delay = cap/2 + random * cap/2 with random 0.5.
    assert.deepEqual(delays.slice(0, 7), [75, 150, 300, 600, 750, 750, 750]);
    const stopping = watcher.stop();
    pending.shift()?.();
    await stopping;
  });
});
