import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { REALISTIC_EXPECTED, REALISTIC_MODEL, realisticVllmExposition } from '../../loadtest/scenarios/micro/fixtures.ts';
import { scanEngineMetrics, type ModelGauges, type ScanResult } from './exposition-scanner.ts';
import { DIALECT_SERIES } from './metric-dialects.ts';

const M = 'meta-llama/Llama-3.1-8B-Instruct';
const l = (engine: string, model = M): string => `{engine="${engine}",model_name="${model}"}`;

/** A minimal two-engine body, one family per entry so tests can reorder them. */
const FAMILIES = [
  `# HELP vllm:num_requests_running Number of requests in model execution batches.\n# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running${l('0')} 3.0\nvllm:num_requests_running${l('1')} 5.0\n`,
  `# HELP vllm:num_requests_waiting Number of requests waiting to be processed.\n# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting${l('0')} 2.0\nvllm:num_requests_waiting${l('1')} 1.0\n`,
  `# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc${l('0')} 0.25\nvllm:kv_cache_usage_perc${l('1')} 0.5\n`,
  `# TYPE vllm:request_success counter\nvllm:request_success_total{engine="0",finished_reason="stop",model_name="${M}"} 10.0\nvllm:request_success_created{engine="0",finished_reason="stop",model_name="${M}"} 1.7644952366218293e+09\n`,
] as const;
const WANTED_NAMES = Object.values(DIALECT_SERIES).flatMap((kinds) => Object.values(kinds).flat());
const BODY = FAMILIES.join('');
const EXPECTED: ModelGauges = { waiting: 3, running: 8, kvCacheUsage: 0.5 };

function models(result: ScanResult): Map<string, ModelGauges> {
  if (!result.ok) assert.fail(`expected ok, got error: ${result.error}`);
  return result.models;
}

function gauges(text: string, model = M): ModelGauges | undefined {
  return models(scanEngineMetrics(text)).get(model);
}

function assertError(text: string, includes?: string): void {
  const result = scanEngineMetrics(text);
  assert.equal(result.ok, false, `expected an error for ${JSON.stringify(text.slice(0, 200))}`);
  if (includes !== undefined && !result.ok) assert.match(result.error, new RegExp(includes));
}

