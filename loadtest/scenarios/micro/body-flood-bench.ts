/**
 * What a body flood does to the router's memory: N connections each declare
 * a 33 MB body (under the 32 MiB cap) and send all but its last bytes, then
 * hold; the router's RSS is sampled every 100 ms for 8 s. Without a budget
 * for buffered bodies every byte is kept (30 connections: about +950 MiB);
 * with it, bodies beyond the budget are answered 429 at once.
 *
 *   node loadtest/scenarios/micro/body-flood-bench.ts [--connections 30] [--repo DIR]
 *
 * `--repo` runs the router (and simulator) of another checkout, e.g. an
 * older commit in a git worktree, for a before/after on the same machine.
 * Prints one JSON line: RSS before and at peak, and the answers by status.
 */
import { spawnSwitchyard } from '../../../tests/kit/router-process.ts';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type * as Simulator from '../../sim/server.ts';

const { values } = parseArgs({ options: { connections: { type: 'string', default: '30' }, repo: { type: 'string' } } });
const repo = resolve(values.repo ?? fileURLToPath(new URL('../../..', import.meta.url)));
const CONNECTIONS = Number(values.connections);
const SIZE = 33_000_000;

const { EngineSimulator } = (await import(`${repo}/loadtest/sim/server.ts`)) as typeof Simulator;
const engine = new EngineSimulator({ model: 'flood-model', knobs: { ttftMs: 0, itlMs: 0 } });
await engine.listen();
const started = await spawnSwitchyard(['serve', '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--backend', engine.url], { script: `${repo}/router/cli/bin.ts` });
const router = started.child;
const port = started.ports['traffic'] as number;
await new Promise((r) => setTimeout(r, 1_000)); // models known, start-up garbage collected
const rssMiB = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${router.pid}/status`, 'utf8'))?.[1]) / 1024;
const before = rssMiB();
let peak = before;
const sampler = setInterval(() => (peak = Math.max(peak, rssMiB())), 100);
const answers: Record<string, number> = {};
const head = Buffer.from('{"model":"flood-model","messages":[{"role":"user","content":"');
const filler = Buffer.alloc(SIZE - head.length - 10, 0x61);
for (let i = 0; i < CONNECTIONS; i++) {
  const socket = connect(port, '127.0.0.1', () => {
    socket.write(`POST /v1/chat/completions HTTP/1.1\r\nhost: router\r\ncontent-type: application/json\r\ncontent-length: ${SIZE}\r\n\r\n`);
    socket.write(head);
    socket.write(filler);
  });
  socket.on('data', (chunk: Buffer) => {
    const status = /HTTP\/1.1 (\d+)/.exec(chunk.toString('latin1'))?.[1] ?? 'other';
    answers[status] = (answers[status] ?? 0) + 1;
  });
  socket.on('error', () => (answers['socket error'] = (answers['socket error'] ?? 0) + 1));
}
await new Promise((r) => setTimeout(r, 8_000));
clearInterval(sampler);
console.log(JSON.stringify({ repo, connections: CONNECTIONS, rssBeforeMiB: Math.round(before), rssPeakMiB: Math.round(peak), growthMiB: Math.round(peak - before), answers, routerAlive: router.exitCode === null }));
router.kill('SIGKILL');
await engine.close();
process.exit(0);
