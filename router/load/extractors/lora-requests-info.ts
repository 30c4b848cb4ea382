/**
 * vLLM's LoRA state per engine, from `vllm:lora_requests_info`: which
 * adapters are running and waiting, and how many the engine can hold at once.
 * For LoRA-aware scheduling (router/scheduling/scorers/lora-affinity.ts:
 * prefer an engine that runs the adapter, or one with a free slot).
 *
 * The gauge is an info gauge: its labels carry the state and its value is the
 * time the engine last set that label set (`set_to_current_time()`, seconds).
 * prometheus_client never drops a label set, so every combination the engine
 * has been through lingers in the body with an older timestamp; only the one
 * with the greatest value is current.
 *
 *     vllm:lora_requests_info{max_lora="2",running_lora_adapters="",waiting_lora_adapters=""} 1.7886264577368872e+09
 *     vllm:lora_requests_info{max_lora="2",running_lora_adapters="ko,json",waiting_lora_adapters="sql"} 1.7886264546318772e+09
 */
import { AttributeKey, type EndpointAttributes } from '../endpoint-attributes.ts';
import { commitAttribute, type AttributeWriter, type MetricExtraction, type MetricExtractor, type SampleLabels } from '../metric-extractor.ts';

/** An engine's LoRA state at its last report. */
export interface LoraRequestsInfo {
  /** Adapters with requests running, in the engine's order; empty when none. */
  readonly running: readonly string[];
  /** Adapters with requests waiting; empty when none. An adapter may be in both lists. */
  readonly waiting: readonly string[];
  /** Adapters the engine can hold at once (`--max-loras`); 0 when LoRA is off. */
  readonly maxLora: number;
  /**
   * Adapters seen starting to run since the endpoint's state began: at each
   * scrape, those in `running` that the scrape before did not list. Each is
   * a swap-in, or a loaded adapter resuming after an idle spell between two
   * scrapes: an upper bound of the engine's adapter swaps, which vLLM does
   * not count. A scrape without the gauge clears the state, and the count
   * starts again (a counter reset, to Prometheus).
   */
  readonly starts: number;
  /**
   * Adapters this replica sent the engine since this scrape (see
   * {@link noteAdapterSent}): running there as far as the router knows,
   * though the gauge does not show them yet. Empty at each scrape, which
   * shows what the engine made of them.
   */
  readonly sentSinceScrape: Set<string>;
}

/** Swap pressure: requests wait for an adapter the engine does not run, so for an adapter slot to turn over. */
export function hasSwapPressure(info: LoraRequestsInfo): boolean {
  for (const adapter of info.waiting) if (!info.running.includes(adapter)) return true;
  return false;
}

/**
 * The engine's last scrape shows swap pressure: its queue waits (at least
 * partly) for an adapter slot, not a batch slot, and what runs beside it is
 * no measure of its batch capacity.
 */
export function waitsForAdapterSlot(attributes: EndpointAttributes): boolean {
  const info = attributes.get(LORA_REQUESTS_INFO);
  return info !== undefined && hasSwapPressure(info);
}

/** A request for `adapter` was sent to the endpoint whose attributes these are (no-op without LoRA state). */
export function noteAdapterSent(attributes: EndpointAttributes, adapter: string): void {
  attributes.get(LORA_REQUESTS_INFO)?.sentSinceScrape.add(adapter);
}

/**
 * Where the state lives in the endpoint's attributes: absent when the last
 * successful scrape carried no usable `vllm:lora_requests_info` sample
 * (LoRA is off, or not a vLLM engine); stale with the endpoint's gauges when
 * scrapes fail.
 */
export const LORA_REQUESTS_INFO = new AttributeKey<LoraRequestsInfo>('vllm.lora-requests-info');

const SERIES = 'vllm:lora_requests_info';
const RUNNING = 'running_lora_adapters';
const WAITING = 'waiting_lora_adapters';
const MAX_LORA = 'max_lora';
const DIGITS = /^[0-9]+$/;

/**
 * Reads `vllm:lora_requests_info` into {@link LORA_REQUESTS_INFO}. A sample
 * counts when its value (the timestamp) is finite and its `max_lora` a
 * non-negative integer; of those, the greatest timestamp wins (the first of
 * equal ones). A missing adapter label reads as an empty list.
 */
export const loraRequestsInfo: MetricExtractor = {
  name: 'vllm-lora-requests-info',
  series: [SERIES],
  labels: [RUNNING, WAITING, MAX_LORA],
  begin: () => new LatestLoraInfo(),
};

/** Keeps the newest usable sample's labels; splits the adapter lists once, at commit. */
class LatestLoraInfo implements MetricExtraction {
  #newest: { at: number; maxLora: number; labels: SampleLabels } | undefined;

  add(_series: string, labels: SampleLabels, value: number): void {
    const raw = labels[MAX_LORA];
    const maxLora = raw !== undefined && DIGITS.test(raw) ? Number(raw) : Number.NaN;
    if (!Number.isFinite(value) || !Number.isSafeInteger(maxLora)) return;
    if (this.#newest === undefined || value > this.#newest.at) this.#newest = { at: value, maxLora, labels };
  }

  commit(attributes: AttributeWriter): void {
    const newest = this.#newest;
    const before = attributes.get(LORA_REQUESTS_INFO);
    const running = newest === undefined ? [] : adapters(newest.labels[RUNNING]);
    const started = running.filter((adapter) => before?.running.includes(adapter) !== true).length;
    const info = newest === undefined ? undefined : { running, waiting: adapters(newest.labels[WAITING]), maxLora: newest.maxLora, starts: (before?.starts ?? 0) + started, sentSinceScrape: new Set<string>() };
    commitAttribute(attributes, LORA_REQUESTS_INFO, info);
  }
}

/** vLLM joins the names with `,`; an empty label means none. */
function adapters(joined: string | undefined): string[] {
  return joined === undefined || joined === '' ? [] : joined.split(',').filter((name) => name !== '');
}
