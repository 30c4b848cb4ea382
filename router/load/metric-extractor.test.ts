import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { REALISTIC_EXPECTED, REALISTIC_MODEL, realisticVllmExposition } from '../../loadtest/scenarios/micro/fixtures.ts';
import { AttributeKey, EndpointAttributes } from './endpoint-attributes.ts';
import { ExpositionScanner, scanEngineMetrics, type ScanResult } from './exposition-scanner.ts';
import { commitAttribute, type MetricExtraction, type MetricExtractor } from './metric-extractor.ts';

interface Sample {
  series: string;
  labels: Record<string, string>;
  value: number;
}

/** A test extractor: keeps every sample it is handed, in order, under its own key. */
function recorder(name: string, series: string[], labels: string[]): MetricExtractor & { key: AttributeKey<Sample[]> } {
  const key = new AttributeKey<Sample[]>(`test.${name}`);
  return {
    name,
    series,
    labels,
    key,
    begin(): MetricExtraction {
      const samples: Sample[] = [];
      return {
        add: (s, l, value) => samples.push({ series: s, labels: { ...l }, value }),
        commit: (attributes) => commitAttribute(attributes, key, samples.length === 0 ? undefined : samples),
      };
    },
  };
}

/** Scans `text` with `extractors` as one scrape would; returns the result and what each extractor committed. */
function scrape(extractors: ReturnType<typeof recorder>[], text: string, attributes = new EndpointAttributes()): { result: ScanResult; committed: (Sample[] | undefined)[] } {
  const extractions = extractors.map((e) => e.begin());
  const result = new ExpositionScanner(extractors).scan(text, 'auto', extractions);
  if (result.ok) for (const extraction of extractions) extraction.commit(attributes);
  return { result, committed: extractors.map((e) => attributes.get(e.key)) };
}

const LORA = 'vllm:lora_requests_info';
const LORA_LINES = [
  `# HELP ${LORA} Running stats on lora requests.`,
  `# TYPE ${LORA} gauge`,
  `${LORA}{max_lora="2",running_lora_adapters="",waiting_lora_adapters=""} 1.7886264577368872e+09`,
  `${LORA}{max_lora="2",running_lora_adapters="sql-lora,ko-lora",waiting_lora_adapters="zh-lora"} 1.7886264546318772e+09`,
  // Other families that start like it, and lines that only mention it.
  `${LORA}_created{max_lora="2"} 1.7e+09`,
  `vllm:lora_requests_infos{max_lora="2"} 3.0`,
  `# ${LORA}{max_lora="9",running_lora_adapters="comment"} 9.0`,
];
const LORA_SAMPLES: Sample[] = [
  { series: LORA, labels: { running_lora_adapters: '', max_lora: '2' }, value: 1.7886264577368872e9 },
  { series: LORA, labels: { running_lora_adapters: 'sql-lora,ko-lora', max_lora: '2' }, value: 1.7886264546318772e9 },
];

/** The realistic vLLM body (histograms around the gauges) with `extra` spliced in among the first histograms. */
function vllmBodyWith(extra: readonly string[]): string {
  const lines = realisticVllmExposition(60_000).split('\n');
  const at = lines.findIndex((line) => line.includes('_bucket{')) + 3;
  lines.splice(at, 0, ...extra);
  return lines.join('\n');
}

