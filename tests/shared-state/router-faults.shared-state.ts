/**
 * Redis faults under live traffic, with real processes: two `switchyard
 * serve` replicas over two engine simulators and one real redis-server,
 * which is down at start, then killed and restarted empty, paused
 * (SIGSTOP), and slowed (DEBUG SLEEP). Throughout, every request gets its
 * answer (no 5xx, no reset), `/readyz` stays 200 and shows the shared state,
 * `switchyard_shared_state_up` follows it, each replica logs one line per
 * transition, and recovery needs nobody. Then a replica killed with -9:
 * its open requests stop counting on the other replica once its heartbeat
 * expires, and its keys are gone from Redis. Last, the same replicas through
 * Sentinel, across a failover from a master killed with -9.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { freePorts } from '../kit/free-ports.ts';
import { EngineSimulator } from '../../loadtest/sim/server.ts';
import { startRedisServer, type RedisServer } from '../kit/redis/redis-server.ts';
import { redisCliBinary } from '../kit/servers.ts';
import { startSentinelGroup, type SentinelGroup } from '../kit/redis/redis-sentinel.ts';
import { postJson, startRouterProcess, type RouterProcess } from '../kit/harness.ts';

const MODEL = 'faults-model';
const PREFIX = 'switchyard:';
/** Short heartbeat so a killed replica's counts go quickly (the schema's floor is 4 publish intervals). */
const PUBLISH_MS = 50;
const REPLICA_TTL_MS = 400;
/** Longest a request may take while Redis misbehaves: a session lookup waits at most the command timeout (50 ms); the rest is a loaded CI machine. */
const REQUEST_BOUND_MS = 1_000;

/** One `switchyard serve` process and what it logged about the shared state. */
class Replica {
  /** `up` / `degraded`, one per "shared state (Redis) ..." log line, in order. */
  readonly transitions: string[] = [];
  /** The router's last log lines, shown when a wait fails. */
  readonly log: string[] = [];
  readonly base: string;
  readonly admin: string;
  readonly process: RouterProcess;

