/**
 * What a fresh router's safe start costs a fast fleet: `ab -k -c 64 -n 20000`
 * through a router started cold at default settings, beside one told the
 * engines' true capacity (no safe start), and optionally another checkout
 * (`--before DIR`), over 3 fast engine simulators (64 slots, answers in a
 * few ms), in interleaved rounds; each round starts fresh routers. Needs ab
 * (apache2-utils).
 *
 *   node loadtest/scenarios/fresh-router-ab.ts [--rounds 3] [--before DIR]
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { abKeepAlive } from './ab-keepalive.ts';
import { medianOf, runIfMain } from './results.ts';
import { routerCheckout, startEngineProcesses, startRouterSystem, stopAll } from './systems.ts';

const MODEL = 'ab-model';
const SLOTS = 64;

async function main(argv: readonly string[]): Promise<number> {
  const { values } = parseArgs({ args: [...argv], options: { rounds: { type: 'string', default: '3' }, before: { type: 'string' } } });
  const before = routerCheckout(values.before);
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-fresh-ab-'));
  const engines = await startEngineProcesses(3, MODEL, ['--max-seqs', String(SLOTS), '--ttft-ms', '1', '--itl-ms', '1', '--output-tokens', '2']);
  const body = join(dir, 'body.json');
  writeFileSync(body, JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }));
  const capacity = join(dir, 'capacity.json');
  writeFileSync(capacity, JSON.stringify({ load: { capacity: Object.fromEntries(engines.urls.map((url) => [url, SLOTS])) } }));
  const variants = [
    { name: 'fresh (default)', options: {} },
    { name: 'capacity configured', options: { args: ['--config', capacity] } },
    ...(before === undefined ? [] : [{ name: `${before.name} fresh (default)`, options: { checkout: before } }]),
  ];
  const rates = new Map<string, number[]>(variants.map((v) => [v.name, []]));
  try {
    for (let round = 0; round < Number(values.rounds); round++) {
      for (const variant of variants) {
        const router = await startRouterSystem(engines.urls, variant.options);
        try {
          const { requestsPerS: rate, failed } = abKeepAlive(`${router.url}/v1/chat/completions`, body);
          rates.get(variant.name)?.push(rate);
          console.error(`round ${round + 1} ${variant.name}: ${rate} req/s, ${failed} failed or non-2xx`);
        } finally {
          await stopAll([router]);
        }
      }
    }
  } finally {
    await engines.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const reference = medianOf(rates.get('capacity configured') ?? []).median;
  console.log('| router | req/s (median) | ÷ capacity configured |\n|---|---|---|');
  for (const [name, list] of rates) {
    const median = medianOf(list).median;
    console.log(`| ${name} | ${median.toFixed(0)} | ${(median / reference).toFixed(2)}× |`);
  }
  return 0;
}

runIfMain(import.meta.url, main);
