/**
 * A scanner for the Prometheus text exposition (format 0.0.4) that engines'
 * `/metrics` return, extracting the load gauges per model, in any of the
 * engine dialects switchyard reads (metric-dialects.ts), and the samples that
 * metric extractors (metric-extractor.ts) ask for.
 *
 * A real vLLM body is 100-300 KB, almost all histogram buckets we never read,
 * and it is scraped from every pod every few hundred milliseconds. So the scan
 * walks the string with indexOf/charCodeAt, rejects a line by its first
 * character without allocating (wanted-series.ts), and parses labels only on
 * the handful of lines that carry a wanted series, and for each reader only
 * the labels it keeps. No regex, no split, no per-line substrings.
 */
import type { MetricExtraction, MetricExtractor } from './metric-extractor.ts';
import { DIALECTS, DIALECT_SERIES, KIND, type EngineDialect } from './metric-dialects.ts';
import { compileWantedSeries, type Wanted, type WantedSeriesTable } from './wanted-series.ts';

/** Engine gauges for one model, aggregated over the engine's data-parallel engines or ranks. */
export interface ModelGauges {
  /** Sum over series of the dialect's waiting gauge (vllm:num_requests_waiting, sglang:num_queue_reqs, ...). */
  waiting: number;
  /** Sum over series of the dialect's running gauge. */
  running: number;
  /** Max over series of the dialect's KV-cache usage (its older name only when the newer is absent), 0-1; undefined when the engine exports none. */
  kvCacheUsage: number | undefined;
}

/**
 * Result: the dialect read and the gauges by model label value (series
 * without one go under ''), or an error string when the body is not a usable
 * exposition of the dialect asked for.
 */
export type ScanResult = { ok: true; dialect: EngineDialect; models: Map<string, ModelGauges> } | { ok: false; error: string };

// Character codes, so the hot loop compares numbers and never makes a substring.
const TAB = 9, CR = 13, SPACE = 32, QUOTE = 34, COMMA = 44, EQUALS = 61, BACKSLASH = 92, LBRACE = 123, RBRACE = 125;

/**
 * The labels of a load gauge the scan keeps. Beyond the model, they tell a
 * breakdown from a total: SGLang exports the queue once per priority beside
 * its total (`priority=""`), and with metrics from every scheduler, once per
 * tensor-parallel rank of the same data-parallel rank.
 */
interface SeriesLabels {
  model: string;
  priority?: string;
  tpRank?: string;
  dpRank?: string;
}

/** Per dialect and model while scanning; the two KV names stay apart until the end decides which one counts. */
interface Accumulator {
  waiting: number;
  running: number;
  kv: number | undefined;
  kvOld: number | undefined;
  /** Series carrying a tensor-parallel rank: the max over ranks per data-parallel rank (the ranks report one scheduler), summed at the end. */
  ranked: Map<string, { waiting: number; running: number }> | undefined;
}

/** Which label to keep the name at `start`..`end` as, for one reader of a line; undefined skips its value. */
type LabelPicker<K extends string> = (text: string, start: number, end: number) => K | undefined;

/**
 * Reads the load gauges of every dialect and, when built with metric
 * extractors (metric-extractor.ts), hands each of them the samples of its
 * series. The names are compiled into lookup tables once, here; a scanner is
 * immutable and may be shared by every scrape.
 */
export class ExpositionScanner {
  readonly #table: WantedSeriesTable;
  /** Per extractor, by position: which of its labels a name is. */
  readonly #pickers: readonly LabelPicker<string>[];

  /** @param extractors whose series the scans also read; their order is the order of `extractions` in {@link scan}. */
  constructor(extractors: readonly MetricExtractor[] = []) {
    this.#table = compileWantedSeries(extractors);
    this.#pickers = extractors.map((extractor) => labelPicker(extractor.labels));
  }