describe('scanEngineMetrics', () => {
  it('sums waiting and running over engines and takes the max KV-cache usage', () => {
    assert.deepEqual(models(scanEngineMetrics(BODY)), new Map([[M, EXPECTED]]));
  });

  it('skips HELP, TYPE, other comments and blank lines', () => {
    const noisy = `# HELP vllm:num_requests_waiting vllm:num_requests_waiting{model_name="x"} 99\n#vllm:num_requests_running{} 1\n\n   \n# free text\n${BODY}\n\n`;
    assert.deepEqual(gauges(noisy), EXPECTED);
  });

  it('accepts metric families in any order', () => {
    for (const order of [[3, 2, 1, 0], [2, 0, 3, 1], [1, 3, 0, 2]]) {
      assert.deepEqual(gauges(order.map((i) => FAMILIES[i]).join('')), EXPECTED);
    }
  });

  it('ignores _created, histogram and summary series of the wanted names', () => {
    const extra = [
      `vllm:num_requests_waiting_created${l('0')} 1.7644952366218293e+09`,
      `vllm:num_requests_running_bucket{engine="0",model_name="${M}",le="+Inf"} 40.0`,
      `vllm:num_requests_running_count${l('0')} 40.0`,
      `vllm:num_requests_running_sum${l('0')} 400.0`,
      `vllm:kv_cache_usage_perc_sum{engine="0",model_name="${M}",quantile="0.99"} 1.0`,
      `vllm:kv_cache_usage_perc_created${l('0')} 1.7e+09`,
    ];
    assert.deepEqual(gauges(`${BODY}${extra.join('\n')}\n`), EXPECTED);
  });

  it('ignores series whose names merely share a prefix with a wanted one', () => {
    const lookalikes = ['vllm:num_requests_waiting_by_reason', 'vllm:num_requests_waitingx', 'vllm:num_requests_runnin', 'vllm:kv_cache_usage_perc_max', 'vllm:gpu_cache_usage_percent', 'xvllm:num_requests_waiting', 'vllm:num_requests_swapped'];
    const body = lookalikes.map((name) => `${name}{reason="capacity",engine="0",model_name="${M}"} 100.0\n`).join('');
    assert.deepEqual(gauges(body + BODY), EXPECTED);
  });

  it('treats NaN and infinite gauges as absent instead of poisoning the sum', () => {
    const body = `vllm:num_requests_waiting${l('0')} NaN\nvllm:num_requests_waiting${l('1')} 4.0\nvllm:num_requests_running${l('0')} +Inf\nvllm:num_requests_running${l('1')} 2\nvllm:num_requests_running${l('2')} -Inf\nvllm:kv_cache_usage_perc${l('0')} NaN\nvllm:kv_cache_usage_perc${l('1')} 0.3\n`;
    assert.deepEqual(gauges(body), { waiting: 4, running: 2, kvCacheUsage: 0.3 });
  });

  it('reports no KV-cache usage when every KV sample is NaN, and no body when every load sample is', () => {
    assert.deepEqual(gauges(`vllm:num_requests_waiting${l('0')} 1\nvllm:kv_cache_usage_perc${l('0')} NaN\n`), { waiting: 1, running: 0, kvCacheUsage: undefined });
    assertError(`vllm:num_requests_waiting${l('0')} NaN\nvllm:num_requests_running${l('0')} Inf\n`, 'no vllm:num_requests_waiting');
  });

  it('clamps negative values to 0 and KV-cache usage to 1', () => {
    const body = `vllm:num_requests_waiting${l('0')} -3\nvllm:num_requests_waiting${l('1')} 2\nvllm:num_requests_running${l('0')} -1e3\nvllm:kv_cache_usage_perc${l('0')} -0.5\nvllm:kv_cache_usage_perc${l('1')} 1.5\n`;
    assert.deepEqual(gauges(body), { waiting: 2, running: 0, kvCacheUsage: 1 });
  });

  it('parses label sets in any order, with blanks, a trailing comma, or none at all', () => {
    const body = [
      `vllm:num_requests_waiting{model_name="${M}",engine="0",} 1`,
      `vllm:num_requests_waiting { engine = "1" , model_name = "${M}" , } 2`,
      `vllm:num_requests_waiting{} 4`,
      `vllm:num_requests_waiting\t8`,
      `  vllm:num_requests_running{engine="0",model_name="${M}"}\t16`,
    ].join('\n');
    const result = models(scanEngineMetrics(`${body}\n`));
    assert.deepEqual(result.get(M), { waiting: 3, running: 16, kvCacheUsage: undefined });
    assert.deepEqual(result.get(''), { waiting: 12, running: 0, kvCacheUsage: undefined });
  });

  it('decodes escaped label values and allows } , = and blanks inside quotes', () => {
    const raw = String.raw`we\"ird} {model,=x\\y\nz`;
    const body = `vllm:num_requests_running{engine="0",note="a}b, c=\\"d\\"",model_name="${raw}"} 7\n`;
    assert.deepEqual(gauges(body, 'we"ird} {model,=x\\y\nz'), { waiting: 0, running: 7, kvCacheUsage: undefined });
  });

  it('accepts timestamps, exponents and CRLF line ends', () => {
    const body = `vllm:num_requests_waiting${l('0')} 1.5e1 1764495236000\r\nvllm:num_requests_running${l('0')} +.5E+1\t-12\r\nvllm:kv_cache_usage_perc${l('0')} 2.5e-1 \r\n`;
    assert.deepEqual(gauges(body), { waiting: 15, running: 5, kvCacheUsage: 0.25 });
  });

  it('separates models by model_name, and series without it go under the empty name', () => {
    const body = `${BODY}vllm:num_requests_waiting${l('0', 'other')} 9\nvllm:num_requests_running{engine="0"} 6\n`;
    assert.deepEqual(
      models(scanEngineMetrics(body)),
      new Map([
        [M, EXPECTED],
        ['other', { waiting: 9, running: 0, kvCacheUsage: undefined }],
        ['', { waiting: 0, running: 6, kvCacheUsage: undefined }],
      ]),
    );
  });

  it('falls back to vllm:gpu_cache_usage_perc per model only where the new name is absent', () => {
    const body = `vllm:num_requests_running${l('0', 'a')} 1\nvllm:num_requests_running${l('0', 'b')} 1\nvllm:gpu_cache_usage_perc${l('0', 'a')} 0.9\nvllm:gpu_cache_usage_perc${l('1', 'a')} 0.7\nvllm:kv_cache_usage_perc${l('0', 'a')} 0.2\nvllm:gpu_cache_usage_perc${l('0', 'b')} 0.4\nvllm:gpu_cache_usage_perc${l('1', 'b')} 0.6\n`;
    const result = models(scanEngineMetrics(body));
    assert.equal(result.get('a')?.kvCacheUsage, 0.2);
    assert.equal(result.get('b')?.kvCacheUsage, 0.6);
  });

  it('rejects bodies with no waiting or running series: garbage, HTML, empty, only other families', () => {
    assertError('');
    assertError('\n\n');
    assertError('<!DOCTYPE html><html><body><h1>502 Bad Gateway</h1></body></html>\n');
    assertError('{"object":"error","message":"Not Found"}');
    assertError('\u0000\uffff\ud800garbage');
    assertError(FAMILIES[2] + FAMILIES[3]);
    assertError('# HELP vllm:num_requests_waiting x\n# TYPE vllm:num_requests_waiting gauge\n');
  });

  it('rejects a malformed line of a wanted series, naming its line', () => {
    const cases: [string, string][] = [
      [`vllm:num_requests_waiting{engine="0",model_name="${M}"`, 'unterminated label set'],
      [`vllm:num_requests_waiting{engine="0" 1`, 'expected , or }'],
      [`vllm:num_requests_waiting{engine="0",model_name="${M}} 1`, 'unterminated label value'],
      [`vllm:num_requests_waiting{engine="0"}`, 'missing value'],
      [`vllm:num_requests_waiting`, 'missing value'],
      [`vllm:num_requests_waiting{engine="0"} abc`, 'not a number'],
      [`vllm:num_requests_waiting{engine="0"} 1.2.3`, 'not a number'],
      [`vllm:num_requests_waiting{engine="0"} 0x10`, 'not a number'],
      [`vllm:num_requests_waiting{engine="0"}7`, 'no blank'],
      [`vllm:num_requests_waiting{engine="0"} 7 abc`, 'timestamp'],
      [`vllm:num_requests_waiting{engine="0"} 7 1 2`, 'trailing'],
      [`vllm:num_requests_waiting{engine="\\t"} 7`, 'escape'],
      [`vllm:num_requests_waiting{engine=0} 7`, 'quoted'],
      [`vllm:num_requests_waiting{,} 7`, 'label name'],
      [`vllm:kv_cache_usage_perc{engine="0" model_name="m"} 0.5`, 'expected , or }'],
    ];
    for (const [line, reason] of cases) assertError(`${BODY}${line}\n`, `line 15: .*${reason}`);
  });

  it('ignores malformed lines of series it does not read', () => {
    assert.deepEqual(gauges(`vllm:time_to_first_token_seconds_bucket{le="0.1" 3\nfoo{ bar\n${BODY}`), EXPECTED);
  });

  it('rejects a body truncated inside a wanted line, and otherwise reads only its complete lines', () => {
    const body = `# TYPE x gauge\n${BODY}`;
    const wantedLines = new Set<number>();
    for (let k = 0; k <= body.length; k++) {
      const cut = body.slice(0, k);
      const complete = cut.slice(0, cut.lastIndexOf('\n') + 1);
      const partial = cut.slice(complete.length).trimStart();
      const result = scanEngineMetrics(cut);
      if (partial !== '' && WANTED_NAMES.some((n) => partial.startsWith(n) || n.startsWith(partial))) {
        assert.equal(result.ok, false, `cut at ${k}: ${JSON.stringify(partial)}`);
        if (WANTED_NAMES.some((n) => partial.startsWith(n))) wantedLines.add(complete.length);
      } else if (complete.includes('vllm:num_requests_running{')) {
        assert.deepEqual(result, scanEngineMetrics(complete), `cut at ${k}`);
      } else assert.equal(result.ok, false, `cut at ${k} before any load series`);
    }
    assert.equal(wantedLines.size, 6);
  });

  it('reads the realistic fixture', () => {
    const text = realisticVllmExposition();
    assert.ok(text.length >= 200_000 && text.length < 210_000, `fixture is ${text.length} bytes`);
    assert.ok(text.indexOf('vllm:num_requests_') > text.length / 4, 'wanted gauges are not at the top');
    assert.deepEqual(models(scanEngineMetrics(text)), new Map([[REALISTIC_MODEL, { ...REALISTIC_EXPECTED }]]));
  });

  it('never throws, whatever the input', () => {
    const token = fc.constantFrom('vllm:num_requests_waiting', 'vllm:kv_cache_usage_perc', 'vllm:gpu_cache_usage_perc', '{', '}', '"', '\\', '=', ',', ' ', '\t', '\n', '\r', '#', 'model_name', 'engine', 'NaN', '+Inf', '-1.5e3', '7', '.', 'e');
    const soup = fc.array(fc.oneof(token, fc.string({ maxLength: 3 })), { maxLength: 40 }).map((parts) => parts.join(''));
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary' }), soup), (text) => {
        const result = scanEngineMetrics(text);
        assert.equal(typeof result.ok, 'boolean');
      }),
      { numRuns: 2000 },
    );
    assert.equal(scanEngineMetrics(undefined as unknown as string).ok, false);
  });

  it('gives the same result when unknown series, comments and blank lines are added between lines', () => {
    const line = fc.oneof(
      fc.string({ maxLength: 60 }).map((s) => `#${s.replace(/[\r\n]/g, '')}`),
      fc.constant(''),
      fc.tuple(
        fc.oneof(
          fc.constantFrom('vllm:num_requests_waiting_by_reason', 'vllm:num_requests_running_created', 'vllm:kv_cache_usage_perc_bucket', 'vllm:num_requests_wait', 'python_gc_objects_collected_total'),
          fc.stringMatching(/^[a-zA-Z_:][a-zA-Z0-9_:]{0,40}$/),
        ),
        fc.string({ maxLength: 60 }).map((s) => s.replace(/[\r\n]/g, '')),
      )
        .map(([name, rest]) => name + rest)
        // Whatever the pieces, the whole line must not spell a wanted series.
        .filter((text) => !WANTED_NAMES.some((n) => text.startsWith(n) && /^([{ \t]|$)/.test(text.slice(n.length)))),
    );
    const lines = BODY.split('\n').slice(0, -1);
    const expected = scanEngineMetrics(BODY);
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(lines.length), line), { maxLength: 20 }), (inserts) => {
        const out = [...lines];
        for (const [at, extra] of inserts) out.splice(Math.min(at, out.length), 0, extra);
        assert.deepEqual(scanEngineMetrics(`${out.join('\n')}\n`), expected);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('scanEngineMetrics: dialects', () => {
  const SGLANG = `# TYPE sglang:num_running_reqs gauge\nsglang:num_running_reqs{model_name="${M}",tp_rank="0"} 7.0\n# TYPE sglang:num_queue_reqs gauge\nsglang:num_queue_reqs{model_name="${M}",tp_rank="0"} 2.0\nsglang:token_usage{model_name="${M}",tp_rank="0"} 0.4\nsglang:cache_hit_rate{model_name="${M}",tp_rank="0"} 0.9\n`;
  const LLAMACPP = '# TYPE llamacpp:kv_cache_usage_ratio gauge\nllamacpp:kv_cache_usage_ratio 0.125\nllamacpp:requests_processing 4\nllamacpp:requests_deferred 3\nllamacpp:n_busy_slots_per_decode 1\n';
  const TGI = '# TYPE tgi_queue_size gauge\ntgi_queue_size 5\ntgi_batch_current_size 11\ntgi_batch_current_max_tokens 4096\ntgi_queue_size_created 1.7e9\n';

  it('detects each dialect from the body and reads its gauges', () => {
    const cases: [string, string, string, ModelGauges][] = [
      [BODY, 'vllm', M, EXPECTED],
      [SGLANG, 'sglang', M, { waiting: 2, running: 7, kvCacheUsage: 0.4 }],
      [LLAMACPP, 'llamacpp', '', { waiting: 3, running: 4, kvCacheUsage: 0.125 }],
      [TGI, 'tgi', '', { waiting: 5, running: 11, kvCacheUsage: undefined }],
    ];
    for (const [body, dialect, model, expected] of cases) {
      const result = scanEngineMetrics(body);
      assert.ok(result.ok, dialect);
      assert.equal(result.dialect, dialect);
      assert.deepEqual(result.models, new Map([[model, expected]]), dialect);
    }
  });

  it('a named dialect reads only its own names, and names them when they are missing', () => {
    const mixed = SGLANG + BODY;
    const sglang = scanEngineMetrics(mixed, 'sglang');
    assert.ok(sglang.ok);
    assert.deepEqual(sglang.models.get(M), { waiting: 2, running: 7, kvCacheUsage: 0.4 });
    const tgi = scanEngineMetrics(BODY, 'tgi');
    assert.equal(tgi.ok, false);
    if (!tgi.ok) assert.match(tgi.error, /no tgi_queue_size or tgi_batch_current_size series/);
  });

  it('auto prefers vLLM, then SGLang, llama.cpp and TGI, when a body carries several', () => {
    const both = scanEngineMetrics(TGI + SGLANG + LLAMACPP);
    assert.ok(both.ok);
    assert.equal(both.dialect, 'sglang');
    const withVllm = scanEngineMetrics(TGI + BODY);
    assert.ok(withVllm.ok);
    assert.equal(withVllm.dialect, 'vllm');
  });

  it('a body of no known engine is an error that lists what it looked for', () => {
    const result = scanEngineMetrics('# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 1.5\n');
    assert.equal(result.ok, false);
    if (!result.ok) for (const name of ['vllm:num_requests_waiting', 'sglang:num_queue_reqs', 'llamacpp:requests_deferred', 'tgi_queue_size']) assert.ok(result.error.includes(name), name);
  });

  it('regression: SGLang per-priority series beside the total double-counted the queue', () => {
    const s = (labels: string, value: number) => `sglang:num_queue_reqs{model_name="${M}",${labels}} ${value}\nsglang:num_running_reqs{model_name="${M}",${labels}} 1\n`;
    const body = s('priority=""', 6) + s('priority="0"', 4) + s('priority="1"', 2);
    assert.deepEqual(gauges(body), { waiting: 6, running: 1, kvCacheUsage: undefined });
  });

  it('regression: SGLang metrics from every scheduler repeat a data-parallel rank\'s queue once per tensor-parallel rank', () => {
    // dp 0 runs on tp ranks 0-3, dp 1 on 4-7 (DP attention): each rank reports its data-parallel group's scheduler.
    const lines = [0, 1, 2, 3, 4, 5, 6, 7].map((tp) => {
      const dp = tp < 4 ? 0 : 1;
      return `sglang:num_queue_reqs{dp_rank="${dp}",model_name="${M}",tp_rank="${tp}"} ${dp === 0 ? 5 : 3}\nsglang:num_running_reqs{dp_rank="${dp}",model_name="${M}",tp_rank="${tp}"} ${dp === 0 ? 10 : 8}\n`;
    });
    assert.deepEqual(gauges(lines.join('')), { waiting: 8, running: 18, kvCacheUsage: undefined });
  });

  it('reports a truncated last line of any dialect', () => {
    for (const cut of ['sglang:num_queue_re', 'llamacpp:requests_processing 4', 'tgi_batch_cur']) assertError(`${TGI}${cut}`, 'truncated');
  });
});

