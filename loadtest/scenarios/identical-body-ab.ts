/**
 * One identical body, many times at once: `ab -k -c 64 -n 20000` sends the
 * same chat request (a 2 KB system prompt and one question) through a router
 * over 4 fast engine simulators (64 slots each, answers in a few ms). Every
 * request has the same prefix, so prefix affinity sees one group that is all
 * of the traffic: it must spread it over every engine and keep least-load's
 * throughput. Each policy runs in interleaved rounds with a fresh router; the
 * engines' `vllm:request_success_total` says how many each served. Needs ab
 * (apache2-utils).
 *
 *   node loadtest/scenarios/identical-body-ab.ts [--rounds 3] [--policies least-load,prefix-affinity,auto]
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { abKeepAlive } from './ab-keepalive.ts';
import { sumOf } from './shared-state-prom.ts';
import { medianOf, runIfMain } from './results.ts';
import { startEngineProcesses, startRouterSystem, stopAll } from './systems.ts';

const MODEL = 'ab-model';
const SLOTS = 64;
const ENGINES = 4;

/** Each engine's requests served so far. Retried once: a kept-alive connection the engine closed between two rounds fails the first try. */
async function served(urls: readonly string[]): Promise<number[]> {
  const read = async (url: string) => sumOf(await (await fetch(`${url}/metrics`)).text(), 'vllm:request_success_total') ?? 0;
  return Promise.all(urls.map((url) => read(url).catch(() => read(url))));
}

async function main(argv: readonly string[]): Promise<number> {
  const { values } = parseArgs({ args: [...argv], options: { rounds: { type: 'string', default: '3' }, policies: { type: 'string', default: 'least-load,prefix-affinity,auto' } } });
  const policies = values.policies.split(',').filter((p) => p !== '');
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-identical-ab-'));
  const engines = await startEngineProcesses(ENGINES, MODEL, ['--max-seqs', String(SLOTS), '--ttft-ms', '1', '--itl-ms', '1', '--output-tokens', '2']);
  const body = join(dir, 'body.json');
  writeFileSync(body, JSON.stringify({ model: MODEL, messages: [{ role: 'system', content: 'You answer questions about the attached manual. '.repeat(44) }, { role: 'user', content: 'What does the red light mean?' }] }));
  // Capacity configured: the safe start of a fresh router is another benchmark's (fresh-router-ab.ts).
  const config = join(dir, 'capacity.json');
  writeFileSync(config, JSON.stringify({ load: { capacity: Object.fromEntries(engines.urls.map((url) => [url, SLOTS])) } }));
  const rates = new Map<string, number[]>(policies.map((p) => [p, []]));
  const lowestShare = new Map<string, number[]>(policies.map((p) => [p, []]));
  let failures = 0;
  try {
    for (let round = 0; round < Number(values.rounds); round++) {
      for (const policy of policies) {
        const router = await startRouterSystem(engines.urls, { args: ['--config', config, '--routing-policy', policy] });
        try {
          const before = await served(engines.urls);
          const { requestsPerS: rate, failed } = abKeepAlive(`${router.url}/v1/chat/completions`, body);
          const after = await served(engines.urls);
          const perEngine = after.map((n, i) => n - (before[i] as number));
          const total = perEngine.reduce((a, b) => a + b, 0);
          failures += failed;
          rates.get(policy)?.push(rate);
          // The least-used engine's share against an even share (1 = perfectly even, 0 = an engine unused).
          lowestShare.get(policy)?.push((Math.min(...perEngine) * ENGINES) / total);
          console.error(`round ${round + 1} ${policy}: ${rate} req/s, ${failed} failed or non-2xx, per engine ${perEngine.join('/')}`);
        } finally {
          await stopAll([router]);
        }
      }
    }
  } finally {
    await engines.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const reference = medianOf(rates.get('least-load') ?? []).median;
  console.log(`| policy | req/s median [range] | ÷ least-load | least-used engine's share ÷ an even share, median [range] |\n|---|---|---|---|`);
  for (const policy of policies) {
    const rate = medianOf(rates.get(policy) ?? []);
    const share = medianOf(lowestShare.get(policy) ?? []);
    console.log(`| ${policy} | ${rate.median.toFixed(0)} [${rate.min.toFixed(0)}-${rate.max.toFixed(0)}] | ${(rate.median / reference).toFixed(2)}× | ${share.median.toFixed(2)} [${share.min.toFixed(2)}-${share.max.toFixed(2)}] |`);
  }
  console.log(`\n${failures} failed or non-2xx in all`);
  return failures === 0 ? 0 : 1;
}

runIfMain(import.meta.url, main);