  /**
   * Scans an engine's `/metrics` body. Never throws. `dialect` `auto` reads
   * the first of {@link DIALECTS} whose waiting or running gauge has a value;
   * a named dialect reads only its own names. Gauges with a NaN or infinite
   * value count as absent; negative values clamp to 0 and KV-cache usage to
   * 0-1. Following the format, every line must end with `\n`: an unterminated
   * last line that is, or could be the start of, a load gauge is reported as
   * truncated rather than silently under-counted.
   *
   * Extractors see their series whatever the dialect, and never change the
   * gauges or the result: a line only extractors want that is malformed or
   * unterminated is skipped, not an error. Their samples are handed over as
   * the scan meets them, so commit them only when the result is ok.
   * @param text the whole response body, already decoded as UTF-8.
   * @param extractions one per-scrape accumulator per extractor given to the constructor, in its order (none: extractors are not read).
   */
  scan(text: string, dialect: EngineDialect | 'auto' = 'auto', extractions: readonly MetricExtraction[] = []): ScanResult {
    if (typeof text !== 'string') return { ok: false, error: 'body is not a string' };
    const { groups, groupOfChar, loadNames } = this.#table;
    const only = dialect === 'auto' ? -1 : DIALECTS.indexOf(dialect);
    const byDialect: (Map<string, Accumulator> | undefined)[] = [];
    const loadSeries: number[] = DIALECTS.map(() => 0); // usable waiting/running values seen, per dialect
    const len = text.length;
    let pos = 0;
    let lineNo = 0;
    while (pos < len) {
      lineNo++;
      let start = pos;
      let end = text.indexOf('\n', pos);
      const terminated = end !== -1;
      if (!terminated) end = len;
      pos = end + 1;
      // The hot path: comments, buckets and other families stop at this check.
      let c = text.charCodeAt(start);
      if (isBlank(c)) {
        start = skipBlanks(text, start, end);
        c = text.charCodeAt(start);
      }
      const group = c < 128 ? groupOfChar[c]! : 0;
      if (group === 0) continue;
      const { at, byChar } = groups[group - 1]!;
      const candidates = byChar.get(text.charCodeAt(start + at));
      const wanted = candidates === undefined ? undefined : wantedSeries(candidates, text, start, end);
      if (!terminated) {
        if (wanted?.load !== undefined || couldBeLoad(loadNames, text.slice(start))) return malformed(lineNo, 'truncated final line (no trailing newline)');
        break;
      }
      if (wanted === undefined) continue;
      if (text.charCodeAt(end - 1) === CR) end--;
      if (wanted.extractors.length > 0) this.#deliver(wanted, text, start + wanted.name.length, end, extractions);
      const load = wanted.load;
      if (load === undefined || (only !== -1 && load.dialect !== only)) continue;
      const labels: SeriesLabels = { model: '' };
      const parsed = parseSample(text, start + wanted.name.length, end, keptLabel, labels);
      if (typeof parsed === 'string') return malformed(lineNo, `${wanted.name}: ${parsed}`);
      // NaN/Inf means the engine had no sample: absent, so it cannot poison a sum. A per-priority
      // series breaks down the total beside it.
      if (!Number.isFinite(parsed) || (labels.priority !== undefined && labels.priority !== '')) continue;
      const value = parsed > 0 ? parsed : 0;
      const models = (byDialect[load.dialect] ??= new Map<string, Accumulator>());
      let acc = models.get(labels.model);
      if (acc === undefined) {
        acc = { waiting: 0, running: 0, kv: undefined, kvOld: undefined, ranked: undefined };
        models.set(detach(labels.model), acc);
      }
      switch (load.kind) {
        case KIND.waiting:
        case KIND.running:
          if (labels.tpRank === undefined) acc[load.kind] += value;
          else {
            const rank = (acc.ranked ??= new Map<string, { waiting: number; running: number }>()).get(labels.dpRank ?? '') ?? { waiting: 0, running: 0 };
            rank[load.kind] = Math.max(rank[load.kind], value);
            acc.ranked.set(detach(labels.dpRank ?? ''), rank);
          }
          loadSeries[load.dialect]!++;
          break;
        case KIND.kv:
          acc.kv = Math.max(acc.kv ?? 0, Math.min(value, 1));
          break;
        case KIND.kvOld:
          acc.kvOld = Math.max(acc.kvOld ?? 0, Math.min(value, 1));
          break;
      }
    }
    return result(only, byDialect, loadSeries);
  }

  /** Hands the sample after the name at `from` to each extractor that wants it, parsing only that extractor's labels. */
  #deliver(wanted: Wanted, text: string, from: number, end: number, extractions: readonly MetricExtraction[]): void {
    for (const index of wanted.extractors) {
      const extraction = extractions[index];
      if (extraction === undefined) continue;
      const labels = Object.create(null) as Record<string, string>;
      const value = parseSample(text, from, end, this.#pickers[index]!, labels);
      if (typeof value === 'string') continue;
      for (const name in labels) labels[name] = detach(labels[name]!); // the extractor may keep them
      extraction.add(wanted.name, labels, value);
    }
  }
}

