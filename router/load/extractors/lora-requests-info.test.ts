import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EndpointAttributes } from '../endpoint-attributes.ts';
import { ExpositionScanner } from '../exposition-scanner.ts';
import { LORA_REQUESTS_INFO, loraRequestsInfo, noteAdapterSent, type LoraRequestsInfo } from './lora-requests-info.ts';

const scanner = new ExpositionScanner([loraRequestsInfo]);

const GAUGES = [
  '# HELP vllm:num_requests_running Number of requests in model execution batches.',
  '# TYPE vllm:num_requests_running gauge',
  'vllm:num_requests_running{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 2.0',
  '# TYPE vllm:num_requests_waiting gauge',
  'vllm:num_requests_waiting{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 1.0',
];
const HEADER = ['# HELP vllm:lora_requests_info Running stats on lora requests.', '# TYPE vllm:lora_requests_info gauge'];
const info = (maxLora: string, running: string, waiting: string, at: string): string =>
  `vllm:lora_requests_info{max_lora="${maxLora}",running_lora_adapters="${running}",waiting_lora_adapters="${waiting}"} ${at}`;

/** Scans `lines` (the load gauges added) into `attributes`, as one successful scrape would; the sent set (empty after a scrape) left out. */
function scrape(lines: readonly string[], attributes = new EndpointAttributes()): Omit<LoraRequestsInfo, 'sentSinceScrape'> | undefined {
  const extraction = loraRequestsInfo.begin();
  const result = scanner.scan(`${[...GAUGES, ...lines].join('\n')}\n`, 'auto', [extraction]);
  assert.ok(result.ok, result.ok ? '' : result.error);
  extraction.commit(attributes);
  const info = attributes.get(LORA_REQUESTS_INFO);
  if (info === undefined) return undefined;
  const { sentSinceScrape, ...scraped } = info;
  assert.equal(sentSinceScrape.size, 0, 'a scrape starts the sent set afresh');
  return scraped;
}

describe('vllm:lora_requests_info extractor', () => {
  it('reads empty adapter lists as none running and none waiting', () => {
    assert.deepEqual(scrape([...HEADER, info('2', '', '', '1.7886264577368872e+09')]), { running: [], waiting: [], maxLora: 2, starts: 0 });
  });

  it('splits several adapters in the engine order; an adapter may run and wait at once', () => {
    assert.deepEqual(scrape([...HEADER, info('4', 'sql-lora,ko-lora,json-lora', 'ko-lora,zh-lora', '1.7886264546318772e+09')]), {
      running: ['sql-lora', 'ko-lora', 'json-lora'],
      waiting: ['ko-lora', 'zh-lora'],
      maxLora: 4,
      starts: 3,
    });
  });

  it('takes the label set with the newest timestamp among the stale ones, wherever it sits', () => {
    const sets = [info('2', 'a', 'b', '1.7886264500e+09'), info('2', 'b', '', '1.7886264577368872e+09'), info('2', 'a,b', 'c', '1.7886264546318772e+09')];
    for (const order of [[0, 1, 2], [1, 2, 0], [2, 0, 1]]) {
      assert.deepEqual(scrape([...HEADER, ...order.map((i) => sets[i]!)]), { running: ['b'], waiting: [], maxLora: 2, starts: 1 }, `order ${order.join(',')}`);
    }
  });

  it('skips samples it cannot use: a non-numeric max_lora, a NaN timestamp, a missing max_lora', () => {
    const lines = [
      ...HEADER,
      info('2', 'old', '', '1.0e+09'),
      info('two', 'bad-max', '', '2.0e+09'),
      info('', 'empty-max', '', '2.0e+09'),
      info('2', 'nan', '', 'NaN'),
      'vllm:lora_requests_info{running_lora_adapters="no-max",waiting_lora_adapters=""} 3.0e+09',
    ];
    assert.deepEqual(scrape(lines), { running: ['old'], waiting: [], maxLora: 2, starts: 1 });
  });

  it('reads a missing adapter label as an empty list', () => {
    assert.deepEqual(scrape([...HEADER, 'vllm:lora_requests_info{max_lora="0"} 1.0']), { running: [], waiting: [], maxLora: 0, starts: 0 });
  });

  it('clears the attribute when a scrape no longer carries the gauge, so the last value never lingers', () => {
    const attributes = new EndpointAttributes();
    assert.deepEqual(scrape([...HEADER, info('1', 'a', '', '1.7e+09')], attributes), { running: ['a'], waiting: [], maxLora: 1, starts: 1 });
    assert.equal(scrape([], attributes), undefined);
    assert.equal(attributes.has(LORA_REQUESTS_INFO), false);
  });

  it('clears it too when the gauge carries only unusable samples', () => {
    const attributes = new EndpointAttributes();
    scrape([info('1', 'a', '', '1.7e+09')], attributes);
    assert.equal(scrape([info('x', 'a', '', '1.8e+09')], attributes), undefined);
  });

  it('unescapes label values before splitting them', () => {
    assert.deepEqual(scrape([String.raw`vllm:lora_requests_info{max_lora="1",running_lora_adapters="team\"a\",b",waiting_lora_adapters=""} 5.0`]), {
      running: ['team"a"', 'b'],
      waiting: [],
      maxLora: 1,
      starts: 2,
    });
  });

  it('remembers the adapters sent since the scrape, until the next one', () => {
    const attributes = new EndpointAttributes();
    noteAdapterSent(attributes, 'x');
    assert.equal(attributes.has(LORA_REQUESTS_INFO), false, 'no LoRA state: nothing to note in');
    scrape([...HEADER, info('2', 'a', '', '1.0e+09')], attributes);
    noteAdapterSent(attributes, 'b');
    assert.deepEqual([...(attributes.get(LORA_REQUESTS_INFO)?.sentSinceScrape ?? [])], ['b']);
    scrape([...HEADER, info('2', 'a,b', '', '1.1e+09')], attributes);
  });

  it('counts the adapters that start running between scrapes: an upper bound of swaps', () => {
    const attributes = new EndpointAttributes();
    const starts = (running: string, at: string) => scrape([...HEADER, info('2', running, '', at)], attributes)?.starts;
    assert.equal(starts('a', '1.0e+09'), 1);
    assert.equal(starts('a,b', '1.1e+09'), 2, 'b started');
    assert.equal(starts('b,a', '1.2e+09'), 2, 'the same two, in another order');
    assert.equal(starts('c', '1.3e+09'), 3, 'c swapped in, a and b left');
    assert.equal(starts('', '1.4e+09'), 3);
    assert.equal(starts('c', '1.5e+09'), 4, 'c resumed after an idle scrape: counted again (so an upper bound)');
  });
});
