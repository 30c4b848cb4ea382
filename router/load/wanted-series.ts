/**
 * The series names a scan reads, compiled into lookup tables by first
 * character: the dialects' load gauges (metric-dialects.ts) and the names of
 * any metric extractors (metric-extractor.ts). Built once per scanner, never
 * per scrape, so that the scan's hot loop (exposition-scanner.ts) rejects a
 * line no one wants by a typed-array read and at most one map lookup, without
 * allocating, however many extractors there are.
 */
import type { MetricExtractor } from './metric-extractor.ts';
import { DIALECTS, DIALECT_SERIES, type SeriesKind } from './metric-dialects.ts';

/** A load gauge: which dialect's, and what it measures. */
export interface LoadSeries {
  /** Index into {@link DIALECTS}. */
  readonly dialect: number;
  readonly kind: SeriesKind;
}

/** One wanted series name and everyone who wants it. */
export interface Wanted {
  readonly name: string;
  /** Set when the name is a dialect's load gauge; undefined when only extractors want it. */
  readonly load: LoadSeries | undefined;
  /** Indexes into the extractor list the table was compiled from, ascending; empty for most names. */
  readonly extractors: readonly number[];
}

/**
 * Wanted names sharing a first character, split by the character where they
 * first differ (`vllm:` + n/k/g/l): a bucket line of a family we do not read is
 * rejected without a string compare.
 */
export interface FirstCharGroup {
  /** Index of the character that tells the group's names apart (their common prefix's length). */
  readonly at: number;
  /** Candidates by the character code at `at`. */
  readonly byChar: ReadonlyMap<number, readonly Wanted[]>;
}

/** The compiled tables; immutable once built. */
export interface WantedSeriesTable {
  readonly groups: readonly FirstCharGroup[];
  /** Per character code below 128: 1 + index into `groups`, 0 when no wanted name starts with it. */
  readonly groupOfChar: Uint8Array;
  /** Every load gauge name, for telling a truncated last line from a complete one. */
  readonly loadNames: readonly string[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;

/**
 * Compiles the dialects' load gauges and `extractors`' series names. Throws
 * on an extractor series that is not a valid metric name: a misspelt plugin
 * fails at startup, not by silently reading nothing.
 */
export function compileWantedSeries(extractors: readonly MetricExtractor[]): WantedSeriesTable {
  const byName = new Map<string, { name: string; load: LoadSeries | undefined; extractors: number[] }>();
  DIALECTS.forEach((dialect, index) => {
    for (const [kind, names] of Object.entries(DIALECT_SERIES[dialect])) {
      for (const name of names) byName.set(name, { name, load: { dialect: index, kind: kind as SeriesKind }, extractors: [] });
    }
  });
  extractors.forEach((extractor, index) => {
    for (const name of new Set(extractor.series)) {
      if (!METRIC_NAME.test(name)) throw new Error(`metric extractor ${extractor.name}: ${JSON.stringify(name)} is not a metric name`);
      const wanted = byName.get(name);
      if (wanted === undefined) byName.set(name, { name, load: undefined, extractors: [index] });
      else wanted.extractors.push(index);
    }
  });
  const all = [...byName.values()];
  const groups: FirstCharGroup[] = [];
  const groupOfChar = new Uint8Array(128);
  for (const first of new Set(all.map((w) => w.name.charCodeAt(0)))) {
    const names = all.filter((w) => w.name.charCodeAt(0) === first);
    let at = 0;
    while (names.every((w) => at < w.name.length - 1 && w.name[at] === names[0]!.name[at])) at++;
    const byChar = new Map<number, Wanted[]>();
    for (const w of names) byChar.set(w.name.charCodeAt(at), [...(byChar.get(w.name.charCodeAt(at)) ?? []), w]);
    groups.push({ at, byChar });
    groupOfChar[first] = groups.length;
  }
  const loadNames = all.filter((w) => w.load !== undefined).map((w) => w.name);
  return { groups, groupOfChar, loadNames };
}