  constructor(process: RouterProcess) {
    this.process = process;
    this.base = `http://127.0.0.1:${process.traffic}`;
    this.admin = `http://127.0.0.1:${process.admin}`;
    let partial = '';
    process.child.stderr?.on('data', (text: string) => {
      const lines = (partial + text).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        this.log.push(line);
        if (this.log.length > 50) this.log.shift();
        const match = /^shared state \(Redis\) (up|degraded)\b/.exec(messageOf(line));
        if (match !== null) this.transitions.push(match[1]!);
      }
    });
  }

  #reported = 0;

  /** Transitions logged since the last call. */
  newTransitions(): string[] {
    const lines = this.transitions.slice(this.#reported);
    this.#reported = this.transitions.length;
    return lines;
  }

  async readyz(): Promise<{ status: number; sharedState: unknown }> {
    const response = await fetch(`${this.admin}/readyz`);
    return { status: response.status, sharedState: ((await response.json()) as { sharedState?: unknown }).sharedState };
  }

  async gauge(name: string): Promise<number | undefined> {
    const text = await (await fetch(`${this.admin}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith(name + ' '));
    return line === undefined ? undefined : Number(line.slice(name.length + 1));
  }

  /** The other replicas' open requests, summed over engines, as /debug/endpoints shows them. */
  async othersInFlight(): Promise<number> {
    const document = (await (await fetch(`${this.admin}/debug/endpoints`)).json()) as { endpoints: { othersInFlight: number }[] };
    return document.endpoints.reduce((sum, endpoint) => sum + endpoint.othersInFlight, 0);
  }

  async stop(): Promise<void> {
    const { child, exit } = this.process;
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exit;
  }
}

/**
 * Requests in a loop against some replicas (two workers each, half of the
 * requests with a session key, which awaits one shared lookup), and
 * `/readyz` polled beside them. Everything it saw is kept until {@link take}.
 */
class Traffic {
  #running = true;
  #loops: Promise<void>[] = [];
  #statuses = new Map<number | string, number>();
  #slowestMs = 0;
  #readiness = new Map<number, number>();

  constructor(replicas: readonly Replica[]) {
    for (const [r, replica] of replicas.entries()) {
      for (let w = 0; w < 2; w++) this.#loops.push(this.#requests(replica, `${r}-${w}`));
      this.#loops.push(this.#probes(replica));
    }
  }

  /** What was seen since the last take: statuses (or error codes) with counts, the slowest request, /readyz statuses. */
  take(): { statuses: Record<string, number>; answered: number; slowestMs: number; readiness: Record<string, number> } {
    const taken = {
      statuses: Object.fromEntries(this.#statuses),
      answered: [...this.#statuses.values()].reduce((a, b) => a + b, 0),
      slowestMs: Math.round(this.#slowestMs),
      readiness: Object.fromEntries(this.#readiness),
    };
    this.#statuses = new Map();
    this.#slowestMs = 0;
    this.#readiness = new Map();
    return taken;
  }

  async stop(): Promise<void> {
    this.#running = false;
    await Promise.all(this.#loops);
  }

  async #requests(replica: Replica, worker: string): Promise<void> {
    for (let i = 0; this.#running; i++) {
      const headers: Record<string, string> = { 'x-request-id': `faults-${worker}-${i}` };
      if (i % 2 === 0) headers['x-session-id'] = `conversation-${worker}-${i % 20}`;
      const started = performance.now();
      let outcome: number | string;
      try {
        const response = await postJson(`${replica.base}/v1/chat/completions`, { model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 }, headers);
        outcome = response.complete ? response.status : 'incomplete';
      } catch (err) {
        outcome = (err as NodeJS.ErrnoException).code ?? 'error';
      }
      this.#slowestMs = Math.max(this.#slowestMs, performance.now() - started);
      this.#statuses.set(outcome, (this.#statuses.get(outcome) ?? 0) + 1);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async #probes(replica: Replica): Promise<void> {
    while (this.#running) {
      const status = (await fetch(`${replica.admin}/readyz`).catch(() => undefined))?.status ?? 0;
      this.#readiness.set(status, (this.#readiness.get(status) ?? 0) + 1);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/** The `msg` of a JSON log line ('' for anything else). */
function messageOf(line: string): string {
  try {
    const msg = (JSON.parse(line) as { msg?: unknown }).msg;
    return typeof msg === 'string' ? msg : '';
  } catch {
    return '';
  }
}

/** Polls `condition` every 25 ms (it may reject while things move: that counts as not yet). */
async function eventually(condition: () => Promise<boolean>, timeoutMs: number, message: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`${message} (after ${timeoutMs} ms)`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function sharedStateIs(replicas: readonly Replica[], status: 'up' | 'degraded', timeoutMs: number): Promise<void> {
  try {
    await eventually(async () => (await Promise.all(replicas.map((r) => r.readyz()))).every((r) => r.status === 200 && r.sharedState === status), timeoutMs, `/readyz shows ${status} on every replica`);
  } catch (err) {
    const states = await Promise.all(replicas.map((r) => r.readyz().catch(() => undefined)));
    throw new Error(`${(err as Error).message}; now ${JSON.stringify(states)}; last log lines:\n${replicas.map((r, i) => `replica ${i}:\n${r.log.slice(-12).join('\n')}`).join('\n')}`, { cause: err });
  }
  for (const replica of replicas) assert.equal(await replica.gauge('switchyard_shared_state_up'), status === 'up' ? 1 : 0);
}

/** Every request answered 200 in time, and /readyz never anything but 200. */
function assertServed(seen: ReturnType<Traffic['take']>, phase: string, t: { diagnostic(message: string): void }): void {
  t.diagnostic(`${phase}: ${seen.answered} requests ${JSON.stringify(seen.statuses)}, slowest ${seen.slowestMs} ms; /readyz ${JSON.stringify(seen.readiness)}`);
  assert.deepEqual(Object.keys(seen.statuses), ['200'], `${phase}: request outcomes ${JSON.stringify(seen.statuses)}`);
  assert.ok(seen.answered > 10, `${phase}: only ${seen.answered} requests`);
  assert.ok(seen.slowestMs < REQUEST_BOUND_MS, `${phase}: slowest request ${seen.slowestMs} ms`);
  assert.deepEqual(Object.keys(seen.readiness), ['200'], `${phase}: /readyz answers ${JSON.stringify(seen.readiness)}`);
}

/** Two engine simulators that answer at once. */
async function startEngines(): Promise<EngineSimulator[]> {
  const engines: EngineSimulator[] = [];
  for (let i = 0; i < 2; i++) {
    const engine = new EngineSimulator({ model: MODEL, knobs: { maxSeqs: 64, ttftMs: 1, itlMs: 1, outputTokens: 2 } });
    await engine.listen();
    engines.push(engine);
  }
  return engines;
}

/** A `switchyard serve` process over `engines` with `redisArgs`, once it serves (before that: 503, which is not what these tests are about). */
async function startReplica(engines: readonly EngineSimulator[], redisArgs: readonly string[]): Promise<Replica> {
  const args = ['--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--lifecycle-pre-stop-delay-ms', '0', '--log-level', 'info'];
  args.push(...engines.flatMap((engine) => ['--backend', engine.url]));
  args.push(...redisArgs, '--redis-publish-interval-ms', String(PUBLISH_MS), '--redis-replica-ttl-ms', String(REPLICA_TTL_MS), '--redis-breaker-open-ms', '300');
  const replica = new Replica(await startRouterProcess(args));
  try {
    await eventually(async () => (await postJson(`${replica.base}/v1/chat/completions`, { model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 1 })).status === 200, 10_000, 'replica serving');
  } catch (err) {
    await replica.stop();
    throw err;
  }
  return replica;
}

/** Every replica's transition lines since the last call. */
function newTransitions(replicas: readonly Replica[]): string[][] {
  return replicas.map((replica) => replica.newTransitions());
}

describe('Redis faults under traffic: two router processes and a real redis-server', () => {
  let engines: EngineSimulator[] = [];
  const replicas: Replica[] = [];
  let redisPort: number;
  let redis: RedisServer | undefined;
  let traffic: Traffic;
  const admin = () => {
    const client = new Redis({ host: '127.0.0.1', port: redisPort, maxRetriesPerRequest: 1 });
    client.on('error', () => {});
    return client;
  };

  before(async () => {
    engines = await startEngines();
    // Nothing listens on this port until the first test starts Redis there.
    [redisPort] = (await freePorts(1)) as [number];
    for (let i = 0; i < 2; i++) replicas.push(await startReplica(engines, ['--redis-url', `redis://127.0.0.1:${redisPort}`]));
    traffic = new Traffic(replicas);
  });
  after(async () => {
    await traffic?.stop();
    await Promise.all(replicas.map((replica) => replica.stop()));
    await Promise.all(engines.map((engine) => engine.close()));
    await redis?.stop();
  });

  it('Redis down at start: the replicas start and serve, degraded; Redis coming up is picked up with no restart', async (t) => {
    await sharedStateIs(replicas, 'degraded', 1_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    redis = await startRedisServer({ port: redisPort });
    await sharedStateIs(replicas, 'up', 5_000);
    // Starting degraded is the initial state, not a transition: one line each, for coming up.
    assert.deepEqual(newTransitions(replicas), [['up'], ['up']]);
    await eventually(async () => (await Promise.all(replicas.map((r) => r.gauge('switchyard_fleet_replicas')))).every((n) => n === 2), 3_000, 'each replica sees both');
    assertServed(traffic.take(), 'down at start', t);
  });

  it('Redis killed mid-run and restarted empty: degraded while it is gone, up again by itself, the fleet rebuilt', async (t) => {
    await redis!.kill();
    await sharedStateIs(replicas, 'degraded', 3_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    await redis!.restart();
    await sharedStateIs(replicas, 'up', 5_000);
    assert.deepEqual(newTransitions(replicas), [['degraded', 'up'], ['degraded', 'up']]);
    const client = admin();
    try {
      await eventually(async () => (await client.zcard(`${PREFIX}{fleet}:replicas`)) === 2, 3_000, 'both replicas back in the fleet set');
    } finally {
      client.disconnect();
    }
    assertServed(traffic.take(), 'killed and restarted', t);
  });

  it('Redis paused (SIGSTOP): commands time out, the breaker opens, requests do not wait on it; resumed, it is used again', async (t) => {
    redis!.pause();
    try {
      await sharedStateIs(replicas, 'degraded', 3_000);
      await new Promise((resolve) => setTimeout(resolve, 500));
    } finally {
      redis!.resume();
    }
    await sharedStateIs(replicas, 'up', 5_000);
    assert.deepEqual(newTransitions(replicas), [['degraded', 'up'], ['degraded', 'up']]);
    assertServed(traffic.take(), 'paused', t);
  });

  it('Redis slow (DEBUG SLEEP 1): degraded for the second it does not answer, then up', async (t) => {
    const sleeping = promisify(execFile)(await redisCliBinary(), ['-h', '127.0.0.1', '-p', String(redisPort), 'DEBUG', 'SLEEP', '1'], { timeout: 10_000 });
    await sharedStateIs(replicas, 'degraded', 3_000);
    await sleeping;
    await sharedStateIs(replicas, 'up', 5_000);
    assert.deepEqual(newTransitions(replicas), [['degraded', 'up'], ['degraded', 'up']]);
    assertServed(traffic.take(), 'slow', t);
  });

  it("counts converge after the faults: each replica sees the other's open requests", async (t) => {
    const held = new AbortController();
    const hold = (replica: Replica, n: number) =>
      Array.from({ length: n }, () =>
        fetch(`${replica.base}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-sim-ttft-ms': '60000' },
          body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hold' }], stream: true }),
          signal: held.signal,
        }).catch(() => undefined),
      );
    const [a, b] = replicas as [Replica, Replica];
    const holds = [...hold(a, 2), ...hold(b, 3)];
    try {
      await eventually(async () => (await a.othersInFlight()) === 3 && (await b.othersInFlight()) === 2, 3_000, 'each sees the other replica holding its requests');
    } finally {
      held.abort();
      await Promise.all(holds);
    }
    await eventually(async () => (await a.othersInFlight()) === 0 && (await b.othersInFlight()) === 0, 3_000, 'released requests stop counting');
    assertServed(traffic.take(), 'converged', t);
  });

  it('a replica killed with -9 leaves no stuck counts: gone from the fleet and from Redis once its heartbeat expires', async (t) => {
    await traffic.stop();
    const [a, b] = replicas as [Replica, Replica];
    traffic = new Traffic([a]);
    const held = new AbortController();
    const holds = Array.from({ length: 3 }, () =>
      fetch(`${b.base}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-sim-ttft-ms': '60000' },
        body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hold' }], stream: true }),
        signal: held.signal,
      }).catch(() => undefined),
    );
    const client = admin();
    try {
      await eventually(async () => (await a.othersInFlight()) === 3, 3_000, "A counts B's three open requests");
      // B's counts are the hash holding 3 (A's own traffic has at most 2 open at a time).
      const stem = `${PREFIX}{fleet}:inflight:`;
      let bKey: string | undefined;
      for (const key of await client.keys(`${stem}*`)) {
        const counts = Object.values(await client.hgetall(key)).reduce((sum, n) => sum + Number(n), 0);
        if (counts === 3) bKey = key;
      }
      assert.ok(bKey !== undefined, "B's counts are in Redis");
      const bId = bKey.slice(stem.length);
      assert.notEqual(await client.zscore(`${PREFIX}{fleet}:replicas`, bId), null, 'B is in the fleet set');
      b.process.child.kill('SIGKILL');
      await b.process.exit;
      const killedAt = Date.now();
      await eventually(async () => (await a.othersInFlight()) === 0, 3_000, "A stops counting B's requests");
      await eventually(async () => (await client.exists(bKey)) === 0 && (await client.zscore(`${PREFIX}{fleet}:replicas`, bId)) === null, 3_000, "B's keys leave Redis");
      const goneAfterMs = Date.now() - killedAt;
      t.diagnostic(`B's counts left A's view and Redis ${goneAfterMs} ms after the kill (heartbeat TTL ${REPLICA_TTL_MS} ms, publish every ${PUBLISH_MS} ms)`);
      assert.equal(await a.gauge('switchyard_fleet_replicas'), 1);
      // Within the heartbeat and a publish round or two, not at some later clean-up.
      assert.ok(goneAfterMs < REPLICA_TTL_MS + 2_000, `counts went ${goneAfterMs} ms after the kill`);
    } finally {
      held.abort();
      await Promise.all(holds);
      client.disconnect();
    }
    assertServed(traffic.take(), 'replica killed', t);
  });
});

describe('a Sentinel failover under traffic: two router processes, a real master, replica and Sentinel', () => {
  let engines: EngineSimulator[] = [];
  const replicas: Replica[] = [];
  let group: SentinelGroup;
  let traffic: Traffic;

  before(async () => {
    engines = await startEngines();
    group = await startSentinelGroup();
    for (let i = 0; i < 2; i++) replicas.push(await startReplica(engines, ['--redis-mode', 'sentinel', '--redis-nodes', ...group.nodes, '--redis-sentinel-master-name', group.masterName]));
    traffic = new Traffic(replicas);
  });
  after(async () => {
    await traffic?.stop();
    await Promise.all(replicas.map((replica) => replica.stop()));
    await Promise.all(engines.map((engine) => engine.close()));
    await group?.stop();
  });

  it('the master killed with -9: degraded until the Sentinel promotes the replica, then up on it by itself, requests served throughout', async (t) => {
    await sharedStateIs(replicas, 'up', 10_000);
    await eventually(async () => (await Promise.all(replicas.map((r) => r.gauge('switchyard_fleet_replicas')))).every((n) => n === 2), 3_000, 'each replica sees both');
    newTransitions(replicas);
    traffic.take();
    const master = await group.master();
    await master.kill();
    await sharedStateIs(replicas, 'degraded', 3_000);
    await group.waitForFailoverFrom(master.port, 20_000);
    await sharedStateIs(replicas, 'up', 10_000);
    assert.deepEqual(newTransitions(replicas), [['degraded', 'up'], ['degraded', 'up']]);
    // The promoted replica holds the fleet again: both replicas publish to it.
    await eventually(async () => (await Promise.all(replicas.map((r) => r.gauge('switchyard_fleet_replicas')))).every((n) => n === 2), 3_000, 'each replica sees both again');
    assertServed(traffic.take(), 'Sentinel failover', t);
  });
});
