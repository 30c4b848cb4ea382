/**
 * A scanner for the Prometheus text exposition (format 0.0.4) that engines'
 * `/metrics` return, extracting only the load gauges per model, in any of the
 * engine dialects switchyard reads (metric-dialects.ts).
 *
 * A real vLLM body is 100-300 KB, almost all histogram buckets we never read,
 * and it is scraped from every pod every few hundred milliseconds. So the scan
 * walks the string with indexOf/charCodeAt, rejects a line by its first
 * character without allocating, and parses labels only on the handful of
 * lines that carry a wanted gauge. No regex, no split, no per-line substrings.
 */
import { DIALECTS, DIALECT_SERIES, KIND, type EngineDialect, type SeriesKind } from './metric-dialects.ts';

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

/** One wanted series name with what it means. */
interface Wanted {
  readonly name: string;
  readonly dialect: number;
  readonly kind: SeriesKind;
}

const WANTED: readonly Wanted[] = DIALECTS.flatMap((dialect, index) =>
  Object.entries(DIALECT_SERIES[dialect]).flatMap(([kind, names]) => names.map((name) => ({ name, dialect: index, kind: kind as SeriesKind }))),
);

/**
 * Wanted names grouped by first character, then by the character where the
 * group's names first differ (`vllm:` + n/k/g): a bucket line of a family we
 * do not read is rejected by a typed-array read and a map lookup, without a
 * string compare.
 */
interface FirstCharGroup {
  /** Index of the character that tells the group's names apart (their common prefix's length). */
  readonly at: number;
  /** Candidates by the character code at `at`. */
  readonly byChar: ReadonlyMap<number, readonly Wanted[]>;
}

const GROUPS: FirstCharGroup[] = [];
/** Per character code below 128: 1 + index into GROUPS, 0 when no wanted name starts with it. */
const GROUP_OF_CHAR = new Uint8Array(128);
for (const first of new Set(WANTED.map((w) => w.name.charCodeAt(0)))) {
  const names = WANTED.filter((w) => w.name.charCodeAt(0) === first);
  let at = 0;
  while (names.every((w) => at < w.name.length - 1 && w.name[at] === names[0]!.name[at])) at++;
  const byChar = new Map<number, Wanted[]>();
  for (const w of names) byChar.set(w.name.charCodeAt(at), [...(byChar.get(w.name.charCodeAt(at)) ?? []), w]);
  GROUPS.push({ at, byChar });
  GROUP_OF_CHAR[first] = GROUPS.length;
}

/**
 * The labels of a wanted series the scan keeps. Beyond the model, they tell
 * a breakdown from a total: SGLang exports the queue once per priority
 * beside its total (`priority=""`), and with metrics from every scheduler,
 * once per tensor-parallel rank of the same data-parallel rank.
 */
interface SeriesLabels {
  readonly model: string;
  readonly priority: string | undefined;
  readonly tpRank: string | undefined;
  readonly dpRank: string | undefined;
}

const NO_LABELS: SeriesLabels = { model: '', priority: undefined, tpRank: undefined, dpRank: undefined };

