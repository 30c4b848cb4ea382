/**
 * Labelled counters and histograms for the metrics written on every request,
 * where each label set is a cell the caller finds once and keeps.
 *
 * Why not prom-client's own: its labelled children convert, validate and hash
 * their labels again at every `inc` and `observe` (~1-2 µs each, four a
 * request), a tenth of what the router adds to a small request. A cell here
 * is a few numbers, and an observation a bucket search and two additions.
 * prom-client's registry still renders them: it takes any metric with
 * `get()` (and `getForPromString()`), and these return what its own Counter
 * and Histogram return, so the exposition is the same byte for byte (tested
 * against prom-client's).
 */
import type { Registry } from 'prom-client';

/** Label values by name, in the metric's label order. */
type Labels = Record<string, string>;

/** One exposition sample, in the shape prom-client's registry renders. */
interface Sample {
  readonly labels: Record<string, string | number>;
  readonly sharedLabels?: Labels;
  readonly value: number;
  readonly metricName?: string;
  /** prom-client's histograms carry an empty exemplar slot on every bucket sample. */
  readonly exemplar?: null;
}

/** What prom-client's registry reads of a metric. */
interface MetricData {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'histogram';
  readonly values: Sample[];
  readonly aggregator: 'sum';
}

interface CellMetricOptions {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
  readonly registry: Registry;
}

/** A level of the cell tree: the next label's value leads to the level below, or to the cell at the last label. */
type CellLevel<C> = Map<string, CellLevel<C> | C>;

/** Cells by their label values. */
abstract class CellMetric<C> {
  readonly name: string;
  readonly help: string;
  readonly aggregator = 'sum' as const;
  readonly #labelNames: readonly string[];
  /**
   * One level per label, not one map keyed by the values joined: a joined key is a new string to
   * build and hash at every write (~100 ns each, four writes a request), while label values such as
   * routes are the same strings every time and keep their hash.
   */
  #tree: CellLevel<C> = new Map();
  /** Every cell with its labels, in the order made: what the exposition lists. */
  #cells: { readonly labels: Labels; readonly cell: C }[] = [];

  constructor(options: CellMetricOptions) {
    this.name = options.name;
    this.help = options.help;
    this.#labelNames = options.labelNames;
    // prom-client types this parameter as its own Metric class; the registry reads only what MetricData has.
    options.registry.registerMetric(this as never);
  }

  /** The cell of these label values (one per label name, in order), made at first use. */
  cell(...values: string[]): C {
    const names = this.#labelNames;
    if (values.length !== names.length) throw new Error(`${this.name} takes ${names.length} label values, got ${values.length}`);
    let level = this.#tree;
    const last = values.length - 1;
    for (let i = 0; i < last; i++) {
      const value = values[i] as string;
      let next = level.get(value) as CellLevel<C> | undefined;
      if (next === undefined) {
        next = new Map();
        level.set(value, next);
      }
      level = next;
    }
    const leaf = last < 0 ? '' : (values[last] as string);
    const found = level.get(leaf) as C | undefined;
    if (found !== undefined) return found;
    const labels: Labels = {};
    names.forEach((name, i) => (labels[name] = values[i] as string));
    const cell = this.newCell();
    level.set(leaf, cell);
    this.#cells.push({ labels, cell });
    return cell;
  }

  /** Forgets every cell (prom-client's `Registry.resetMetrics`); cells handed out earlier stop counting. */
  reset(): void {
    this.#tree = new Map();
    this.#cells = [];
  }

  protected entries(): Iterable<{ readonly labels: Labels; readonly cell: C }> {
    return this.#cells;
  }

  protected abstract newCell(): C;
}

/** A counter cell. */
export class CounterCell {
  value = 0;

  inc(): void {
    this.value++;
  }
}

/** A labelled counter (Prometheus type `counter`). */
export class CellCounter extends CellMetric<CounterCell> {
  readonly type = 'counter' as const;

  protected newCell(): CounterCell {
    return new CounterCell();
  }

  get(): MetricData {
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values: [...this.entries()].map(({ labels, cell }) => ({ labels: { ...labels }, value: cell.value })) };
  }
}

/** A histogram cell: counts per bucket (not cumulative), sum and count. */
export class HistogramCell {
  readonly #bounds: readonly number[];
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(bounds: readonly number[]) {
    this.#bounds = bounds;
    this.counts = new Float64Array(bounds.length);
  }

  /** Records `value` (a finite number, in the metric's unit). @throws TypeError for a value that is not finite, as prom-client does. */
  observe(value: number): void {
    if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
    const bounds = this.#bounds;
    let i = 0;
    while (i < bounds.length && value > (bounds[i] as number)) i++;
    if (i < bounds.length) (this.counts[i] as number)++;
    this.sum += value;
    this.count++;
  }
}

/** A labelled histogram (Prometheus type `histogram`) with fixed bucket bounds. */
export class CellHistogram extends CellMetric<HistogramCell> {
  readonly type = 'histogram' as const;
  readonly #bounds: readonly number[];

  constructor(options: CellMetricOptions & { readonly buckets: readonly number[] }) {
    super(options);
    this.#bounds = [...options.buckets].sort((a, b) => a - b);
  }

  protected newCell(): HistogramCell {
    return new HistogramCell(this.#bounds);
  }

  /** What the registry renders: buckets as `le` samples over the cell's labels, then `+Inf`, sum and count. */
  getForPromString(): MetricData {
    const values: Sample[] = [];
    const bucket = `${this.name}_bucket`;
    for (const { labels, cell } of this.entries()) {
      let cumulative = 0;
      this.#bounds.forEach((le, i) => {
        cumulative += cell.counts[i] as number;
        values.push({ labels: { le }, sharedLabels: labels, value: cumulative, metricName: bucket, exemplar: null });
      });
      values.push(
        { labels: { le: '+Inf' }, sharedLabels: labels, value: cell.count, metricName: bucket, exemplar: null },
        { labels: {}, sharedLabels: labels, value: cell.sum, metricName: `${this.name}_sum` },
        { labels: {}, sharedLabels: labels, value: cell.count, metricName: `${this.name}_count` },
      );
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  /** The samples with their labels merged, as prom-client's `Histogram.get()` returns them. */
  get(): MetricData {
    const data = this.getForPromString();
    return { ...data, values: data.values.map(({ labels, sharedLabels, ...sample }) => ({ ...sample, labels: { ...labels, ...sharedLabels } })) };
  }
}
