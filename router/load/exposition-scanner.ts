/**
 * A scanner for the Prometheus text exposition (format 0.0.4) that vLLM's
 * `/metrics` returns, extracting only the engine load gauges per model.
 *
 * A real vLLM body is 100-300 KB, almost all histogram buckets we never read,
 * and it is scraped from every pod every few hundred milliseconds. So the scan
 * walks the string with indexOf/charCodeAt, rejects a line by its first
 * characters without allocating, and parses labels only on the handful of
 * lines that carry a wanted gauge. No regex, no split, no per-line substrings.
 */

/** Engine gauges for one model, aggregated over data-parallel engines. */
export interface ModelGauges {
  /** Sum over the `engine` label of vllm:num_requests_waiting. */
  waiting: number;
  /** Sum over `engine` of vllm:num_requests_running. */
  running: number;
  /** Max over `engine` of vllm:kv_cache_usage_perc (or the old name vllm:gpu_cache_usage_perc when the new one is absent), 0-1; undefined when neither is present. */
  kvCacheUsage: number | undefined;
}

/** Result: gauges by `model_name` label value (series without model_name go under ''), or an error string when the body is not a usable exposition. */
export type ScanResult = { ok: true; models: Map<string, ModelGauges> } | { ok: false; error: string };

// Character codes, so the hot loop compares numbers and never makes a substring.
const TAB = 9, CR = 13, SPACE = 32, QUOTE = 34, COMMA = 44, EQUALS = 61, BACKSLASH = 92, LBRACE = 123, RBRACE = 125, LOWER_V = 118;

// Wanted series kinds, indexes into NAMES.
const NONE = -1, WAITING = 0, RUNNING = 1, KV = 2, GPU_KV = 3;
type Kind = typeof WAITING | typeof RUNNING | typeof KV | typeof GPU_KV;
const NAMES = ['vllm:num_requests_waiting', 'vllm:num_requests_running', 'vllm:kv_cache_usage_perc', 'vllm:gpu_cache_usage_perc'] as const;

/** Per model while scanning; the two KV names stay apart until the end decides which one counts. */
interface Accumulator {
  waiting: number;
  running: number;
  kv: number | undefined;
  gpuKv: number | undefined;
}

/**
 * Scans a vLLM `/metrics` body. Never throws. Gauges with a NaN or infinite
 * value count as absent; negative values clamp to 0 and KV-cache usage to
 * 0-1. Following the format, every line must end with `\n`: an unterminated
 * last line that is, or could be the start of, a wanted series is reported as
 * truncated rather than silently under-counted.
 * @param text the whole response body, already decoded as UTF-8.
 */
export function scanVllmMetrics(text: string): ScanResult {
  if (typeof text !== 'string') return { ok: false, error: 'body is not a string' };
  const models = new Map<string, Accumulator>();
  let loadSeries = 0; // usable waiting/running values seen
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
    const c = text.charCodeAt(start);
    if (c !== LOWER_V) {
      if (!isBlank(c)) continue;
      start = skipBlanks(text, start, end);
      if (text.charCodeAt(start) !== LOWER_V) continue;
    }
    const kind = wantedKind(text, start, end);
    if (!terminated) {
      if (kind !== NONE || couldBeWanted(text.slice(start))) return malformed(lineNo, 'truncated final line (no trailing newline)');
      break;
    }
    if (kind === NONE) continue;
    if (text.charCodeAt(end - 1) === CR) end--;
    const parsed = parseSeries(text, start + NAMES[kind].length, end);
    if (typeof parsed === 'string') return malformed(lineNo, `${NAMES[kind]}: ${parsed}`);
    // NaN/Inf means the engine had no sample: absent, so it cannot poison a sum.
    if (!Number.isFinite(parsed.value)) continue;
    const value = parsed.value > 0 ? parsed.value : 0;
    let acc = models.get(parsed.model);
    if (acc === undefined) {
      acc = { waiting: 0, running: 0, kv: undefined, gpuKv: undefined };
      models.set(detach(parsed.model), acc);
    }
    if (kind === WAITING) {
      acc.waiting += value;
      loadSeries++;
    } else if (kind === RUNNING) {
      acc.running += value;
      loadSeries++;
    } else if (kind === KV) acc.kv = Math.max(acc.kv ?? 0, Math.min(value, 1));
    else acc.gpuKv = Math.max(acc.gpuKv ?? 0, Math.min(value, 1));
  }
  if (loadSeries === 0) return { ok: false, error: 'no vllm:num_requests_waiting or vllm:num_requests_running series with a value' };
  const out = new Map<string, ModelGauges>();
  for (const [model, a] of models) out.set(model, { waiting: a.waiting, running: a.running, kvCacheUsage: a.kv ?? a.gpuKv });
  return { ok: true, models: out };
}

