/**
 * `npm run bench -- memory-limit`: one router process inside a memory cgroup
 * (1 GiB, no swap: a Kubernetes container with `limits.memory: 1Gi`), with
 * the Node heap capped as the Helm chart caps it, under a hostile mix at
 * once: 33 MB request bodies flooding in on 40 connections (fast and slow,
 * declared and chunked: over maxBodyBytes for 413, under it to exhaust the
 * body budget for 429), 10,000 idle keep-alive sockets and 8,000 open
 * streams. Idle sockets open first, then streams, then the floods, so each
 * one's memory shows apart before they run together.
 *
 * Samples what the kernel charged the cgroup (socket buffers included) and
 * the router's RSS every 200 ms, its heap and buffered body bytes from
 * /metrics every second, and /livez from a process of its own every 50 ms.
 * Bars: peak charge below the limit, no OOM kill, the router alive at the
 * end, /livez answered throughout, no stream failed, every idle socket
 * still open, every flood body answered with a status (never a reset),
 * buffered bodies within the budget. Without a memory cgroup (not root, no
 * controller) it measures peak RSS against the limit and says the limit was
 * not enforced.
 *
 * The mix needs ~2 descriptors per stream and 1 per idle socket in the
 * router (26,000 for the named mix); where the open-file limit cannot be
 * raised, the router's own caps fit to it and the mix is scaled to fit under
 * them, and the report projects the named mix from the measured cost of each
 * idle socket and stream.
 *
 *   npm run bench -- memory-limit [--quick | --smoke] [--limit-mib 1024] [--heap-mib 384] [--budget-mib 128]
 *     [--idle N] [--streams N] [--floods N] [--flood-s S]
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fitToFileLimit } from '../../router/admission/router-pressure.ts';
import { runGenerators, type GeneratorRun } from '../bench/generators.ts';
import type { LoadSpec, RequestTemplate } from '../bench/load-spec.ts';
import { canPin, waitForModels } from '../../tests/kit/processes.ts';
import { spawnSwitchyard } from '../../tests/kit/router-process.ts';
import { summarize } from '../bench/stats.ts';
import { lineChart } from '../report/svg-chart.ts';
import { startProbe } from './livez-probe.ts';
import { createMemoryCgroup } from './memory-cgroup.ts';
import { Bars, factsLine, ms, runFacts, runIfMain, scenarioOptions, writeResults } from './results.ts';
import { rssBytes, startEngineProcesses } from './systems.ts';

const MODEL = 'memory-model';
const MIB = 2 ** 20;
/** The router's default caps (admission.maxConnections, admission.maxInFlight) and body budget. */
const ROUTER_DEFAULTS = { maxConnections: 20_000, maxInFlight: 10_000, bodyBudgetBytes: 128 * MIB };
/** Descriptors to ask for, for the scenario and the router; raising the hard limit needs CAP_SYS_RESOURCE. */
const WANTED_OPEN_FILES = 65_536;
/**
 * Old-space cap for a 1 GiB container, as the Helm chart sets it: about 1.7× the live heap of the
 * named mix (~220 MiB, projected from the measured 17 KiB per stream and 5 KiB per idle socket),
 * so V8 collects before garbage can grow the heap toward the cgroup limit, and the rest of the GiB
 * stays for what lives outside the heap: body buffers (about twice the 128 MiB budget at peak),
 * socket buffers, code. Node's own default under a 1 GiB cgroup would be ~512 MiB.
 */
const HEAP_MIB = 384;
/** Slots per engine simulator: room for every stream on either engine. */
const ENGINE_SLOTS = 20_000;

const PLANS = {
  full: { idle: 10_000, streams: 8_000, floods: 40, arrivalS: 10, floodS: 60 },
  quick: { idle: 10_000, streams: 8_000, floods: 40, arrivalS: 8, floodS: 20 },
  smoke: { idle: 200, streams: 100, floods: 8, arrivalS: 1, floodS: 3 },
} as const;
type Mix = { idle: number; streams: number; floods: number };