const LOAD_ONLY = new ExpositionScanner();

/**
 * Scans an engine's `/metrics` body for the load gauges alone: see
 * {@link ExpositionScanner.scan}. Never throws.
 * @param text the whole response body, already decoded as UTF-8.
 */
export function scanEngineMetrics(text: string, dialect: EngineDialect | 'auto' = 'auto'): ScanResult {
  return LOAD_ONLY.scan(text, dialect);
}

/** The result of a scan: the chosen dialect's gauges, or why there are none. */
function result(only: number, byDialect: readonly (Map<string, Accumulator> | undefined)[], loadSeries: readonly number[]): ScanResult {
  const chosen = only !== -1 ? only : loadSeries.findIndex((n) => n > 0);
  if (chosen === -1 || loadSeries[chosen] === 0) return { ok: false, error: `no ${loadNames(only)} series with a value` };
  const out = new Map<string, ModelGauges>();
  for (const [model, a] of byDialect[chosen] ?? []) {
    for (const rank of a.ranked?.values() ?? []) {
      a.waiting += rank.waiting;
      a.running += rank.running;
    }
    out.set(model, { waiting: a.waiting, running: a.running, kvCacheUsage: a.kv ?? a.kvOld });
  }
  return { ok: true, dialect: DIALECTS[chosen]!, models: out };
}

/** A picker for an extractor's label names (a handful: a linear search). */
function labelPicker(names: readonly string[]): LabelPicker<string> {
  return (text, start, end) => names.find((name) => name.length === end - start && text.startsWith(name, start));
}

/** The load gauges' names for an error message: of one dialect, or of all. */
function loadNames(only: number): string {
  const dialects = only === -1 ? DIALECTS : [DIALECTS[only]!];
  return dialects.flatMap((d) => [...DIALECT_SERIES[d].waiting, ...DIALECT_SERIES[d].running]).join(' or ');
}

function malformed(lineNo: number, reason: string): ScanResult {
  return { ok: false, error: `line ${lineNo}: malformed ${reason}` };
}

/** The wanted series the line at `i` carries: an exact name, then `{`, a blank or the line end. */
function wantedSeries(candidates: readonly Wanted[], text: string, i: number, end: number): Wanted | undefined {
  for (const wanted of candidates) {
    if (!text.startsWith(wanted.name, i)) continue;
    const after = i + wanted.name.length;
    if (after >= end) return wanted; // bare name: a wanted series missing its value
    const c = text.charCodeAt(after);
    if (c === LBRACE || c === SPACE || c === TAB || c === CR) return wanted;
  }
  return undefined;
}

/** Whether an unterminated last line is a load gauge's name cut short. */
function couldBeLoad(loadNames: readonly string[], rest: string): boolean {
  return loadNames.some((name) => name.startsWith(rest));
}

function isBlank(c: number): boolean {
  return c === SPACE || c === TAB;
}

function skipBlanks(text: string, i: number, end: number): number {
  while (i < end && isBlank(text.charCodeAt(i))) i++;
  return i;
}

/**
 * Parses `{labels} value [timestamp]` after the name, keeping in `labels` the
 * labels `pick` names; returns the value, or the reason when malformed.
 */
function parseSample<K extends string>(text: string, i: number, end: number, pick: LabelPicker<K>, labels: { [P in K]?: string }): number | string {
  const afterName = skipBlanks(text, i, end);
  if (afterName < end && text.charCodeAt(afterName) === LBRACE) {
    const next = parseLabels(text, afterName + 1, end, pick, labels);
    if (typeof next === 'string') return next;
    i = next;
  }
  const valueStart = skipBlanks(text, i, end);
  if (valueStart === end) return 'missing value';
  // wantedKind already saw the blank after a bare name; after labels it is ours to check.
  if (valueStart === i) return 'no blank before the value';
  const valueEnd = tokenEnd(text, valueStart, end);
  const value = parseNumber(text, valueStart, valueEnd);
  if (value === undefined) return 'value is not a number';
  const tsStart = skipBlanks(text, valueEnd, end);
  if (tsStart < end) {
    const tsEnd = tokenEnd(text, tsStart, end);
    if (!Number.isFinite(parseNumber(text, tsStart, tsEnd))) return 'bad timestamp';
    if (skipBlanks(text, tsEnd, end) !== end) return 'trailing text after the timestamp';
  }
  return value;
}

function tokenEnd(text: string, i: number, end: number): number {
  while (i < end && !isBlank(text.charCodeAt(i))) i++;
  return i;
}