interface Series extends SeriesLabels {
  readonly value: number;
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

/**
 * Scans an engine's `/metrics` body. Never throws. `dialect` `auto` reads
 * the first of {@link DIALECTS} whose waiting or running gauge has a value;
 * a named dialect reads only its own names. Gauges with a NaN or infinite
 * value count as absent; negative values clamp to 0 and KV-cache usage to
 * 0-1. Following the format, every line must end with `\n`: an unterminated
 * last line that is, or could be the start of, a wanted series is reported as
 * truncated rather than silently under-counted.
 * @param text the whole response body, already decoded as UTF-8.
 */
export function scanEngineMetrics(text: string, dialect: EngineDialect | 'auto' = 'auto'): ScanResult {
  if (typeof text !== 'string') return { ok: false, error: 'body is not a string' };
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
    const group = c < 128 ? GROUP_OF_CHAR[c]! : 0;
    if (group === 0) continue;
    const { at, byChar } = GROUPS[group - 1]!;
    const candidates = byChar.get(text.charCodeAt(start + at));
    const wanted = candidates === undefined ? undefined : wantedSeries(candidates, text, start, end);
    if (!terminated) {
      if (wanted !== undefined || couldBeWanted(text.slice(start))) return malformed(lineNo, 'truncated final line (no trailing newline)');
      break;
    }
    if (wanted === undefined || (only !== -1 && wanted.dialect !== only)) continue;
    if (text.charCodeAt(end - 1) === CR) end--;
    const parsed = parseSeries(text, start + wanted.name.length, end);
    if (typeof parsed === 'string') return malformed(lineNo, `${wanted.name}: ${parsed}`);
    // NaN/Inf means the engine had no sample: absent, so it cannot poison a sum. A per-priority
    // series breaks down the total beside it.
    if (!Number.isFinite(parsed.value) || (parsed.priority !== undefined && parsed.priority !== '')) continue;
    const value = parsed.value > 0 ? parsed.value : 0;
    const models = (byDialect[wanted.dialect] ??= new Map<string, Accumulator>());
    let acc = models.get(parsed.model);
    if (acc === undefined) {
      acc = { waiting: 0, running: 0, kv: undefined, kvOld: undefined, ranked: undefined };
      models.set(detach(parsed.model), acc);
    }
    switch (wanted.kind) {
      case KIND.waiting:
      case KIND.running:
        if (parsed.tpRank === undefined) acc[wanted.kind] += value;
        else {
          const rank = (acc.ranked ??= new Map<string, { waiting: number; running: number }>()).get(parsed.dpRank ?? '') ?? { waiting: 0, running: 0 };
          rank[wanted.kind] = Math.max(rank[wanted.kind], value);
          acc.ranked.set(detach(parsed.dpRank ?? ''), rank);
        }
        loadSeries[wanted.dialect]!++;
        break;
      case KIND.kv:
        acc.kv = Math.max(acc.kv ?? 0, Math.min(value, 1));
        break;
      case KIND.kvOld:
        acc.kvOld = Math.max(acc.kvOld ?? 0, Math.min(value, 1));
        break;
    }
  }
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

/** Whether an unterminated last line is a wanted name cut short. */
function couldBeWanted(rest: string): boolean {
  return WANTED.some((wanted) => wanted.name.startsWith(rest));
}

function isBlank(c: number): boolean {
  return c === SPACE || c === TAB;
}

function skipBlanks(text: string, i: number, end: number): number {
  while (i < end && isBlank(text.charCodeAt(i))) i++;
  return i;
}

/** Parses `{labels} value [timestamp]` after the name; returns the reason when malformed. */
function parseSeries(text: string, i: number, end: number): Series | string {
  let labels: SeriesLabels = NO_LABELS;
  const afterName = skipBlanks(text, i, end);
  if (afterName < end && text.charCodeAt(afterName) === LBRACE) {
    const parsed = parseLabels(text, afterName + 1, end);
    if (typeof parsed === 'string') return parsed;
    labels = parsed;
    i = parsed.next;
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
  return { ...labels, value };
}

function tokenEnd(text: string, i: number, end: number): number {
  while (i < end && !isBlank(text.charCodeAt(i))) i++;
  return i;
}

/** Parses the label set after `{`; keeps only the labels in {@link SeriesLabels}. Values may hold any of `}`, `,`, `=`, blanks. */
function parseLabels(text: string, i: number, end: number): (SeriesLabels & { next: number }) | string {
  const labels: { -readonly [K in keyof SeriesLabels]: SeriesLabels[K] } = { model: '', priority: undefined, tpRank: undefined, dpRank: undefined };
  for (;;) {
    i = skipBlanks(text, i, end);
    if (i >= end) return 'unterminated label set';
    if (text.charCodeAt(i) === RBRACE) return { ...labels, next: i + 1 }; // empty set or trailing comma
    const nameStart = i;
    while (i < end && isLabelNameChar(text.charCodeAt(i))) i++;
    if (i === nameStart) return 'bad label name';
    const kept = keptLabel(text, nameStart, i);
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
    if (c === RBRACE) return { ...labels, next: i + 1 };
    if (c !== COMMA) return 'expected , or } after label value';
    i++;
  }
}

/** Which kept label the name at `start`..`end` is, if any. */
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
