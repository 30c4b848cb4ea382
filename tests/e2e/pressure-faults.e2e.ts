/**
 * Faults of pressure rather than of engines: a client that reads slowly, a
 * burst of 3,000 connections, and a process at its open-file limit. The
 * router runs as a child process where its own limits matter.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { waitForModels } from '../kit/processes.ts';
import { spawnSwitchyard, type SwitchyardProcess } from '../kit/router-process.ts';
import { EngineSimulator } from '../../loadtest/sim/server.ts';
import { sseData, startFleet, startRouterProcess, waitFor, type Fleet, type RouterProcess } from '../kit/harness.ts';

const MODEL = 'm-pressure';
const BODY = JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] });

/** Sends one request on its own connection; resolves with the status code, or the socket error code. */
function rawRequest(port: number): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${BODY.length}\r\nConnection: close\r\n\r\n${BODY}`);
    });
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
    socket.on('close', () => resolve(text.slice(9, 12) || 'closed-without-answer'));
  });
}

/** The admin /livez status, asked until a connection gets an answer (at most 2 s). */
async function livezOnceDescriptorsFree(admin: number): Promise<number> {
  const deadline = Date.now() + 2_000;
  for (;;) {
    try {
      return (await fetch(`http://127.0.0.1:${admin}/livez`)).status;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

function tally(outcomes: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const o of outcomes) counts[o] = (counts[o] ?? 0) + 1;
  return counts;
}


describe('a client that reads slowly', () => {
  let fleet: Fleet;
  before(async () => {
    fleet = await startFleet([{ model: MODEL, knobs: { ttftMs: 0, itlMs: 0, maxSeqs: 10 } }]);
  });
  after(() => fleet.close());

  it('slows the engine down instead of buffering the stream in the router', async () => {
    const requestId = 'slow-reader';
    const tokens = 600_000; // ~90 MB of SSE
    let received = 0;
    let paused!: () => void;
    let resume!: () => void;
    const body = new Promise<Buffer>((resolve, reject) => {
      const req = httpRequest(
        `${fleet.base}/v1/chat/completions`,
        { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'x-request-id': requestId, 'x-sim-output-tokens': String(tokens) } },
        (res) => {
          const chunks: Buffer[] = [];
          resume = () => res.resume();
          res.on('data', (chunk: Buffer) => {
            chunks.push(chunk);
            received += chunk.length;
            if (received > 1_000_000 && paused !== undefined) {
              res.pause();
              paused();
              paused = undefined as unknown as () => void;
            }
          });
          res.on('end', () => resolve(Buffer.concat(chunks)));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify({ model: MODEL, stream: true, messages: [] }));
    });
    await new Promise<void>((resolve) => (paused = resolve));
    // The kernel buffers between the engine and the client fill at whatever pace the
    // machine allows (slowly on a loaded one), so wait for the engine to come to rest
    // rather than for a fixed time: an unbounded proxy never rests before the whole
    // ~90 MB is out, and then fails the bound below.
    const progress = (): number => fleet.engines[0]?.progress(requestId) ?? 0;
    let last = progress();
    let stillSince = Date.now();
    await waitFor(() => {
      const now = progress();
      if (now !== last) [last, stillSince] = [now, Date.now()];
      return Date.now() - stillSince >= 500;
    }, 10_000);
    const buffered = last - received;
    // What sits between them is the loopback sockets' kernel buffers (several MB each way),
    // bounded whatever the response size; an unbounded proxy would have taken all ~90 MB.
    assert.ok(buffered < 24 * 1024 * 1024, `${buffered} bytes sat between the engine and the client`);
    resume();
    const whole = await body;
    assert.equal(sseData(whole).at(-1), '[DONE]');
    assert.equal(whole.length, fleet.engines[0]?.sent(requestId)?.bytes);
  });
});

describe('3,000 connections arriving at once', () => {
  const engine = new EngineSimulator({ model: MODEL, knobs: { ttftMs: 0, itlMs: 0, maxSeqs: 100_000 } });
  let router: RouterProcess;
  before(async () => {
    await engine.listen();
    router = await startRouterProcess(['--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--backend', engine.url]);
    await waitForModels(`http://127.0.0.1:${router.traffic}`);
  });
  after(async () => {
    router.child.kill('SIGKILL');
    await router.exit;
    await engine.close();
  });

  it('answers every one (200 or 429), with no reset and no crash', async () => {
    const outcomes = await Promise.all(Array.from({ length: 3_000 }, () => rawRequest(router.traffic)));
    const counts = tally(outcomes);
    assert.deepEqual(Object.keys(counts).filter((k) => k !== '200' && k !== '429'), [], JSON.stringify(counts));
    assert.equal((await fetch(`http://127.0.0.1:${router.admin}/livez`)).status, 200);
  });
});

describe('the open-file limit', () => {
  const engine = new EngineSimulator({ model: MODEL, knobs: { ttftMs: 50, itlMs: 0, maxSeqs: 100_000 } });
  let router: SwitchyardProcess;
  let traffic = 0;
  let admin = 0;
  before(async () => {
    await engine.listen();
    router = await spawnSwitchyard(['serve', '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--backend', engine.url], { openFiles: 160 });
    ({ traffic, admin } = router.ports as { traffic: number; admin: number });
    assert.ok(router.logs.some((line) => line['msg'] === 'router caps lowered to fit the open-file limit'), JSON.stringify(router.logs));
    await waitForModels(`http://127.0.0.1:${traffic}`);
  });
  after(async () => {
    router.child.kill('SIGKILL');
    await engine.close();
  });

  it('sheds instead of crashing when clients bring more connections than it has descriptors', async () => {
    const outcomes = await Promise.all(Array.from({ length: 400 }, () => rawRequest(traffic)));
    const counts = tally(outcomes);
    assert.ok((counts['429'] ?? 0) > 0, `no request was shed: ${JSON.stringify(counts)}`);
    // Connections beyond the descriptors left are accepted and closed by libuv at once: the client
    // sees a close without an answer, or a reset when its request had already arrived (a socket
    // closed with unread data sends RST; which one is a race on a busy machine). Everything the
    // router could read got 200 or 429.
    assert.deepEqual(Object.keys(counts).filter((k) => !['200', '429', 'closed-without-answer', 'ECONNRESET'].includes(k)), [], JSON.stringify(counts));
    assert.ok((counts['200'] ?? 0) + (counts['429'] ?? 0) > 0, `the router answered nothing: ${JSON.stringify(counts)}`);
    assert.equal(router.child.exitCode, null, 'the router is still running');
    // Descriptors come back as the burst's connections finish closing; until then an accept may fail.
    assert.equal(await livezOnceDescriptorsFree(admin), 200);
    assert.equal(await rawRequest(traffic), '200', 'it serves normally once the burst is over');
    console.log(`400 connections at a 160-descriptor limit: ${JSON.stringify(counts)}`);
  });
});