/** A flood body: `bytes` of a valid chat request, sent as fast as the socket takes (0) or at `bytesPerS`. */
interface FloodKind {
  readonly label: string;
  readonly chunked: boolean;
  readonly bytes: number;
  readonly bytesPerS: number;
}
const FLOOD_KINDS: readonly FloodKind[] = [
  { label: '33 MB, Content-Length, fast', chunked: false, bytes: 33_000_000, bytesPerS: 0 },
  { label: '33 MB, Content-Length, 4 MB/s', chunked: false, bytes: 33_000_000, bytesPerS: 4_000_000 },
  { label: '33 MiB, chunked, fast', chunked: true, bytes: 33 * MIB, bytesPerS: 0 },
  { label: '33 MiB, chunked, 4 MB/s', chunked: true, bytes: 33 * MIB, bytesPerS: 4_000_000 },
];

/** Long streams: one token a second, for `seconds`. */
function streamTemplate(seconds: number): RequestTemplate {
  return { path: '/v1/chat/completions', model: MODEL, stream: true, tools: false, promptBytes: 0, headers: { 'x-sim-ttft-ms': '50', 'x-sim-itl-ms': '1000', 'x-sim-output-tokens': String(seconds) }, users: 0, checkIds: true };
}

/** Raises this process's open-file limit (children inherit it) when permitted; returns the limits the router will fit its caps to. */
function fitMix(wanted: Mix): { mix: Mix; scale: number; openFiles: number | undefined } {
  spawnSync('prlimit', ['--pid', String(process.pid), `--nofile=${WANTED_OPEN_FILES}:${WANTED_OPEN_FILES}`]);
  const { limits, openFiles } = fitToFileLimit({ ...ROUTER_DEFAULTS, eventLoopLagMs: 0 });
  // Room for probes, metrics scrapes and the model list besides the mix.
  const room = Math.min(limits.maxConnections, limits.maxInFlight + wanted.idle) - 100 - wanted.floods;
  const scale = Math.min(1, room / (wanted.idle + wanted.streams));
  return { mix: { idle: Math.floor(wanted.idle * scale), streams: Math.floor(wanted.streams * scale), floods: wanted.floods }, scale, openFiles };
}

/** The bytes one flood connection sends: headers, then a chat body padded to `kind.bytes` (chunk-framed when chunked). */
function floodPayload(kind: FloodKind): Buffer {
  const json = Buffer.alloc(kind.bytes, 'a');
  json.write(`{"model":"${MODEL}","stream":false,"messages":[{"role":"user","content":"`, 0);
  json.write('"}]}', kind.bytes - 4);
  const framing = kind.chunked ? 'transfer-encoding: chunked' : `content-length: ${kind.bytes}`;
  const head = Buffer.from(`POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\nx-sim-output-tokens: 1\r\nx-sim-ttft-ms: 0\r\n${framing}\r\n\r\n`);
  if (!kind.chunked) return Buffer.concat([head, json]);
  const parts = [head];
  for (let at = 0; at < json.length; at += MIB) {
    const chunk = json.subarray(at, at + MIB);
    parts.push(Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n'));
  }
  return Buffer.concat([...parts, Buffer.from('0\r\n\r\n')]);
}

/** `413 SWITCHYARD_BODY_TOO_LARGE`, `200`, ... once `head` holds a whole answer (or `final`: the socket closed). */
function answerOf(head: Buffer, final: boolean): string | undefined {
  const end = head.indexOf('\r\n\r\n');
  if (end < 0) return final ? (head.length === 0 ? undefined : 'partial answer') : undefined;
  const text = head.toString('latin1');
  const status = /^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? '???';
  if (status === '200') return status;
  const length = Number(/\r\ncontent-length: *(\d+)/i.exec(text.slice(0, end))?.[1] ?? 0);
  if (!final && head.length < end + 4 + length) return undefined;
  const code = /"code":"([A-Z_]+)"/.exec(text.slice(end))?.[1];
  return code === undefined ? status : `${status} ${code}`;
}

/** Sends one flood body on a new connection; resolves with its answer, `reset (...)`, or `cut at the end`. */
function floodOnce(port: number, payload: Buffer, bytesPerS: number, deadline: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let head = Buffer.alloc(0);
    let done = false;
    const finish = (outcome: string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(() => finish('cut at the end'), Math.max(0, deadline - performance.now()));
    socket.on('data', (chunk: Buffer) => {
      if (head.length < 16_384) head = Buffer.concat([head, chunk]);
      const answer = answerOf(head, false);
      if (answer !== undefined) finish(answer);
    });
    socket.on('error', (err: NodeJS.ErrnoException) => finish(answerOf(head, true) ?? `reset (${err.code ?? err.message})`));
    socket.on('close', () => finish(answerOf(head, true) ?? 'closed without an answer'));
    const drained = () =>
      new Promise<void>((go) => {
        const on = () => {
          socket.off('drain', on).off('close', on);
          go();
        };
        socket.on('drain', on).on('close', on);
      });
    const send = async () => {
      const slice = 256 * 1024;
      for (let at = 0; at < payload.length && !done; at += slice) {
        const more = socket.write(payload.subarray(at, at + slice));
        if (bytesPerS > 0) await sleep((slice * 1000) / bytesPerS);
        else if (!more) await drained();
      }
    };
    socket.once('connect', () => void send());
  });
}