function malformed(lineNo: number, reason: string): ScanResult {
  return { ok: false, error: `line ${lineNo}: malformed ${reason}` };
}

/** Which wanted series the line at `i` carries: the exact name, then `{`, a blank or the line end. */
function wantedKind(text: string, i: number, end: number): Kind | typeof NONE {
  let kind: Kind;
  // The character after `vllm:` picks the only candidate; buckets and counters stop here.
  switch (text.charCodeAt(i + 5)) {
    case 110: // n
      kind = text.charCodeAt(i + 18) === 119 ? WAITING : RUNNING; // 'w' of num_requests_waiting
      break;
    case 107: // k
      kind = KV;
      break;
    case 103: // g
      kind = GPU_KV;
      break;
    default:
      return NONE;
  }
  const name = NAMES[kind];
  if (!text.startsWith(name, i)) return NONE;
  const after = i + name.length;
  if (after >= end) return kind; // bare name: a wanted series missing its value
  const c = text.charCodeAt(after);
  return c === LBRACE || c === SPACE || c === TAB || c === CR ? kind : NONE;
}

/** Whether an unterminated last line is a wanted name cut short. */
function couldBeWanted(rest: string): boolean {
  for (const name of NAMES) if (name.startsWith(rest)) return true;
  return false;
}

function isBlank(c: number): boolean {
  return c === SPACE || c === TAB;
}

function skipBlanks(text: string, i: number, end: number): number {
  while (i < end && isBlank(text.charCodeAt(i))) i++;
  return i;
}

/** Parses `{labels} value [timestamp]` after the name; returns the reason when malformed. */
function parseSeries(text: string, i: number, end: number): { model: string; value: number } | string {
  let model = '';
  const afterName = skipBlanks(text, i, end);
  if (afterName < end && text.charCodeAt(afterName) === LBRACE) {
    const labels = parseLabels(text, afterName + 1, end);
    if (typeof labels === 'string') return labels;
    model = labels.model;
    i = labels.next;
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
  return { model, value };
}

function tokenEnd(text: string, i: number, end: number): number {
  while (i < end && !isBlank(text.charCodeAt(i))) i++;
  return i;
}

/** Parses the label set after `{`; keeps only model_name. Values may hold any of `}`, `,`, `=`, blanks. */
function parseLabels(text: string, i: number, end: number): { model: string; next: number } | string {
  let model = '';
  for (;;) {
    i = skipBlanks(text, i, end);
    if (i >= end) return 'unterminated label set';
    if (text.charCodeAt(i) === RBRACE) return { model, next: i + 1 }; // empty set or trailing comma
    const nameStart = i;
    while (i < end && isLabelNameChar(text.charCodeAt(i))) i++;
    if (i === nameStart) return 'bad label name';
    const isModel = i - nameStart === 10 && text.startsWith('model_name', nameStart);
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
    if (isModel) model = escaped ? unescape(text, valueStart, i) : text.slice(valueStart, i);
    i = skipBlanks(text, i + 1, end);
    if (i >= end) return 'unterminated label set';
    const c = text.charCodeAt(i);
    if (c === RBRACE) return { model, next: i + 1 };
    if (c !== COMMA) return 'expected , or } after label value';
    i++;
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
