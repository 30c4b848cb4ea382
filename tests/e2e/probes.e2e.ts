import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { startFleet, type Fleet } from '../kit/harness.ts';

/**
 * Probes the admin port from another process at the given offsets (ms) and
 * resolves with each probe's status and latency. The probes run while this
 * process's event loop (and the router's, which shares it) is blocked.
 */
function probeLater(url: string, offsetsMs: number[]): { started: Promise<void>; results: Promise<{ status: number; ms: number }[]> } {
  const script = `
    const http = require('node:http');
    console.log('started');
    const offsets = ${JSON.stringify(offsetsMs)};
    const results = [];
    const started = Date.now();
    for (const [i, offset] of offsets.entries()) {
      setTimeout(() => {
        const sent = Date.now();
        http.get(${JSON.stringify(url)}, { agent: false }, (res) => {
          res.resume();
          res.on('end', () => {
            results[i] = { status: res.statusCode, ms: Date.now() - sent };
            if (results.filter(Boolean).length === offsets.length) console.log(JSON.stringify(results));
          });
        });
      }, offset);
    }`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let text = '';
  let markStarted: () => void = () => {};
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    text += chunk;
    if (text.startsWith('started\n')) markStarted();
  });
  const results = new Promise<{ status: number; ms: number }[]>((resolve) =>
    child.once('exit', () => resolve(JSON.parse(text.slice('started\n'.length)) as { status: number; ms: number }[])),
  );
  return { started, results };
}

function blockEventLoop(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // a handler stuck on the CPU, as far as the event loop can tell
  }
}

describe('probes on the admin port', () => {
  let fleet: Fleet;
  before(async () => {
    fleet = await startFleet([{ model: 'm-probe', knobs: { ttftMs: 0, itlMs: 0 } }], ['--lifecycle-liveness-stall-ms', '400']);
  });
  after(() => fleet.close());

  it('answers at once while the main event loop is busy, and fails /livez only once the loop has stalled past the limit', async () => {
    const probe = probeLater(`${fleet.admin}/livez`, [200, 1_300]);
    const ready = probeLater(`${fleet.admin}/readyz`, [200]);
    // The offsets count from each child's start, which a loaded machine can
    // delay by hundreds of milliseconds: block only once both are running.
    await Promise.all([probe.started, ready.started]);
    blockEventLoop(1_800);
    const [early, late] = await probe.results;
    const [readiness] = await ready.results;
    assert.equal(early?.status, 200, 'a short stall is still live');
    assert.ok((early?.ms ?? Infinity) < 100, `the probe waited ${early?.ms} ms behind the busy loop`);
    assert.equal(late?.status, 503, 'a loop stalled past the limit is not live');
    assert.equal(readiness?.status, 200);
    assert.ok((readiness?.ms ?? Infinity) < 100);
    // The main loop runs again: live again, and the other admin paths work through it.
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal((await fetch(`${fleet.admin}/livez`)).status, 200);
    assert.match(await (await fetch(`${fleet.admin}/metrics`)).text(), /switchyard_requests_total/);
  });
});