/** Runs `connections` flood loops (kinds taken in turn) until `deadline`; resolves with answers counted by kind. */
async function flood(port: number, connections: number, deadline: number): Promise<Record<string, Record<string, number>>> {
  const payloads = FLOOD_KINDS.map(floodPayload);
  const counts: Record<string, Record<string, number>> = Object.fromEntries(FLOOD_KINDS.map((k) => [k.label, {}]));
  const loop = async (i: number) => {
    const kind = FLOOD_KINDS[i % FLOOD_KINDS.length] as FloodKind;
    const byAnswer = counts[kind.label] as Record<string, number>;
    while (performance.now() < deadline) {
      const answer = await floodOnce(port, payloads[i % FLOOD_KINDS.length] as Buffer, kind.bytesPerS, deadline);
      byAnswer[answer] = (byAnswer[answer] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: connections }, (_, i) => loop(i)));
  return counts;
}

/** Opens `count` keep-alive connections, each answered once (GET /v1/models) and then left idle. */
async function openIdle(port: number, count: number): Promise<{ sockets: Socket[]; failed: number; closedByRouter: () => number }> {
  const sockets: Socket[] = [];
  let failed = 0;
  let closedByRouter = 0;
  const BATCH = 500; // well under the listen backlog
  for (let i = 0; i < count; i += BATCH) {
    const opening = Array.from({ length: Math.min(BATCH, count - i) }, () =>
      new Promise<void>((resolve) => {
        const socket = connect(port, '127.0.0.1');
        let answered = false;
        socket.on('error', () => {});
        socket.on('close', () => {
          if (answered) closedByRouter++;
          else failed++;
          resolve();
        });
        socket.once('data', () => {
          answered = true;
          sockets.push(socket);
          resolve();
        });
        socket.write('GET /v1/models HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n');
      }),
    );
    await Promise.all(opening);
  }
  return { sockets, failed, closedByRouter: () => closedByRouter };
}

/** One memory sample: seconds since start, cgroup charge (with sockets), router RSS. */
type MemorySample = { t: number; cgroup: number | undefined; sockets: number | undefined; rss: number };
/** One /metrics sample. */
type MetricsSample = { t: number; heapUsed: number; external: number; bufferedBodies: number; inFlight: number; connections: number };

const gauge = (text: string, name: string): number => Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1] ?? NaN);
const mib = (bytes: number | undefined): string => (bytes === undefined || Number.isNaN(bytes) ? '-' : (bytes / MIB).toFixed(0));
const sleep = (msToWait: number) => new Promise((resolve) => setTimeout(resolve, msToWait));

