/**
 * Samples an endpoint's latency from its own process (so it measures the
 * target, not a busy load generator): GET `url` every `--every-ms` for
 * `--duration-s` (or until SIGTERM), then print one JSON line with every
 * latency (ms; failures as -1).
 *
 *   node loadtest/scenarios/probe-sampler.ts --url http://127.0.0.1:9090/livez --every-ms 50 --duration-s 60
 */
import { request } from 'node:http';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { url: { type: 'string' }, 'every-ms': { type: 'string', default: '50' }, 'duration-s': { type: 'string', default: '10' }, 'timeout-ms': { type: 'string', default: '5000' } } });
const url = values.url;
if (url === undefined) throw new Error('--url is required');
const every = Number(values['every-ms']);
const timeoutMs = Number(values['timeout-ms']);
let stopAt = performance.now() + Number(values['duration-s']) * 1000;
// The scenario that started us says when its run is over.
process.once('SIGTERM', () => (stopAt = 0));

/** One GET on a fresh connection, like a kubelet probe. */
function probe(): Promise<number> {
  const sent = performance.now();
  return new Promise((resolve) => {
    const req = request(url as string, { agent: false, timeout: timeoutMs }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode === 200 ? performance.now() - sent : -1));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(-1));
    req.end();
  });
}

const latencies: number[] = [];
const pending: Promise<void>[] = [];
while (performance.now() < stopAt) {
  pending.push(probe().then((ms) => void latencies.push(ms)));
  await new Promise((resolve) => setTimeout(resolve, every));
}
await Promise.all(pending);
console.log(JSON.stringify({ probes: latencies.length, latencies }));