/**
 * Parses the label set after `{` into `labels`, keeping only the labels `pick`
 * names; returns the index after `}`, or the reason when malformed. Values may
 * hold any of `}`, `,`, `=`, blanks.
 */
function parseLabels<K extends string>(text: string, i: number, end: number, pick: LabelPicker<K>, labels: { [P in K]?: string }): number | string {
  for (;;) {
    i = skipBlanks(text, i, end);
    if (i >= end) return 'unterminated label set';
    if (text.charCodeAt(i) === RBRACE) return i + 1; // empty set or trailing comma
    const nameStart = i;
    while (i < end && isLabelNameChar(text.charCodeAt(i))) i++;
    if (i === nameStart) return 'bad label name';
    const kept = pick(text, nameStart, i);
    i = skipBlanks(text, i, end);
    if (i >= end || text.charCodeAt(i) !== EQUALS) return 'expected = after label name';
    i = skipBlanks(text, i + 1, end);
    if (i >= end || text.charCodeAt(i) !== QUOTE) return 'expected quoted label value';
    const valueStart = ++i;
    let escaped = false;
    for (;;) {
      if (i >= end) return 'unterminated label value';
      const c = text.charCodeAt(i);
      if (c === QUOTE) break;
      if (c === BACKSLASH) {
        // The format defines exactly these three escapes; expfmt rejects others too.
        const e = i + 1 < end ? text.charCodeAt(i + 1) : -1;
        if (e !== BACKSLASH && e !== QUOTE && e !== 110) return 'invalid escape in label value';
        escaped = true;
        i += 2;
      } else i++;
    }
    if (kept !== undefined) labels[kept] = escaped ? unescape(text, valueStart, i) : text.slice(valueStart, i);
    i = skipBlanks(text, i + 1, end);
    if (i >= end) return 'unterminated label set';
    const c = text.charCodeAt(i);
    if (c === RBRACE) return i + 1;
    if (c !== COMMA) return 'expected , or } after label value';
    i++;
  }
}

/** Which label of {@link SeriesLabels} the name at `start`..`end` is, if any. */
function keptLabel(text: string, start: number, end: number): keyof SeriesLabels | undefined {
  switch (end - start) {
    case 10:
      return text.startsWith('model_name', start) ? 'model' : undefined;
    case 8:
      return text.startsWith('priority', start) ? 'priority' : undefined;
    case 7:
      return text.startsWith('tp_rank', start) ? 'tpRank' : text.startsWith('dp_rank', start) ? 'dpRank' : undefined;
    default:
      return undefined;
  }
}

function isLabelNameChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95;
}

function unescape(text: string, start: number, end: number): string {
  let out = '';
  let from = start;
  for (let i = start; i < end; i++) {
    if (text.charCodeAt(i) !== BACKSLASH) continue;
    const e = text.charCodeAt(i + 1);
    out += text.slice(from, i) + (e === 110 ? '\n' : String.fromCharCode(e));
    from = ++i + 1;
  }
  return out + text.slice(from, end);
}

/** Parses a Go-ParseFloat-style number, `NaN` or `[+-]Inf`; undefined when it is none of them. */
function parseNumber(text: string, start: number, end: number): number | undefined {
  let i = start;
  const sign = text.charCodeAt(i);
  if (sign === 43 || sign === 45) i++; // + -
  const word = end - i <= 8 ? text.slice(i, end).toLowerCase() : '';
  if (word === 'inf' || word === 'infinity') return sign === 45 ? -Infinity : Infinity;
  if (word === 'nan' && i === start) return NaN;
  let digits = 0;
  for (; i < end && isDigit(text.charCodeAt(i)); i++) digits++;
  if (i < end && text.charCodeAt(i) === 46) for (i++; i < end && isDigit(text.charCodeAt(i)); i++) digits++;
  if (digits === 0) return undefined;
  if (i < end && (text.charCodeAt(i) | 0x20) === 101) {
    i++;
    const s = text.charCodeAt(i);
    if (s === 43 || s === 45) i++;
    const expStart = i;
    while (i < end && isDigit(text.charCodeAt(i))) i++;
    if (i === expStart) return undefined;
  }
  return i === end ? Number(text.slice(start, end)) : undefined;
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/**
 * Copies a model name so the map key does not keep the whole body alive:
 * V8 makes slices of 13+ characters views into their parent string.
 */
function detach(s: string): string {
  return (s + ' ').slice(0, -1);
}
