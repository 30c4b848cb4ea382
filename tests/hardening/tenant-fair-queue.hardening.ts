/**
 * The router queue used to serve its waiters first come first served,
 * whatever tenant (API key) sent them. One tenant holding ~60 streams open on
 * saturated engines kept ~50 waiters in the queue, so another tenant's
 * single request waited behind all of them: 21-70 ms went to 28-30 s or a
 * 429 queue timeout. The queue now serves tenants in turns within a
 * priority, so the victim waits for about the next free slot, not for the
 * aggressor's backlog: no 429, and its p99 stays within its p99 alone plus
 * one of the aggressor's streams (both measured in this run).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { startFleet, type Fleet } from '../kit/harness.ts';

const MODEL = 'm-fair';
const AGGRESSOR_KEY = 'sk-aggressor-5b1e07c9d2';
const VICTIM_KEY = 'sk-victim-8f3a61d04e';
const STREAMS = 60;
const VICTIM_REQUESTS = 12;

const dir = mkdtempSync(join(tmpdir(), 'switchyard-fair-'));
const fleets: Fleet[] = [];
after(async () => {
  await Promise.all(fleets.map((fleet) => fleet.close()));
  rmSync(dir, { recursive: true, force: true });
});

function p99(samples: readonly number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(0.99 * sorted.length) - 1)] as number;
}

/** One victim request (non-stream, the engine's default ~100 ms answer): its status and latency (ms). */
async function victimRequest(base: string): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  const response = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${VICTIM_KEY}` },
    body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hello' }] }),
  });
  await response.arrayBuffer();
  return { status: response.status, ms: performance.now() - started };
}

/** One aggressor stream of `tokens` × 100 ms at the engine; resolves to the stream's duration from response headers to its end (ms), or undefined when refused. */
async function aggressorStream(base: string, tokens: number): Promise<number | undefined> {
  const response = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${AGGRESSOR_KEY}`, 'x-sim-ttft-ms': '20', 'x-sim-itl-ms': '100', 'x-sim-output-tokens': String(tokens) },
    body: JSON.stringify({ model: MODEL, stream: true, messages: [{ role: 'user', content: 'flood' }] }),
  });
  const headersAt = performance.now();
  await response.arrayBuffer();
  return response.status === 200 ? performance.now() - headersAt : undefined;
}

test('regression: one tenant\'s 60 open streams made another tenant wait behind its whole backlog in the router queue', async (t) => {
  const keys = join(dir, 'keys.yaml');
  writeFileSync(keys, `tenants:\n  aggressor: {}\n  victim: {}\nkeys:\n  - {key: ${AGGRESSOR_KEY}, tenant: aggressor}\n  - {key: ${VICTIM_KEY}, tenant: victim}\n`);
  // Two engines of 4 slots each, saturated for the router at 4 open requests: 8 streams run, the rest wait in the router queue.
  // No safe start: its limit rising at a scrape would let the first streams go in one batch, and they would end in batches.
  const fleet = await startFleet(
    [
      { model: MODEL, knobs: { maxSeqs: 4 } },
      { model: MODEL, knobs: { maxSeqs: 4 } },
    ],
    ['--auth-api-keys-file', keys, '--admission-max-in-flight-per-endpoint', '4', '--admission-max-waiting', '0', '--admission-queue-max-wait-ms', '20000', '--load-safe-start-enabled', 'false'],
  );
  fleets.push(fleet);

  const alone: number[] = [];
  for (let i = 0; i < 5; i++) {
    const { status, ms } = await victimRequest(fleet.base);
    assert.equal(status, 200);
    alone.push(ms);
  }

  // The aggressor keeps STREAMS streams open until the victim is done, started 35 ms apart.
  let flooding = true;
  const streamMs: number[] = [];
  let aggressorRefused = 0;
  const loops = Array.from({ length: STREAMS }, async (_, i) => {
    await new Promise((resolve) => setTimeout(resolve, i * 35));
    while (flooding) {
      // 1-3 s, 2 s on average: streams of one length would end in step and free the slots in batches.
      const ms = await aggressorStream(fleet.base, 10 + ((i * 7 + streamMs.length) % 21));
      if (ms === undefined) aggressorRefused++;
      else streamMs.push(ms);
    }
  });
  await new Promise((resolve) => setTimeout(resolve, 3_000));

  const victims: Promise<{ status: number; ms: number }>[] = [];
  for (let i = 0; i < VICTIM_REQUESTS; i++) {
    victims.push(victimRequest(fleet.base));
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
  const loaded = await Promise.all(victims);
  flooding = false;
  await Promise.all(loops);

  const meanStream = streamMs.reduce((sum, ms) => sum + ms, 0) / streamMs.length;
  const victimP99 = p99(loaded.map((r) => r.ms));
  const bound = p99(alone) + meanStream;
  const refused = loaded.filter((r) => r.status !== 200).map((r) => r.status);
  t.diagnostic(
    `victim alone p99 ${p99(alone).toFixed(0)} ms; under load ${loaded.map((r) => r.ms.toFixed(0)).join(' ')}; p99 ${victimP99.toFixed(0)} ms (max ${Math.max(...loaded.map((r) => r.ms)).toFixed(0)}), non-200 ${refused.length}; ` +
      `aggressor ${streamMs.length} streams of mean ${meanStream.toFixed(0)} ms, ${aggressorRefused} refused; bound ${bound.toFixed(0)} ms`,
  );
  assert.deepEqual(refused, [], 'no victim request refused');
  assert.ok(victimP99 <= bound, `victim p99 ${victimP99.toFixed(0)} ms over its p99 alone + the aggressor's mean stream (${bound.toFixed(0)} ms)`);
});