/** Entry point; returns the exit code. */
export async function memoryLimit(argv: readonly string[]): Promise<number> {
  const options = scenarioOptions(argv, 'memory-limit');
  const plan = PLANS[options.smoke ? 'smoke' : options.quick ? 'quick' : 'full'];
  const limitBytes = Number(options.extra['limit-mib'] ?? 1024) * MIB;
  const heapMib = Number(options.extra['heap-mib'] ?? HEAP_MIB);
  const budgetBytes = Number(options.extra['budget-mib'] ?? ROUTER_DEFAULTS.bodyBudgetBytes / MIB) * MIB;
  const floodS = Number(options.extra['flood-s'] ?? plan.floodS);
  // Streams outlast the floods by a few seconds on both sides.
  const holdS = floodS + 4;
  const named: Mix = { idle: Number(options.extra['idle'] ?? plan.idle), streams: Number(options.extra['streams'] ?? plan.streams), floods: Number(options.extra['floods'] ?? plan.floods) };
  const { mix, scale, openFiles } = fitMix(named);
  const pinned = canPin();

  const cgroup = createMemoryCgroup(`switchyard-memory-limit-${process.pid}`, limitBytes);
  const enforced = !('unavailable' in cgroup);
  if (!enforced) console.error(`memory limit NOT enforced (${cgroup.unavailable}): measuring peak RSS only`);
  const engines = await startEngineProcesses(2, MODEL, ['--max-seqs', String(ENGINE_SLOTS)], pinned ? 1 : undefined);
  // Known engine capacity (as an operator would configure it), so streams are held, not limited by the safe start for unknown engines.
  const configDir = mkdtempSync(join(tmpdir(), 'switchyard-memory-'));
  const config = join(configDir, 'config.json');
  writeFileSync(config, JSON.stringify({ load: { capacity: Object.fromEntries(engines.urls.map((url) => [url, ENGINE_SLOTS])) } }));
  const routerArgs = ['serve', '--config', config, '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--log-level', 'info', '--lifecycle-pre-stop-delay-ms', '0', '--server-body-budget-bytes', String(budgetBytes), ...engines.urls.flatMap((url) => ['--backend', url])];
  const heapFlag = `--max-old-space-size=${heapMib}`;
  let stopRouter = async () => {};
  try {
    const router = await spawnSwitchyard(routerArgs, { core: pinned ? 0 : undefined, nodeArgs: [heapFlag], launcher: enforced ? cgroup.launcher : [] });
    let exit: string | undefined;
    router.child.once('exit', (code, signal) => (exit = signal ?? `code ${String(code)}`));
    stopRouter = async () => void (await router.stop());
    const pid = router.child.pid as number;
    const port = router.ports['traffic'] as number;
    const admin = `http://127.0.0.1:${router.ports['admin'] as number}`;
    await waitForModels(`http://127.0.0.1:${port}`);

    const start = performance.now();
    const now = () => (performance.now() - start) / 1000;
    const memory: MemorySample[] = [];
    const metrics: MetricsSample[] = [];
    const memoryTimer = setInterval(() => {
      const charged = enforced ? cgroup.sample() : undefined;
      memory.push({ t: now(), cgroup: charged?.currentBytes, sockets: charged?.socketBytes, rss: rssBytes([pid]) });
    }, 200);
    const metricsTimer = setInterval(() => {
      const t = now();
      fetch(`${admin}/metrics`)
        .then((r) => r.text())
        .then((text) => metrics.push({ t, heapUsed: gauge(text, 'nodejs_heap_size_used_bytes'), external: gauge(text, 'nodejs_external_memory_bytes'), bufferedBodies: gauge(text, 'switchyard_buffered_body_bytes'), inFlight: gauge(text, 'switchyard_in_flight_requests'), connections: gauge(text, 'switchyard_open_connections') }))
        .catch(() => {});
    }, 1000);
    const probe = startProbe(`${admin}/livez`);
    const stages: { name: string; t: number }[] = [];
    const stage = async (name: string, settleMs: number) => {
      await sleep(settleMs);
      stages.push({ name, t: now() });
    };

    let streamsRun: GeneratorRun;
    let floods: Record<string, Record<string, number>>;
    let idle: Awaited<ReturnType<typeof openIdle>>;
    let idleHeld: number;
    let idleClosed: number;
    try {
      await stage('at rest', 1000);
      idle = await openIdle(port, mix.idle);
      await stage(`${idle.sockets.length} idle sockets`, 2000);
      const streamSpec: LoadSpec = {
        target: `http://127.0.0.1:${port}`,
        request: streamTemplate(plan.arrivalS + holdS),
        mode: { kind: 'open', ratePerS: mix.streams / plan.arrivalS, maxConnections: mix.streams },
        warmupMs: 0,
        requests: mix.streams,
        idPrefix: 'held',
        seed: 3,
      };
      const streaming = runGenerators(streamSpec, { processes: options.generators || 2, quiet: options.quiet, label: `${mix.streams} streams`, ...(pinned ? { core: 1 } : {}) });
      await stage(`+ ${mix.streams} open streams`, plan.arrivalS * 1000 + 2000);
      floods = await flood(port, mix.floods, performance.now() + floodS * 1000);
      stages.push({ name: `+ ${mix.floods} flood connections (${floodS} s)`, t: now() });
      streamsRun = await streaming;
      idleClosed = idle.closedByRouter();
      idleHeld = idle.sockets.length - idleClosed;
      for (const socket of idle.sockets) socket.destroy();
      await stage('floods over, streams ended, idle sockets closed', 2000);
    } finally {
      clearInterval(memoryTimer);
      clearInterval(metricsTimer);
    }
    const livez = await probe.stop();
    const aliveAtEnd = exit === undefined;
    const final = enforced ? cgroup.sample() : undefined;
    await router.stop();
    const exitAfterStop = exit;

    // Levels per stage: the highest sample between one mark and the next.
    const level = (from: number, to: number, pick: (s: MemorySample) => number | undefined) => Math.max(...memory.filter((s) => s.t > from && s.t <= to).map((s) => pick(s) ?? NaN));
    const metricLevel = (from: number, to: number, pick: (s: MetricsSample) => number) => Math.max(...metrics.filter((s) => s.t > from && s.t <= to).map(pick));
    const rows = stages.map((s, i) => {
      const from = i === 0 ? 0 : (stages[i - 1] as { t: number }).t;
      return { stage: s.name, cgroup: level(from, s.t, (m) => m.cgroup), sockets: level(from, s.t, (m) => m.sockets), rss: level(from, s.t, (m) => m.rss), heapUsed: metricLevel(from, s.t, (m) => m.heapUsed), external: metricLevel(from, s.t, (m) => m.external), bufferedBodies: metricLevel(from, s.t, (m) => m.bufferedBodies) };
    });
    const peakCharge = final?.peakBytes ?? Math.max(...memory.map((m) => m.cgroup ?? 0));
    const peakRss = Math.max(...memory.map((m) => m.rss));
    const peakBodies = Math.max(0, ...metrics.map((m) => m.bufferedBodies).filter(Number.isFinite));
    const floodTotals: Record<string, number> = {};
    for (const byAnswer of Object.values(floods)) for (const [answer, n] of Object.entries(byAnswer)) floodTotals[answer] = (floodTotals[answer] ?? 0) + n;
    const unanswered = Object.entries(floodTotals).filter(([a]) => !/^\d{3}/.test(a) && a !== 'cut at the end');

    const bars = new Bars();
    const limitText = `${mib(limitBytes)} MiB`;
    if (enforced) {
      bars.check('correctness', `peak memory charged to the cgroup < ${limitText} (enforced, cgroup v${cgroup.version})`, peakCharge < limitBytes, `peak ${mib(peakCharge)} MiB (kernel's record, socket buffers included); RSS peak ${mib(peakRss)} MiB`);
      bars.check('correctness', 'no OOM kill', (final?.oomKills ?? 0) === 0, `oom_kill ${final?.oomKills ?? '?'}, limit hits ${final?.ooms ?? '?'}`);
    } else {
      bars.check('correctness', `peak router RSS < ${limitText} (NOT enforced: ${cgroup.unavailable})`, peakRss < limitBytes, `peak ${mib(peakRss)} MiB`);
    }
    bars.check('correctness', 'router alive at the end', aliveAtEnd, aliveAtEnd ? `running; exit after SIGTERM: ${exitAfterStop ?? '?'}` : `exited (${exit ?? '?'})`);
    const probeFailures = livez.filter((l) => l < 0).length;
    const probeOk = summarize(livez.filter((l) => l >= 0));
    bars.check('correctness', '/livez answered 200 throughout (every 50 ms, own process)', probeFailures === 0 && livez.length > 0, `${livez.length - probeFailures}/${livez.length}, p99 ${ms(probeOk.p99)} ms, worst ${ms(probeOk.max)} ms`);
    bars.check('correctness', `${mix.streams} streams: none failed; each ends with [DONE] or was shed (429 + Retry-After)`, streamsRun.ok + streamsRun.shed === mix.streams && streamsRun.failed === 0, `${streamsRun.ok} complete, ${streamsRun.shed} shed, ${streamsRun.failed} failed${streamsRun.failed > 0 ? ` (${Object.entries(streamsRun.failureKinds).map(([k, n]) => `${k} ${n}`).join(', ')})` : ''}`);
    bars.check('correctness', `${mix.idle} idle sockets held to the end`, idle.failed === 0 && idleHeld === mix.idle, `${idleHeld} held, ${idle.failed} failed to open, ${idleClosed} closed by the router`);
    bars.check('correctness', 'every flood body answered with a status (413 / 429 / 200), never a reset', unanswered.length === 0 && Object.keys(floodTotals).length > 0, Object.entries(floodTotals).map(([a, n]) => `${a}: ${n}`).join(', '));
    bars.check('correctness', `buffered bodies ≤ the budget (${mib(budgetBytes)} MiB)`, peakBodies <= budgetBytes, `peak ${mib(peakBodies)} MiB (switchyard_buffered_body_bytes, sampled every second)`);

    // Projection of the named mix from what each idle socket and stream cost here.
    const [rest, withIdle, withStreams] = rows.map((r) => r.cgroup ?? r.rss);
    const perIdle = ((withIdle ?? 0) - (rest ?? 0)) / Math.max(1, mix.idle);
    const perStream = ((withStreams ?? 0) - (withIdle ?? 0)) / Math.max(1, mix.streams);
    const projected = (enforced ? peakCharge : peakRss) + (named.idle - mix.idle) * perIdle + (named.streams - mix.streams) * perStream;

    if (scale < 1) bars.check('performance', `named mix (${named.idle} idle, ${named.streams} streams) projected < ${limitText}`, projected < limitBytes, `~${mib(projected)} MiB (linear projection from this run at ${Math.round(scale * 100)}%; see below)`);

    const facts = runFacts(`npm run bench -- memory-limit ${argv.join(' ')}`.trim());
    const fdNote =
      scale < 1
        ? `\n\n**Scaled mix.** ${named.idle} idle sockets and ${named.streams} streams need ~${named.idle + 2 * named.streams + named.floods} descriptors in the router; this machine's open-file limit is ${openFiles ?? '?'} and cannot be raised here (no CAP_SYS_RESOURCE), so the router fits its caps to ${Math.floor(((openFiles ?? 0) - 64) / 2)} connections and the run holds ${mix.idle} idle sockets and ${mix.streams} streams (${Math.round(scale * 100)}% of each). Measured here: ${(perIdle / 1024).toFixed(1)} KiB per idle socket, ${(perStream / 1024).toFixed(1)} KiB per open stream; the named mix projects to ~${mib(projected)} MiB peak (linear in the two counts, floods unchanged).`
        : '';
    const floodRows = FLOOD_KINDS.map((k) => `| ${k.label} | ${Math.ceil((mix.floods - FLOOD_KINDS.indexOf(k)) / FLOOD_KINDS.length)} | ${Object.entries(floods[k.label] ?? {}).map(([a, n]) => `${a}: ${n}`).join(', ')} |`);
    const markdown = [
      factsLine(facts),
      '',
      `One router (\`node ${heapFlag}\`, default caps, body budget ${mib(budgetBytes)} MiB${pinned ? ', pinned to core 0' : ''}) ${enforced ? `in a cgroup v${cgroup.version} memory cgroup: limit ${limitText}, no swap` : `with NO memory cgroup (${cgroup.unavailable}): the ${limitText} bar is checked against RSS, not enforced`}; 2 engine simulators${pinned ? ' and the clients on core 1' : ''}. Mix, in this order and then together: ${mix.idle} idle keep-alive sockets (one GET each, then silence), ${mix.streams} streams (1 token/s, arriving over ${plan.arrivalS} s, held ${holdS} s), ${mix.floods} connections flooding 33 MB bodies for ${floodS} s (kinds in turn, a new connection per body).${fdNote}`,
      '',
      bars.markdown(options),
      '',
      '| stage | cgroup charge MiB | of it socket buffers MiB | router RSS MiB | heap used MiB | external MiB | buffered bodies MiB |',
      '|---|---|---|---|---|---|---|',
      ...rows.map((r) => `| ${r.stage} | ${mib(r.cgroup)} | ${mib(r.sockets)} | ${mib(r.rss)} | ${mib(r.heapUsed)} | ${mib(r.external)} | ${mib(r.bufferedBodies)} |`),
      '',
      '| flood kind | connections | answers |',
      '|---|---|---|',
      ...floodRows,
      '',
      `Stage values are the highest sample within the stage. Chart: \`memory-limit-memory.svg\`.`,
    ].join('\n');
    const chart = lineChart({
      title: `Router memory under the mix (${enforced ? `cgroup limit ${limitText}` : 'limit not enforced'})`,
      xLabel: 'seconds',
      yLabel: 'MiB',
      series: [
        ...(enforced ? [{ name: 'cgroup charge', points: memory.map((m) => [m.t, (m.cgroup ?? 0) / MIB] as const) }] : []),
        { name: 'router RSS', dashed: true, points: memory.map((m) => [m.t, m.rss / MIB] as const) },
        { name: 'heap used', points: metrics.filter((m) => Number.isFinite(m.heapUsed)).map((m) => [m.t, m.heapUsed / MIB] as const) },
        { name: 'buffered bodies', points: metrics.filter((m) => Number.isFinite(m.bufferedBodies)).map((m) => [m.t, m.bufferedBodies / MIB] as const) },
      ],
      thresholds: [{ label: limitText, y: limitBytes / MIB }],
    });
    const { e2e: _e2e, ttft: _ttft, itl: _itl, sendLag: _sendLag, ...streamCounts } = streamsRun;
    writeResults(options, 'memory-limit', facts, { plan, named, mix, scale, openFiles, limitBytes, heapMib, budgetBytes, enforced, cgroup: enforced ? { version: cgroup.version, path: cgroup.path, final } : { unavailable: cgroup.unavailable }, bars: bars.list, stages: rows, perIdle, perStream, projected, floods, streams: streamCounts, idleHeld, aliveAtEnd, exit: exitAfterStop, memory, metrics, livez }, markdown, [{ name: 'memory', svg: chart }]);
    return bars.pass(options) ? 0 : 1;
  } finally {
    await stopRouter();
    await engines.stop();
    if (enforced) cgroup.remove();
    rmSync(configDir, { recursive: true, force: true });
  }
}

runIfMain(import.meta.url, memoryLimit);