describe('metric extractors read through the scanner', () => {
  it('hand an extractor exactly its samples, with only its labels, and leave the load gauges as they were', () => {
    const lora = recorder('lora', [LORA], ['running_lora_adapters', 'max_lora']);
    const text = vllmBodyWith(LORA_LINES);
    assert.ok(text.indexOf(LORA) < text.indexOf('vllm:num_requests_running'), 'the extractor lines sit among the histograms before the gauges');
    const { result, committed } = scrape([lora], text);
    assert.deepEqual(result, scanEngineMetrics(text));
    assert.deepEqual(result.ok && result.models, new Map([[REALISTIC_MODEL, { ...REALISTIC_EXPECTED }]]));
    assert.deepEqual(committed, [LORA_SAMPLES]);
  });

  it('commit "none" for a body without their series, clearing what an earlier scrape stored', () => {
    const lora = recorder('lora', [LORA], ['max_lora']);
    const attributes = new EndpointAttributes();
    assert.equal(scrape([lora], vllmBodyWith(LORA_LINES), attributes).committed[0]?.length, 2);
    const { result, committed } = scrape([lora], vllmBodyWith([]), attributes);
    assert.ok(result.ok);
    assert.deepEqual(committed, [undefined]);
    assert.equal(attributes.has(lora.key), false);
  });

  it('give each extractor the series it names, a load gauge included, without changing the gauges', () => {
    const waiting = recorder('waiting', ['vllm:num_requests_waiting'], ['engine']);
    const lora = recorder('lora', [LORA, 'process_open_fds'], []);
    const text = vllmBodyWith(LORA_LINES);
    const { result, committed } = scrape([waiting, lora], text);
    assert.deepEqual(result, scanEngineMetrics(text));
    assert.deepEqual(committed[0], [
      { series: 'vllm:num_requests_waiting', labels: { engine: '0' }, value: 4 },
      { series: 'vllm:num_requests_waiting', labels: { engine: '1' }, value: 7 },
    ]);
    assert.deepEqual(
      committed[1]?.map((s) => [s.series, s.labels, s.value]),
      [
        ['process_open_fds', {}, 187],
        [LORA, {}, 1.7886264577368872e9],
        [LORA, {}, 1.7886264546318772e9],
      ],
    );
  });

  it('read their series whatever the dialect the load gauges are read in', () => {
    const lora = recorder('lora', [LORA], []);
    const tgi = `tgi_queue_size 3\ntgi_batch_current_size 1\n${LORA}{max_lora="1"} 5.0\n`;
    const extraction = lora.begin();
    const result = new ExpositionScanner([lora]).scan(tgi, 'tgi', [extraction]);
    assert.deepEqual(result, scanEngineMetrics(tgi, 'tgi'));
    const attributes = new EndpointAttributes();
    extraction.commit(attributes);
    assert.deepEqual(attributes.get(lora.key), [{ series: LORA, labels: {}, value: 5 }]);
  });

  it('skip a malformed or unterminated line only extractors want, without failing the scan', () => {
    const lora = recorder('lora', [LORA], ['max_lora']);
    const body = vllmBodyWith([`${LORA}{max_lora="2" 1.0`, `${LORA}{max_lora="3"} not-a-number`, `${LORA}{max_lora="4"} 4.0`]);
    const { result, committed } = scrape([lora], `${body}\n${LORA}{max_lora="5"} 5.`);
    assert.deepEqual(result, scanEngineMetrics(body));
    assert.deepEqual(committed, [[{ series: LORA, labels: { max_lora: '4' }, value: 4 }]]);
  });

  it('still report a truncated load gauge on the last line', () => {
    const lora = recorder('lora', [LORA], []);
    const { result } = scrape([lora], `${vllmBodyWith([])}\nvllm:num_requests_runn`);
    assert.equal(result.ok, false);
  });

  it('hand absent labels as absent, even names Object.prototype carries', () => {
    const seen: unknown[] = [];
    const names = ['constructor', 'toString', 'max_lora'];
    const odd: MetricExtractor = {
      name: 'odd',
      series: [LORA],
      labels: names,
      begin: () => ({ add: (_s, labels) => seen.push(...names.map((name) => labels[name])), commit: () => undefined }),
    };
    const extraction = odd.begin();
    new ExpositionScanner([odd]).scan(`vllm:num_requests_running 1\n${LORA}{max_lora="1"} 1.0\n`, 'auto', [extraction]);
    assert.deepEqual(seen, [undefined, undefined, '1']);
  });

  it('reject an extractor series that is not a metric name when the scanner is built', () => {
    assert.throws(() => new ExpositionScanner([recorder('bad', ['vllm:lora requests'], [])]), /not a metric name/);
    assert.throws(() => new ExpositionScanner([recorder('bad', ['ünïcode'], [])]), /not a metric name/);
  });

  it('change no result on the recorded engine bodies', () => {
    const lora = recorder('lora', [LORA, 'vllm:num_requests_running', 'sglang:num_queue_reqs'], ['model_name']);
    const dir = new URL('../../tests/fixtures/engine-metrics/', import.meta.url);
    const bodies = readdirSync(dir).filter((f) => f.endsWith('.prom'));
    assert.ok(bodies.length >= 4);
    for (const file of bodies) {
      const text = readFileSync(new URL(file, dir), 'utf8');
      assert.deepEqual(scrape([lora], text).result, scanEngineMetrics(text), file);
    }
  });
});
